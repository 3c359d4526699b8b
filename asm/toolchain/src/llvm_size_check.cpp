// The `.size` expressions LLVM's ELF writer would abort the whole process on, found before the object is written.
//
// ELFWriter::writeSymbol evaluates each symbol's size once the object is laid out, and calls
// report_fatal_error("size expression must be absolute") when it is not a number: a label of another section, a
// symbol that is never defined, `.Lend & -f`, a division by zero (the fuzzer found the first two kinds). The check
// runs after parsing and before layout, so it follows the rules of LLVM 22's MCExpr::evaluateAsRelocatableImpl
// as they are once laid out: a value is a constant plus at most one added and one subtracted symbol; `A - B`
// becomes a number when both are defined in the same section; only + and - take symbols, every other operator
// needs numbers on both sides. Where the answer would need the layout (a divisor that is a label difference, a
// target expression that names labels), the size is refused too: no kernel needs one, and refusing is safe.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSymbol.h>
#include <llvm/MC/MCSymbolELF.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm_compat.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

// What an expression evaluates to once laid out: constant + add - sub. `known` is the constant's value when it
// does not depend on the layout (no label difference folded into it).
struct Value {
  const llvm::MCSymbol* add = nullptr;
  const llvm::MCSymbol* sub = nullptr;
  bool known = true;
  int64_t constant = 0;
  bool absolute() const { return !add && !sub; }
};

// LLVM recurses through variables as deep as they go; a chain this long is no kernel's.
constexpr int kMaxDepth = 1000;

struct Evaluator {
  std::string why; // set when evaluation fails

  std::optional<Value> fail(std::string reason) {
    if (why.empty()) why = std::move(reason);
    return std::nullopt;
  }

  static Value number(int64_t v, bool known) {
    Value r;
    r.known = known;
    r.constant = v;
    return r;
  }

  // attemptToFoldSymbolOffsetDifference once laid out: both defined, in the same section.
  static bool folds(const llvm::MCSymbol* a, const llvm::MCSymbol* b) {
    if (!a || !b || a->isVariable() || b->isVariable()) return false;
    if (!a->isInSection() || !b->isInSection()) return false;
    return &a->getSection() == &b->getSection();
  }

  std::optional<Value> add(Value l, Value r) {
    bool known = l.known && r.known;
    if (folds(l.add, r.sub)) {
      l.add = r.sub = nullptr;
      known = false;
    }
    if (folds(r.add, l.sub)) {
      r.add = l.sub = nullptr;
      known = false;
    }
    if ((l.add && r.add) || (l.sub && r.sub)) return fail("it adds or subtracts two symbols that do not cancel");
    Value v;
    v.add = l.add ? l.add : r.add;
    v.sub = l.sub ? l.sub : r.sub;
    v.known = known;
    v.constant = int64_t(uint64_t(l.constant) + uint64_t(r.constant));
    return v;
  }

  std::optional<Value> eval(const llvm::MCExpr& e, int depth) {
    if (depth > kMaxDepth) return fail("its symbols are nested more than 1000 deep");
    switch (e.getKind()) {
    case llvm::MCExpr::Constant: return number(static_cast<const llvm::MCConstantExpr&>(e).getValue(), true);
    case llvm::MCExpr::SymbolRef: {
      const auto& ref = static_cast<const llvm::MCSymbolRefExpr&>(e);
      const llvm::MCSymbol& s = ref.getSymbol();
      if (llvm_compat::has_specifier(ref)) return fail("it names '" + s.getName().str() + "' with a relocation specifier");
      if (s.isVariable() && !s.isWeakExternal()) return eval(*s.getVariableValue(), depth + 1);
      if (s.isUndefined()) return fail("it uses '" + s.getName().str() + "', which is never defined");
      Value v;
      v.add = &s;
      return v;
    }
    case llvm::MCExpr::Unary: {
      const auto& u = static_cast<const llvm::MCUnaryExpr&>(e);
      std::optional<Value> v = eval(*u.getSubExpr(), depth + 1);
      if (!v) return v;
      switch (u.getOpcode()) {
      case llvm::MCUnaryExpr::Plus: return v;
      case llvm::MCUnaryExpr::Minus:
        if (v->add && !v->sub) return fail("it negates the symbol '" + v->add->getName().str() + "'");
        std::swap(v->add, v->sub);
        v->constant = int64_t(0 - uint64_t(v->constant));
        return v;
      case llvm::MCUnaryExpr::Not:
      case llvm::MCUnaryExpr::LNot:
        if (!v->absolute()) return fail("it applies '~' or '!' to a symbol");
        return number(u.getOpcode() == llvm::MCUnaryExpr::Not ? ~v->constant : !v->constant, v->known);
      }
      return fail("an unknown unary operator");
    }
    case llvm::MCExpr::Binary: {
      const auto& b = static_cast<const llvm::MCBinaryExpr&>(e);
      std::optional<Value> l = eval(*b.getLHS(), depth + 1);
      if (!l) return l;
      std::optional<Value> r = eval(*b.getRHS(), depth + 1);
      if (!r) return r;
      const auto op = b.getOpcode();
      if (op == llvm::MCBinaryExpr::Sub) {
        std::swap(r->add, r->sub);
        r->constant = int64_t(0 - uint64_t(r->constant));
      }
      if (op == llvm::MCBinaryExpr::Add || op == llvm::MCBinaryExpr::Sub) return add(*l, *r);
      if (!l->absolute() || !r->absolute())
        return fail("an operator other than + and - has a symbol for an operand");
      if (op == llvm::MCBinaryExpr::Div || op == llvm::MCBinaryExpr::Mod) {
        if (!r->known) return fail("its divisor depends on where labels land");
        if (r->constant == 0) return fail("it divides by zero");
      }
      // The value itself matters only as a divisor, and then only when it is known without layout.
      int64_t v = 0;
      if (l->known && r->known && !b.evaluateAsAbsolute(v)) return number(0, false);
      return number(v, l->known && r->known);
    }
    case llvm::MCExpr::Target: {
      // Evaluated as LLVM does before layout; a target expression that needs the layout is refused.
      int64_t v = 0;
      if (!e.evaluateAsAbsolute(v)) return fail("a target expression in it is not a number before layout");
      return number(v, true);
    }
    default: return fail("it holds an expression kind isatune does not evaluate");
    }
  }
};

// The first place in the text LLVM kept for the expression: it places a binary expression at its operator and a
// constant nowhere, so this is the earliest of its parts' places.
llvm::SMLoc first_place(const llvm::MCExpr& e) {
  llvm::SMLoc best = e.getLoc();
  auto earlier = [&best](llvm::SMLoc l) {
    if (l.isValid() && (!best.isValid() || l.getPointer() < best.getPointer())) best = l;
  };
  if (e.getKind() == llvm::MCExpr::Binary) {
    const auto& b = static_cast<const llvm::MCBinaryExpr&>(e);
    earlier(first_place(*b.getLHS()));
    earlier(first_place(*b.getRHS()));
  } else if (e.getKind() == llvm::MCExpr::Unary) {
    earlier(first_place(*static_cast<const llvm::MCUnaryExpr&>(e).getSubExpr()));
  }
  return best;
}

// A constant has no place, so `.size f, 16 / x` is placed at its `/`: on a line that is one `.size name, expr`,
// the column of the expression's first character instead.
int expression_column(const std::string& line, int fallback) {
  const size_t directive = line.find_first_not_of(" \t");
  if (directive == std::string::npos || !llvm::StringRef(line).substr(directive).starts_with_insensitive(".size"))
    return fallback;
  const size_t comma = line.find(',', directive);
  if (comma == std::string::npos || int(comma) >= fallback) return fallback;
  const size_t first = line.find_first_not_of(" \t(", comma + 1);
  return first == std::string::npos || int(first) + 1 > fallback ? fallback : int(first) + 1;
}

} // namespace

void check_size_expressions(const llvm::MCContext& ctx, const llvm::SourceMgr& src, const std::string& file) {
  std::vector<Diagnostic> bad;
  for (const auto& entry : ctx.getSymbols()) {
    const llvm::MCSymbol* sym = entry.second.Symbol;
    if (!sym) continue;
    const llvm::MCExpr* size = static_cast<const llvm::MCSymbolELF*>(sym)->getSize();
    if (!size) continue;
    Evaluator ev;
    std::optional<Value> v = ev.eval(*size, 0);
    if (v && v->add && v->sub)
      ev.fail("'" + v->add->getName().str() + "' and '" + v->sub->getName().str() + "' are not in one section");
    else if (v && !v->absolute())
      ev.fail("it is " + std::string(v->add ? "" : "minus ") + "the address of '" +
              (v->add ? v->add : v->sub)->getName().str() + "', not a number");
    if (ev.why.empty()) continue;
    Diagnostic d;
    d.file = file;
    const llvm::SMLoc loc = first_place(*size);
    if (loc.isValid()) {
      const unsigned buffer = src.FindBufferContainingLoc(loc);
      if (buffer != 0) {
        const auto [line, column] = src.getLineAndColumn(loc, buffer);
        d.line = int(line);
        d.column = int(column);
        const char* start = loc.getPointer() - (column - 1);
        const llvm::StringRef rest(start, src.getMemoryBuffer(buffer)->getBufferEnd() - start);
        d.source_line = rest.take_until([](char c) { return c == '\n' || c == '\r'; }).str();
        d.column = expression_column(d.source_line, d.column);
      }
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm_compat::print_expr(os, *size, *ctx.getAsmInfo());
    d.message = "the .size of '" + sym->getName().str() + "' (" + text + ") is not a number LLVM can write: " +
                ev.why + " (a size is a difference of labels in one section, such as .Lend - " +
                sym->getName().str() + ")";
    bad.push_back(std::move(d));
  }
  if (bad.empty()) return;
  std::sort(bad.begin(), bad.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  throw AssemblyError(std::move(bad));
}

} // namespace isatune::toolchain::detail

// What an MC expression will be once LLVM 22 has laid the object out (llvm_expr_value.h): a model of
// MCExpr::evaluateAsRelocatableImpl with the layout's answers, for the guards that must refuse what LLVM's ELF
// writer would abort the process on, before it is written.
#include "llvm_expr_value.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <llvm/MC/MCStreamer.h>

#include "llvm_compat.h"

namespace isatune::toolchain::detail {
namespace {

// LLVM recurses through variables as deep as they go; a chain this long is no kernel's.
constexpr int kMaxDepth = 1000;

ExprValue number(int64_t v, bool known) {
  ExprValue r;
  r.known = known;
  r.constant = v;
  return r;
}

// attemptToFoldSymbolOffsetDifference once laid out: both defined, in the same section.
bool folds(const llvm::MCSymbol* a, const llvm::MCSymbol* b) {
  if (!a || !b || a->isVariable() || b->isVariable()) return false;
  if (!a->isInSection() || !b->isInSection()) return false;
  return &a->getSection() == &b->getSection();
}

// Lists the symbols an expression names: MCTargetExpr shows its arguments only through visitUsedExpr, which
// reports each symbol to a streamer. Emits nothing.
class SymbolLister final : public llvm::MCStreamer {
public:
  explicit SymbolLister(llvm::MCContext& ctx) : llvm::MCStreamer(ctx) {}
  std::vector<const llvm::MCSymbol*> symbols;
  void visitUsedSymbol(const llvm::MCSymbol& s) override { symbols.push_back(&s); }
  bool emitSymbolAttribute(llvm::MCSymbol*, llvm::MCSymbolAttr) override { return true; }
  void emitCommonSymbol(llvm::MCSymbol*, uint64_t, llvm::Align) override {}
  // Pure in LLVM 19, so it must be here for that build.
  void emitZerofill(llvm::MCSection*, llvm::MCSymbol*, uint64_t, llvm::Align, llvm::SMLoc) override {}
};

} // namespace

std::optional<ExprValue> ExprEvaluator::evaluate(const llvm::MCExpr& e) {
  why_.clear();
  return eval(e, 0);
}

std::optional<ExprValue> ExprEvaluator::fail(std::string reason) {
  if (why_.empty()) why_ = std::move(reason);
  return std::nullopt;
}

std::optional<ExprValue> ExprEvaluator::add(ExprValue l, ExprValue r) {
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
  ExprValue v;
  v.add = l.add ? l.add : r.add;
  v.sub = l.sub ? l.sub : r.sub;
  v.known = known;
  v.constant = int64_t(uint64_t(l.constant) + uint64_t(r.constant));
  return v;
}

std::optional<ExprValue> ExprEvaluator::variable(const llvm::MCSymbol& s, int depth) {
  if (auto it = memo_.find(&s); it != memo_.end()) {
    if (!it->second.value) return fail(it->second.why);
    return it->second.value;
  }
  // why_ is empty here: a failure returns at once, so nothing has failed yet.
  std::optional<ExprValue> v = eval(*s.getVariableValue(), depth + 1);
  memo_[&s] = {v, why_};
  return v;
}

std::optional<ExprValue> ExprEvaluator::eval(const llvm::MCExpr& e, int depth) {
  if (depth > kMaxDepth) return fail("its symbols are nested more than 1000 deep");
  switch (e.getKind()) {
  case llvm::MCExpr::Constant: return number(static_cast<const llvm::MCConstantExpr&>(e).getValue(), true);
  case llvm::MCExpr::SymbolRef: {
    const auto& ref = static_cast<const llvm::MCSymbolRefExpr&>(e);
    const llvm::MCSymbol& s = ref.getSymbol();
    if (llvm_compat::has_specifier(ref)) return fail("it names '" + s.getName().str() + "' with a relocation specifier");
    if (s.isVariable() && !s.isWeakExternal()) return variable(s, depth);
    if (s.isUndefined() && !undefined_symbols_) return fail("it uses '" + s.getName().str() + "', which is never defined");
    ExprValue v;
    v.add = &s;
    return v;
  }
  case llvm::MCExpr::Unary: {
    const auto& u = static_cast<const llvm::MCUnaryExpr&>(e);
    std::optional<ExprValue> v = eval(*u.getSubExpr(), depth + 1);
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
    std::optional<ExprValue> l = eval(*b.getLHS(), depth + 1);
    if (!l) return l;
    std::optional<ExprValue> r = eval(*b.getRHS(), depth + 1);
    if (!r) return r;
    const auto op = b.getOpcode();
    if (op == llvm::MCBinaryExpr::Sub) {
      std::swap(r->add, r->sub);
      r->constant = int64_t(0 - uint64_t(r->constant));
    }
    if (op == llvm::MCBinaryExpr::Add || op == llvm::MCBinaryExpr::Sub) return add(*l, *r);
    if (!l->absolute() || !r->absolute()) return fail("an operator other than + and - has a symbol for an operand");
    if (op == llvm::MCBinaryExpr::Div || op == llvm::MCBinaryExpr::Mod) {
      if (!r->known) return fail("its divisor depends on where labels land");
      if (r->constant == 0) return fail("it divides by zero");
    }
    // The value itself matters only as a divisor, and then only when it is known without layout.
    int64_t v = 0;
    if (l->known && r->known && !b.evaluateAsAbsolute(v)) return number(0, false);
    return number(v, l->known && r->known);
  }
  case llvm::MCExpr::Target: return target(static_cast<const llvm::MCTargetExpr&>(e), depth);
  default: return fail("it holds an expression kind isatune does not evaluate");
  }
}

std::optional<ExprValue> ExprEvaluator::target(const llvm::MCTargetExpr& e, int depth) {
  int64_t v = 0;
  if (e.evaluateAsAbsolute(v)) return number(v, true);
  // Not a number before layout: refused, naming the symbol that makes it so.
  SymbolLister lister(ctx_);
  e.visitUsedExpr(lister);
  for (const llvm::MCSymbol* s : lister.symbols) {
    const std::string name = s->getName().str();
    if (s->isVariable() && !s->isWeakExternal()) {
      std::optional<ExprValue> sv = variable(*s, depth);
      if (!sv) return sv;
      if (!sv->absolute()) return fail("a target expression in it names '" + name + "', which is not a number");
    } else if (s->isUndefined()) {
      return fail("a target expression in it names '" + name + "', which is never defined");
    } else {
      return fail("a target expression in it names the label '" + name +
                  "' (whether LLVM can evaluate it depends on the layout)");
    }
  }
  return fail("a target expression in it is not a number before layout");
}

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

Diagnostic diagnostic_at(const llvm::SourceMgr& src, llvm::SMLoc loc, const std::string& file, std::string message) {
  Diagnostic d;
  d.file = file;
  d.message = std::move(message);
  if (!loc.isValid()) return d;
  const unsigned buffer = src.FindBufferContainingLoc(loc);
  if (buffer == 0) return d;
  const auto [line, column] = src.getLineAndColumn(loc, buffer);
  d.line = int(line);
  d.column = int(column);
  const char* start = loc.getPointer() - (column - 1);
  const llvm::StringRef rest(start, src.getMemoryBuffer(buffer)->getBufferEnd() - start);
  d.source_line = rest.take_until([](char c) { return c == '\n' || c == '\r'; }).str();
  return d;
}

void throw_in_text_order(std::vector<Diagnostic> bad) {
  if (bad.empty()) return;
  std::sort(bad.begin(), bad.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.line != b.line ? a.line < b.line : a.column < b.column;
  });
  throw AssemblyError(std::move(bad));
}

} // namespace isatune::toolchain::detail

// The `.size` expressions LLVM's ELF writer would abort the whole process on, found before the object is written.
//
// ELFWriter::writeSymbol evaluates each symbol's size once the object is laid out, and calls
// report_fatal_error("size expression must be absolute") when it is not a number: a label of another section, a
// symbol that is never defined, `.Lend & -f`, a division by zero (the fuzzer found the first two kinds). The check
// runs after parsing and before layout, with the model of LLVM's evaluation once laid out in llvm_expr_value.cpp;
// a size must come out a number, with no symbol left in it.
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
#include "llvm_expr_value.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

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

void check_size_expressions(llvm::MCContext& ctx, const llvm::SourceMgr& src, const std::string& file) {
  std::vector<Diagnostic> bad;
  ExprEvaluator ev(ctx, /*undefined_symbols=*/false);
  for (const auto& entry : ctx.getSymbols()) {
    const llvm::MCSymbol* sym = entry.second.Symbol;
    if (!sym) continue;
    const llvm::MCExpr* size = static_cast<const llvm::MCSymbolELF*>(sym)->getSize();
    if (!size) continue;
    std::optional<ExprValue> v = ev.evaluate(*size);
    std::string why = ev.why();
    if (v && v->add && v->sub)
      why = "'" + v->add->getName().str() + "' and '" + v->sub->getName().str() + "' are not in one section";
    else if (v && !v->absolute())
      why = "it is " + std::string(v->add ? "" : "minus ") + "the address of '" +
            (v->add ? v->add : v->sub)->getName().str() + "', not a number";
    if (why.empty()) continue;
    Diagnostic d = diagnostic_at(src, first_place(*size), file, "");
    d.column = expression_column(d.source_line, d.column);
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm_compat::print_expr(os, *size, *ctx.getAsmInfo());
    d.message = "the .size of '" + sym->getName().str() + "' (" + text + ") is not a number LLVM can write: " +
                why + " (a size is a difference of labels in one section, such as .Lend - " +
                sym->getName().str() + ")";
    bad.push_back(std::move(d));
  }
  throw_in_text_order(std::move(bad));
}

} // namespace isatune::toolchain::detail

// The symbol assignments LLVM's ELF writer would abort the whole process on, found before the object is written.
//
// ELFWriter writes each symbol of the symbol table with its value, and for an assigned symbol (`e = ...`, `.set`,
// `.equ`) it evaluates the expression once laid out; where that is no relocatable value (a constant plus at most
// one symbol added and one subtracted), MCAssembler's getSymbolOffsetImpl calls report_fatal_error("cannot
// evaluate equated symbol"). llvm-mc-22 aborts the same way; LLVM 19 aborts on the same symbols with "unable to
// evaluate offset for variable". Found by fuzz_asm_text: `e=rG!Lxgf2-H`. A symbol is
// in the table, and so evaluated, when it is not a temporary (.L) and LLVM gives it a place: an expression whose
// operator at the top is `-`, a number, or a target expression such as max() is placed in the absolute section;
// one that starts with a symbol never defined (`e = a + b`) is left undefined, and LLVM reports an error for it
// instead of aborting. Those are the symbols checked, with llvm_expr_value.cpp's model of the evaluation; a symbol
// never defined may stand in the value (a relocation against it). The classic case outside the fuzzer: a
// max() that names a resource symbol nobody defines (ROCm 7.2's `.num_named_barrier`).
#include <optional>
#include <string>
#include <vector>

#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSymbol.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include "llvm_compat.h"
#include "llvm_expr_value.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

// What LLVM's report_fatal_error says for such a symbol (LLVM 19 fails earlier, in getSymbolOffset).
#if ISATUNE_LLVM_MAJOR >= 22
const char* const kLlvmAbort = "cannot evaluate equated symbol";
#else
const char* const kLlvmAbort = "unable to evaluate offset for variable";
#endif

} // namespace

void check_symbol_assignments(llvm::MCContext& ctx, const llvm::SourceMgr& src, const std::string& file) {
  std::vector<Diagnostic> bad;
  ExprEvaluator ev(ctx, /*undefined_symbols=*/true);
  for (const auto& entry : ctx.getSymbols()) {
    const llvm::MCSymbol* sym = entry.second.Symbol;
    if (!sym || !sym->isVariable() || sym->isTemporary() || sym->isUndefined()) continue;
    const llvm::MCExpr& value = *sym->getVariableValue();
    // Target expressions that LLVM always inlines never reach the symbol table.
    if (value.getKind() == llvm::MCExpr::Target && static_cast<const llvm::MCTargetExpr&>(value).inlineAssignedExpr())
      continue;
    if (ev.evaluate(value)) continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm_compat::print_expr(os, value, *ctx.getAsmInfo());
    bad.push_back(diagnostic_at(src, first_place(value), file,
                                "the value of '" + sym->getName().str() + "' (" + text +
                                    ") is not one LLVM can write to the symbol table: " + ev.why() +
                                    " (LLVM " + std::to_string(ISATUNE_LLVM_MAJOR) +
                                    " would abort the process: " + kLlvmAbort + ")"));
  }
  throw_in_text_order(std::move(bad));
}

} // namespace isatune::toolchain::detail

#pragma once
// What an MC expression will be once LLVM 22 has laid the object out, worked out after parsing and before layout
// (llvm_expr_value.cpp): the guards against the ELF writer's report_fatal_error calls on `.size` expressions
// (llvm_size_check.cpp) and on symbol assignments (llvm_variable_check.cpp) share it. Includes LLVM headers.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSymbol.h>
#include <llvm/Support/SMLoc.h>
#include <llvm/Support/SourceMgr.h>

#include "isatune/toolchain/diagnostic.h"

namespace isatune::toolchain::detail {

// constant + add - sub, as MCValue has it. `known` is whether the constant is known without the layout (no label
// difference folded into it).
struct ExprValue {
  const llvm::MCSymbol* add = nullptr;
  const llvm::MCSymbol* sub = nullptr;
  bool known = true;
  int64_t constant = 0;
  bool absolute() const { return !add && !sub; }
};

// Follows the rules of MCExpr::evaluateAsRelocatableImpl as they are once laid out: only + and - take symbols
// (at most one added and one subtracted that do not cancel), `A - B` folds when both are defined in one section,
// every other operator needs numbers on both sides, a division needs a divisor known without layout and not 0.
// Where the answer would need the layout (a divisor that is a label difference, a target expression such as
// AMDGPU's max() that is not a number before layout), it fails: refusing such an expression is safe, and no
// kernel writes one (LLVM aborts on max(f, 4) with a label f, and a target expression shows its symbols but not
// its arguments, so max(.Lend - f, 4) cannot be told apart from it). The reason names the symbol at fault: one
// never defined (ROCm 7.2's `.num_named_barrier` case), a variable that is not a number, or a label.
class ExprEvaluator {
public:
  // undefined_symbols: whether a symbol that is never defined may stand in the value (a relocation against it, in
  // an assignment) or fails it (a `.size`).
  // ctx: the context the expressions belong to (read only, to list a target expression's symbols).
  ExprEvaluator(llvm::MCContext& ctx, bool undefined_symbols) : ctx_(ctx), undefined_symbols_(undefined_symbols) {}

  // The value, or nullopt with why() saying what makes it one LLVM cannot write.
  std::optional<ExprValue> evaluate(const llvm::MCExpr& e);
  const std::string& why() const { return why_; }

private:
  struct Memo {
    std::optional<ExprValue> value;
    std::string why;
  };
  std::optional<ExprValue> fail(std::string reason);
  std::optional<ExprValue> add(ExprValue l, ExprValue r);
  std::optional<ExprValue> eval(const llvm::MCExpr& e, int depth);
  std::optional<ExprValue> variable(const llvm::MCSymbol& s, int depth);
  std::optional<ExprValue> target(const llvm::MCTargetExpr& e, int depth);

  llvm::MCContext& ctx_;
  bool undefined_symbols_;
  std::string why_;
  // Each variable's value, worked out once: a chain of assignments that each name the one before twice would
  // otherwise take 2^n steps.
  std::unordered_map<const llvm::MCSymbol*, Memo> memo_;
};

// The first place in the text LLVM kept for the expression: it places a binary expression at its operator and a
// constant nowhere, so this is the earliest of its parts' places.
llvm::SMLoc first_place(const llvm::MCExpr& e);

// A diagnostic at `loc` (file, line, column and the line's text when the place is in one of src's buffers).
Diagnostic diagnostic_at(const llvm::SourceMgr& src, llvm::SMLoc loc, const std::string& file, std::string message);

// Throws an AssemblyError holding `bad` in the order the text has them (a check finds them in symbol-table or
// section order); returns when there are none.
void throw_in_text_order(std::vector<Diagnostic> bad);

} // namespace isatune::toolchain::detail

#pragma once
// One instruction: a form, its operands (in assembly order) and modifiers, for one target. It answers what
// later passes need: which registers it reads and writes (explicit and implicit: EXEC for vector forms, SCC,
// VCC), which wait counter it increments and its hazard category.
#include <string>
#include <vector>

#include "isatune/cdna/form.h"
#include "isatune/cdna/modifiers.h"
#include "isatune/cdna/operand.h"

namespace isatune::cdna {

class Instruction {
public:
  // Validates operands and modifiers against the form on the target; throws InputError saying what is wrong.
  Instruction(Gfx target, const Form& form, std::vector<Operand> operands, Modifiers modifiers = {});

  const Form& form() const { return *form_; }
  Gfx target() const { return target_; }
  std::string_view mnemonic() const { return form_->mnemonic(target_); }
  const std::vector<Operand>& operands() const { return operands_; }
  const Modifiers& modifiers() const { return modifiers_; }

  // Register ranges written / read, explicit ones first, then implicit ones.
  std::vector<Reg> defs() const;
  std::vector<Reg> uses() const;
  Counter counter() const { return form_->counter; }
  Category category() const { return form_->category; }
  // MFMA: passes on this target (cycles / 4) and whether it counts as XDL for hazards; 0 / false otherwise.
  uint32_t mfma_passes() const;
  bool is_xdl() const;
  // The label this instruction branches to (invalid when none).
  Label branch_target() const;

private:
  Gfx target_;
  const Form* form_;
  std::vector<Operand> operands_;
  Modifiers modifiers_;
};

// Finds the form by name (canonical or target spelling) and builds the instruction; throws InputError for an
// unknown name or a form the target does not have.
Instruction make_instruction(Gfx target, std::string_view name, std::vector<Operand> operands,
                             Modifiers modifiers = {});

} // namespace isatune::cdna

#pragma once
// Sample instances of a form: valid operands (aligned registers of each allowed file, constants, labels) and
// the modifier combinations the form takes. Tests assemble every one of them on every target; documentation
// and fuzzers use them as starting points.
#include <vector>

#include "isatune/cdna/instruction.h"

namespace isatune::cdna {

// The first entry uses registers only and default modifiers; the others vary operands kinds (inline constant,
// literal, AGPRs, `off`) and modifiers. `target` labels branch forms. Throws if the form is absent on gfx.
std::vector<Instruction> sample_instructions(const Form& form, Gfx gfx, Label target = Label{0});

} // namespace isatune::cdna

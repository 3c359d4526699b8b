#pragma once
// One PTX statement of a kernel body: an instruction (optionally predicated) or a label.
#include <string>
#include <vector>

#include "isatune/ptx/registers.h"
#include "isatune/ptx/target.h"

namespace isatune::ptx {

struct Instruction {
  std::string opcode;                // "ld.global.nc.v4.b32"; empty for a label
  std::vector<std::string> operands; // printed comma separated
  std::string label;                 // a label definition when opcode is empty
  std::string guard;                 // "@%p1", "@!%p1" or empty
  Requirement requirement;

  // Predicates this instruction: `@p` (or `@!p` when negate).
  Instruction& pred(Reg p, bool negate = false);
  std::string str() const; // the line without indentation
};

} // namespace isatune::ptx

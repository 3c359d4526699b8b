// One body line.
#include "isatune/ptx/instruction.h"

namespace isatune::ptx {

Instruction& Instruction::pred(Reg p, bool negate) {
  guard = std::string(negate ? "@!" : "@") + p.name();
  return *this;
}

std::string Instruction::str() const {
  if (opcode.empty()) return label + ":";
  std::string s = guard.empty() ? "" : guard + " ";
  s += opcode;
  for (size_t i = 0; i < operands.size(); ++i) s += (i ? ", " : " ") + operands[i];
  return s + ";";
}

} // namespace isatune::ptx

// Operand and address text.
#include "isatune/ptx/operand.h"

#include <bit>
#include <cstdio>

namespace isatune::ptx {

Operand Operand::f32(float v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0f%08X", std::bit_cast<uint32_t>(v));
  return sym(buf);
}

Operand Operand::sym(std::string name) {
  Operand o;
  o.text = std::move(name);
  return o;
}

Operand Operand::vec(const std::vector<Reg>& regs) {
  std::string s = "{";
  for (size_t i = 0; i < regs.size(); ++i) s += (i ? ", " : "") + regs[i].name();
  return sym(s + "}");
}

std::string Address::str() const {
  if (offset == 0) return "[" + base.text + "]";
  return "[" + base.text + (offset > 0 ? "+" : "") + std::to_string(offset) + "]";
}

} // namespace isatune::ptx

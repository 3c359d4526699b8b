#pragma once
// Instruction operands: registers, immediates, symbols, addresses and register vectors, printed as PTX text.
#include <cstdint>
#include <string>
#include <vector>

#include "isatune/ptx/registers.h"

namespace isatune::ptx {

struct Operand {
  std::string text;
  Operand(Reg r) : text(r.name()) {}
  Operand(int v) : text(std::to_string(v)) {}
  Operand(long v) : text(std::to_string(v)) {}
  Operand(long long v) : text(std::to_string(v)) {}
  Operand(unsigned v) : text(std::to_string(v)) {}
  Operand(unsigned long v) : text(std::to_string(v)) {}
  Operand(unsigned long long v) : text(std::to_string(v)) {}
  // An f32 immediate in the exact hex form 0fXXXXXXXX.
  static Operand f32(float v);
  // A symbol (parameter, shared variable, special register) or any literal text.
  static Operand sym(std::string name);
  // "_" (the sink operand of mbarrier.arrive, elect.sync).
  static Operand sink() { return sym("_"); }
  // {%r1, %r2, ...}
  static Operand vec(const std::vector<Reg>& regs);

private:
  Operand() = default;
};

// [base + offset]; base is a register or a symbol (parameter, shared variable).
struct Address {
  Operand base;
  int64_t offset = 0;
  Address(Operand b, int64_t off = 0) : base(std::move(b)), offset(off) {}
  std::string str() const;
};

} // namespace isatune::ptx

#pragma once
// An instruction operand: a register range, an integer or float constant, a label, or the word `off`.
#include <cstdint>
#include <string>

#include "isatune/cdna/registers.h"

namespace isatune::cdna {

// A branch target; made by Builder::label, placed by Builder::bind.
struct Label {
  uint32_t id = UINT32_MAX;
  bool valid() const { return id != UINT32_MAX; }
  friend bool operator==(const Label&, const Label&) = default;
};

struct Off {};
inline constexpr Off off{};

struct Operand {
  enum class Kind : uint8_t { reg, imm, fimm, label, off };
  Kind kind = Kind::imm;
  Reg reg{};
  int64_t imm = 0;
  double fimm = 0;
  Label label{};

  Operand(Reg r) : kind(Kind::reg), reg(r) {}
  Operand(int v) : kind(Kind::imm), imm(v) {}
  Operand(int64_t v) : kind(Kind::imm), imm(v) {}
  Operand(uint32_t v) : kind(Kind::imm), imm(v) {}
  Operand(double v) : kind(Kind::fimm), fimm(v) {}
  Operand(Label l) : kind(Kind::label), label(l) {}
  Operand(Off) : kind(Kind::off) {}

  bool is_reg() const { return kind == Kind::reg; }
};

// Whether an integer is an inline constant (-16..64).
bool is_inline_int(int64_t v);
// Whether a float is an inline constant (0.5, 1.0, 2.0, 4.0 of either sign, 0.0, 1/(2*pi)).
bool is_inline_float(double v);

} // namespace isatune::cdna

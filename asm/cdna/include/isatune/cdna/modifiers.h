#pragma once
// Instruction modifiers: memory offsets and cache policy, MUBUF addressing, VOP3P op_sel, DPP controls,
// MFMA broadcast fields, s_waitcnt counts. Which ones a form takes is in Form::modifiers.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace isatune::cdna {

// The DPP control (one of them per instruction) and its argument.
struct DppControl {
  enum class Kind : uint8_t {
    quad_perm,
    row_shl,
    row_shr,
    row_ror,
    wave_shl,
    wave_rol,
    wave_shr,
    wave_ror,
    row_mirror,
    row_half_mirror,
    row_bcast15,
    row_bcast31,
    row_newbcast
  };
  Kind kind = Kind::quad_perm;
  uint8_t amount = 0;                      // row_shl/shr/ror 1..15, row_newbcast 1..15
  std::array<uint8_t, 4> quad{0, 1, 2, 3}; // quad_perm lanes 0..3

  static DppControl quad_perm(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
    return {Kind::quad_perm, 0, {a, b, c, d}};
  }
  static DppControl row_shr(uint8_t n) { return {Kind::row_shr, n, {}}; }
  static DppControl row_shl(uint8_t n) { return {Kind::row_shl, n, {}}; }
  static DppControl row_ror(uint8_t n) { return {Kind::row_ror, n, {}}; }
  static DppControl row_bcast15() { return {Kind::row_bcast15, 0, {}}; }
  static DppControl row_bcast31() { return {Kind::row_bcast31, 0, {}}; }
  static DppControl row_newbcast(uint8_t n) { return {Kind::row_newbcast, n, {}}; }
  static DppControl row_mirror() { return {Kind::row_mirror, 0, {}}; }
  static DppControl row_half_mirror() { return {Kind::row_half_mirror, 0, {}}; }
  static DppControl wave_shr() { return {Kind::wave_shr, 1, {}}; }
  static DppControl wave_shl() { return {Kind::wave_shl, 1, {}}; }
  static DppControl wave_ror() { return {Kind::wave_ror, 1, {}}; }
  static DppControl wave_rol() { return {Kind::wave_rol, 1, {}}; }
};

struct Modifiers {
  // Memory
  std::optional<int32_t> offset; // SMEM is an operand; global -4096..4095, MUBUF 0..4095, DS 0..65535
  std::optional<uint8_t> offset0, offset1;   // ds_read2/write2, in elements
  std::optional<uint16_t> swizzle;           // ds_swizzle_b32 pattern (the 16-bit offset)
  bool glc = false, slc = false;             // gfx90a cache policy
  bool sc0 = false, sc1 = false, nt = false; // gfx942/gfx950 cache policy
  bool offen = false, idxen = false;         // MUBUF: vaddr is an offset / an index
  // VOP3P: one entry per source; empty = default (op_sel all 0, op_sel_hi all 1)
  std::vector<uint8_t> op_sel, op_sel_hi;
  // DPP
  std::optional<DppControl> dpp;
  uint8_t row_mask = 0xf, bank_mask = 0xf;
  bool bound_ctrl = false; // true: invalid lanes read 0 (printed bound_ctrl:1, same as bound_ctrl:0 on GFX9)
  // MFMA
  uint8_t cbsz = 0, abid = 0, blgp = 0;
  // s_waitcnt: absent = no wait on that counter
  std::optional<uint8_t> vmcnt, expcnt, lgkmcnt;
};

} // namespace isatune::cdna

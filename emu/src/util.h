#pragma once
// Helpers the instruction handlers share: operand access, lane loops, number formats.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "context.h"
#include "wave.h"

namespace isatune::emu {

// Scalar operand reads and writes (SGPRs, VCC, EXEC, M0 or a constant).
inline uint32_t sread(const Wave& w, const Opnd& o) {
  if (o.kind == OpKind::sgpr) return w.s[o.reg];
  if (o.kind == OpKind::imm) return uint32_t(o.imm);
  if (o.kind == OpKind::vgpr) unsupported(w, "vector register where a scalar one was expected");
  unsupported(w, "operand not modelled" + (o.bad_name.empty() ? std::string() : " (" + o.bad_name + ")"));
}
inline uint64_t sread64(const Wave& w, const Opnd& o) {
  if (o.kind == OpKind::sgpr) return w.s64(o.reg);
  if (o.kind == OpKind::imm) return o.imm;
  unsupported(w, "operand not modelled" + (o.bad_name.empty() ? std::string() : " (" + o.bad_name + ")"));
}
inline void swrite(Wave& w, const Opnd& o, uint32_t x) {
  if (o.kind != OpKind::sgpr) unsupported(w, "destination not modelled");
  w.s[o.reg] = x;
}
inline void swrite64(Wave& w, const Opnd& o, uint64_t x) {
  if (o.kind != OpKind::sgpr) unsupported(w, "destination not modelled");
  w.set_s64(o.reg, x);
}

// A vector source: lane l reads p[l * stride], its high dword p[l * stride + hi].
struct Src {
  const uint32_t* p;
  uint32_t stride;
  uint32_t hi;
  uint32_t operator[](int l) const { return p[l * stride]; }
  uint64_t u64(int l) const { return uint64_t(p[l * stride]) | uint64_t(p[l * stride + hi]) << 32; }
};

inline Src vsrc(Wave& w, const Inst& in, int k) {
  const Opnd& o = in.src[k];
  switch (o.kind) {
  case OpKind::vgpr:
    if (k == 0 && in.dpp) return {w.tmp.data(), 1, 0};
    return {w.v[o.reg].data(), 1, 64};
  case OpKind::sgpr: return {&w.s[o.reg], 0, 1};
  case OpKind::imm: return {reinterpret_cast<const uint32_t*>(&o.imm), 0, 1};
  default: unsupported(w, "operand not modelled" + (o.bad_name.empty() ? std::string() : " (" + o.bad_name + ")"));
  }
}

inline uint32_t* vdst(Wave& w, const Inst& in, int k = 0) {
  const Opnd& o = in.dst[k];
  if (o.kind != OpKind::vgpr) unsupported(w, "vector destination not modelled");
  return w.v[o.reg].data();
}

// Lanes a VALU instruction writes: EXEC, narrowed by DPP masks (prepared by prepare_dpp).
uint64_t valu_lanes(Wave& w, const Inst& in);

template <class F>
inline void for_lanes(uint64_t mask, F&& f) {
  if (mask == ~0ull) {
    for (int l = 0; l < 64; ++l) f(l);
    return;
  }
  while (mask) {
    int l = std::countr_zero(mask);
    mask &= mask - 1;
    f(l);
  }
}

inline float as_f(uint32_t x) { return std::bit_cast<float>(x); }
inline uint32_t as_u(float x) { return std::bit_cast<uint32_t>(x); }
inline double as_d(uint64_t x) { return std::bit_cast<double>(x); }
inline uint64_t as_u64(double x) { return std::bit_cast<uint64_t>(x); }

// VOP3 source modifiers on a 32-bit float: bit 1 abs, bit 0 neg.
inline float fmod32(uint32_t x, uint8_t mods) {
  if (mods & 2) x &= 0x7fffffffu;
  if (mods & 1) x ^= 0x80000000u;
  return as_f(x);
}

// Inline: the MFMA operand gather calls it for every f16 element.
inline float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    float v = float(man) * 0x1p-24f; // subnormal or zero: exact (man < 2^10)
    return sign ? -v : v;
  }
  if (exp == 31) return as_f(sign | 0x7f800000u | (man << 13));
  return as_f(sign | ((exp + 112) << 23) | (man << 13));
}
uint16_t f32_to_f16(float f);        // round to nearest even
inline float bf16_to_f32(uint16_t b) { return as_f(uint32_t(b) << 16); }
uint16_t f32_to_bf16(float f);       // round to nearest even, NaN kept quiet
// 8-bit floats: gfx942 FNUZ formats, gfx950 OCP formats (shared/notes/cdna.md section 4).
float fp8_to_f32(uint8_t x, bool bf8, bool fnuz);
uint8_t f32_to_fp8(float f, bool bf8, bool fnuz); // round to nearest even, overflow to inf/NaN (no saturation)
// gfx950 f8f6f4 element formats (cbsz/blgp values): 0 fp8 E4M3, 1 bf8 E5M2, 2 fp6 E2M3, 3 bf6 E3M2, 4 fp4 E2M1.
float mx_to_f32(uint32_t code, int fmt);
uint8_t f32_to_fp4_scaled(float x, int scale_exp, bool scale_nan);      // x / 2^scale_exp, RNE, saturating
uint16_t fp8_to_bf16_scaled(uint8_t code, int scale_exp, bool scale_nan); // E4M3 x 2^scale_exp, RNE

} // namespace isatune::emu

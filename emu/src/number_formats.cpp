#include "util.h"

namespace isatune::emu {

uint16_t f32_to_f16(float f) {
  uint32_t x = as_u(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return uint16_t(sign | 0x7c00 | (ax > 0x7f800000u ? 0x200 : 0));
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00); // rounds to infinity
  if (ax < 0x38800000u) {                                 // subnormal half (or zero)
    float v = std::fabs(f) * 16777216.0f;                  // in units of 2^-24
    uint32_t q = uint32_t(std::nearbyint(v));
    return uint16_t(sign | q);
  }
  uint32_t e = (ax >> 23) - 112, m = ax & 0x7fffff;
  uint32_t h = (e << 10) | (m >> 13);
  uint32_t rest = m & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return uint16_t(sign | h);
}

uint16_t f32_to_bf16(float f) {
  uint32_t x = as_u(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

float fp8_to_f32(uint8_t x, bool bf8, bool fnuz) {
  const int man_bits = bf8 ? 2 : 3;
  const int exp_bits = bf8 ? 5 : 4;
  int bias = bf8 ? 15 : 7;
  if (fnuz) {
    ++bias;
    if (x == 0x80) return std::nanf("");
  } else if (bf8) {
    if ((x & 0x7c) == 0x7c) return (x & 3) ? std::nanf("") : ((x & 0x80) ? -INFINITY : INFINITY);
  } else if ((x & 0x7f) == 0x7f) {
    return std::nanf("");
  }
  bool neg = x & 0x80;
  int exp = (x >> man_bits) & ((1 << exp_bits) - 1);
  int man = x & ((1 << man_bits) - 1);
  float v = exp == 0 ? std::ldexp(float(man), 1 - bias - man_bits)
                     : std::ldexp(float(man + (1 << man_bits)), exp - bias - man_bits);
  return neg ? -v : v;
}

} // namespace isatune::emu

namespace isatune::emu {

// f32 -> fp8/bf8, round to nearest even (v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32; CDNA3 ISA: "convert ... to FP8
// ... round to nearest even"). No saturation: HIP's and rocBLAS's fp8 conversions clamp with v_med3_f32 before
// the instruction when they want saturation (rocBLAS hip_f8 "RNE CVT", __builtin_amdgcn_fmed3f then
// __builtin_amdgcn_cvt_pk_fp8_f32), so a value that rounds past the largest finite one is an overflow:
// infinity where the format has one (OCP E5M2), NaN otherwise (FNUZ: 0x80; OCP E4M3: S.1111.111).
// FNUZ has no negative zero (0x80 is its NaN): a result of zero is +0.
uint8_t f32_to_fp8(float f, bool bf8, bool fnuz) {
  const int man_bits = bf8 ? 2 : 3;
  const int bias = (bf8 ? 15 : 7) + (fnuz ? 1 : 0);
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const uint8_t nan = fnuz ? 0x80 : uint8_t(sign | (bf8 ? 0x7e : 0x7f));
  if (std::isnan(f)) return nan;
  // Largest finite: FNUZ all exponent and mantissa bits set; OCP E5M2 exponent 30 (31 is inf/NaN);
  // OCP E4M3 exponent 15 mantissa 110 (111 is NaN).
  const int max_exp = (bf8 ? 31 : 15) - (!fnuz && bf8 ? 1 : 0);
  const int max_man = (1 << man_bits) - 1 - (!fnuz && !bf8 ? 1 : 0);
  const double max_finite = std::ldexp(double((1 << man_bits) + max_man), max_exp - bias - man_bits);
  const double a = std::fabs(double(f));
  auto overflow = [&] { return (!fnuz && bf8) ? uint8_t(sign | 0x7c) : nan; };
  if (std::isinf(f)) return overflow();
  const int emin = 1 - bias; // exponent of the smallest normal
  int e;
  std::frexp(a, &e);         // a = m * 2^e, m in [0.5, 1): unbiased exponent e - 1
  const int quantum_exp = std::max(e - 1, emin) - man_bits;
  const double r = std::nearbyint(std::ldexp(a, -quantum_exp)) * std::ldexp(1.0, quantum_exp); // RNE
  if (r > max_finite) return overflow();
  if (r == 0) return fnuz ? 0 : sign;
  std::frexp(r, &e);
  uint32_t bits;
  if (e - 1 < emin) bits = uint32_t(std::ldexp(r, man_bits - emin)); // subnormal: exponent field 0
  else
    bits = uint32_t(e - 1 + bias) << man_bits | (uint32_t(std::ldexp(r, man_bits - (e - 1))) & ((1u << man_bits) - 1));
  return uint8_t(sign | bits);
}

} // namespace isatune::emu

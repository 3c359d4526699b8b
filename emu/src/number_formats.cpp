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

namespace isatune::emu {

// The f8f6f4 element formats of gfx950 (CDNA4 ISA MFMA "CBSZ/BLGP" format field, LLVM's AMDGPU docs; values
// from the OCP Microscaling Formats (MX) v1.0 spec, section 5.3): 0 FP8 E4M3 (OCP, bias 7, S.1111.111 NaN),
// 1 BF8 E5M2 (bias 15, infinities and NaNs), 2 FP6 E2M3 (bias 1), 3 BF6 E3M2 (bias 3), 4 FP4 E2M1 (bias 1). The
// MX formats have no infinities or NaNs; a zero exponent field is subnormal (mantissa x 2^(1 - bias - m)).
float mx_to_f32(uint32_t code, int fmt) {
  if (fmt <= 1) return fp8_to_f32(uint8_t(code), fmt == 1, false);
  const int ebits = fmt == 3 ? 3 : 2, mbits = fmt == 2 ? 3 : fmt == 3 ? 2 : 1, bias = fmt == 3 ? 3 : 1;
  const uint32_t width = uint32_t(1 + ebits + mbits);
  const bool neg = (code >> (width - 1)) & 1;
  const int e = int(code >> mbits) & ((1 << ebits) - 1), m = int(code) & ((1 << mbits) - 1);
  const float v = e == 0 ? std::ldexp(float(m), 1 - bias - mbits)
                         : std::ldexp(float(m + (1 << mbits)), e - bias - mbits);
  return neg ? -v : v;
}

// v_cvt_scalef32_pk_fp4_f32's element conversion: x / 2^scale_exp to FP4 E2M1, round to nearest even,
// saturating at +-6 (E2M1 has no infinity), NaN to S.111 (+-6), the sign kept on zero. scale_nan (a scale whose
// f32 exponent field is 255): the NaN code. Source: AMD's host model of the gfx950 OCP conversions
// (hip_ext_ocp, amd_hip_ocp_host.hpp `from_float<float, E2M1, sat = true>`, which the HIP header uses where
// `__builtin_amdgcn_cvt_scalef32_pk_fp4_f32` is not available) and the OCP MX spec 6.3 (conversion to FP4:
// saturate on overflow). The f32 scale contributes only its exponent field (CDNA4 ISA: scale =
// exponent(S2.f32)); the ISA text was not available here, the host model agrees.
uint8_t f32_to_fp4_scaled(float x, int scale_exp, bool scale_nan) {
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  if (std::isnan(x) || scale_nan) return uint8_t(sign | 7);
  double a = std::ldexp(std::fabs(double(x)), -scale_exp); // exact: a double holds every f32 times 2^+-254
  if (std::isinf(a) || a >= 6.0) return uint8_t(sign | 7);
  // The E2M1 grid: 0, 0.5, 1, 1.5 (quantum 0.5), 2, 3 (quantum 1), 4, 6 (quantum 2).
  const double q = a < 2.0 ? 0.5 : a < 4.0 ? 1.0 : 2.0;
  const double r = std::nearbyint(a / q) * q; // the host's default rounding: to nearest even
  static const double grid[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint8_t c = 0; c < 8; ++c)
    if (grid[c] == r) return uint8_t(sign | c);
  return uint8_t(sign | 7); // not reached: r is on the grid
}

// v_cvt_scalef32_pk_bf16_fp8's element conversion: OCP E4M3 x 2^scale_exp to bf16, round to nearest even
// (only the subnormal range rounds: an E4M3 value has 4 significant bits), overflow to infinity, NaN code or
// NaN scale to NaN. Source: the same host model, `to_float<bf16, E4M3, MxScale>` ("Overflow: return infinity
// (gfx950 HW behavior)").
uint16_t fp8_to_bf16_scaled(uint8_t code, int scale_exp, bool scale_nan) {
  const float v = fp8_to_f32(code, false, false);
  if (std::isnan(v) || scale_nan) return uint16_t((code & 0x80 ? 0x8000 : 0) | 0x7fff);
  const double s = std::ldexp(double(v), scale_exp);
  return f32_to_bf16(float(s)); // s -> float exact (4 bits) or beyond bf16's range either way
}

} // namespace isatune::emu

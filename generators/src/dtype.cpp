#include "isatune/gen/dtype.h"

#include <bit>
#include <cmath>

namespace isatune::gen {

std::string_view to_string(DType t) {
  switch (t) {
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::f32: return "f32";
  case DType::fp8_e4m3: return "fp8_e4m3";
  case DType::fp8_e5m2: return "fp8_e5m2";
  case DType::fp8_e4m3_fnuz: return "fp8_e4m3_fnuz";
  case DType::fp8_e5m2_fnuz: return "fp8_e5m2_fnuz";
  }
  return "?";
}

bool is_fp8(DType t) {
  return t == DType::fp8_e4m3 || t == DType::fp8_e5m2 || t == DType::fp8_e4m3_fnuz || t == DType::fp8_e5m2_fnuz;
}
bool is_fp8_e5m2(DType t) { return t == DType::fp8_e5m2 || t == DType::fp8_e5m2_fnuz; }
bool is_fnuz(DType t) { return t == DType::fp8_e4m3_fnuz || t == DType::fp8_e5m2_fnuz; }

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f16" || s == "fp16" || s == "half") return DType::f16;
  if (s == "bf16") return DType::bf16;
  if (s == "f32" || s == "fp32" || s == "float") return DType::f32;
  if (s == "fp8_e4m3" || s == "fp8" || s == "e4m3" || s == "f8") return DType::fp8_e4m3;
  if (s == "fp8_e5m2" || s == "e5m2" || s == "bf8") return DType::fp8_e5m2;
  if (s == "fp8_e4m3_fnuz" || s == "e4m3fnuz") return DType::fp8_e4m3_fnuz;
  if (s == "fp8_e5m2_fnuz" || s == "e5m2fnuz") return DType::fp8_e5m2_fnuz;
  return std::nullopt;
}

uint32_t size_of(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16: return 2;
  case DType::f32: return 4;
  case DType::fp8_e4m3:
  case DType::fp8_e5m2:
  case DType::fp8_e4m3_fnuz:
  case DType::fp8_e5m2_fnuz: return 1;
  }
  return 4;
}

namespace {

// A generic IEEE-like format with `exp_bits` exponent bits and `man_bits` mantissa bits, round to nearest even.
// fp8 here is the OCP encoding (gfx950; e4m3 max 448, e5m2 max 57344), saturating; `fnuz` selects the FNUZ
// variant (gfx942): bias one larger, every exponent field finite, no negative zero, NaN = 0x80.
uint32_t encode_small(double v, int exp_bits, int man_bits, bool e4m3, bool fnuz = false) {
  const uint32_t sign = std::signbit(v) ? 1u : 0u;
  const int bias = (1 << (exp_bits - 1)) - (fnuz ? 0 : 1);
  uint32_t sign_bit = sign << (exp_bits + man_bits);
  if (std::isnan(v)) return fnuz ? 0x80u : sign_bit | ((1u << (exp_bits + man_bits)) - 1); // e4m3 NaN S.1111.111
  if (fnuz)
    sign_bit = 0; // restored below for non-zero results (no negative zero)
  double a = std::fabs(v);
  const double max_finite =
      fnuz ? std::ldexp(2.0 - std::ldexp(1.0, -man_bits), (1 << exp_bits) - 1 - bias)
           : e4m3 ? 448.0 : std::ldexp(2.0 - std::ldexp(1.0, -man_bits), (1 << exp_bits) - 2 - bias);
  if (a >= max_finite) a = max_finite; // saturate (inf too)
  if (a == 0) return sign_bit;
  int e = std::ilogb(a);
  const int min_normal = 1 - bias;
  if (e < min_normal) e = min_normal; // subnormal range: fixed quantum
  const double quantum = std::ldexp(1.0, e - man_bits);
  double q = std::nearbyint(a / quantum); // round half even (default rounding mode)
  double r = q * quantum;
  if (r > max_finite) r = max_finite;
  if (r == 0) return sign_bit;
  if (fnuz)
    sign_bit = sign << (exp_bits + man_bits);
  int re = std::ilogb(r);
  uint32_t exp_field, man;
  if (re < min_normal) {
    exp_field = 0;
    man = static_cast<uint32_t>(std::ldexp(r, man_bits - min_normal));
  } else {
    exp_field = static_cast<uint32_t>(re + bias);
    man = static_cast<uint32_t>(std::ldexp(r, man_bits - re)) - (1u << man_bits);
  }
  return sign_bit | (exp_field << man_bits) | man;
}

double decode_small(uint32_t bits, int exp_bits, int man_bits, bool e4m3) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const bool neg = (bits >> (exp_bits + man_bits)) & 1;
  const uint32_t e = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const uint32_t m = bits & ((1u << man_bits) - 1);
  double r;
  if (e == 0) {
    r = std::ldexp(double(m), 1 - bias - man_bits);
  } else if (e == (1u << exp_bits) - 1 && (!e4m3 || m == (1u << man_bits) - 1)) {
    r = (m == 0 && !e4m3) ? INFINITY : NAN;
  } else {
    r = std::ldexp(double(m | (1u << man_bits)), int(e) - bias - man_bits);
  }
  return neg ? -r : r;
}

// FNUZ: 0x80 is NaN, no infinity, every other pattern finite with bias 2^(exp_bits-1).
double decode_fnuz(uint32_t bits, int exp_bits, int man_bits) {
  if (bits == 0x80u) return NAN;
  const int bias = 1 << (exp_bits - 1);
  const bool neg = (bits >> (exp_bits + man_bits)) & 1;
  const uint32_t e = (bits >> man_bits) & ((1u << exp_bits) - 1);
  const uint32_t m = bits & ((1u << man_bits) - 1);
  const double r = e == 0 ? std::ldexp(double(m), 1 - bias - man_bits)
                          : std::ldexp(double(m | (1u << man_bits)), int(e) - bias - man_bits);
  return neg ? -r : r;
}

} // namespace

uint32_t encode(DType t, double v) {
  switch (t) {
  case DType::f32: return std::bit_cast<uint32_t>(static_cast<float>(v));
  case DType::f16: {
    // Through the generic path, but f16 keeps inf (no saturation): IEEE behaviour of v_cvt_f16_f32.
    if (std::isinf(v)) return v > 0 ? 0x7c00u : 0xfc00u;
    if (std::fabs(v) >= 65520.0) return v > 0 ? 0x7c00u : 0xfc00u;
    return encode_small(v, 5, 10, false);
  }
  case DType::bf16: {
    const uint32_t f = std::bit_cast<uint32_t>(static_cast<float>(v));
    if ((f & 0x7fffffffu) > 0x7f800000u) return (f >> 16) | 0x40u; // quiet NaN
    const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return (f + rounding) >> 16;
  }
  case DType::fp8_e4m3: return encode_small(v, 4, 3, true);
  case DType::fp8_e5m2: return encode_small(v, 5, 2, false);
  case DType::fp8_e4m3_fnuz: return encode_small(v, 4, 3, true, true);
  case DType::fp8_e5m2_fnuz: return encode_small(v, 5, 2, false, true);
  }
  return 0;
}

double decode(DType t, uint32_t bits) {
  switch (t) {
  case DType::f32: return std::bit_cast<float>(bits);
  case DType::f16: return decode_small(bits & 0xffffu, 5, 10, false);
  case DType::bf16: return std::bit_cast<float>((bits & 0xffffu) << 16);
  case DType::fp8_e4m3: return decode_small(bits & 0xffu, 4, 3, true);
  case DType::fp8_e5m2: return decode_small(bits & 0xffu, 5, 2, false);
  case DType::fp8_e4m3_fnuz: return decode_fnuz(bits & 0xffu, 4, 3);
  case DType::fp8_e5m2_fnuz: return decode_fnuz(bits & 0xffu, 5, 2);
  }
  return 0;
}

double tolerance(DType t) {
  switch (t) {
  case DType::bf16: return 1e-2;
  case DType::f16: return 2e-3;
  case DType::f32: return 1e-5;
  case DType::fp8_e4m3:
  case DType::fp8_e4m3_fnuz: return 1.25e-1;
  case DType::fp8_e5m2:
  case DType::fp8_e5m2_fnuz: return 2.5e-1;
  }
  return 1e-5;
}

} // namespace isatune::gen

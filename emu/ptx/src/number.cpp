// Number formats: rounding a double to f32 / f16 / bf16 in each IEEE rounding mode, exactly (the double holds
// the value to round; the quantum is a power of two, so the scaling below is exact).
#include <cmath>
#include <cstring>

#include "ops.h"

namespace isatune::emu::ptx {

namespace {

// Rounds x to a binary format with `mant` fraction bits and `exp` exponent bits; returns its bit pattern.
// #data-movement-and-conversion-instructions-cvt: rounding modifiers .rn (ties to even), .rna (ties away),
// .rz, .rm, .rp; overflow goes to infinity or the largest finite value as the direction dictates.
uint64_t round_to(double x, int mant, int exp, Rnd r, uint64_t nan, bool sat_finite = false) {
  const int bias = (1 << (exp - 1)) - 1;
  const int emin = 1 - bias, emax = bias;
  const uint64_t sign = std::signbit(x) ? 1ull << (mant + exp) : 0;
  const uint64_t inf = uint64_t((1 << exp) - 1) << mant;
  const uint64_t max_finite = inf - 1;
  if (std::isnan(x))
    return nan;
  double a = std::fabs(x);
  if (std::isinf(a))
    return sat_finite ? sign | max_finite : sign | inf;
  if (a == 0)
    return sign;
  int e;
  std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1): exponent of a is e - 1
  int qexp = std::max(e - 1, emin) - mant;
  double n = std::ldexp(a, -qexp); // exact
  double lo = std::floor(n), frac = n - lo;
  bool neg = sign != 0;
  bool up = false;
  switch (r) {
  case Rnd::rz:
    up = false;
    break;
  case Rnd::rm:
    up = neg && frac > 0;
    break;
  case Rnd::rp:
    up = !neg && frac > 0;
    break;
  case Rnd::rna:
    up = frac >= 0.5;
    break;
  default:
    up = frac > 0.5 || (frac == 0.5 && std::fmod(lo, 2.0) != 0);
    break;
  }
  double m = up ? lo + 1 : lo;
  double v = std::ldexp(m, qexp);
  if (v >= std::ldexp(1.0, emax + 1)) { // overflow
    bool to_inf =
        r == Rnd::rn || r == Rnd::rna || r == Rnd::none || (r == Rnd::rp && !neg) || (r == Rnd::rm && neg);
    return sign | ((to_inf && !sat_finite) ? inf : max_finite);
  }
  if (v == 0)
    return sign;
  std::frexp(v, &e);
  if (e - 1 < emin)
    return sign | uint64_t(std::ldexp(v, -(emin - mant))); // subnormal
  uint64_t frac_bits = uint64_t(std::ldexp(v, -(e - 1 - mant))) - (1ull << mant);
  return sign | (uint64_t(e - 1 + bias) << mant) | frac_bits;
}

} // namespace

uint16_t to_f16(double x, Rnd r, bool sat_finite) {
  return uint16_t(round_to(x, 10, 5, r, kNanF16, sat_finite));
}
uint16_t to_bf16(double x, Rnd r, bool sat_finite) {
  return uint16_t(round_to(x, 7, 8, r, kNanBF16, sat_finite));
}
uint32_t to_f32(double x, Rnd r) {
  return uint32_t(round_to(x, 23, 8, r, kNanF32));
}

float half_to_f32(uint16_t h) {
  uint32_t s = uint32_t(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v;
  if (e == 0)
    v = std::ldexp(float(m), -24);
  else if (e == 31)
    v = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp(float(m | 0x400), int(e) - 25);
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits |= s;
  if (e == 31 && m)
    bits = s | 0x7fc00000u | (m << 13); // keep the payload
  std::memcpy(&v, &bits, 4);
  return v;
}

float bf16_to_f32(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float v;
  std::memcpy(&v, &bits, 4);
  return v;
}

float flush_f32(float x) {
  if (std::fpclassify(x) == FP_SUBNORMAL)
    return std::copysign(0.0f, x);
  return x;
}

} // namespace isatune::emu::ptx

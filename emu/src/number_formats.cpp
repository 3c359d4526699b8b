#include "util.h"

namespace isatune::emu {

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return as_f(sign | 0x7f800000u | (man << 13));
  return as_f(sign | ((exp + 112) << 23) | (man << 13));
}

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

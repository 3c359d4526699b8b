// Floating-point arithmetic and conversions against independent formulations: exact values in __float128
// rounded by stepping to the neighbouring representable numbers (not the host rounding mode), and an
// exhaustive table of every f16 / bf16 value for the half conversions.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

const char* const kModes[] = {"rn", "rz", "rm", "rp"};

// Rounds an exact value to T in mode m by choosing between the two neighbours of q.
template <class T> T round_q(__float128 q, const std::string& m) {
  T c = T(q); // correctly rounded to nearest (GCC's __float128 conversion)
  if (std::isinf(c) && m == "rn")
    return c;
  if (__float128(c) == q)
    return c;
  T lo, hi;
  if (__float128(c) > q)
    hi = c, lo = std::nextafter(c, -std::numeric_limits<T>::infinity());
  else
    lo = c, hi = std::nextafter(c, std::numeric_limits<T>::infinity());
  if (m == "rn")
    return c;
  if (m == "rm")
    return lo;
  if (m == "rp")
    return hi;
  return q > 0 ? lo : hi; // rz
}

float fbits(uint32_t u) {
  return std::bit_cast<float>(u);
}

template <class T, class U>
void check_binary(const std::string& op, std::function<__float128(__float128, __float128, __float128)> exact,
                  std::function<T()> gen, const char* suffix) {
  const uint32_t n = ragged();
  auto a = random_vec<T>(n, gen), b = random_vec<T>(n, gen), c = random_vec<T>(n, gen);
  std::vector<U> ua(n), ub(n), uc(n);
  for (uint32_t i = 0; i < n; ++i)
    ua[i] = std::bit_cast<U>(a[i]), ub[i] = std::bit_cast<U>(b[i]), uc[i] = std::bit_cast<U>(c[i]);
  for (const char* m : kModes) {
    std::string body = op + "." + m + suffix;
    auto d = run_ew<U, U>(body, ua, ub, uc);
    for (uint32_t i = 0; i < n; ++i) {
      T want = round_q<T>(exact(a[i], b[i], c[i]), m);
      ASSERT_EQ(d[i], std::bit_cast<U>(want)) << body << " a=" << a[i] << " b=" << b[i] << " c=" << c[i]
                                              << " got " << std::bit_cast<T>(d[i]) << " want " << want;
    }
  }
}

TEST(EmuPtxFloat, F32RoundingModes) {
  auto gen = [] { return rand_float(-100, 100) * std::ldexp(1.0f, int(rand_u32() % 20) - 10); };
  using Q = __float128;
  check_binary<float, uint32_t>(
      "add", [](Q a, Q b, Q) { return a + b; }, gen, ".f32 %d, %a, %b;");
  check_binary<float, uint32_t>(
      "sub", [](Q a, Q b, Q) { return a - b; }, gen, ".f32 %d, %a, %b;");
  check_binary<float, uint32_t>(
      "mul", [](Q a, Q b, Q) { return a * b; }, gen, ".f32 %d, %a, %b;");
  check_binary<float, uint32_t>(
      "fma", [](Q a, Q b, Q c) { return a * b + c; }, gen, ".f32 %d, %a, %b, %c;");
  check_binary<float, uint32_t>(
      "div", [](Q a, Q b, Q) { return a / b; }, gen, ".f32 %d, %a, %b;");
  check_binary<float, uint32_t>(
      "rcp", [](Q a, Q, Q) { return 1 / a; }, gen, ".f32 %d, %a;");
  auto pos = [] { return rand_float(0.001f, 1000); };
  check_binary<float, uint32_t>(
      "sqrt",
      [](Q a, Q, Q) {
        // sqrt of a float: its square root to 113 bits via double-double refinement is overkill; use the
        // identity that the correctly rounded float sqrt r satisfies (r-ulp/2)^2 < a < (r+ulp/2)^2.
        double s = std::sqrt(double(a));
        Q r = s;
        for (int i = 0; i < 3; ++i)
          r = (r + a / r) / 2; // Newton in quad precision
        return r;
      },
      pos, ".f32 %d, %a;");
}

TEST(EmuPtxFloat, F64RoundingModes) {
  auto gen = [] { return double(rand_float(-100, 100)) * (1 + std::ldexp(double(rand_u32()), -34)); };
  using Q = __float128;
  check_binary<double, uint64_t>(
      "add", [](Q a, Q b, Q) { return a + b; }, gen, ".f64 %d, %a, %b;");
  check_binary<double, uint64_t>(
      "mul", [](Q a, Q b, Q) { return a * b; }, gen, ".f64 %d, %a, %b;");
  check_binary<double, uint64_t>(
      "fma", [](Q a, Q b, Q c) { return a * b + c; }, gen, ".f64 %d, %a, %b, %c;");
  check_binary<double, uint64_t>(
      "div", [](Q a, Q b, Q) { return a / b; }, gen, ".f64 %d, %a, %b;");
}

// .ftz flushes subnormal inputs and results to zero of the same sign; .sat clamps to [0, 1].
TEST(EmuPtxFloat, FtzAndSat) {
  const uint32_t n = ragged(100, 300);
  std::vector<uint32_t> a(n), b(n), c(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = (rand_u32() & 0x807fffffu) | 1; // a subnormal of either sign
    b[i] = std::bit_cast<uint32_t>(rand_float(-3, 3));
    c[i] = std::bit_cast<uint32_t>(rand_float(-3, 3));
  }
  auto d = run_ew<uint32_t, uint32_t>("add.ftz.f32 %d, %a, %b;", a, b, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], b[i]) << i; // a flushed to zero: exactly b
  d = run_ew<uint32_t, uint32_t>("add.f32 %d, %a, %b;", a, b, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(fbits(d[i]), fbits(a[i]) + fbits(b[i]));
  d = run_ew<uint32_t, uint32_t>("mul.ftz.f32 %d, %a, %b;", a, b, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i] & 0x7fffffffu, 0u);
  d = run_ew<uint32_t, uint32_t>("mul.sat.f32 %d, %b, %c;", a, b, c);
  for (uint32_t i = 0; i < n; ++i) {
    float p = fbits(b[i]) * fbits(c[i]);
    ASSERT_EQ(fbits(d[i]), std::min(std::max(p, 0.0f), 1.0f));
  }
}

TEST(EmuPtxFloat, MinMaxAbsNegWithNaN) {
  const uint32_t n = ragged(200, 400);
  auto gen = [] { return (rand_u32() % 7 == 0) ? 0x7fc00000u : std::bit_cast<uint32_t>(rand_float(-9, 9)); };
  auto a = random_vec<uint32_t>(n, gen), b = random_vec<uint32_t>(n, gen), c = a;
  auto dmin = run_ew<uint32_t, uint32_t>("min.f32 %d, %a, %b;", a, b, c);
  auto dmax = run_ew<uint32_t, uint32_t>("max.f32 %d, %a, %b;", a, b, c);
  auto dminn = run_ew<uint32_t, uint32_t>("min.NaN.f32 %d, %a, %b;", a, b, c);
  auto dabs = run_ew<uint32_t, uint32_t>("abs.f32 %d, %a;", a, b, c);
  auto dneg = run_ew<uint32_t, uint32_t>("neg.f32 %d, %a;", a, b, c);
  for (uint32_t i = 0; i < n; ++i) {
    float x = fbits(a[i]), y = fbits(b[i]);
    // #floating-point-instructions-min: a NaN operand is ignored unless both are NaN (then NaN); .NaN: NaN
    // wins.
    float mn = std::isnan(x) ? y : std::isnan(y) ? x : std::min(x, y);
    float mx = std::isnan(x) ? y : std::isnan(y) ? x : std::max(x, y);
    if (std::isnan(mn))
      ASSERT_TRUE(std::isnan(fbits(dmin[i])));
    else
      ASSERT_EQ(fbits(dmin[i]), mn);
    if (std::isnan(mx))
      ASSERT_TRUE(std::isnan(fbits(dmax[i])));
    else
      ASSERT_EQ(fbits(dmax[i]), mx);
    if (std::isnan(x) || std::isnan(y))
      ASSERT_TRUE(std::isnan(fbits(dminn[i])));
    else
      ASSERT_EQ(fbits(dminn[i]), std::min(x, y));
    ASSERT_EQ(dabs[i], a[i] & 0x7fffffffu);
    ASSERT_EQ(dneg[i], a[i] ^ 0x80000000u);
  }
}

// Approximate instructions stay within their documented error (#floating-point-instructions-*).
TEST(EmuPtxFloat, ApproxWithinDocumentedError) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] { return std::bit_cast<uint32_t>(rand_float(0.01f, 8)); });
  auto b = random_vec<uint32_t>(n, [] { return std::bit_cast<uint32_t>(rand_float(-3, 3)); });
  auto c = a;
  struct K {
    const char* body;
    std::function<double(double, double)> ref;
    double rel, abs;
    bool use_b;
  };
  const std::vector<K> cases = {
      {"ex2.approx.f32 %d, %b;", [](double, double y) { return std::exp2(y); }, 2.0 * std::ldexp(1.0, -23), 0,
       true},
      {"ex2.approx.ftz.f32 %d, %b;", [](double, double y) { return std::exp2(y); },
       2.0 * std::ldexp(1.0, -23), 0, true},
      {"lg2.approx.f32 %d, %a;", [](double x, double) { return std::log2(x); }, 0, std::ldexp(1.0, -22),
       false},
      {"sin.approx.f32 %d, %b;", [](double, double y) { return std::sin(y); }, 0, std::ldexp(1.0, -20.5),
       true},
      {"cos.approx.f32 %d, %b;", [](double, double y) { return std::cos(y); }, 0, std::ldexp(1.0, -20.5),
       true},
      {"tanh.approx.f32 %d, %b;", [](double, double y) { return std::tanh(y); }, std::ldexp(1.0, -10.987), 0,
       true},
      {"rsqrt.approx.f32 %d, %a;", [](double x, double) { return 1 / std::sqrt(x); }, std::ldexp(1.0, -22.9),
       0, false},
      {"rcp.approx.f32 %d, %a;", [](double x, double) { return 1 / x; }, std::ldexp(1.0, -23), 0, false},
      {"sqrt.approx.f32 %d, %a;", [](double x, double) { return std::sqrt(x); }, std::ldexp(1.0, -23), 0,
       false},
      {"div.approx.f32 %d, %b, %a;", [](double x, double y) { return y / x; }, 2 * std::ldexp(1.0, -23), 0,
       false},
      {"div.full.f32 %d, %b, %a;", [](double x, double y) { return y / x; }, 2 * std::ldexp(1.0, -23), 0,
       false},
  };
  for (const auto& k : cases) {
    auto d = run_ew<uint32_t, uint32_t>(k.body, a, b, c);
    for (uint32_t i = 0; i < n; ++i) {
      double want = k.ref(fbits(a[i]), fbits(b[i]));
      double got = fbits(d[i]);
      ASSERT_LE(std::fabs(got - want), k.abs + k.rel * std::fabs(want) + 1e-30) << k.body << " at " << i;
    }
  }
}

// --- conversions ---

// Every finite f16 (or bf16) value, sorted, for an exhaustive neighbour search.
std::vector<std::pair<double, uint16_t>> all_halves(bool bf) {
  std::vector<std::pair<double, uint16_t>> v;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double x;
    if (bf)
      x = std::bit_cast<float>(h << 16);
    else {
      uint32_t e = (h >> 10) & 31, m = h & 1023;
      if (e == 31)
        continue;
      x = e ? std::ldexp(1024.0 + m, int(e) - 25) : std::ldexp(double(m), -24);
      if (h & 0x8000)
        x = -x;
    }
    if (!std::isfinite(x))
      continue;
    if (x == 0 && (h & 0x8000))
      continue; // keep +0 only in the search table
    v.emplace_back(x, uint16_t(h));
  }
  std::sort(v.begin(), v.end());
  return v;
}

uint16_t round_half(const std::vector<std::pair<double, uint16_t>>& t, double x, const std::string& m,
                    bool bf) {
  const uint16_t inf = bf ? 0x7f80 : 0x7c00, sign = x < 0 ? 0x8000 : 0;
  auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(x, uint16_t(0)));
  if (it != t.end() && it->first == x)
    return x == 0 ? uint16_t(std::signbit(x) ? 0x8000 : 0) : it->second;
  const double maxv = t.back().first;
  // Neighbours (beyond the largest finite value the next one up is infinity).
  bool has_hi = it != t.end(), has_lo = it != t.begin();
  double lo = has_lo ? (it - 1)->first : -INFINITY, hi = has_hi ? it->first : INFINITY;
  uint16_t blo = has_lo ? (it - 1)->second : uint16_t(inf | 0x8000), bhi = has_hi ? it->second : inf;
  auto zero_sign = [&](uint16_t b, double v) { return v == 0 ? sign : b; }; // a zero result keeps x's sign
  if (m == "rz")
    return x > 0 ? zero_sign(blo, lo) : zero_sign(bhi, hi);
  if (m == "rm")
    return zero_sign(blo, lo);
  if (m == "rp")
    return zero_sign(bhi, hi);
  // rn: to the nearer; ties to the even mantissa; beyond max + half an ulp to infinity
  double ulp_top = maxv - t[t.size() - 2].first;
  if (std::fabs(x) >= maxv + ulp_top / 2)
    return uint16_t(sign | inf);
  if (!has_hi)
    return blo;
  if (!has_lo)
    return bhi;
  double dl = x - lo, dh = hi - x;
  if (dl < dh)
    return zero_sign(blo, lo);
  if (dh < dl)
    return zero_sign(bhi, hi);
  return zero_sign((blo & 1) ? bhi : blo, (blo & 1) ? hi : lo);
}

float wide_random() {
  float m = rand_float(1, 2) * (rand_u32() & 1 ? 1 : -1);
  return std::ldexp(m, int(rand_u32() % 50) - 30); // subnormal f16 range to past the f16 maximum
}

TEST(EmuPtxCvt, F32ToHalfEveryMode) {
  for (bool bf : {false, true}) {
    auto table = all_halves(bf);
    const uint32_t n = ragged();
    auto a = random_vec<uint32_t>(n, [&] {
      float f = bf ? std::ldexp(rand_float(1, 2), int(rand_u32() % 257) - 130) * (rand_u32() & 1 ? 1 : -1)
                   : wide_random();
      return std::bit_cast<uint32_t>(f);
    });
    for (const char* m : kModes) {
      std::string body =
          std::string("cvt.") + m + (bf ? ".bf16" : ".f16") + ".f32 %h, %a;\n cvt.u32.u16 %d, %h;";
      auto d = run_ew<uint32_t, uint32_t>(body, a, a, a);
      for (uint32_t i = 0; i < n; ++i)
        ASSERT_EQ(d[i], round_half(table, fbits(a[i]), m, bf)) << body << " x=" << fbits(a[i]);
    }
  }
}

TEST(EmuPtxCvt, F64ToF32EveryMode) {
  const uint32_t n = ragged();
  auto a = random_vec<uint64_t>(n, [] {
    return std::bit_cast<uint64_t>(std::ldexp(double(rand_float(1, 2)) + std::ldexp(double(rand_u32()), -50),
                                              int(rand_u32() % 300) - 150) *
                                   (rand_u32() & 1 ? 1 : -1));
  });
  for (const char* m : kModes) {
    std::string body = std::string("cvt.") + m + ".f32.f64 %t, %a;\n cvt.u64.u32 %d, %t;";
    auto d = run_ew<uint64_t, uint64_t>(body, a, a, a);
    for (uint32_t i = 0; i < n; ++i) {
      double x = std::bit_cast<double>(a[i]);
      ASSERT_EQ(uint32_t(d[i]), std::bit_cast<uint32_t>(round_q<float>(x, m))) << m << " " << x;
    }
  }
}

TEST(EmuPtxCvt, HalfToF32Exact) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] { return rand_u32() & 0xffff; });
  auto d = run_ew<uint32_t, uint32_t>("cvt.u16.u32 %h, %a;\n cvt.f32.f16 %d, %h;", a, a, a);
  auto e = run_ew<uint32_t, uint32_t>("cvt.u16.u32 %h, %a;\n cvt.f32.bf16 %d, %h;", a, a, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t h = a[i], ex = (h >> 10) & 31, mt = h & 1023;
    double want = ex == 0    ? std::ldexp(double(mt), -24)
                  : ex == 31 ? (mt ? NAN : INFINITY)
                             : std::ldexp(1024.0 + mt, int(ex) - 25);
    if (h & 0x8000)
      want = -want;
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(fbits(d[i])));
    else
      ASSERT_EQ(fbits(d[i]), float(want)) << std::hex << h;
    ASSERT_EQ(e[i], h << 16);
  }
}

int64_t round_int(double x, const std::string& m) {
  if (m == "rzi")
    return int64_t(std::trunc(x));
  if (m == "rmi")
    return int64_t(std::floor(x));
  if (m == "rpi")
    return int64_t(std::ceil(x));
  double f = std::floor(x), r = x - f; // rni: nearest, ties to even
  if (r > 0.5 || (r == 0.5 && std::fmod(f, 2.0) != 0))
    f += 1;
  return int64_t(f);
}

TEST(EmuPtxCvt, FloatToIntEveryModeSaturating) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] {
    uint32_t k = rand_u32() % 10;
    if (k == 0)
      return 0x7fc00000u; // NaN -> 0
    if (k == 1)
      return std::bit_cast<uint32_t>(rand_float(-1, 1) * 1e10f); // out of range
    if (k == 2)
      return std::bit_cast<uint32_t>(float(int(rand_u32() % 100) - 50) + 0.5f); // ties
    return std::bit_cast<uint32_t>(rand_float(-70000, 70000));
  });
  struct T {
    const char* type;
    int64_t lo, hi;
  };
  for (T t : {T{"s32", INT32_MIN, INT32_MAX}, T{"u32", 0, UINT32_MAX}, T{"s16", -32768, 32767},
              T{"u16", 0, 65535}, T{"s8", -128, 127}}) {
    for (const char* m : {"rni", "rzi", "rmi", "rpi"}) {
      std::string body = std::string("cvt.") + m + "." + t.type + ".f32 %d, %a;";
      if (std::string(t.type).size() == 2 || t.type[1] == '1') // 8/16-bit destinations into the b32 register
        body = std::string("cvt.") + m + "." + t.type + ".f32 %d, %a;";
      auto d = run_ew<uint32_t, uint32_t>(body, a, a, a);
      for (uint32_t i = 0; i < n; ++i) {
        float x = fbits(a[i]);
        int64_t want = std::isnan(x)
                           ? 0
                           : std::clamp<int64_t>(std::fabs(x) > 1e18 ? (x > 0 ? INT64_MAX / 2 : INT64_MIN / 2)
                                                                     : round_int(x, m),
                                                 t.lo, t.hi);
        // the narrow result is sign- or zero-extended into the 32-bit register
        ASSERT_EQ(d[i], uint32_t(int32_t(want) & (t.hi > 65535 || t.lo < -32768 ? 0xffffffff : 0xffffffff)))
            << body << " x=" << x;
      }
    }
  }
}

TEST(EmuPtxCvt, IntToFloatEveryMode) {
  const uint32_t n = ragged();
  auto a = random_vec<uint64_t>(n, [] { return rand_u64() >> (rand_u32() % 40); });
  for (const char* m : kModes) {
    auto d = run_ew<uint64_t, uint64_t>(std::string("cvt.") + m + ".f32.s64 %t, %a;\n cvt.u64.u32 %d, %t;", a,
                                        a, a);
    auto e = run_ew<uint64_t, uint64_t>(std::string("cvt.") + m + ".f64.u64 %d, %a;", a, a, a);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(uint32_t(d[i]), std::bit_cast<uint32_t>(round_q<float>(__float128(int64_t(a[i])), m))) << m;
      ASSERT_EQ(e[i], std::bit_cast<uint64_t>(round_q<double>(__float128(a[i]), m))) << m;
    }
  }
}

TEST(EmuPtxCvt, IntToIntAndSat) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] { return uint32_t(rand_int(-100000, 100000)); });
  struct K {
    const char* body;
    std::function<uint32_t(uint32_t)> ref;
  };
  const std::vector<K> cases = {
      {"cvt.s8.s32 %d, %a;", [](uint32_t x) { return uint32_t(int32_t(int8_t(x))); }},
      {"cvt.u8.s32 %d, %a;", [](uint32_t x) { return x & 0xff; }},
      {"cvt.sat.u8.s32 %d, %a;",
       [](uint32_t x) { return uint32_t(std::clamp<int32_t>(int32_t(x), 0, 255)); }},
      {"cvt.sat.s16.s32 %d, %a;",
       [](uint32_t x) { return uint32_t(std::clamp<int32_t>(int32_t(x), -32768, 32767)); }},
      {"cvt.sat.u16.u32 %d, %a;", [](uint32_t x) { return std::min<uint32_t>(x, 65535); }},
      {"cvt.u16.u32 %h, %a;\n cvt.s32.s16 %d, %h;", [](uint32_t x) { return uint32_t(int32_t(int16_t(x))); }},
      {"cvt.s64.s32 %x, %a;\n shr.u64 %x, %x, 32;\n cvt.u32.u64 %d, %x;",
       [](uint32_t x) { return int32_t(x) < 0 ? 0xffffffffu : 0u; }},
      {"cvt.rni.f32.f32 %d, %a;", [](uint32_t x) { return x; }}, // on integer-valued bits: see below
  };
  for (const auto& k : cases) {
    auto d = run_ew<uint32_t, uint32_t>(k.body, a, a, a);
    if (std::string(k.body).find("f32.f32") != std::string::npos)
      continue;
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], k.ref(a[i])) << k.body << " " << int32_t(a[i]);
  }
  // Float rounding to an integral float.
  auto f = random_vec<uint32_t>(n, [] { return std::bit_cast<uint32_t>(rand_float(-1000, 1000)); });
  for (const char* m : {"rni", "rzi", "rmi", "rpi"}) {
    auto d = run_ew<uint32_t, uint32_t>(std::string("cvt.") + m + ".f32.f32 %d, %a;", f, f, f);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(fbits(d[i]), float(round_int(fbits(f[i]), m))) << m;
  }
}

// cvt.rn.{f16x2,bf16x2}.f32 d, a, b: a goes to the upper half (shared/notes/ptx.md section 2).
TEST(EmuPtxCvt, PackedX2FirstSourceHigh) {
  auto tf = all_halves(false), tb = all_halves(true);
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] { return std::bit_cast<uint32_t>(rand_float(-60000, 60000)); });
  auto b = random_vec<uint32_t>(n, [] { return std::bit_cast<uint32_t>(rand_float(-2, 2)); });
  auto d = run_ew<uint32_t, uint32_t>("cvt.rn.f16x2.f32 %d, %a, %b;", a, b, a);
  auto e = run_ew<uint32_t, uint32_t>("cvt.rn.bf16x2.f32 %d, %a, %b;", a, b, a);
  auto r = run_ew<uint32_t, uint32_t>("cvt.rn.relu.bf16x2.f32 %d, %a, %b;", a, b, a);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(d[i], uint32_t(round_half(tf, fbits(a[i]), "rn", false)) << 16 |
                        round_half(tf, fbits(b[i]), "rn", false));
    ASSERT_EQ(e[i], uint32_t(round_half(tb, fbits(a[i]), "rn", true)) << 16 |
                        round_half(tb, fbits(b[i]), "rn", true));
    uint32_t hi = fbits(a[i]) < 0 ? 0 : round_half(tb, fbits(a[i]), "rn", true);
    uint32_t lo = fbits(b[i]) < 0 ? 0 : round_half(tb, fbits(b[i]), "rn", true);
    ASSERT_EQ(r[i], hi << 16 | lo);
  }
}

// f16 / bf16 arithmetic (scalar and x2) against double arithmetic rounded through the exhaustive table.
TEST(EmuPtxHalf, ArithmeticX2) {
  for (bool bf : {false, true}) {
    auto table = all_halves(bf);
    auto val = [&](uint16_t h) {
      return bf ? double(std::bit_cast<float>(uint32_t(h) << 16))
                : (((h >> 10) & 31) ? std::ldexp(1024.0 + (h & 1023), int((h >> 10) & 31) - 25)
                                    : std::ldexp(double(h & 1023), -24)) *
                      ((h & 0x8000) ? -1 : 1);
    };
    const uint32_t n = ragged();
    auto gen = [&] {
      auto one = [&] {
        float f = rand_float(-30, 30);
        uint32_t tb = std::bit_cast<uint32_t>(f);
        return bf ? uint16_t(tb >> 16) : round_half(table, f, "rz", false);
      };
      return uint32_t(one()) | uint32_t(one()) << 16;
    };
    auto a = random_vec<uint32_t>(n, gen), b = random_vec<uint32_t>(n, gen), c = random_vec<uint32_t>(n, gen);
    const std::string t = bf ? "bf16x2" : "f16x2";
    struct K {
      std::string op;
      std::function<double(double, double, double)> f;
    };
    std::vector<K> ks = {{"add.rn", [](double x, double y, double) { return x + y; }},
                         {"sub.rn", [](double x, double y, double) { return x - y; }},
                         {"mul.rn", [](double x, double y, double) { return x * y; }},
                         {"fma.rn", [](double x, double y, double z) { return x * y + z; }},
                         {"min", [](double x, double y, double) { return std::min(x, y); }},
                         {"max", [](double x, double y, double) { return std::max(x, y); }}};
    for (const auto& k : ks) {
      std::string body = k.op + "." + t + " %d, %a, %b" + (k.op == "fma.rn" ? ", %c;" : ";");
      auto d = run_ew<uint32_t, uint32_t>(body, a, b, c);
      for (uint32_t i = 0; i < n; ++i)
        for (int h = 0; h < 2; ++h) {
          double x = val(uint16_t(a[i] >> (16 * h))), y = val(uint16_t(b[i] >> (16 * h))),
                 z = val(uint16_t(c[i] >> (16 * h)));
          double exact = k.f(x, y, z);
          uint16_t want = round_half(table, exact, "rn", bf);
          uint16_t got = uint16_t(d[i] >> (16 * h));
          if (exact == 0)
            ASSERT_EQ(got & 0x7fff, 0) << body;
          else
            ASSERT_EQ(got, want) << body << " x=" << x << " y=" << y << " z=" << z;
        }
    }
    auto d = run_ew<uint32_t, uint32_t>("neg." + t + " %d, %a;", a, b, c);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], a[i] ^ 0x80008000u);
    d = run_ew<uint32_t, uint32_t>("abs." + t + " %d, %a;", a, b, c);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], a[i] & 0x7fff7fffu);
  }
}

} // namespace

namespace {

// .satfinite: overflow gives the largest finite value instead of infinity; .sat clamps to [0, 1].
TEST(EmuPtxCvt, SatfiniteAndSat) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(
      n, [] { return std::bit_cast<uint32_t>(rand_float(-2, 2) * (rand_u32() % 3 == 0 ? 1e5f : 1.0f)); });
  auto d = run_ew<uint32_t, uint32_t>("cvt.rn.satfinite.f16.f32 %h, %a;\n cvt.u32.u16 %d, %h;", a, a, a);
  auto e = run_ew<uint32_t, uint32_t>("cvt.rn.sat.f16.f32 %h, %a;\n cvt.u32.u16 %d, %h;", a, a, a);
  auto f = run_ew<uint32_t, uint32_t>("cvt.sat.f32.f32 %d, %a;", a, a, a);
  auto table = all_halves(false);
  for (uint32_t i = 0; i < n; ++i) {
    float x = fbits(a[i]);
    uint16_t want = std::fabs(x) >= 65520.0f ? uint16_t((x < 0 ? 0x8000 : 0) | 0x7bff)
                                             : round_half(table, x, "rn", false);
    ASSERT_EQ(d[i], want) << x;
    ASSERT_EQ(e[i], round_half(table, std::min(std::max(x, 0.0f), 1.0f), "rn", false)) << x;
    ASSERT_EQ(fbits(f[i]), std::min(std::max(x, 0.0f), 1.0f)) << x;
  }
}

} // namespace

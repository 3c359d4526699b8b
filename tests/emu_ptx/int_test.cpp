// Integer arithmetic of every width against an exact CPU reference on fresh random inputs.
#include <functional>

#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

template <class T> struct Case {
  const char* body;
  std::function<T(T, T, T)> ref;
};

template <class T> void check(const std::vector<Case<T>>& cases, std::function<T()> gen) {
  const uint32_t n = ragged();
  auto a = random_vec<T>(n, gen), b = random_vec<T>(n, gen), c = random_vec<T>(n, gen);
  for (const auto& k : cases) {
    auto d = run_ew<T, T>(k.body, a, b, c);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], k.ref(a[i], b[i], c[i]))
          << k.body << " a=" << +a[i] << " b=" << +b[i] << " c=" << +c[i];
  }
}

int32_t sat32(int64_t v) {
  return int32_t(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX));
}
int64_t sx24(uint32_t v) {
  return (v & 0x800000) ? int64_t(v & 0xffffff) - 0x1000000 : int64_t(v & 0xffffff);
}

TEST(EmuPtxInt, Arith32) {
  using U = uint32_t;
  std::vector<Case<U>> cases = {
      {"add.s32 %d, %a, %b;", [](U a, U b, U) { return U(a + b); }},
      {"sub.u32 %d, %a, %b;", [](U a, U b, U) { return U(a - b); }},
      {"add.sat.s32 %d, %a, %b;", [](U a, U b, U) { return U(sat32(int64_t(int32_t(a)) + int32_t(b))); }},
      {"sub.sat.s32 %d, %a, %b;", [](U a, U b, U) { return U(sat32(int64_t(int32_t(a)) - int32_t(b))); }},
      {"mul.lo.s32 %d, %a, %b;", [](U a, U b, U) { return U(uint64_t(a) * b); }},
      {"mul.hi.s32 %d, %a, %b;",
       [](U a, U b, U) { return U(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32); }},
      {"mul.hi.u32 %d, %a, %b;", [](U a, U b, U) { return U((uint64_t(a) * b) >> 32); }},
      {"mad.lo.u32 %d, %a, %b, %c;", [](U a, U b, U c) { return U(a * b + c); }},
      {"mad.hi.s32 %d, %a, %b, %c;",
       [](U a, U b, U c) { return U((uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32) + c); }},
      {"mad.hi.sat.s32 %d, %a, %b, %c;",
       [](U a, U b, U c) {
         return U(sat32((int64_t(int32_t(a)) * int32_t(b) >> 32) + int64_t(int32_t(c))));
       }},
      {"mul24.lo.s32 %d, %a, %b;", [](U a, U b, U) { return U(uint64_t(sx24(a) * sx24(b))); }},
      {"mul24.hi.u32 %d, %a, %b;",
       [](U a, U b, U) { return U((uint64_t(a & 0xffffff) * (b & 0xffffff)) >> 16); }},
      {"mad24.lo.u32 %d, %a, %b, %c;", [](U a, U b, U c) { return U((a & 0xffffff) * (b & 0xffffff) + c); }},
      {"sad.u32 %d, %a, %b, %c;", [](U a, U b, U c) { return U((a > b ? a - b : b - a) + c); }},
      {"sad.s32 %d, %a, %b, %c;",
       [](U a, U b, U c) { return U(uint32_t(std::llabs(int64_t(int32_t(a)) - int32_t(b))) + c); }},
      {"div.s32 %d, %a, %b;", [](U a, U b, U) { return U(int32_t(a) / int32_t(b)); }},
      {"div.u32 %d, %a, %b;", [](U a, U b, U) { return U(a / b); }},
      {"rem.s32 %d, %a, %b;", [](U a, U b, U) { return U(int32_t(a) % int32_t(b)); }},
      {"rem.u32 %d, %a, %b;", [](U a, U b, U) { return U(a % b); }},
      {"min.s32 %d, %a, %b;", [](U a, U b, U) { return U(std::min(int32_t(a), int32_t(b))); }},
      {"max.u32 %d, %a, %b;", [](U a, U b, U) { return std::max(a, b); }},
      {"min.u32 %d, %a, %b;", [](U a, U b, U) { return std::min(a, b); }},
      {"max.s32 %d, %a, %b;", [](U a, U b, U) { return U(std::max(int32_t(a), int32_t(b))); }},
      {"abs.s32 %d, %a;", [](U a, U, U) { return U(int32_t(a) < 0 ? 0u - a : a); }},
      {"neg.s32 %d, %a;", [](U a, U, U) { return U(0u - a); }},
      {"add.cc.u32 %t, %a, %b;\n addc.u32 %d, %c, 7;",
       [](U a, U b, U c) { return U(c + 7 + (uint64_t(a) + b > 0xffffffffull ? 1 : 0)); }},
      {"sub.cc.u32 %t, %a, %b;\n subc.u32 %d, %c, 0;", [](U a, U b, U c) { return U(c - (a < b ? 1 : 0)); }},
  };
  check<U>(cases, [] { return U(rand_int(INT32_MIN, INT32_MAX)); });
  // Small values too: mul24 and sad see their sign-extension paths, div sees exact quotients.
  check<U>(cases, [] { return U(rand_int(-3000, 3000)); });
}

TEST(EmuPtxInt, Arith64) {
  using U = uint64_t;
  using I = int64_t;
  std::vector<Case<U>> cases = {
      {"add.s64 %d, %a, %b;", [](U a, U b, U) { return a + b; }},
      {"sub.s64 %d, %a, %b;", [](U a, U b, U) { return a - b; }},
      {"mul.lo.u64 %d, %a, %b;", [](U a, U b, U) { return a * b; }},
      {"mul.hi.u64 %d, %a, %b;", [](U a, U b, U) { return U((unsigned __int128)a * b >> 64); }},
      {"mul.hi.s64 %d, %a, %b;", [](U a, U b, U) { return U((__int128)I(a) * I(b) >> 64); }},
      {"mad.lo.s64 %d, %a, %b, %c;", [](U a, U b, U c) { return a * b + c; }},
      {"div.s64 %d, %a, %b;", [](U a, U b, U) { return U(I(a) / I(b)); }},
      {"div.u64 %d, %a, %b;", [](U a, U b, U) { return a / b; }},
      {"rem.s64 %d, %a, %b;", [](U a, U b, U) { return U(I(a) % I(b)); }},
      {"rem.u64 %d, %a, %b;", [](U a, U b, U) { return a % b; }},
      {"min.s64 %d, %a, %b;", [](U a, U b, U) { return U(std::min(I(a), I(b))); }},
      {"max.u64 %d, %a, %b;", [](U a, U b, U) { return std::max(a, b); }},
      {"abs.s64 %d, %a;", [](U a, U, U) { return I(a) < 0 ? 0 - a : a; }},
      {"neg.s64 %d, %a;", [](U a, U, U) { return 0 - a; }},
  };
  check<U>(cases, [] { return U(rand_u64() | 1); });
  check<U>(cases, [] { return U(rand_int(-100000, 100000)); });
}

TEST(EmuPtxInt, Arith16) {
  using U = uint16_t;
  using I = int16_t;
  std::vector<Case<U>> cases = {
      {"add.u16 %d, %a, %b;", [](U a, U b, U) { return U(a + b); }},
      {"sub.s16 %d, %a, %b;", [](U a, U b, U) { return U(a - b); }},
      {"mul.lo.s16 %d, %a, %b;", [](U a, U b, U) { return U(a * b); }},
      {"mul.hi.u16 %d, %a, %b;", [](U a, U b, U) { return U((uint32_t(a) * b) >> 16); }},
      {"mul.hi.s16 %d, %a, %b;", [](U a, U b, U) { return U((int32_t(I(a)) * I(b)) >> 16); }},
      {"mad.lo.u16 %d, %a, %b, %c;", [](U a, U b, U c) { return U(a * b + c); }},
      {"div.s16 %d, %a, %b;", [](U a, U b, U) { return U(I(a) / I(b)); }},
      {"rem.u16 %d, %a, %b;", [](U a, U b, U) { return U(a % b); }},
      {"min.s16 %d, %a, %b;", [](U a, U b, U) { return U(std::min(I(a), I(b))); }},
      {"max.u16 %d, %a, %b;", [](U a, U b, U) { return std::max(a, b); }},
      {"abs.s16 %d, %a;", [](U a, U, U) { return U(I(a) < 0 ? -I(a) : I(a)); }},
  };
  check<U>(cases, [] { return U(rand_int(-32768, 32767)); });
}

TEST(EmuPtxInt, WideForms) {
  const uint32_t n = ragged();
  auto a = random_vec<uint32_t>(n, [] { return rand_int(INT32_MIN, INT32_MAX); });
  auto b = random_vec<uint32_t>(n, [] { return rand_int(INT32_MIN, INT32_MAX); });
  auto c = random_vec<uint32_t>(n, [] { return rand_int(INT32_MIN, INT32_MAX); });
  // Output is 64-bit: the kernel stores %d (b64), inputs 32-bit.
  Runner r;
  for (auto [body, ref] :
       std::vector<std::pair<std::string, std::function<uint64_t(uint32_t, uint32_t, uint32_t)>>>{
           {"mul.wide.s32 %d, %a, %b;",
            [](uint32_t a, uint32_t b, uint32_t) { return uint64_t(int64_t(int32_t(a)) * int32_t(b)); }},
           {"mul.wide.u32 %d, %a, %b;", [](uint32_t a, uint32_t b, uint32_t) { return uint64_t(a) * b; }},
           {"cvt.u64.u32 %x, %c;\n mad.wide.u32 %d, %a, %b, %x;",
            [](uint32_t a, uint32_t b, uint32_t c) { return uint64_t(a) * b + c; }},
           {"cvt.s64.s32 %x, %c;\n mad.wide.s32 %d, %a, %b, %x;",
            [](uint32_t a, uint32_t b, uint32_t c) {
              return uint64_t(int64_t(int32_t(a)) * int32_t(b) + int32_t(c));
            }},
       }) {
    auto d = run_ew<uint32_t, uint64_t>(body, a, b, c);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], ref(a[i], b[i], c[i])) << body;
  }
}

// #integer-arithmetic-instructions-div: division by zero is unspecified; the emulator documents all ones for
// div and the dividend for rem (device.h), and INT_MIN / -1 wraps.
TEST(EmuPtxInt, DivisionByZeroAsDocumented) {
  const uint32_t n = ragged(40, 100);
  auto a = random_vec<uint32_t>(n, [] { return rand_int(INT32_MIN, INT32_MAX); });
  std::vector<uint32_t> zero(n, 0), c(n, 1);
  auto d = run_ew<uint32_t, uint32_t>("div.u32 %d, %a, %b;", a, zero, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], 0xffffffffu);
  d = run_ew<uint32_t, uint32_t>("rem.s32 %d, %a, %b;", a, zero, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], a[i]);
  std::vector<uint32_t> mn(n, 0x80000000u), m1(n, 0xffffffffu);
  d = run_ew<uint32_t, uint32_t>("div.s32 %d, %a, %b;", mn, m1, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], 0x80000000u);
}

TEST(EmuPtxInt, BitCounts) {
  using U = uint32_t;
  auto popc = [](uint64_t v) {
    int k = 0;
    for (; v; v >>= 1)
      k += v & 1;
    return k;
  };
  auto clz = [](uint64_t v, int bits) {
    int k = 0;
    for (int i = bits - 1; i >= 0 && !((v >> i) & 1); --i)
      ++k;
    return k;
  };
  std::vector<Case<U>> cases = {
      {"popc.b32 %d, %a;", [&](U a, U, U) { return U(popc(a)); }},
      {"clz.b32 %d, %a;", [&](U a, U, U) { return U(clz(a, 32)); }},
      {"brev.b32 %d, %a;",
       [](U a, U, U) {
         U r = 0;
         for (int i = 0; i < 32; ++i)
           if (a >> i & 1)
             r |= 1u << (31 - i);
         return r;
       }},
      {"bfind.u32 %d, %a;", [&](U a, U, U) { return a ? U(31 - clz(a, 32)) : 0xffffffffu; }},
      {"bfind.s32 %d, %a;",
       [&](U a, U, U) {
         U x = int32_t(a) < 0 ? ~a : a;
         return x ? U(31 - clz(x, 32)) : 0xffffffffu;
       }},
      {"bfind.shiftamt.u32 %d, %a;", [&](U a, U, U) { return a ? U(clz(a, 32)) : 0xffffffffu; }},
  };
  check<U>(cases, [] { return U(rand_u32() >> (rand_u32() % 32)); });
  std::vector<Case<uint64_t>> c64 = {
      {"popc.b64 %t, %a;\n cvt.u64.u32 %d, %t;",
       [&](uint64_t a, uint64_t, uint64_t) { return uint64_t(popc(a)); }},
      {"clz.b64 %t, %a;\n cvt.u64.u32 %d, %t;",
       [&](uint64_t a, uint64_t, uint64_t) { return uint64_t(clz(a, 64)); }},
      {"brev.b64 %d, %a;",
       [](uint64_t a, uint64_t, uint64_t) {
         uint64_t r = 0;
         for (int i = 0; i < 64; ++i)
           if (a >> i & 1)
             r |= 1ull << (63 - i);
         return r;
       }},
  };
  check<uint64_t>(c64, [] { return rand_u64() >> (rand_u32() % 64); });
}

} // namespace

// Logic, shifts, bit fields, permutes, funnel shifts, comparisons and selection against bit-by-bit
// references on random inputs.
#include <functional>

#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

using U = uint32_t;

struct Case {
  std::string body;
  std::function<U(U, U, U)> ref;
};

void check(const std::vector<Case>& cases, std::function<U()> ga, std::function<U()> gb,
           std::function<U()> gc) {
  const uint32_t n = ragged();
  auto a = random_vec<U>(n, ga), b = random_vec<U>(n, gb), c = random_vec<U>(n, gc);
  for (const auto& k : cases) {
    auto d = run_ew<U, U>(k.body, a, b, c);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], k.ref(a[i], b[i], c[i]))
          << k.body << std::hex << " a=" << a[i] << " b=" << b[i] << " c=" << c[i];
  }
}

U bit(U x, U i) {
  return (x >> i) & 1;
}

TEST(EmuPtxBits, LogicAndShifts) {
  std::vector<Case> cases = {
      {"and.b32 %d, %a, %b;", [](U a, U b, U) { return a & b; }},
      {"or.b32 %d, %a, %b;", [](U a, U b, U) { return a | b; }},
      {"xor.b32 %d, %a, %b;", [](U a, U b, U) { return a ^ b; }},
      {"not.b32 %d, %a;", [](U a, U, U) { return ~a; }},
      {"cnot.b32 %d, %a;", [](U a, U, U) { return U(a == 0); }},
      {"and.b32 %t, %c, 63;\n shl.b32 %d, %a, %t;",
       [](U a, U, U c) { return (c & 63) >= 32 ? 0 : a << (c & 63); }},
      {"and.b32 %t, %c, 63;\n shr.u32 %d, %a, %t;",
       [](U a, U, U c) { return (c & 63) >= 32 ? 0 : a >> (c & 63); }},
      {"and.b32 %t, %c, 63;\n shr.s32 %d, %a, %t;",
       [](U a, U, U c) { return U(int32_t(a) >> std::min<U>(c & 63, 31)); }},
      {"and.b32 %t, %c, 63;\n shf.l.wrap.b32 %d, %a, %b, %t;",
       [](U a, U b, U c) {
         uint64_t v = uint64_t(b) << 32 | a;
         return U((v << (c & 31)) >> 32);
       }},
      {"and.b32 %t, %c, 63;\n shf.r.clamp.b32 %d, %a, %b, %t;",
       [](U a, U b, U c) {
         uint64_t v = uint64_t(b) << 32 | a;
         U s = std::min<U>(c & 63, 32);
         return U(v >> s);
       }},
      {"and.b32 %t, %c, 63;\n shf.l.clamp.b32 %d, %a, %b, %t;",
       [](U a, U b, U c) {
         uint64_t v = uint64_t(b) << 32 | a;
         U s = std::min<U>(c & 63, 32);
         return U((v << s) >> 32);
       }},
  };
  auto r = [] { return rand_u32() | 1; };
  check(cases, r, r, r);
}

TEST(EmuPtxBits, BitFields) {
  std::vector<Case> cases = {
      {"bfe.u32 %d, %a, %b, %c;",
       [](U a, U b, U c) {
         U pos = b & 0xff, len = c & 0xff, r = 0;
         for (U i = 0; i < len && i < 32; ++i)
           r |= (pos + i < 32 ? bit(a, pos + i) : 0) << i;
         return r;
       }},
      {"bfe.s32 %d, %a, %b, %c;",
       [](U a, U b, U c) {
         U pos = b & 0xff, len = c & 0xff;
         if (len == 0)
           return 0u;
         U msb = std::min<U>(pos + len - 1, 31), s = bit(a, msb), r = 0;
         for (U i = 0; i < 32; ++i)
           r |= (i < len ? (pos + i < 32 ? bit(a, pos + i) : s) : s) << i;
         return r;
       }},
      {"bfi.b32 %d, %a, %b, %c, 13;",
       [](U a, U b, U c) {
         U pos = c & 0xff, r = b;
         for (U i = 0; i < 13 && pos + i < 32; ++i)
           r = (r & ~(1u << (pos + i))) | (bit(a, i) << (pos + i));
         return r;
       }},
  };
  check(
      cases, [] { return rand_u32(); }, [] { return rand_u32() % 40; }, [] { return rand_u32() % 40; });
}

TEST(EmuPtxBits, PrmtEveryMode) {
  auto byte = [](U a, U b, U i) {
    uint64_t v = uint64_t(b) << 32 | a;
    return U(v >> (8 * (i & 7))) & 0xff;
  };
  std::vector<Case> cases = {
      {"prmt.b32 %d, %a, %b, %c;",
       [&](U a, U b, U c) {
         U r = 0;
         for (U i = 0; i < 4; ++i) {
           U s = (c >> (4 * i)) & 15, v = byte(a, b, s & 7);
           if (s & 8)
             v = (v & 0x80) ? 0xff : 0;
           r |= v << (8 * i);
         }
         return r;
       }},
  };
  // The modes as the ISA tables list them (selector c[1:0]): byte i of d comes from byte sel[i] of {b, a}.
  const U f4e[4][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}};
  const U b4e[4][4] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}};
  const U rc8[4][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}};
  const U ecl[4][4] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}};
  const U ecr[4][4] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}};
  const U rc16[4][4] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}};
  for (auto [mode, table] : std::vector<std::pair<const char*, const U(*)[4]>>{
           {"f4e", f4e}, {"b4e", b4e}, {"rc8", rc8}, {"ecl", ecl}, {"ecr", ecr}, {"rc16", rc16}}) {
    cases.push_back({std::string("prmt.b32.") + mode + " %d, %a, %b, %c;", [&, table](U a, U b, U c) {
                       U r = 0;
                       for (U i = 0; i < 4; ++i)
                         r |= byte(a, b, table[c & 3][i]) << (8 * i);
                       return r;
                     }});
  }
  check(
      cases, [] { return rand_u32(); }, [] { return rand_u32(); }, [] { return rand_u32(); });
}

TEST(EmuPtxBits, Lop3AllTables) {
  const U lut = rand_u32() & 0xff;
  std::vector<Case> cases;
  for (U l : {lut, 0x96u, 0xe8u, 0x80u, 0xfeu, U((lut * 7 + 3) & 0xff)})
    cases.push_back({"lop3.b32 %d, %a, %b, %c, " + std::to_string(l) + ";", [l](U a, U b, U c) {
                       U r = 0;
                       for (U i = 0; i < 32; ++i)
                         r |= bit(l, bit(a, i) << 2 | bit(b, i) << 1 | bit(c, i)) << i;
                       return r;
                     }});
  auto r = [] { return rand_u32(); };
  check(cases, r, r, r);
}

TEST(EmuPtxCompare, SetpEveryComparison) {
  struct Cmp {
    const char* name;
    std::function<bool(int64_t, int64_t)> s;
  };
  const std::vector<Cmp> ints = {{"eq", [](int64_t a, int64_t b) { return a == b; }},
                                 {"ne", [](int64_t a, int64_t b) { return a != b; }},
                                 {"lt", [](int64_t a, int64_t b) { return a < b; }},
                                 {"le", [](int64_t a, int64_t b) { return a <= b; }},
                                 {"gt", [](int64_t a, int64_t b) { return a > b; }},
                                 {"ge", [](int64_t a, int64_t b) { return a >= b; }}};
  auto small = [] { return U(rand_int(-4, 4)); };
  std::vector<Case> cases;
  for (const auto& c : ints) {
    cases.push_back({std::string("setp.") + c.name + ".s32 %p, %a, %b;\n selp.u32 %d, 7, 9, %p;",
                     [c](U a, U b, U) { return c.s(int32_t(a), int32_t(b)) ? 7u : 9u; }});
    cases.push_back({std::string("setp.") + c.name + ".u32 %p, %a, %b;\n selp.u32 %d, 7, 9, %p;",
                     [c](U a, U b, U) { return c.s(a, b) ? 7u : 9u; }});
  }
  for (auto [n, f] : std::vector<std::pair<const char*, std::function<bool(U, U)>>>{
           {"lo", [](U a, U b) { return a < b; }},
           {"ls", [](U a, U b) { return a <= b; }},
           {"hi", [](U a, U b) { return a > b; }},
           {"hs", [](U a, U b) { return a >= b; }}})
    cases.push_back({std::string("setp.") + n + ".u32 %p, %a, %b;\n selp.u32 %d, 7, 9, %p;",
                     [f](U a, U b, U) { return f(a, b) ? 7u : 9u; }});
  // Combining forms with a negated predicate source and the p|q outputs.
  cases.push_back({"setp.ne.s32 %q, %c, 0;\n setp.lt.and.s32 %p|%q, %a, %b, !%q;\n selp.u32 %t, 1, 0, %p;\n"
                   " selp.u32 %u, 2, 0, %q;\n or.b32 %d, %t, %u;",
                   [](U a, U b, U c) {
                     bool cc = !(c != 0), r = int32_t(a) < int32_t(b);
                     return U((r && cc) | ((!r && cc) << 1));
                   }});
  cases.push_back({"setp.ne.s32 %q, %c, 0;\n setp.gt.or.u32 %p|%q, %a, %b, %q;\n selp.u32 %t, 1, 0, %p;\n"
                   " selp.u32 %u, 2, 0, %q;\n or.b32 %d, %t, %u;",
                   [](U a, U b, U c) {
                     bool cc = c != 0, r = a > b;
                     return U((r || cc) | ((!r || cc) << 1));
                   }});
  cases.push_back({"setp.ne.s32 %q, %c, 0;\n setp.eq.xor.s32 %p, %a, %b, %q;\n selp.u32 %d, 1, 0, %p;",
                   [](U a, U b, U c) { return U((a == b) != (c != 0)); }});
  cases.push_back({"slct.u32.s32 %d, %a, %b, %c;", [](U a, U b, U c) { return int32_t(c) >= 0 ? a : b; }});
  cases.push_back(
      {"set.lt.u32.s32 %d, %a, %b;", [](U a, U b, U) { return int32_t(a) < int32_t(b) ? 0xffffffffu : 0u; }});
  check(cases, small, small, small);
}

TEST(EmuPtxCompare, FloatOrderedAndUnordered) {
  struct Cmp {
    const char* name;
    bool unordered;
    std::function<bool(float, float)> f;
  };
  const std::vector<Cmp> cmps = {{"eq", false, [](float a, float b) { return a == b; }},
                                 {"ne", false, [](float a, float b) { return a != b; }},
                                 {"lt", false, [](float a, float b) { return a < b; }},
                                 {"le", false, [](float a, float b) { return a <= b; }},
                                 {"gt", false, [](float a, float b) { return a > b; }},
                                 {"ge", false, [](float a, float b) { return a >= b; }},
                                 {"equ", true, [](float a, float b) { return a == b; }},
                                 {"neu", true, [](float a, float b) { return a != b; }},
                                 {"ltu", true, [](float a, float b) { return a < b; }},
                                 {"leu", true, [](float a, float b) { return a <= b; }},
                                 {"gtu", true, [](float a, float b) { return a > b; }},
                                 {"geu", true, [](float a, float b) { return a >= b; }},
                                 {"num", false, [](float, float) { return true; }},
                                 {"nan", true, [](float, float) { return false; }}};
  auto g = [] {
    U k = rand_u32() % 6;
    return k == 0 ? 0x7fc00001u : std::bit_cast<U>(float(int(rand_u32() % 5) - 2));
  };
  std::vector<Case> cases;
  for (const auto& c : cmps)
    cases.push_back(
        {std::string("setp.") + c.name + ".f32 %p, %a, %b;\n selp.u32 %d, 1, 0, %p;", [c](U a, U b, U) {
           float x = std::bit_cast<float>(a), y = std::bit_cast<float>(b);
           bool un = std::isnan(x) || std::isnan(y);
           if (std::string(c.name) == "num")
             return U(!un);
           if (std::string(c.name) == "nan")
             return U(un);
           return U(un ? c.unordered : c.f(x, y));
         }});
  cases.push_back({"selp.f32 %d, %a, 0f3F800000, %p;\n setp.gt.f32 %p, %a, %b;\n selp.f32 %d, %a, %b, %p;",
                   [](U a, U b, U) { return std::bit_cast<float>(a) > std::bit_cast<float>(b) ? a : b; }});
  check(cases, g, g, g);
}

} // namespace

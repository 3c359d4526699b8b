// Warp collectives against per-warp references: shfl.sync in every mode with random (odd) b and c values,
// vote, match, redux, elect, activemask, and warp synchronisation under both schedulers.
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

// n: a multiple of 32 (full warps), so every lane of the membermask executes.
uint32_t full_warps() {
  return 32 * (3 + rand_u32() % 10);
}

uint64_t shfl_ref(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b,
                  const std::vector<uint32_t>& c, uint32_t i, int mode) {
  uint32_t lane = i % 32, base = i - lane;
  uint32_t bval = b[i] & 31, cval = c[i] & 31, mask = (c[i] >> 8) & 31;
  uint32_t max_lane = (lane & mask) | (cval & ~mask), min_lane = lane & mask;
  int j;
  bool p;
  if (mode == 0)
    j = int(lane) - int(bval), p = j >= int(max_lane);
  else if (mode == 1)
    j = int(lane + bval), p = j <= int(max_lane);
  else if (mode == 2)
    j = int(lane ^ bval), p = j <= int(max_lane);
  else
    j = int(min_lane | (bval & ~mask)), p = j <= int(max_lane);
  if (!p)
    j = int(lane);
  return uint64_t(a[base + uint32_t(j)]) | uint64_t(p) << 32;
}

TEST(EmuPtxWarp, ShflEveryModeOddC) {
  const char* modes[] = {"up", "down", "bfly", "idx"};
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    const uint32_t n = full_warps();
    auto a = random_vec<uint32_t>(n, [] { return rand_u32(); });
    auto b = random_vec<uint32_t>(n, [] { return rand_u32() % 64; });
    // c: segment mask in bits 12:8 ((32 - width) << 8 for power-of-two widths, any value otherwise) and a
    // clamp in bits 4:0, odd values included; the same for a whole warp as compiled code gives it.
    std::vector<uint32_t> c(n);
    for (uint32_t w = 0; w < n / 32; ++w) {
      uint32_t width = 1u << (rand_u32() % 6), cv = (rand_u32() & 1) ? 31 : rand_u32() % 32;
      uint32_t seg = (rand_u32() % 3 == 0) ? rand_u32() % 32 : 32 - width;
      for (uint32_t l = 0; l < 32; ++l)
        c[w * 32 + l] = seg << 8 | cv | (rand_u32() & 0xffffe0e0u);
    }
    for (int m = 0; m < 4; ++m) {
      std::string body = std::string("shfl.sync.") + modes[m] +
                         ".b32 %t|%p, %a, %b, %c, -1;\n selp.u32 %u, 1, 0, %p;\n mov.b64 %d, {%t, %u};";
      auto d = run_ew<uint32_t, uint64_t>(body, a, b, c, o);
      for (uint32_t i = 0; i < n; ++i)
        ASSERT_EQ(d[i], shfl_ref(a, b, c, i, m))
            << modes[m] << " lane " << i % 32 << " b=" << b[i] << " c=0x" << std::hex << c[i];
    }
  }
}

TEST(EmuPtxWarp, ShflImmediateFormsAsCompiled) {
  const uint32_t n = full_warps();
  auto a = random_vec<uint32_t>(n, [] { return rand_u32(); });
  // Triton's bfly reduction (c = 31) and nvcc's down with a width of 8 (c = 0x181f).
  auto d = run_ew<uint32_t, uint32_t>("shfl.sync.bfly.b32 %d, %a, 2, 31, -1;", a, a, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], a[(i & ~31u) | ((i % 32) ^ 2)]);
  d = run_ew<uint32_t, uint32_t>("shfl.sync.down.b32 %d, %a, 3, 6175, -1;", a, a, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t lane = i % 32, seg_end = (lane & ~7u) | 7;
    ASSERT_EQ(d[i], lane + 3 <= seg_end ? a[i + 3] : a[i]) << lane;
  }
}

TEST(EmuPtxWarp, VoteMatchReduxElect) {
  const uint32_t n = full_warps();
  auto a = random_vec<uint32_t>(n, [] { return rand_u32() % 4; });
  auto b = random_vec<uint32_t>(n, [] { return rand_u32(); });
  auto per_warp = [&](uint32_t i, auto f) {
    uint32_t base = i & ~31u;
    return f(base);
  };
  auto ballot = [&](uint32_t base) {
    uint32_t m = 0;
    for (uint32_t l = 0; l < 32; ++l)
      if (a[base + l] & 1)
        m |= 1u << l;
    return m;
  };
  auto d = run_ew<uint32_t, uint32_t>(
      "and.b32 %t, %a, 1;\n setp.ne.u32 %p, %t, 0;\n vote.sync.ballot.b32 %d, %p, -1;", a, b, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], per_warp(i, ballot));
  d = run_ew<uint32_t, uint32_t>(
      "and.b32 %t, %a, 1;\n setp.ne.u32 %p, %t, 0;\n vote.sync.any.pred %q, %p, -1;\n"
      " vote.sync.all.pred %p, !%p, -1;\n selp.u32 %t, 1, 0, %q;\n selp.u32 %u, 2, 0, %p;\n"
      " or.b32 %d, %t, %u;",
      a, b, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t m = per_warp(i, ballot);
    ASSERT_EQ(d[i], uint32_t(m != 0) | uint32_t(m == 0) << 1);
  }
  d = run_ew<uint32_t, uint32_t>("match.any.sync.b32 %d, %a, -1;", a, b, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t base = i & ~31u, m = 0;
    for (uint32_t l = 0; l < 32; ++l)
      if (a[base + l] == a[i])
        m |= 1u << l;
    ASSERT_EQ(d[i], m);
  }
  d = run_ew<uint32_t, uint32_t>(
      "match.all.sync.b32 %t|%p, %a, -1;\n selp.u32 %u, 1, 0, %p;\n add.u32 %d, %t, %u;", a, b, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t base = i & ~31u;
    bool all = true;
    for (uint32_t l = 0; l < 32; ++l)
      all &= a[base + l] == a[base];
    ASSERT_EQ(d[i], all ? 0xffffffffu + 1u : 0u);
  }
  struct R {
    const char* op;
    uint32_t (*f)(uint32_t, uint32_t);
    uint32_t init;
  };
  for (R r : {R{"add.u32", [](uint32_t x, uint32_t y) { return x + y; }, 0},
              R{"min.s32", [](uint32_t x, uint32_t y) { return uint32_t(std::min(int32_t(x), int32_t(y))); },
                0x7fffffff},
              R{"max.u32", [](uint32_t x, uint32_t y) { return std::max(x, y); }, 0},
              R{"and.b32", [](uint32_t x, uint32_t y) { return x & y; }, ~0u},
              R{"or.b32", [](uint32_t x, uint32_t y) { return x | y; }, 0},
              R{"xor.b32", [](uint32_t x, uint32_t y) { return x ^ y; }, 0}}) {
    d = run_ew<uint32_t, uint32_t>(std::string("redux.sync.") + r.op + " %d, %b, -1;", a, b, a);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t base = i & ~31u, v = r.init;
      for (uint32_t l = 0; l < 32; ++l)
        v = r.f(v, b[base + l]);
      ASSERT_EQ(d[i], v) << r.op;
    }
  }
  // elect.sync with a membermask of the odd lanes, executed by them only.
  d = run_ew<uint32_t, uint32_t>(
      "mov.u32 %t, %laneid;\n and.b32 %t, %t, 1;\n setp.eq.u32 %p, %t, 0;\n mov.u32 %d, 99;\n"
      " @%p bra SKIP;\n elect.sync %u|%q, 0xaaaaaaaa;\n selp.u32 %d, 100, 0, %q;\n add.u32 %d, %d, %u;\n"
      "SKIP:",
      a, b, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], (i % 2 == 0) ? 99u : (i % 32 == 1 ? 101u : 1u)) << i;
}

TEST(EmuPtxWarp, ActivemaskFollowsDivergence) {
  const uint32_t n = full_warps();
  auto a = random_vec<uint32_t>(n, [] { return rand_u32() % 3; });
  auto d = run_ew<uint32_t, uint32_t>(
      "setp.eq.u32 %p, %a, 0;\n @%p bra TAKEN;\n activemask.b32 %d;\n bra.uni JOIN;\n"
      "TAKEN:\n activemask.b32 %d;\nJOIN:",
      a, a, a);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t base = i & ~31u, m = 0;
    for (uint32_t l = 0; l < 32; ++l)
      if ((a[base + l] == 0) == (a[i] == 0))
        m |= 1u << l;
    ASSERT_EQ(d[i], m);
  }
}

// Each lane writes its shared slot and reads its neighbour's: correct only with bar.warp.sync between.
std::string exchange_kernel(bool sync) {
  return header() + R"(
.visible .entry xchg(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  mad.lo.u32 %r5, %r1, 3, 11;
  st.shared.u32 [%r4], %r5;
)" + std::string(sync ? "  bar.warp.sync -1;\n" : "") +
         R"(
  xor.b32 %r6, %r1, 1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r2, %r6;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
}

TEST(EmuPtxWarp, MissingWarpSyncShowsUnderAdversarialScheduler) {
  for (bool sync : {true, false})
    for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
      eptx::PtxEmuOptions o;
      o.scheduler = sched;
      Runner r(o);
      r.load(exchange_kernel(sync));
      uint64_t out = r.upload(std::vector<uint32_t>(32));
      r.launch("xchg", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(out));
      auto d = r.download<uint32_t>(out, 32);
      bool right = true;
      for (uint32_t l = 0; l < 32; ++l)
        right &= d[l] == (l ^ 1) * 3 + 11;
      if (sync) {
        EXPECT_TRUE(right);
        EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      } else {
        EXPECT_FALSE(r.reports().empty()) << "missing bar.warp.sync not reported";
        EXPECT_TRUE(r.has(HazardKind::race) || r.has(HazardKind::uninitialized)) << r.all_reports();
        if (sched == eptx::Scheduler::adversarial) {
          EXPECT_FALSE(right) << "adversarial order gave the right data";
        }
      }
    }
}

} // namespace

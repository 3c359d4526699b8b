// Memory instructions and control flow: vector loads and stores in every space, generic addressing through
// cvta, dynamic shared memory, local memory, global and shared atomics (every operation), calls with .param
// passing, special registers over a 3-D grid and clusters.
#include <functional>
#include <map>

#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

TEST(EmuPtxMemory, VectorsThroughSharedLocalAndGeneric) {
  // Each thread: v4 load from global, v4 store to dynamic shared via a generic address, v2 round trip through
  // local memory, reads back its neighbour's shared vector after bar.sync, v4 store to global.
  std::string ptx = header() + R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry vec(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<12>;
  .local .align 8 .b8 scratch[16];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  ld.param.u64 %rd1, [in];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.nc.v4.u32 {%r4, %r5, %r6, %r7}, [%rd3];
  mov.u64 %rd4, dyn;
  cvta.shared.u64 %rd4, %rd4;
  add.s64 %rd5, %rd4, %rd2;
  st.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};
  mov.u64 %rd6, scratch;
  cvta.local.u64 %rd6, %rd6;
  st.v2.u32 [%rd6+8], {%r5, %r4};
  ld.local.v2.u32 {%r8, %r9}, [scratch+8];
  bar.sync 0;
  add.u32 %r10, %r1, 1;
  rem.u32 %r10, %r10, %r2;
  mov.u32 %r11, dyn;
  shl.b32 %r12, %r10, 4;
  add.u32 %r11, %r11, %r12;
  ld.shared.v4.u32 {%r13, %r14, %r15, %r16}, [%r11];
  add.u32 %r13, %r13, %r8;
  add.u32 %r14, %r14, %r9;
  ld.param.u64 %rd7, [out];
  add.s64 %rd8, %rd7, %rd2;
  st.global.v4.u32 [%rd8], {%r13, %r14, %r15, %r16};
  ret;
}
)";
  Runner r;
  r.load(ptx);
  const uint32_t T = ragged(40, 500);
  auto in = random_vec<uint32_t>(4 * T, [] { return rand_u32(); });
  uint64_t pin = r.upload(in), pout = r.upload(std::vector<uint32_t>(4 * T));
  r.launch("vec", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(pin).add(pout), 16 * T);
  auto out = r.download<uint32_t>(pout, 4 * T);
  for (uint32_t t = 0; t < T; ++t) {
    uint32_t nb = (t + 1) % T;
    ASSERT_EQ(out[4 * t + 0], in[4 * nb + 0] + in[4 * t + 1]);
    ASSERT_EQ(out[4 * t + 1], in[4 * nb + 1] + in[4 * t + 0]);
    ASSERT_EQ(out[4 * t + 2], in[4 * nb + 2]);
    ASSERT_EQ(out[4 * t + 3], in[4 * nb + 3]);
  }
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  // Too little dynamic shared memory: the accesses past it are reported.
  r.launch("vec", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(pin).add(pout), 16 * (T - 1));
  EXPECT_TRUE(r.has(HazardKind::out_of_bounds));
}

TEST(EmuPtxMemory, SignAndZeroExtendingLoads) {
  const uint32_t n = ragged();
  auto a = random_vec<uint8_t>(n, [] { return rand_u32() | 1; });
  auto b = a, c = a;
  auto d =
      run_ew<uint8_t, uint32_t>("ld.global.s8 %t, [%ra];\n ld.global.u8 %u, [%ra];\n shl.b32 %u, %u, 16;\n"
                                " xor.b32 %d, %t, %u;",
                                a, b, c);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], uint32_t(int32_t(int8_t(a[i]))) ^ (uint32_t(a[i]) << 16));
}

struct AtomCase {
  std::string op;
  std::function<uint32_t(uint32_t, uint32_t)> f;
};

// Every thread applies an atomic to one of a few counters (global and shared); the final values must equal
// the sequential fold (the operations commute) and the returned old values must be a permutation of the
// intermediate ones (checked through their sum for add).
TEST(EmuPtxMemory, AtomicsGlobalAndShared) {
  const std::vector<AtomCase> cases = {
      {"add.u32", [](uint32_t x, uint32_t y) { return x + y; }},
      {"min.u32", [](uint32_t x, uint32_t y) { return std::min(x, y); }},
      {"max.s32", [](uint32_t x, uint32_t y) { return uint32_t(std::max(int32_t(x), int32_t(y))); }},
      {"and.b32", [](uint32_t x, uint32_t y) { return x & y; }},
      {"or.b32", [](uint32_t x, uint32_t y) { return x | y; }},
      {"xor.b32", [](uint32_t x, uint32_t y) { return x ^ y; }},
  };
  for (const auto& k : cases)
    for (const char* space : {"global", "shared"}) {
      std::string ptx =
          header() + R"(
.visible .entry at(.param .u64 vals, .param .u64 ctr, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b32 s[4];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u32 %r5, [n];
  ld.param.u64 %rd1, [vals];
  ld.param.u64 %rd2, [ctr];
  setp.lt.u32 %p2, %r1, 4;
  shl.b32 %r9, %r1, 2;
  mov.u32 %r10, s;
  add.u32 %r10, %r10, %r9;
  @%p2 ld.global.u32 %r11, [%rd2+16];
  @%p2 st.shared.u32 [%r10], %r11;
  bar.sync 0;
  setp.ge.u32 %p1, %r4, %r5;
  @%p1 bra WAIT;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r6, [%rd4];
  and.b32 %r7, %r4, 3;
  shl.b32 %r7, %r7, 2;
)" +
          (std::string(space) == "global"
               ? "  cvt.u64.u32 %rd5, %r7;\n  add.s64 %rd5, %rd2, %rd5;\n  atom.global." + k.op +
                     " %r8, [%rd5], %r6;\n"
               : "  mov.u32 %r9, s;\n  add.u32 %r9, %r9, %r7;\n  atom.shared." + k.op +
                     " %r8, [%r9], %r6;\n") +
          R"(
WAIT:
  bar.sync 0;
  @!%p2 bra END;
)" +
          (std::string(space) == "shared"
               ? "  ld.shared.u32 %r11, [%r10];\n  mul.wide.u32 %rd6, %r1, 4;\n  add.s64 %rd6, %rd2, %rd6;\n"
                 "  mov.u32 %r2, %ctaid.x;\n  shl.b32 %r2, %r2, 4;\n  cvt.u64.u32 %rd7, %r2;\n"
                 "  add.s64 %rd6, %rd6, %rd7;\n  st.global.u32 [%rd6+32], %r11;\n"
               : "") +
          R"(
END:
  ret;
}
)";
      Runner r;
      r.load(ptx);
      const uint32_t n = ragged(500, 3000), T = 128, G = (n + T - 1) / T;
      auto v =
          random_vec<uint32_t>(n, [&] { return k.op == "add.u32" ? rand_u32() % 1000 + 1 : rand_u32() | 1; });
      uint32_t init = rand_u32() | 1;
      // ctr: 4 global counters, 4 initial values for the shared ones, then 4 results per CTA
      std::vector<uint32_t> ctr(8 + 4 * G, 0);
      for (int i = 0; i < 8; ++i)
        ctr[size_t(i)] = init;
      uint64_t pv = r.upload(v), pc = r.upload(ctr);
      r.launch("at", {G, 1, 1}, {T, 1, 1}, Runner::Args().add(pv).add(pc).add(n));
      auto got = r.download<uint32_t>(pc, ctr.size());
      EXPECT_TRUE(r.reports().empty()) << k.op << " " << space << "\n" << r.all_reports();
      if (std::string(space) == "global") {
        for (uint32_t c = 0; c < 4; ++c) {
          uint32_t want = init;
          for (uint32_t i = c; i < n; i += 4)
            want = k.f(want, v[i]);
          ASSERT_EQ(got[c], want) << k.op << " counter " << c;
        }
      } else {
        for (uint32_t g = 0; g < G; ++g)
          for (uint32_t c = 0; c < 4; ++c) {
            uint32_t want = init;
            for (uint32_t i = g * T + c; i < std::min(n, (g + 1) * T); i += 4)
              want = k.f(want, v[i]);
            ASSERT_EQ(got[8 + 4 * g + c], want) << k.op << " shared counter " << c << " CTA " << g;
          }
      }
    }
}

TEST(EmuPtxMemory, AtomicIncDecCasExchFloat) {
  const uint32_t n = ragged(64, 400);
  auto a = random_vec<uint32_t>(n, [] { return rand_u32() % 50 + 1; });
  // Per-thread private cell: inc/dec wrap rules, cas, exch and f32 add, each against the ISA formula.
  for (auto [body, ref] : std::vector<std::pair<std::string, std::function<uint64_t(uint32_t, uint32_t)>>>{
           {"st.global.u32 [%ra], %b;\n atom.global.inc.u32 %t, [%ra], %a;\n ld.global.u32 %u, [%ra];",
            [](uint32_t x, uint32_t y) { return uint64_t(y) | uint64_t(y >= x ? 0 : y + 1) << 32; }},
           {"st.global.u32 [%ra], %b;\n atom.global.dec.u32 %t, [%ra], %a;\n ld.global.u32 %u, [%ra];",
            [](uint32_t x, uint32_t y) {
              return uint64_t(y) | uint64_t((y == 0 || y > x) ? x : y - 1) << 32;
            }},
           {"st.global.u32 [%ra], %b;\n atom.global.cas.b32 %t, [%ra], %a, 77;\n ld.global.u32 %u, [%ra];",
            [](uint32_t x, uint32_t y) { return uint64_t(y) | uint64_t(y == x ? 77 : y) << 32; }},
           {"st.global.u32 [%ra], %b;\n atom.global.exch.b32 %t, [%ra], %a;\n ld.global.u32 %u, [%ra];",
            [](uint32_t x, uint32_t y) { return uint64_t(y) | uint64_t(x) << 32; }},
           {"cvt.rn.f32.u32 %t, %b;\n st.global.f32 [%ra], %t;\n cvt.rn.f32.u32 %u, %a;\n red.global.add.f32 "
            "[%ra], %u;\n"
            " ld.global.u32 %u, [%ra];\n mov.u32 %t, 0;",
            [](uint32_t x, uint32_t y) {
              return uint64_t(std::bit_cast<uint32_t>(float(y) + float(x))) << 32;
            }},
       }) {
    auto b = random_vec<uint32_t>(n, [] { return rand_u32() % 60 + 1; });
    for (uint32_t i = 0; i < n; i += 5)
      b[i] = a[i]; // cas hits and inc/dec edge cases
    auto d = run_ew<uint32_t, uint64_t>(body + "\n mov.b64 %d, {%t, %u};", a, b, a);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(d[i], ref(a[i], b[i])) << body << " a=" << a[i] << " b=" << b[i];
  }
}

TEST(EmuPtxControl, CallWithParamsAndDivergentLoops) {
  std::string ptx = header() + R"(
.func (.param .b32 ret) collatz_steps(.param .b32 x, .param .b32 cap)
{
  .reg .pred %p<3>;
  .reg .b32 %r<8>;
  ld.param.b32 %r1, [x];
  ld.param.b32 %r6, [cap];
  mov.u32 %r2, 0;
LOOP:
  setp.le.u32 %p1, %r1, 1;
  setp.ge.u32 %p2, %r2, %r6;
  or.pred %p1, %p1, %p2;
  @%p1 bra DONE;
  and.b32 %r3, %r1, 1;
  setp.eq.u32 %p1, %r3, 0;
  @%p1 shr.u32 %r1, %r1, 1;
  @!%p1 mad.lo.u32 %r1, %r1, 3, 1;
  add.u32 %r2, %r2, 1;
  bra.uni LOOP;
DONE:
  st.param.b32 [ret], %r2;
  ret;
}
.visible .entry steps(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r1, %r1, %r2, %r3;
  ld.param.u32 %r4, [n];
  setp.ge.u32 %p1, %r1, %r4;
  @%p1 exit;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  {
    .param .b32 param0;
    .param .b32 param1;
    .param .b32 retval0;
    st.param.b32 [param0], %r5;
    st.param.b32 [param1], 500;
    call.uni (retval0), collatz_steps, (param0, param1);
    ld.param.b32 %r6, [retval0];
  }
  ld.param.u64 %rd4, [out];
  add.s64 %rd5, %rd4, %rd2;
  st.global.u32 [%rd5], %r6;
  ret;
}
)";
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(ptx);
    const uint32_t n = ragged(100, 700);
    auto in = random_vec<uint32_t>(n, [] { return rand_u32() % 100000 + 1; });
    uint64_t pi = r.upload(in), po = r.upload(std::vector<uint32_t>(n));
    r.launch("steps", {(n + 63) / 64, 1, 1}, {64, 1, 1}, Runner::Args().add(pi).add(po).add(n));
    auto out = r.download<uint32_t>(po, n);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t x = in[i], s = 0;
      while (x > 1 && s < 500)
        x = (x & 1) ? 3 * x + 1 : x / 2, ++s;
      ASSERT_EQ(out[i], s) << in[i];
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  }
}

TEST(EmuPtxControl, SpecialRegistersOver3DGridAndClusters) {
  std::string ptx = header() + R"(
.visible .entry ids(.param .u64 out)
{
  .reg .b32 %r<24>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;   mov.u32 %r2, %tid.y;   mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;  mov.u32 %r5, %ntid.y;
  mov.u32 %r6, %ctaid.x; mov.u32 %r7, %ctaid.y; mov.u32 %r8, %ctaid.z;
  mov.u32 %r9, %nctaid.x; mov.u32 %r10, %nctaid.y;
  mad.lo.u32 %r11, %r3, %r5, %r2;
  mad.lo.u32 %r11, %r11, %r4, %r1;            // linear thread id
  mad.lo.u32 %r12, %r8, %r10, %r7;
  mad.lo.u32 %r12, %r12, %r9, %r6;            // linear CTA id
  mov.u32 %r13, %ntid.z;
  mul.lo.u32 %r14, %r4, %r5;
  mul.lo.u32 %r14, %r14, %r13;                // threads per CTA
  mad.lo.u32 %r15, %r12, %r14, %r11;          // global linear id
  mul.wide.u32 %rd1, %r15, 16;
  ld.param.u64 %rd2, [out];
  add.s64 %rd3, %rd2, %rd1;
  mov.u32 %r16, %laneid;
  mov.u32 %r17, %warpid;
  mov.u32 %r18, %cluster_ctarank;
  mov.u32 %r19, %lanemask_lt;
  mov.u32 %r20, %clusterid.x;
  mov.u32 %r21, %cluster_nctarank;
  shl.b32 %r17, %r17, 8;
  or.b32 %r16, %r16, %r17;
  shl.b32 %r20, %r20, 8;
  or.b32 %r18, %r18, %r20;
  shl.b32 %r21, %r21, 24;
  or.b32 %r18, %r18, %r21;
  st.global.v4.u32 [%rd3], {%r11, %r16, %r18, %r19};
  ret;
}
)";
  Runner r;
  r.load(ptx);
  isatune::loader::Dim3 g{4, 3, 2}, b{5, 7, 3}, cl{2, 1, 1};
  const uint32_t T = b.x * b.y * b.z, N = g.x * g.y * g.z * T;
  uint64_t out = r.upload(std::vector<uint32_t>(4 * N));
  r.launch("ids", g, b, Runner::Args().add(out), 0, cl);
  auto d = r.download<uint32_t>(out, 4 * N);
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t t = i % T, cta = i / T, cx = cta % g.x;
    ASSERT_EQ(d[4 * i], t);
    ASSERT_EQ(d[4 * i + 1], (t % 32) | (t / 32) << 8) << i;
    ASSERT_EQ(d[4 * i + 2], (cx % 2) | (cx / 2) << 8 | 2u << 24) << i;
    ASSERT_EQ(d[4 * i + 3], (1u << (t % 32)) - 1) << i;
  }
}

} // namespace

// CTA barriers beyond bar.sync 0: bar.red (popc/and/or), named barriers with thread counts, the bar.arrive
// producer / bar.sync consumer pattern (ordered for the race checker), the warpgroup ping-pong token
// (register barrier ids, 256 threads), exit releasing barriers, trap.
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

TEST(EmuPtxSync, BarRedPopcAndOr) {
  std::string ptx = header() + R"(
.visible .entry red(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  setp.ne.u32 %p1, %r5, 0;
  bar.red.popc.u32 %r6, 0, %p1;
  bar.red.and.pred %p2, 1, %p1;
  barrier.red.or.pred %p3, 2, !%p1;
  selp.u32 %r7, 0x10000, 0, %p2;
  selp.u32 %r8, 0x20000, 0, %p3;
  or.b32 %r6, %r6, %r7;
  or.b32 %r6, %r6, %r8;
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
    const uint32_t T = 32 * (1 + rand_u32() % 8) + (rand_u32() % 2) * 17, G = 5;
    auto in = random_vec<uint32_t>(T * G, [] { return rand_u32() % 3 == 0 ? 0u : 1u; });
    for (uint32_t t = 0; t < T; ++t)
      in[t] = 1; // CTA 0: all true
    uint64_t pi = r.upload(in), po = r.upload(std::vector<uint32_t>(T * G));
    r.launch("red", {G, 1, 1}, {T, 1, 1}, Runner::Args().add(pi).add(po));
    auto out = r.download<uint32_t>(po, T * G);
    for (uint32_t g = 0; g < G; ++g) {
      uint32_t pop = 0;
      for (uint32_t t = 0; t < T; ++t)
        pop += in[g * T + t];
      uint32_t want = pop | (pop == T ? 0x10000u : 0) | (pop != T ? 0x20000u : 0);
      for (uint32_t t = 0; t < T; ++t)
        ASSERT_EQ(out[g * T + t], want) << "CTA " << g << " thread " << t;
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  }
}

// Warp 0 produces into shared memory and arrives on barrier 1 (64 threads); warp 1 waits there and consumes.
// Barrier 2 (also 64) then tells the producer the buffer is free again, for several rounds.
TEST(EmuPtxSync, ProducerArriveConsumerSync) {
  std::string ptx = header() + R"(
.visible .entry pc(.param .u64 out, .param .u32 rounds)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .shared .align 4 .b32 buf[32];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  shl.b32 %r3, %r2, 2;
  mov.u32 %r4, buf;
  add.u32 %r4, %r4, %r3;
  ld.param.u32 %r5, [rounds];
  mov.u32 %r6, 0;
  mov.u32 %r9, 0;
  setp.lt.u32 %p1, %r1, 32;
LOOP:
  setp.ge.u32 %p2, %r6, %r5;
  @%p2 bra DONE;
  @!%p1 bra CONSUME;
  mad.lo.u32 %r7, %r6, 1000, %r2;
  st.shared.u32 [%r4], %r7;
  bar.arrive 1, 64;
  bar.sync 2, 64;
  bra.uni NEXT;
CONSUME:
  bar.sync 1, 64;
  xor.b32 %r8, %r3, 4;
  mov.u32 %r10, buf;
  add.u32 %r10, %r10, %r8;
  ld.shared.u32 %r7, [%r10];
  add.u32 %r9, %r9, %r7;
  bar.arrive 2, 64;
NEXT:
  add.u32 %r6, %r6, 1;
  bra.uni LOOP;
DONE:
  @%p1 bra END;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
END:
  ret;
}
)";
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(ptx);
    const uint32_t rounds = 2 + rand_u32() % 6;
    uint64_t out = r.upload(std::vector<uint32_t>(32));
    r.launch("pc", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(out).add(rounds));
    auto d = r.download<uint32_t>(out, 32);
    for (uint32_t l = 0; l < 32; ++l) {
      uint32_t want = 0;
      for (uint32_t k = 0; k < rounds; ++k)
        want += k * 1000 + (l ^ 1);
      ASSERT_EQ(d[l], want) << l;
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  }
}

// FA3's inter-warpgroup ping-pong: two groups of 128 threads (4 warps each) pass a token through named
// barriers 1 and 2 with register ids and 256 threads (group g waits at bar.sync 1+g, arrives at 2-g); group 1
// arrives once at the start and skips its last arrival. Each group's leader appends its group to a shared log
// while it holds the token: the log alternates 0, 1, 0, 1, ... on both schedulers, with no report. Mutants:
// group 1's first arrival dropped (deadlock at both barriers), bar.sync counting 128 against arrivals of 256
// (a thread-count mismatch).
TEST(EmuPtxSync, PingPongTokenBetweenWarpgroups) {
  const std::string ptx = header() + R"(
.visible .entry pp(.param .u64 out, .param .u32 rounds)
{
  .reg .pred %p<6>;
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 slog[64];
  .shared .align 4 .b32 cnt;
  mov.u32 %r1, %tid.x;
  mov.u32 %r8, cnt;
  mov.u32 %r9, slog;
  setp.eq.u32 %p5, %r1, 0;
  @%p5 st.shared.u32 [%r8], 0;
  bar.sync 0;
  shr.u32 %r2, %r1, 7;
  add.u32 %r3, %r2, 1;
  xor.b32 %r4, %r2, 1;
  add.u32 %r4, %r4, 1;
  setp.ne.u32 %p1, %r2, 0;
  and.b32 %r5, %r1, 127;
  setp.eq.u32 %p2, %r5, 0;
  ld.param.u32 %r6, [rounds];
  mov.u32 %r7, 0;
  @%p1 bar.arrive 1, 256;
LOOP:
  bar.sync %r3, 256;
  @!%p2 bra ARRIVE;
  ld.shared.u32 %r10, [%r8];
  shl.b32 %r11, %r10, 2;
  add.u32 %r11, %r9, %r11;
  st.shared.u32 [%r11], %r2;
  add.u32 %r10, %r10, 1;
  st.shared.u32 [%r8], %r10;
ARRIVE:
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p3, %r7, %r6;
  not.pred %p4, %p1;
  or.pred %p4, %p4, %p3;
  @%p4 bar.arrive %r4, 256;
  @%p3 bra LOOP;
  bar.sync 0;
  ld.param.u64 %rd1, [out];
  shl.b32 %r12, %r6, 1;
  setp.ge.u32 %p3, %r1, %r12;
  @%p3 bra TAIL;
  shl.b32 %r11, %r1, 2;
  add.u32 %r11, %r9, %r11;
  ld.shared.u32 %r10, [%r11];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3+4], %r10;
TAIL:
  @!%p5 bra END;
  ld.shared.u32 %r10, [%r8];
  st.global.u32 [%rd1], %r10;
END:
  ret;
}
)";
  auto run = [&](const std::string& text, eptx::Scheduler sched, uint32_t rounds,
                 std::vector<uint32_t>* got) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    auto r = std::make_unique<Runner>(o);
    r->load(text);
    uint64_t out = r->upload(std::vector<uint32_t>(1 + 2 * rounds, 0xdead));
    r->launch("pp", {1, 1, 1}, {256, 1, 1}, Runner::Args().add(out).add(rounds));
    if (got)
      *got = r->download<uint32_t>(out, 1 + 2 * rounds);
    return r;
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = ptx;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    SCOPED_TRACE(sched == eptx::Scheduler::lockstep ? "lockstep" : "adversarial");
    const uint32_t rounds = 2 + rand_u32() % 7;
    std::vector<uint32_t> d;
    auto r = run(ptx, sched, rounds, &d);
    ASSERT_EQ(d[0], 2 * rounds);
    for (uint32_t i = 0; i < 2 * rounds; ++i)
      ASSERT_EQ(d[1 + i], i % 2) << "log entry " << i;
    EXPECT_TRUE(r->reports().empty()) << r->all_reports();

    auto dl = run(replaced("@%p1 bar.arrive 1, 256;", "// dropped"), sched, rounds, nullptr);
    const HazardReport* h = dl->find(HazardKind::deadlock);
    ASSERT_TRUE(h) << dl->all_reports();
    EXPECT_NE(h->message.find("barrier 1"), std::string::npos) << h->str();
    EXPECT_NE(h->message.find("barrier 2"), std::string::npos) << h->str();

    auto mm = run(replaced("bar.sync %r3, 256;", "bar.sync %r3, 128;"), sched, rounds, nullptr);
    bool counts = false;
    for (const HazardReport& x : mm->reports())
      counts |= x.kind == HazardKind::divergence && x.message.find("thread counts") != std::string::npos;
    EXPECT_TRUE(counts) << mm->all_reports();
  }
}

TEST(EmuPtxSync, ExitedThreadsReleaseBarriersAndTrapStops) {
  std::string ptx = header() + R"(
.visible .entry ex(.param .u64 out, .param .u32 k)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [k];
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 exit;
  bar.sync 0;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  setp.eq.u32 %p1, %r2, 3;
  @%p1 trap;
  ret;
}
)";
  Runner r;
  r.load(ptx);
  const uint32_t k = 40 + rand_u32() % 50;
  uint64_t out = r.upload(std::vector<uint32_t>(128));
  r.launch("ex", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(out).add(k));
  auto d = r.download<uint32_t>(out, 128);
  for (uint32_t t = 0; t < 128; ++t)
    ASSERT_EQ(d[t], t < k ? k : 0u);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  try {
    r.launch("ex", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(out).add(uint32_t(3)));
    FAIL() << "trap did not stop the launch";
  } catch (const isatune::emu::EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("trap"), std::string::npos) << e.what();
  }
}

TEST(EmuPtxSync, MiscFloatAndCarry) {
  const uint32_t n = ragged();
  auto a = random_vec<uint64_t>(n, [] { return std::bit_cast<uint64_t>(double(rand_float(0.1f, 100))); });
  auto b = random_vec<uint64_t>(n, [] { return std::bit_cast<uint64_t>(double(rand_float(-100, 100))); });
  auto d = run_ew<uint64_t, uint64_t>("sqrt.rn.f64 %x, %a;\n rcp.rn.f64 %y, %b;\n add.rn.f64 %d, %x, %y;", a,
                                      b, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<double>(d[i]),
              std::sqrt(std::bit_cast<double>(a[i])) + 1.0 / std::bit_cast<double>(b[i]));
  d = run_ew<uint64_t, uint64_t>("copysign.f64 %d, %b, %a;", a, b, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(std::bit_cast<double>(d[i]),
              std::copysign(std::bit_cast<double>(a[i]), std::bit_cast<double>(b[i])));
  d = run_ew<uint64_t, uint64_t>(
      "testp.finite.f64 %p, %a;\n testp.normal.f64 %q, %b;\n selp.u64 %x, 1, 0, %p;\n"
      " selp.u64 %y, 2, 0, %q;\n or.b64 %d, %x, %y;",
      a, b, a);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], 3u);
  // 128-bit addition through the carry chain: {a, b} + {b, a}.
  auto e =
      run_ew<uint64_t, uint64_t>("add.cc.u64 %x, %a, %b;\n addc.cc.u64 %y, %b, %a;\n addc.u64 %d, 0, 0;\n"
                                 " xor.b64 %d, %d, %y;",
                                 a, b, a);
  for (uint32_t i = 0; i < n; ++i) {
    unsigned __int128 s = ((unsigned __int128)b[i] << 64 | a[i]) + ((unsigned __int128)a[i] << 64 | b[i]);
    uint64_t hi = uint64_t(s >> 64);
    bool carry_out = ((unsigned __int128)b[i] + a[i] + (uint64_t(a[i] + b[i]) < a[i] ? 1 : 0)) >> 64;
    ASSERT_EQ(e[i], hi ^ uint64_t(carry_out));
  }
}

} // namespace

// The checks: each mutation of a correct kernel is reported naming the line, the instruction, the thread,
// warp and CTA; the unmutated kernel reports nothing.
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

// The line number of the first line of `ptx` containing `needle`.
uint32_t line_of(const std::string& ptx, const std::string& needle) {
  size_t at = ptx.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return uint32_t(std::count(ptx.begin(), ptx.begin() + long(at), '\n') + 1);
}

// Phase 1 zeroes s[tid]; bar.sync; phase 2 writes s[tid] = f(tid) and (after a bar.sync, unless removed)
// reads s[(tid + 33) % ntid], a slot of another warp.
std::string neighbour_kernel(bool second_barrier) {
  return header() + R"(
.visible .entry nb(.param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[256];
  mov.u32 %r1, %tid.x;
  mov.u32 %r9, %ntid.x;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  st.shared.u32 [%r4], 0;
  bar.sync 0;
  mad.lo.u32 %r5, %r1, 7, 5;
  st.shared.u32 [%r4], %r5;
)" + std::string(second_barrier ? "  bar.sync 0;\n" : "") +
         R"(
  add.u32 %r6, %r1, 33;
  rem.u32 %r6, %r6, %r9;
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

TEST(EmuPtxChecks, RemovedBarSyncIsARace) {
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    const uint32_t T = 64 + 32 * (rand_u32() % 6);
    for (bool barrier : {true, false}) {
      eptx::PtxEmuOptions o;
      o.scheduler = sched;
      Runner r(o);
      std::string ptx = neighbour_kernel(barrier);
      r.load(ptx);
      uint64_t out = r.upload(std::vector<uint32_t>(T));
      r.launch("nb", {2, 1, 1}, {T, 1, 1}, Runner::Args().add(out));
      auto d = r.download<uint32_t>(out, T);
      if (barrier) {
        for (uint32_t t = 0; t < T; ++t)
          ASSERT_EQ(d[t], ((t + 33) % T) * 7 + 5);
        EXPECT_TRUE(r.reports().empty()) << r.all_reports();
        continue;
      }
      const HazardReport* race = r.find(HazardKind::race);
      ASSERT_TRUE(race) << r.all_reports();
      // Named: the kernel, a line of the write or the read, the instruction, and both threads.
      uint32_t st_line = line_of(ptx, "st.shared.u32 [%r4], %r5"),
               ld_line = line_of(ptx, "ld.shared.u32 %r7");
      EXPECT_TRUE(race->line == st_line || race->line == ld_line) << race->str();
      EXPECT_NE(race->message.find("thread ("), std::string::npos) << race->str();
      EXPECT_NE(race->str().find("shared"), std::string::npos);
      EXPECT_EQ(race->kernel, "nb");
    }
  }
}

TEST(EmuPtxChecks, UninitialisedSharedRead) {
  std::string ptx = header() + R"(
.visible .entry un(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[64];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  setp.eq.u32 %p1, %r1, 5;
  @!%p1 st.shared.u32 [%r4], %r1;
  bar.sync 0;
  ld.shared.u32 %r7, [%r4];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
  ptx.insert(ptx.find(".shared"), ".reg .pred %p1;\n  ");
  Runner r;
  r.load(ptx);
  uint64_t out = r.upload(std::vector<uint32_t>(64));
  r.launch("un", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(out));
  const HazardReport* u = r.find(HazardKind::uninitialized);
  ASSERT_TRUE(u) << r.all_reports();
  EXPECT_EQ(u->line, line_of(ptx, "ld.shared.u32 %r7"));
  EXPECT_EQ(u->thread[0], 5u);
  EXPECT_EQ(u->count, 1u);
  EXPECT_FALSE(r.has(HazardKind::race)) << r.all_reports();
}

std::string oob_kernel() {
  return header() + R"(
.visible .entry oob(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.gt.u32 %p1, %r1, %r2;
  @%p1 bra END;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
END:
  ret;
}
)";
}

TEST(EmuPtxChecks, OutOfBoundsGlobalNamesLineAndThread) {
  const uint32_t n = ragged(40, 200);
  Runner r;
  std::string ptx = oob_kernel(); // off by one: `gt` lets thread n store past the end
  r.load(ptx);
  uint64_t out = r.upload(std::vector<uint32_t>(n));
  r.launch("oob", {1, 1, 1}, {256, 1, 1}, Runner::Args().add(out).add(n));
  const HazardReport* o = r.find(HazardKind::out_of_bounds);
  ASSERT_TRUE(o) << r.all_reports();
  EXPECT_EQ(o->line, line_of(ptx, "st.global.u32"));
  EXPECT_EQ(o->thread[0], n);
  EXPECT_EQ(o->wave, n / 32);
  EXPECT_EQ(o->count, 1u);
  EXPECT_NE(o->disassembly.find("st.global.u32"), std::string::npos);
  auto d = r.download<uint32_t>(out, n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], i);
  // Strict mode throws at the first report.
  eptx::PtxEmuOptions s;
  s.strict = true;
  Runner strict(s);
  strict.load(ptx);
  uint64_t out2 = strict.upload(std::vector<uint32_t>(n));
  EXPECT_THROW(strict.launch("oob", {1, 1, 1}, {256, 1, 1}, Runner::Args().add(out2).add(n)),
               isatune::emu::HazardError);
}

TEST(EmuPtxChecks, SharedOutOfBoundsAndMisaligned) {
  std::string ptx = header() + R"(
.visible .entry sh(.param .u32 k)
{
  .reg .b32 %r<8>;
  .shared .align 4 .b32 s[32];
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [k];
  mul.lo.u32 %r3, %r1, %r2;
  mov.u32 %r4, s;
  add.u32 %r5, %r4, %r3;
  st.shared.u32 [%r5], %r1;
  ret;
}
)";
  Runner r;
  r.load(ptx);
  r.launch("sh", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(uint32_t(8))); // threads 16.. are past 128 bytes
  const HazardReport* o = r.find(HazardKind::out_of_bounds);
  ASSERT_TRUE(o) << r.all_reports();
  EXPECT_EQ(o->line, line_of(ptx, "st.shared.u32"));
  EXPECT_EQ(o->thread[0], 16u);
  EXPECT_EQ(o->count, 16u);
  r.dev->clear_reports();
  r.launch("sh", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(uint32_t(2))); // odd threads misaligned
  const HazardReport* m = r.find(HazardKind::unaligned);
  ASSERT_TRUE(m) << r.all_reports();
  EXPECT_EQ(m->thread[0], 1u);
  EXPECT_EQ(m->count, 16u);
}

TEST(EmuPtxChecks, DeadlockListsWaitingWarps) {
  std::string ptx = header() + R"(
.visible .entry dl()
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 32;
  @%p1 bra FIRST;
  bar.sync 2, 64;
  bra.uni END;
FIRST:
  bar.sync 1, 64;
END:
  ret;
}
)";
  Runner r;
  r.load(ptx);
  r.launch("dl", {3, 1, 1}, {64, 1, 1}, Runner::Args());
  const HazardReport* d = r.find(HazardKind::deadlock);
  ASSERT_TRUE(d) << r.all_reports();
  EXPECT_EQ(d->count, 3u); // once per CTA
  EXPECT_NE(d->message.find("warp 0"), std::string::npos) << d->str();
  EXPECT_NE(d->message.find("warp 1"), std::string::npos) << d->str();
  EXPECT_NE(d->message.find("barrier 1"), std::string::npos) << d->str();
  EXPECT_NE(d->message.find("barrier 2"), std::string::npos) << d->str();
  EXPECT_TRUE(d->line == line_of(ptx, "bar.sync 2") || d->line == line_of(ptx, "bar.sync 1")) << d->str();
}

TEST(EmuPtxChecks, DivergentAlignedBarrier) {
  std::string ptx = header() + R"(
.visible .entry dv()
{
  .reg .pred %p1;
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  setp.lt.u32 %p1, %r2, 16;
  @%p1 bra LOW;
  bar.sync 0;
  bra.uni END;
LOW:
  bar.sync 0;
END:
  ret;
}
)";
  Runner r;
  r.load(ptx);
  r.launch("dv", {1, 1, 1}, {64, 1, 1}, Runner::Args());
  const HazardReport* d = r.find(HazardKind::divergence);
  ASSERT_TRUE(d) << r.all_reports();
  EXPECT_FALSE(r.has(HazardKind::deadlock)) << r.all_reports();
}

TEST(EmuPtxChecks, ShuffleOutsideMembermask) {
  // Lanes 0-15 shuffle with membermask 0xffff but index lanes 16-31: outside the mask.
  std::string body = "mov.u32 %t, %laneid;\n setp.lt.u32 %p, %t, 16;\n mov.u32 %d, 0;\n @!%p bra SKIP;\n"
                     " add.u32 %u, %t, 16;\n shfl.sync.idx.b32 %d, %a, %u, 31, 0xffff;\nSKIP:";
  const uint32_t n = 64;
  auto a = random_vec<uint32_t>(n, [] { return rand_u32(); });
  Runner r;
  r.load(ew_kernel(32, 32, body));
  uint64_t pa = r.upload(a), pd = r.upload(std::vector<uint32_t>(n));
  r.launch("ew", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(pa).add(pa).add(pa).add(pd).add(n));
  const HazardReport* m = r.find(HazardKind::membermask);
  ASSERT_TRUE(m) << r.all_reports();
  EXPECT_NE(m->message.find("not in the membermask"), std::string::npos) << m->str();
  EXPECT_EQ(m->thread[0], 0u);
  // A lane executing a collective outside its own membermask.
  r.dev->clear_reports();
  Runner r2;
  r2.load(ew_kernel(32, 32, "vote.sync.ballot.b32 %d, %p, 0x1;"));
  uint64_t pa2 = r2.upload(a), pd2 = r2.upload(std::vector<uint32_t>(n));
  r2.launch("ew", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(pa2).add(pa2).add(pa2).add(pd2).add(n));
  ASSERT_TRUE(r2.has(HazardKind::membermask)) << r2.all_reports();
}

TEST(EmuPtxChecks, ReportsAsDiagnosticLines) {
  Runner r;
  std::string ptx = oob_kernel();
  r.load(ptx);
  uint64_t out = r.upload(std::vector<uint32_t>(10));
  r.launch("oob", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(out).add(uint32_t(10)));
  auto lines = r.dev->take_diagnostics();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("oob: line " + std::to_string(line_of(ptx, "st.global.u32"))), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("thread (10,0,0)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("warp 0"), std::string::npos) << lines[0];
  EXPECT_TRUE(r.dev->take_diagnostics().empty());
}

} // namespace

namespace {

// if/else with a full-mask shfl.sync in each branch: the lanes of one warp reach different shuffles.
TEST(EmuPtxChecks, DivergentFullMaskShuffle) {
  std::string body =
      "mov.u32 %t, %laneid;\n setp.lt.u32 %p, %t, 8;\n @%p bra A;\n"
      " shfl.sync.bfly.b32 %d, %a, 1, 31, -1;\n bra.uni J;\nA:\n shfl.sync.bfly.b32 %d, %a, 2, 31, -1;\nJ:";
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(ew_kernel(32, 32, body));
    const uint32_t n = 64;
    uint64_t pa = r.upload(random_vec<uint32_t>(n, [] { return rand_u32(); })),
             pd = r.upload(std::vector<uint32_t>(n));
    r.launch("ew", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(pa).add(pa).add(pa).add(pd).add(n));
    const HazardReport* d = r.find(HazardKind::divergence);
    ASSERT_TRUE(d) << r.all_reports();
    EXPECT_NE(d->disassembly.find("shfl.sync.bfly"), std::string::npos) << d->str();
  }
}

// Module-level .const (initialised) and .global variables, addressed by symbol and through cvta.
TEST(EmuPtxMemory, ConstAndGlobalVariables) {
  std::string ptx = header() + R"(
.const .align 4 .u32 table[4] = {11, 22, 33, 44};
.global .align 4 .u32 total;
.visible .entry cg(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  shl.b32 %r2, %r2, 2;
  mov.u64 %rd1, table;
  cvt.u64.u32 %rd2, %r2;
  add.s64 %rd1, %rd1, %rd2;
  ld.const.u32 %r3, [%rd1];
  atom.global.add.u32 %r4, [total], %r3;
  mov.u64 %rd3, total;
  cvta.global.u64 %rd3, %rd3;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.u32 [%rd4], %r3;
  ret;
}
)";
  Runner r;
  r.load(ptx);
  const uint32_t T = ragged(33, 400);
  uint64_t out = r.upload(std::vector<uint32_t>(T));
  r.launch("cg", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(out));
  auto d = r.download<uint32_t>(out, T);
  for (uint32_t t = 0; t < T; ++t)
    ASSERT_EQ(d[t], 11 * (t % 4 + 1));
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
}

} // namespace

namespace {

// Warp 1 reads s[0]; warp 0 spins, then thread 0 reads s[0] too and overwrites it with no barrier: the write
// races with warp 1's reads even though the last read before it was thread 0's own.
TEST(EmuPtxChecks, WriteAfterManyReaders) {
  std::string ptx = header() + R"(
.visible .entry war(.param .u64 out)
{
  .reg .pred %p<5>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .shared .align 4 .b32 s[1];
  mov.u32 %r1, %tid.x;
  setp.eq.u32 %p1, %r1, 0;
  setp.ge.u32 %p3, %r1, 32;
  or.pred %p4, %p1, %p3;
  @%p1 st.shared.u32 [s], 7;
  bar.sync 0;
  mov.u32 %r2, 0;
  @%p3 bra READ;
  mov.u32 %r3, 0;
SPIN:
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p2, %r3, 500;
  @%p2 bra SPIN;
READ:
  @%p4 ld.shared.u32 %r2, [s];
  @%p1 st.shared.u32 [s], 9;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";
  Runner r;
  r.load(ptx);
  uint64_t out = r.upload(std::vector<uint32_t>(64));
  r.launch("war", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(out));
  const HazardReport* race = r.find(HazardKind::race);
  ASSERT_TRUE(race) << r.all_reports();
  EXPECT_EQ(race->line, line_of(ptx, "@%p1 st.shared.u32 [s], 9"));
  EXPECT_NE(race->message.find("write-after-read"), std::string::npos) << race->str();
}

} // namespace

// mbarrier phase semantics (arrive counts and state tokens, parity and token waits, tx-count with expect_tx /
// complete_tx in either order, arrive with a count, arrive_drop), misuse reports (arrive count overflow, use
// before init, overwriting a live mbarrier), setmaxnreg's register budget, and the sm_90a GEMM fixture's
// cluster / mbarrier / TMA / setmaxnreg forms all decoding.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "emu_ptx_test.h"
#include "isatune/ptx/tensor_map.h"
#include "ptxas_check.h"

using namespace emu_ptx_test;

namespace {

// out[t] = pending count after t's arrival (threads < C) | test results as bits 16-23.
std::string phases_kernel() {
  return header() + R"(
.visible .entry mb(.param .u64 out, .param .u32 count)
{
  .reg .pred %p<16>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [count];
  mov.u32 %r3, bar;
  setp.eq.u32 %p0, %r1, 0;
  setp.eq.u32 %p9, %r1, 1;
  @%p0 mbarrier.init.shared::cta.b64 [%r3], %r2;
  bar.sync 0;
  // phase 0: threads < C arrive once each
  setp.lt.u32 %p1, %r1, %r2;
  mov.b64 %rd1, 0;
  @%p1 mbarrier.arrive.shared::cta.b64 %rd1, [%r3];
  mbarrier.pending_count.b64 %r4, %rd1;
W0:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra W0;
  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r3], 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r3], 1;
  setp.eq.u32 %p5, %r1, %r1;
  @%p1 mbarrier.test_wait.shared::cta.b64 %p5, [%r3], %rd1;
  bar.sync 0;
  // phase 1: thread 0 arrives with expect_tx 64, threads 1..C-1 arrive; the phase waits for the bytes
  @%p0 mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [%r3], 64;
  setp.ne.u32 %p10, %r1, 0;
  and.pred %p10, %p10, %p1;
  @%p10 mbarrier.arrive.shared::cta.b64 %rd2, [%r3];
  bar.sync 0;
  mbarrier.test_wait.parity.shared::cta.b64 %p6, [%r3], 1;
  bar.sync 0;
  @%p9 mbarrier.complete_tx.shared::cta.b64 [%r3], 48;
  @%p9 mbarrier.complete_tx.shared::cta.b64 [%r3], 16;
W1:
  mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p7, [%r3], 1, 1000;
  @!%p7 bra W1;
  bar.sync 0;
  // phase 2: complete_tx before expect_tx (tx-count negative), then one arrival of count C
  @%p9 mbarrier.complete_tx.shared::cta.b64 [%r3], 32;
  bar.sync 0;
  @%p0 mbarrier.expect_tx.shared::cta.b64 [%r3], 32;
  @%p0 mbarrier.arrive.release.cta.shared::cta.b64 %rd3, [%r3], %r2;
W2:
  mbarrier.try_wait.parity.shared::cta.b64 %p8, [%r3], 0;
  @!%p8 bra W2;
  bar.sync 0;
  // phases 3 and 4: thread 0 drops out (arrive_drop), threads 1..C-1 arrive twice
  @%p0 mbarrier.arrive_drop.shared::cta.b64 %rd4, [%r3];
  @%p10 mbarrier.arrive.shared::cta.b64 %rd4, [%r3];
W3:
  mbarrier.try_wait.parity.shared::cta.b64 %p11, [%r3], 1;
  @!%p11 bra W3;
  bar.sync 0;
  @%p10 mbarrier.arrive.shared::cta.b64 %rd4, [%r3];
W4:
  mbarrier.test_wait.parity.shared::cta.b64 %p12, [%r3], 0;
  @!%p12 bra W4;
  bar.sync 0;
  @%p0 mbarrier.inval.shared::cta.b64 [%r3];
  selp.u32 %r5, 0x10000, 0, %p3;
  selp.u32 %r6, 0x20000, 0, %p4;
  or.b32 %r5, %r5, %r6;
  selp.u32 %r6, 0x40000, 0, %p5;
  or.b32 %r5, %r5, %r6;
  selp.u32 %r6, 0x80000, 0, %p6;
  or.b32 %r5, %r5, %r6;
  and.b32 %r4, %r4, 0xffff;
  or.b32 %r5, %r5, %r4;
  ld.param.u64 %rd5, [out];
  mul.wide.u32 %rd6, %r1, 4;
  add.s64 %rd5, %rd5, %rd6;
  st.global.u32 [%rd5], %r5;
  ret;
}
)";
}

TEST(EmuPtxMbarrier, PhaseSemantics) {
  expect_ptxas_accepts(phases_kernel());
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(phases_kernel());
    const uint32_t T = 33 + rand_u32() % 200, C = 2 + rand_u32() % (T - 1);
    uint64_t po = r.upload(std::vector<uint32_t>(T));
    r.launch("mb", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(po).add(C));
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    auto out = r.download<uint32_t>(po, T);
    std::vector<uint32_t> pend;
    for (uint32_t t = 0; t < T; ++t) {
      const uint32_t v = out[t];
      EXPECT_EQ(v >> 16 & 1, 1u) << "thread " << t << ": parity 0 completed";
      EXPECT_EQ(v >> 17 & 1, 0u) << "thread " << t << ": parity 1 is the current phase";
      EXPECT_EQ(v >> 18 & 1, 1u) << "thread " << t << ": the token's phase completed";
      EXPECT_EQ(v >> 19 & 1, 0u) << "thread " << t << ": phase 1 waits for 64 transaction bytes";
      if (t < C)
        pend.push_back(v & 0xffff);
      else
        EXPECT_EQ(v & 0xffff, 0u);
    }
    // Each arrival sees one fewer pending arrival: the counts after the C arrivals are C-1 ... 0.
    std::sort(pend.begin(), pend.end());
    for (uint32_t k = 0; k < C; ++k)
      ASSERT_EQ(pend[k], k);
  }
}

// Misuse, one kernel per mode: 0 arrive count overflow (a second arrival on a count-1 phase still waiting for
// its bytes), 1 use before init, 2 a plain store over a live mbarrier, 3 a count larger than pending, 4 a
// phase still waiting for 16 of its expected bytes when the kernel ends.
std::string misuse_kernel() {
  return header() + R"(
.visible .entry bad(.param .u32 mode)
{
  .reg .pred %p<8>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [mode];
  mov.u32 %r3, bar;
  setp.eq.u32 %p0, %r1, 0;
  setp.eq.u32 %p1, %r1, 1;
  setp.eq.u32 %p2, %r2, 1;
  @%p2 bra NOINIT;
  @%p0 mbarrier.init.shared::cta.b64 [%r3], 1;
  bar.sync 0;
  setp.eq.u32 %p3, %r2, 0;
  @!%p3 bra M2;
  @%p0 mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r3], 16;
  bar.sync 0;
  @%p1 mbarrier.arrive.shared::cta.b64 %rd1, [%r3];
  bar.sync 0;
  @%p0 mbarrier.complete_tx.shared::cta.b64 [%r3], 16;
  ret;
M2:
  setp.eq.u32 %p4, %r2, 2;
  @!%p4 bra M3;
  @%p0 st.shared.u32 [%r3], 5;
  bar.sync 0;
  @%p0 mbarrier.arrive.shared::cta.b64 %rd1, [%r3];
  ret;
M3:
  setp.eq.u32 %p5, %r2, 3;
  @!%p5 bra M4;
  @%p0 mbarrier.arrive.shared::cta.b64 %rd1, [%r3], 2;
  ret;
M4:
  @%p0 mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r3], 32;
  @%p1 mbarrier.complete_tx.shared::cta.b64 [%r3], 16;
  ret;
NOINIT:
  @%p0 mbarrier.arrive.shared::cta.b64 %rd1, [%r3];
  ret;
}
)";
}

TEST(EmuPtxMbarrier, MisuseReported) {
  expect_ptxas_accepts(misuse_kernel());
  const char* want[] = {"arrive count overflow", "before mbarrier.init", "overwritten by a plain store",
                        "arrive count overflow", "16 transaction bytes expected (expect_tx) never arrived"};
  for (uint32_t mode = 0; mode < 5; ++mode) {
    Runner r;
    r.load(misuse_kernel());
    r.launch("bad", {1, 1, 1}, {64, 1, 1}, Runner::Args().add(mode));
    const HazardReport* h = r.find(HazardKind::mbarrier);
    ASSERT_NE(h, nullptr) << "mode " << mode << "\n" << r.all_reports();
    EXPECT_NE(h->message.find(want[mode]), std::string::npos) << h->message;
    EXPECT_NE(h->disassembly.find("mbarrier"), std::string::npos) << h->disassembly;
  }
}

// Rejected at load: try_wait on a remote mbarrier, a state result on a remote arrive, a bad setmaxnreg count.
TEST(EmuPtxMbarrier, InvalidFormsRejectedAtLoad) {
  for (auto [inst, why] : std::vector<std::pair<std::string, std::string>>{
           {"mbarrier.try_wait.parity.shared::cluster.b64 %p1, [%r1], 0;", "does not take .shared::cluster"},
           {"mbarrier.arrive.shared::cluster.b64 %rd1, [%r1];", "no state result"},
           {"setmaxnreg.inc.sync.aligned.u32 100;", "multiple of 8"},
           {"setmaxnreg.dec.sync.aligned.u32 16;", "multiple of 8 in 24..256"},
           {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 16;",
            "not supported yet"},
       }) {
    std::string ptx = header() +
                      ".visible .entry k()\n{\n  .reg .pred %p<3>;\n  .reg .b32 %r<5>;\n"
                      "  .reg .b64 %rd<3>;\n  mov.u32 %r1, 0;\n  " +
                      inst + "\n  ret;\n}\n";
    Runner r;
    try {
      r.load(ptx);
      ADD_FAILURE() << inst << " loaded";
    } catch (const isatune::emu::EmulationError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(why), std::string::npos) << inst << ": " << what;
      EXPECT_NE(what.find("test.ptx:10"), std::string::npos) << what;
    }
  }
}

// Prefetches are hints: they load and run with no effect (and no report).
TEST(EmuPtxMbarrier, BulkPrefetchesAccepted) {
  std::string ptx = header() + R"(
.visible .entry pf(.param .u64 p, .param .align 64 .b8 tmap[128])
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mov.b64 %rd2, tmap;
  cvta.param.u64 %rd3, %rd2;
  mov.u32 %r1, 0;
  cp.async.bulk.prefetch.L2.global [%rd1], 64;
  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd3, {%r1, %r1}];
  ret;
}
)";
  expect_ptxas_accepts(ptx);
  Runner r;
  r.load(ptx);
  uint64_t p = r.upload(std::vector<uint32_t>(16, 1));
  Runner::Args a;
  a.add(p);
  a.bytes.resize(64 + 128);
  r.launch("pf", {1, 1, 1}, {32, 1, 1}, a);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
}

// setmaxnreg: the producer/consumer split of the fixture fits (128 x 40 + 256 x 232 <= 64K, the consumers'
// .inc waiting for the producer's .dec); three warpgroups all at 232 never fit: register_budget.
std::string regs_kernel() {
  return header() + R"(
.visible .entry regs(.param .u32 all_inc)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [all_inc];
  shr.u32 %r3, %r1, 7;
  setp.ne.u32 %p1, %r3, 0;
  setp.ne.u32 %p2, %r2, 0;
  or.pred %p1, %p1, %p2;
  @%p1 bra INC;
  setmaxnreg.dec.sync.aligned.u32 40;
  bra.uni DONE;
INC:
  setmaxnreg.inc.sync.aligned.u32 232;
DONE:
  bar.sync 0;
  ret;
}
)";
}

TEST(EmuPtxSetmaxnreg, BudgetOfTheCta) {
  expect_ptxas_accepts(regs_kernel());
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    {
      Runner r(o);
      r.load(regs_kernel());
      r.launch("regs", {2, 1, 1}, {384, 1, 1}, Runner::Args().add(0u));
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    }
    {
      Runner r(o);
      r.load(regs_kernel());
      r.launch("regs", {1, 1, 1}, {384, 1, 1}, Runner::Args().add(1u));
      const HazardReport* h = r.find(HazardKind::register_budget);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->message.find("can never be granted"), std::string::npos) << h->message;
      EXPECT_NE(h->disassembly.find("setmaxnreg.inc"), std::string::npos) << h->disassembly;
    }
  }
}

// The sm_90a GEMM fixture's protocol (2-CTA cluster, mbarrier full/empty rings, TMA with multicast, remote
// arrives through mapa, setmaxnreg, barrier.cluster) with its wgmma lines removed (another part of the
// emulator runs wgmma): every one of its cluster / mbarrier / TMA / setmaxnreg forms decodes, the pipeline
// runs through 5 k-tiles (the 3-stage ring wraps) without a report under both schedulers, and the epilogue
// stores the (zero) accumulators inside M x N only. The same with an expect_tx 16 bytes too large: a
// deadlock.
std::string fixture_without_wgmma(bool wrong_tx) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/gemm_bf16_ws_sm90a.sm_90a.ptx");
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str(), out, line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    size_t k = line.find_first_not_of(" \t");
    if (k != std::string::npos && line.compare(k, 6, "wgmma.") == 0)
      line.clear(); // keeps the line numbers
    if (wrong_tx && line.find("mov.u32 \t%r168, 32768;") != std::string::npos)
      line = "\tmov.u32 \t%r168, 32784;";
    out += line + "\n";
  }
  return out;
}

TEST(EmuPtxMbarrier, GemmFixtureProtocolWithoutWgmma) {
  for (int run = 0; run < 3; ++run) {
    const bool wrong = run == 2;
    std::string ptx = fixture_without_wgmma(wrong);
    ASSERT_NE(ptx.find("mbarrier.try_wait.parity"), std::string::npos) << "fixture missing";
    ASSERT_EQ(ptx.find("wgmma."), std::string::npos);
    if (run == 0)
      expect_ptxas_accepts(ptx);
    eptx::PtxEmuOptions o;
    o.scheduler = run == 1 ? eptx::Scheduler::adversarial : eptx::Scheduler::lockstep;
    Runner r(o);
    r.load(ptx);
    const uint32_t M = 129 + rand_u32() % 100, N = 65 + rand_u32() % 60, K = 257 + rand_u32() % 60;
    const uint32_t lda = (K + 7) / 8 * 8, ldc = N + 3;
    auto a = random_vec<uint16_t>(size_t(M) * lda, [] { return uint16_t(0x3c00 | (rand_u32() & 0x3ff)); });
    auto b = random_vec<uint16_t>(size_t(N) * lda, [] { return uint16_t(0x3c00 | (rand_u32() & 0x3ff)); });
    uint64_t pa = r.upload(a), pb = r.upload(b);
    std::vector<float> c0 = random_vec<float>(size_t(M) * ldc, [] { return rand_float(); });
    uint64_t pc = r.upload(c0);
    auto map = [&](uint64_t base, uint32_t rows, uint32_t box_rows) {
      isatune::ptx::TensorMapTiledArgs m;
      m.data_type = isatune::ptx::TensorMapDataType::bfloat16;
      m.rank = 2;
      m.global_address = base;
      m.global_dim = {K, rows, 0, 0, 0};
      m.global_strides = {uint64_t(lda) * 2, 0, 0, 0};
      m.box_dim = {64, box_rows, 0, 0, 0};
      m.swizzle = isatune::ptx::TensorMapSwizzle::b128;
      return isatune::ptx::encode_tensor_map_tiled(m);
    };
    auto ta = map(pa, M, 128), tb = map(pb, N, 64);
    Runner::Args args;
    args.bytes.assign(ta.bytes.begin(), ta.bytes.end());
    args.bytes.insert(args.bytes.end(), tb.bytes.begin(), tb.bytes.end());
    args.add(pc).add(M).add(N).add(K).add(ldc);
    const uint32_t gx = 2 * (((M + 127) / 128 + 1) / 2), gy = (N + 127) / 128;
    // The correct kernel without a cluster in the launch: .reqnctapercluster 2,1,1 gives it its clusters.
    r.launch("gemm_bf16_ws_sm90a", {gx, gy, 1}, {384, 1, 1}, args, 99376,
             wrong ? isatune::loader::Dim3{2, 1, 1} : isatune::loader::Dim3{});
    if (wrong) {
      const HazardReport* h = r.find(HazardKind::deadlock);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->message.find("mbarrier wait"), std::string::npos) << h->message;
      continue;
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    auto c = r.download<float>(pc, size_t(M) * ldc);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < ldc; ++j)
        ASSERT_EQ(c[size_t(i) * ldc + j], j < N ? 0.0f : c0[size_t(i) * ldc + j]) << i << "," << j;
  }
}

} // namespace

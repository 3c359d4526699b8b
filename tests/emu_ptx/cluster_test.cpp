// Thread-block clusters: CTAs of a cluster exchange data through distributed shared memory (mapa +
// ld.shared::cluster, and generic mapa), ordered by barrier.cluster; the cluster special registers and
// getctarank; the missing-barrier mutation is reported as a race.
#include "emu_ptx_test.h"
#include "ptxas_check.h"

using namespace emu_ptx_test;

namespace {

// Thread t of CTA c stores in[c][t] to its shared buf[t]; after barrier.cluster it reads buf[t] of the next
// rank (rank + 1 mod n) twice (shared::cluster and generic) into out[c][2t], out[c][2t+1]; thread 0 writes
// the cluster registers to meta[c][0..9]. A second barrier.cluster keeps every CTA's shared memory alive
// until the peers have read it.
std::string exchange_kernel(bool with_barrier) {
  std::string bar =
      with_barrier ? "  barrier.cluster.arrive.release.aligned;\n  barrier.cluster.wait.acquire.aligned;\n"
                   : "";
  return header() + R"(
.visible .entry xchg(.param .u64 in, .param .u64 out, .param .u64 meta)
{
  .reg .pred %p<3>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .shared .align 4 .b32 buf[256];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ctaid.y;
  mov.u32 %r14, %nctaid.x;
  mad.lo.u32 %r2, %r3, %r14, %r2;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r5, [%rd3];
  mov.u32 %r6, buf;
  shl.b32 %r7, %r1, 2;
  add.u32 %r8, %r6, %r7;
  st.shared.u32 [%r8], %r5;
)" + bar +
         R"(
  mov.u32 %r9, %cluster_ctarank;
  mov.u32 %r10, %cluster_nctarank;
  add.u32 %r11, %r9, 1;
  rem.u32 %r11, %r11, %r10;
  mapa.shared::cluster.u32 %r12, %r8, %r11;
  ld.shared::cluster.u32 %r13, [%r12];
  cvt.u64.u32 %rd11, %r8;
  cvta.shared.u64 %rd10, %rd11;
  mapa.u64 %rd12, %rd10, %r11;
  ld.u32 %r15, [%rd12];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r4, 8;
  add.s64 %rd5, %rd4, %rd5;
  st.global.v2.u32 [%rd5], {%r13, %r15};
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  ld.param.u64 %rd6, [meta];
  mul.wide.u32 %rd7, %r2, 40;
  add.s64 %rd6, %rd6, %rd7;
  st.global.u32 [%rd6], %r9;
  st.global.u32 [%rd6+4], %r10;
  mov.u32 %r20, %clusterid.x;
  st.global.u32 [%rd6+8], %r20;
  mov.u32 %r20, %clusterid.y;
  st.global.u32 [%rd6+12], %r20;
  mov.u32 %r20, %cluster_ctaid.x;
  st.global.u32 [%rd6+16], %r20;
  mov.u32 %r20, %cluster_ctaid.y;
  st.global.u32 [%rd6+20], %r20;
  getctarank.shared::cluster.u32 %r20, %r12;
  st.global.u32 [%rd6+24], %r20;
  mov.pred %p2, %is_explicit_cluster;
  selp.u32 %r20, 1, 0, %p2;
  st.global.u32 [%rd6+28], %r20;
  mov.u32 %r20, %nclusterid.x;
  st.global.u32 [%rd6+32], %r20;
  mov.u32 %r20, %cluster_nctaid.x;
  st.global.u32 [%rd6+36], %r20;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;
}
)";
}

struct Shape {
  uint32_t gx, gy, cx, cy;
};

void run_exchange(const Shape& s, eptx::Scheduler sched) {
  eptx::PtxEmuOptions o;
  o.scheduler = sched;
  Runner r(o);
  r.load(exchange_kernel(true));
  const uint32_t T = 32 + rand_u32() % 225, ctas = s.gx * s.gy, n = s.cx * s.cy;
  auto in = random_vec<uint32_t>(size_t(T) * ctas, [] { return rand_u32() | 1; });
  uint64_t pi = r.upload(in), po = r.upload(std::vector<uint32_t>(size_t(2) * T * ctas)),
           pm = r.upload(std::vector<uint32_t>(size_t(10) * ctas));
  r.launch("xchg", {s.gx, s.gy, 1}, {T, 1, 1}, Runner::Args().add(pi).add(po).add(pm), 0, {s.cx, s.cy, 1});
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  auto out = r.download<uint32_t>(po, size_t(2) * T * ctas);
  auto meta = r.download<uint32_t>(pm, size_t(10) * ctas);
  for (uint32_t y = 0; y < s.gy; ++y)
    for (uint32_t x = 0; x < s.gx; ++x) {
      const uint32_t c = x + s.gx * y;
      const uint32_t rank = x % s.cx + s.cx * (y % s.cy), peer = (rank + 1) % n;
      const uint32_t px = x - x % s.cx + peer % s.cx, py = y - y % s.cy + peer / s.cx;
      const uint32_t pc = px + s.gx * py;
      for (uint32_t t = 0; t < T; ++t) {
        ASSERT_EQ(out[2 * (size_t(c) * T + t)], in[size_t(pc) * T + t]) << "CTA " << c << " thread " << t;
        ASSERT_EQ(out[2 * (size_t(c) * T + t) + 1], in[size_t(pc) * T + t]) << "generic, CTA " << c;
      }
      const uint32_t want[10] = {rank,     n,    x / s.cx, y / s.cy,    x % s.cx,
                                 y % s.cy, peer, 1u,       s.gx / s.cx, s.cx};
      for (int k = 0; k < 10; ++k)
        EXPECT_EQ(meta[size_t(c) * 10 + k], want[k]) << "CTA " << c << " register " << k;
    }
}

TEST(EmuPtxCluster, DsmemExchangeTwoAndFourCtas) {
  expect_ptxas_accepts(exchange_kernel(true));
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    run_exchange({6, 1, 2, 1}, sched);
    run_exchange({4, 2, 2, 2}, sched);
    run_exchange({8, 1, 4, 1}, sched);
  }
}

// Without the first barrier.cluster a CTA reads its peer's buffer before (or unordered with) the peer's
// store.
TEST(EmuPtxCluster, MissingClusterBarrierIsARace) {
  expect_ptxas_accepts(exchange_kernel(false));
  Runner r;
  r.load(exchange_kernel(false));
  const uint32_t T = 64;
  uint64_t pi = r.upload(random_vec<uint32_t>(4 * T, [] { return rand_u32() | 1; })),
           po = r.upload(std::vector<uint32_t>(8 * T)), pm = r.upload(std::vector<uint32_t>(40));
  r.launch("xchg", {4, 1, 1}, {T, 1, 1}, Runner::Args().add(pi).add(po).add(pm), 0, {2, 1, 1});
  bool remote = false;
  for (const HazardReport& h : r.reports())
    remote |= h.kind == HazardKind::race && h.message.find("of CTA rank") != std::string::npos;
  EXPECT_TRUE(remote) << r.all_reports();
}

// Out-of-cluster ranks and out-of-bounds remote offsets are reported; a wait without an arrive too; a
// barrier.cluster that one CTA never reaches is a deadlock naming the waiting warps.
TEST(EmuPtxCluster, BadRankOffsetAndDeadlock) {
  std::string ptx = header() + R"(
.visible .entry bad(.param .u32 rank, .param .u32 off, .param .u32 skip)
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>;
  .shared .align 4 .b32 buf[64];
  ld.param.u32 %r1, [rank];
  ld.param.u32 %r2, [off];
  ld.param.u32 %r3, [skip];
  mov.u32 %r4, buf;
  add.u32 %r4, %r4, %r2;
  mapa.shared::cluster.u32 %r5, %r4, %r1;
  st.shared::cluster.u32 [%r5], %r1;
  mov.u32 %r6, %cluster_ctarank;
  setp.eq.u32 %p1, %r6, %r3;
  @%p1 bra SKIP;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
SKIP:
  bar.sync 0;
  bar.sync 1, 64;
  barrier.cluster.arrive;
  barrier.cluster.wait;
  ret;
}
)";
  expect_ptxas_accepts(ptx);
  {
    Runner r;
    r.load(ptx);
    r.launch("bad", {2, 1, 1}, {32, 1, 1}, Runner::Args().add(5u).add(0u).add(9u), 0, {2, 1, 1});
    EXPECT_TRUE(r.has(HazardKind::out_of_bounds)) << r.all_reports();
    EXPECT_FALSE(r.has(HazardKind::deadlock)) << r.all_reports();
  }
  {
    Runner r;
    r.load(ptx);
    r.launch("bad", {2, 1, 1}, {32, 1, 1}, Runner::Args().add(1u).add(4096u).add(9u), 0, {2, 1, 1});
    const HazardReport* h = r.find(HazardKind::out_of_bounds);
    ASSERT_NE(h, nullptr) << r.all_reports();
    EXPECT_NE(h->message.find("target CTA"), std::string::npos) << h->message;
  }
  {
    // CTA rank 1 waits at bar.sync 1 for 64 threads that never come, so rank 0 waits at barrier.cluster.wait.
    Runner r;
    r.load(ptx);
    r.launch("bad", {2, 1, 1}, {32, 1, 1}, Runner::Args().add(1u).add(0u).add(1u), 0, {2, 1, 1});
    const HazardReport* h = r.find(HazardKind::deadlock);
    ASSERT_NE(h, nullptr) << r.all_reports();
    EXPECT_NE(h->message.find("barrier.cluster"), std::string::npos) << h->message;
    EXPECT_NE(h->message.find("CTA rank 1 warp 0: lanes 0xffffffff at barrier 1"), std::string::npos)
        << h->message;
    EXPECT_NE(h->message.find("CTA rank 0 warp 0: lanes 0xffffffff at barrier.cluster.wait"),
              std::string::npos)
        << h->message;
  }
}

// Bulk shared -> shared::cluster copies: each CTA sends its buffer to the next rank's, completing the
// receiver's mbarrier (mapa for both addresses); the receiver waits on its own mbarrier.
std::string s2s_kernel() {
  return header() + R"(
.visible .entry s2s(.param .u64 in, .param .u64 out, .param .u32 bytes)
{
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 128 .b8 src[4096];
  .shared .align 128 .b8 dst[4096];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, bar;
  ld.param.u32 %r5, [bytes];
  mov.u32 %r12, %cluster_ctarank;
  mov.u32 %r13, %cluster_nctarank;
  mov.u32 %r14, %ctaid.x;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r5;
  fence.mbarrier_init.release.cluster;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r14, %r5;
  add.s64 %rd1, %rd1, %rd2;
  shl.b32 %r8, %r1, 2;
FILL:
  setp.ge.u32 %p3, %r8, %r5;
  @%p3 bra SEND;
  cvt.u64.u32 %rd3, %r8;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r10, [%rd4];
  mov.u32 %r9, src;
  add.u32 %r9, %r9, %r8;
  st.shared.u32 [%r9], %r10;
  shl.b32 %r11, %r2, 2;
  add.u32 %r8, %r8, %r11;
  bra FILL;
SEND:
  fence.proxy.async.shared::cta;
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  @!%p1 bra WAIT;
  add.u32 %r15, %r12, 1;
  rem.u32 %r15, %r15, %r13;
  mov.u32 %r16, dst;
  mapa.shared::cluster.u32 %r17, %r16, %r15;
  mapa.shared::cluster.u32 %r18, %r3, %r15;
  mov.u32 %r19, src;
  cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r17], [%r19], %r5, [%r18];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd5, [out];
  add.s64 %rd5, %rd5, %rd2;
  shl.b32 %r8, %r1, 2;
COPY:
  setp.ge.u32 %p3, %r8, %r5;
  @%p3 bra END;
  mov.u32 %r9, dst;
  add.u32 %r9, %r9, %r8;
  ld.shared.u32 %r10, [%r9];
  cvt.u64.u32 %rd3, %r8;
  add.s64 %rd4, %rd5, %rd3;
  st.global.u32 [%rd4], %r10;
  shl.b32 %r11, %r2, 2;
  add.u32 %r8, %r8, %r11;
  bra COPY;
END:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;
}
)";
}

TEST(EmuPtxCluster, BulkSharedToPeerShared) {
  expect_ptxas_accepts(s2s_kernel());
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial})
    for (uint32_t n : {2u, 4u}) {
      eptx::PtxEmuOptions o;
      o.scheduler = sched;
      Runner r(o);
      r.load(s2s_kernel());
      const uint32_t bytes = 16 * (1 + rand_u32() % 256), ctas = 2 * n;
      auto in = random_vec<uint32_t>(size_t(ctas) * bytes / 4, [] { return rand_u32() | 1; });
      uint64_t pi = r.upload(in), po = r.upload(std::vector<uint32_t>(in.size()));
      r.launch("s2s", {ctas, 1, 1}, {64, 1, 1}, Runner::Args().add(pi).add(po).add(bytes), 0, {n, 1, 1});
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      auto out = r.download<uint32_t>(po, in.size());
      for (uint32_t c = 0; c < ctas; ++c) {
        const uint32_t from = c - c % n + (c % n + n - 1) % n; // the previous rank sent to c
        for (uint32_t k = 0; k < bytes / 4; ++k)
          ASSERT_EQ(out[size_t(c) * bytes / 4 + k], in[size_t(from) * bytes / 4 + k]) << "CTA " << c;
      }
    }
}

// Remote atomics: every thread of the cluster adds its value to a counter in rank 0's shared memory
// (red.shared::cluster) and takes a ticket from rank n-1's (atom.shared::cluster); rank 0 reports the sum and
// rank n-1 the number of tickets.
std::string atomics_kernel() {
  return header() + R"(
.visible .entry atoms(.param .u64 in, .param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<8>;
  .shared .align 4 .b32 cnt[2];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mov.u32 %r5, cnt;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 st.shared.v2.u32 [%r5], {0, 0};
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r6, [%rd3];
  mov.u32 %r7, %cluster_nctarank;
  sub.u32 %r8, %r7, 1;
  mov.u32 %r9, 0;
  mapa.shared::cluster.u32 %r10, %r5, %r9;
  red.shared::cluster.add.u32 [%r10], %r6;
  add.u32 %r11, %r5, 4;
  mapa.shared::cluster.u32 %r12, %r11, %r8;
  atom.shared::cluster.add.u32 %r13, [%r12], 1;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @!%p1 bra END;
  ld.shared.v2.u32 {%r14, %r15}, [%r5];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r2, 8;
  add.s64 %rd4, %rd4, %rd5;
  st.global.v2.u32 [%rd4], {%r14, %r15};
END:
  ret;
}
)";
}

TEST(EmuPtxCluster, RemoteAtomics) {
  expect_ptxas_accepts(atomics_kernel());
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(atomics_kernel());
    const uint32_t n = 4, ctas = 8, T = 32 + rand_u32() % 100;
    auto in = random_vec<uint32_t>(size_t(ctas) * T, [] { return rand_u32() % 1000 + 1; });
    uint64_t pi = r.upload(in), po = r.upload(std::vector<uint32_t>(2 * ctas));
    r.launch("atoms", {ctas, 1, 1}, {T, 1, 1}, Runner::Args().add(pi).add(po), 0, {n, 1, 1});
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    auto out = r.download<uint32_t>(po, 2 * ctas);
    for (uint32_t c = 0; c < ctas; c += n) {
      uint32_t sum = 0;
      for (uint32_t k = c * T; k < (c + n) * T; ++k)
        sum += in[k];
      EXPECT_EQ(out[2 * c], sum) << "cluster " << c / n;
      EXPECT_EQ(out[2 * (c + n - 1) + 1], n * T) << "cluster " << c / n;
      EXPECT_EQ(out[2 * (c + 1)], 0u);
    }
  }
}

} // namespace

// Bulk and tensor copies (TMA) with mbarrier completion: plain bulk G2S + S2G, tensor loads of ranks 1-5 with
// random shapes, out-of-bounds boxes (zero fill) and every swizzle mode checked element by element against a
// direct reference, multicast into a 2-CTA cluster, tensor stores; mutations: wrong expect_tx (deadlock
// naming the mbarrier), a missing mbarrier wait (async_pending and stale data), a shared write under a
// pending bulk store (async_pending and the new bytes stored).
#include <algorithm>

#include "emu_ptx_test.h"
#include "isatune/ptx/tensor_map.h"
#include "ptxas_check.h"

using namespace emu_ptx_test;
namespace ip = isatune::ptx;

namespace {

// The byte of the dense box at offset b lives at swizzle(base + b) - base in shared memory
// (shared/notes/ptx-emulation.md 2.8: 16-byte chunk bits XOR the row bits 7-9, masked by the mode).
uint32_t swizzled(uint32_t base, uint32_t b, ip::TensorMapSwizzle s) {
  const uint32_t x = base + b;
  uint32_t mask = s == ip::TensorMapSwizzle::b32    ? 0x10
                  : s == ip::TensorMapSwizzle::b64  ? 0x30
                  : s == ip::TensorMapSwizzle::b128 ? 0x70
                                                    : 0;
  return (x ^ ((x >> 3) & mask)) - base;
}

uint32_t span_of(ip::TensorMapSwizzle s) {
  return s == ip::TensorMapSwizzle::b32    ? 32
         : s == ip::TensorMapSwizzle::b64  ? 64
         : s == ip::TensorMapSwizzle::b128 ? 128
                                           : 0;
}

struct Tensor {
  ip::TensorMapTiledArgs m;
  std::vector<uint8_t> data; // global bytes
  std::array<int32_t, 5> coords{};
  uint32_t esize = 1;
};

// A random tensor and box: rank r, element size, swizzle; the box within 16 KB; coordinates that put parts of
// the box out of bounds (negative or past the end) about half the time.
Tensor random_tensor(uint32_t rank, ip::TensorMapSwizzle sw) {
  static const std::pair<ip::TensorMapDataType, uint32_t> types[] = {{ip::TensorMapDataType::uint8, 1},
                                                                     {ip::TensorMapDataType::uint16, 2},
                                                                     {ip::TensorMapDataType::float32, 4},
                                                                     {ip::TensorMapDataType::uint64, 8}};
  Tensor t;
  auto [type, e] = types[rand_u32() % 4];
  t.esize = e;
  t.m.data_type = type;
  t.m.rank = rank;
  t.m.swizzle = sw;
  const uint32_t inner = sw == ip::TensorMapSwizzle::none ? 16 * (1 + rand_u32() % 4) : span_of(sw);
  t.m.box_dim[0] = inner / e;
  uint64_t box_bytes = inner;
  for (uint32_t d = 1; d < rank; ++d) {
    uint32_t lim = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(8, 16384 / box_bytes)));
    t.m.box_dim[d] = 1 + rand_u32() % lim;
    box_bytes *= t.m.box_dim[d];
  }
  uint64_t stride = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    t.m.global_dim[d] = 1 + rand_u32() % (2 * t.m.box_dim[d] + 2);
    if (d == 0)
      stride = (t.m.global_dim[0] * e + 15) / 16 * 16 + 16 * (rand_u32() % 2);
    else {
      t.m.global_strides[d - 1] = stride;
      stride *= t.m.global_dim[d];
    }
    int32_t lo = -int32_t(t.m.box_dim[d]) + 1, hi = int32_t(t.m.global_dim[d]);
    t.coords[d] = rand_u32() % 2 ? 0 : lo + int32_t(rand_u32() % uint32_t(hi - lo));
  }
  t.data = random_vec<uint8_t>(stride, [] { return rand_u32() % 255 + 1; });
  return t;
}

// Expected shared bytes of a load: the dense box, each element from global memory or zero out of bounds.
std::vector<uint8_t> reference_box(const Tensor& t, uint32_t base) {
  const auto& m = t.m;
  uint64_t n = t.esize;
  for (uint32_t d = 0; d < m.rank; ++d)
    n *= m.box_dim[d];
  std::vector<uint8_t> dense(n), smem(n);
  uint32_t idx[5] = {0, 0, 0, 0, 0};
  for (uint64_t k = 0; k < n / t.esize; ++k) {
    uint64_t rest = k;
    bool in = true;
    uint64_t g = 0;
    for (uint32_t d = 0; d < m.rank; ++d) {
      idx[d] = uint32_t(rest % m.box_dim[d]);
      rest /= m.box_dim[d];
      int64_t c = int64_t(t.coords[d]) + idx[d];
      in = in && c >= 0 && c < int64_t(m.global_dim[d]);
      g += uint64_t(c) * (d == 0 ? t.esize : m.global_strides[d - 1]);
    }
    for (uint32_t b = 0; b < t.esize; ++b)
      dense[k * t.esize + b] = in ? t.data[g + b] : 0;
  }
  for (uint32_t b = 0; b < n; ++b)
    smem[swizzled(base, b, m.swizzle)] = dense[b];
  return smem;
}

std::string coords_list(uint32_t rank, const char* reg) {
  std::string s = "{";
  for (uint32_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + std::string(reg) + std::to_string(d);
  return s + "}";
}

// Tensor load: thread 0 arrives with expect_tx(bytes + extra) and issues the copy; every thread waits (unless
// `wait` is false) and copies the tile to out. The map's address: cvta.param of the parameter, as nvcc emits
// it.
std::string load_kernel(uint32_t rank, bool wait) {
  std::string map = "%rd9"; // ptxas takes the map as a generic address only
  std::string s = header() + R"(
.visible .entry tload(.param .align 64 .b8 tmap[128], .param .u64 coords, .param .u64 out, .param .u32 bytes,
                      .param .u32 extra)
{
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b32 %c<5>;
  .reg .b64 %rd<12>;
  .shared .align 1024 .b8 tile[16384];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, bar;
  mov.u32 %r4, tile;
  ld.param.u32 %r5, [bytes];
  ld.param.u32 %r6, [extra];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  fence.mbarrier_init.release.cluster;
  bar.sync 0;
  @!%p1 bra WAIT;
  ld.param.u64 %rd1, [coords];
)";
  for (uint32_t d = 0; d < rank; ++d)
    s += "  ld.global.u32 %c" + std::to_string(d) + ", [%rd1+" + std::to_string(4 * d) + "];\n";
  s += "  mov.b64 %rd8, tmap;\n  cvta.param.u64 %rd9, %rd8;\n";
  s += "  add.u32 %r7, %r5, %r6;\n  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r7;\n";
  s += "  cp.async.bulk.tensor." + std::to_string(rank) +
       "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [" + map + ", " +
       coords_list(rank, "%c") + "], [%r3];\n";
  s += "WAIT:\n";
  if (wait)
    s += "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;\n  @!%p2 bra WAIT;\n";
  s += R"(  ld.param.u64 %rd2, [out];
  shl.b32 %r8, %r1, 2;
COPY:
  setp.ge.u32 %p3, %r8, %r5;
  @%p3 bra END;
  add.u32 %r9, %r4, %r8;
  ld.shared.u32 %r10, [%r9];
  cvt.u64.u32 %rd3, %r8;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r10;
  shl.b32 %r11, %r2, 2;
  add.u32 %r8, %r8, %r11;
  bra COPY;
END:
  ret;
}
)";
  return s;
}

struct LoadRun {
  std::vector<uint8_t> smem, want;
  std::string reports;
  Runner* r = nullptr;
};

// Runs the load kernel on tensor t; returns the shared bytes copied out and the reference.
std::vector<uint8_t> run_load(Runner& r, const Tensor& tt, uint32_t extra, bool wait, uint32_t& bytes) {
  Tensor t = tt;
  r.load(load_kernel(t.m.rank, wait));
  t.m.global_address = r.upload(t.data);
  ip::TensorMap map = ip::encode_tensor_map_tiled(t.m);
  bytes = uint32_t(ip::tensor_box_bytes(t.m));
  uint64_t pc = r.upload(std::vector<int32_t>(t.coords.begin(), t.coords.end()));
  uint64_t po = r.upload(std::vector<uint8_t>(bytes, 0xee));
  Runner::Args a;
  a.bytes.assign(map.bytes.begin(), map.bytes.end());
  a.add(pc).add(po).add(bytes).add(extra);
  r.launch("tload", {1, 1, 1}, {96, 1, 1}, a);
  return r.download<uint8_t>(po, bytes);
}

TEST(EmuPtxTma, TensorLoadsEveryRankAndSwizzleAgainstReference) {
  for (uint32_t rank = 1; rank <= 5; ++rank)
    expect_ptxas_accepts(load_kernel(rank, true));
  for (uint32_t rank = 1; rank <= 5; ++rank)
    for (auto sw : {ip::TensorMapSwizzle::none, ip::TensorMapSwizzle::b32, ip::TensorMapSwizzle::b64,
                    ip::TensorMapSwizzle::b128})
      for (int rep = 0; rep < 2; ++rep) {
        Tensor t = random_tensor(rank, sw);
        Runner r;
        uint32_t bytes = 0;
        auto got = run_load(r, t, 0, true, bytes);
        auto want = reference_box(t, 0);
        ASSERT_EQ(got.size(), want.size());
        for (uint32_t b = 0; b < bytes; ++b)
          ASSERT_EQ(int(got[b]), int(want[b]))
              << "rank " << rank << " swizzle " << int(sw) << " byte " << b << " of " << bytes << "\n"
              << r.all_reports();
        EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      }
}

// expect_tx announcing 16 bytes more than the copy delivers: the phase never completes, every thread waits.
TEST(EmuPtxTma, WrongExpectTxIsADeadlockNamingTheMbarrier) {
  Tensor t = random_tensor(2, ip::TensorMapSwizzle::none);
  Runner r;
  uint32_t bytes = 0;
  run_load(r, t, 16, true, bytes);
  const HazardReport* h = r.find(HazardKind::deadlock);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_NE(h->message.find("mbarrier wait on shared"), std::string::npos) << h->message;
  EXPECT_NE(h->message.find("tx-count 16"), std::string::npos) << h->message;
  EXPECT_NE(h->message.find("warp 2"), std::string::npos) << h->message;
  EXPECT_NE(h->disassembly.find("mbarrier.try_wait.parity"), std::string::npos) << h->disassembly;
}

// Reading the tile without waiting on the mbarrier: reported, naming the copy, and the data is stale.
TEST(EmuPtxTma, MissingMbarrierWaitIsAsyncPendingAndStale) {
  expect_ptxas_accepts(load_kernel(3, false));
  Tensor t = random_tensor(3, ip::TensorMapSwizzle::b64);
  Runner r;
  uint32_t bytes = 0;
  auto got = run_load(r, t, 0, false, bytes);
  const HazardReport* h = r.find(HazardKind::async_pending);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_NE(h->message.find("cp.async.bulk.tensor.3d"), std::string::npos) << h->message;
  EXPECT_NE(h->message.find("stale"), std::string::npos) << h->message;
  EXPECT_NE(h->disassembly.find("ld.shared.u32"), std::string::npos) << h->disassembly;
  auto want = reference_box(t, 0);
  uint32_t differ = 0;
  for (uint32_t b = 0; b < bytes; ++b)
    differ += got[b] != want[b];
  EXPECT_GT(differ, 0u) << "the stale read returned the copy's data";
}

// Multicast: each CTA of a 2-CTA cluster loads half of the box into the same offset of both CTAs; each CTA's
// mbarrier expects both halves.
std::string multicast_kernel() {
  return header() + R"(
.visible .entry mcast(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 half, .param .u32 rows)
{
  .reg .pred %p<4>;
  .reg .b16 %rs<2>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 128 .b8 tile[16384];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, bar;
  mov.u32 %r4, tile;
  ld.param.u32 %r5, [half];
  ld.param.u32 %r6, [rows];
  mov.u32 %r12, %cluster_ctarank;
  setp.eq.u32 %p1, %r1, 0;
  @!%p1 bra SYNC;
  mbarrier.init.shared::cta.b64 [%r3], 1;
  shl.b32 %r7, %r5, 1;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r7;
  fence.mbarrier_init.release.cluster;
SYNC:
  barrier.cluster.arrive.release.aligned;
  barrier.cluster.wait.acquire.aligned;
  @!%p1 bra WAIT;
  mul.lo.u32 %r8, %r12, %r5;
  add.u32 %r8, %r4, %r8;
  mul.lo.u32 %r9, %r12, %r6;
  mov.u32 %r10, 0;
  mov.u16 %rs1, 3;
  mov.b64 %rd8, tmap;
  cvta.param.u64 %rd9, %rd8;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r8], [%rd9, {%r10, %r9}], [%r3], %rs1;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra WAIT;
  ld.param.u64 %rd2, [out];
  mov.u32 %r13, %ctaid.x;
  shl.b32 %r14, %r5, 1;
  mul.wide.u32 %rd5, %r13, %r14;
  add.s64 %rd2, %rd2, %rd5;
  shl.b32 %r8, %r1, 2;
COPY:
  setp.ge.u32 %p3, %r8, %r14;
  @%p3 bra END;
  add.u32 %r9, %r4, %r8;
  ld.shared.u32 %r10, [%r9];
  cvt.u64.u32 %rd3, %r8;
  add.s64 %rd4, %rd2, %rd3;
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

TEST(EmuPtxTma, MulticastIntoTwoCtaCluster) {
  expect_ptxas_accepts(multicast_kernel());
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    eptx::PtxEmuOptions o;
    o.scheduler = sched;
    Runner r(o);
    r.load(multicast_kernel());
    Tensor t;
    t.esize = 4;
    t.m.data_type = ip::TensorMapDataType::float32;
    t.m.rank = 2;
    const uint32_t rows = 1 + rand_u32() % 8, w = 4 * (1 + rand_u32() % 4);
    t.m.box_dim = {w, rows, 0, 0, 0};
    t.m.global_dim = {w - 2 + rand_u32() % 5, 2 * rows - 1 + rand_u32() % 3, 0, 0, 0}; // ragged: zero fill
    const uint64_t stride = (t.m.global_dim[0] * 4 + 15) / 16 * 16;
    t.m.global_strides = {stride, 0, 0, 0};
    t.data = random_vec<uint8_t>(stride * t.m.global_dim[1], [] { return rand_u32() % 255 + 1; });
    t.m.global_address = r.upload(t.data);
    ip::TensorMap map = ip::encode_tensor_map_tiled(t.m);
    const uint32_t half = w * rows * 4;
    uint64_t po = r.upload(std::vector<uint8_t>(4 * half, 0xee));
    Runner::Args a;
    a.bytes.assign(map.bytes.begin(), map.bytes.end());
    a.add(po).add(half).add(rows);
    r.launch("mcast", {2, 1, 1}, {64, 1, 1}, a, 0, {2, 1, 1});
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    auto out = r.download<uint8_t>(po, 4 * half);
    Tensor full = t;
    full.m.box_dim = {w, 2 * rows, 0, 0, 0};
    auto want = reference_box(full, 0);
    for (uint32_t c = 0; c < 2; ++c)
      for (uint32_t b = 0; b < 2 * half; ++b)
        ASSERT_EQ(int(out[c * 2 * half + b]), int(want[b])) << "CTA " << c << " byte " << b;
  }
}

// Plain bulk copies: G2S with an mbarrier, every thread transforms the words, S2G through a bulk group.
// `clobber`: thread 0 writes word 0 after issuing the store and before wait_group.read.
std::string bulk_kernel(bool clobber) {
  return header() + R"(
.visible .entry bulk(.param .u64 src, .param .u64 dst, .param .u32 bytes)
{
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<12>;
  .shared .align 128 .b8 buf[8192];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, bar;
  mov.u32 %r4, buf;
  ld.param.u32 %r5, [bytes];
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  fence.mbarrier_init.release.cluster;
  bar.sync 0;
  @!%p1 bra WAIT;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], %r5;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1], %r5, [%r3];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r3], 0;
  @!%p2 bra WAIT;
  shl.b32 %r8, %r1, 2;
LOOP:
  setp.ge.u32 %p3, %r8, %r5;
  @%p3 bra STORE;
  add.u32 %r9, %r4, %r8;
  ld.shared.u32 %r10, [%r9];
  mad.lo.u32 %r10, %r10, 3, 1;
  st.shared.u32 [%r9], %r10;
  shl.b32 %r11, %r2, 2;
  add.u32 %r8, %r8, %r11;
  bra LOOP;
STORE:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  @!%p1 bra END;
  cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r4], %r5;
  cp.async.bulk.commit_group;
)" + std::string(clobber ? "  st.shared.u32 [%r4], 7;\n" : "") +
         R"(  cp.async.bulk.wait_group.read 0;
  cp.async.bulk.wait_group 0;
END:
  ret;
}
)";
}

TEST(EmuPtxTma, BulkGlobalToSharedAndBack) {
  expect_ptxas_accepts(bulk_kernel(false));
  expect_ptxas_accepts(bulk_kernel(true));
  for (bool clobber : {false, true}) {
    Runner r;
    r.load(bulk_kernel(clobber));
    const uint32_t bytes = 16 * (1 + rand_u32() % 400);
    auto in = random_vec<uint32_t>(bytes / 4, [] { return rand_u32(); });
    uint64_t ps = r.upload(in), pd = r.upload(std::vector<uint32_t>(bytes / 4));
    r.launch("bulk", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(ps).add(pd).add(bytes));
    auto out = r.download<uint32_t>(pd, bytes / 4);
    for (uint32_t i = clobber ? 1 : 0; i < bytes / 4; ++i)
      ASSERT_EQ(out[i], in[i] * 3 + 1) << "word " << i;
    if (!clobber) {
      EXPECT_EQ(out[0], in[0] * 3 + 1);
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    } else {
      EXPECT_EQ(out[0], 7u) << "the store reads shared memory at its wait_group.read";
      const HazardReport* h = r.find(HazardKind::async_pending);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->message.find("wait_group.read"), std::string::npos) << h->message;
    }
  }
}

// Tensor store: threads fill the tile (the box's shared layout) from `in`, then thread 0 stores it.
std::string store_kernel(uint32_t rank) {
  std::string s = header() + R"(
.visible .entry tstore(.param .align 64 .b8 tmap[128], .param .u64 coords, .param .u64 in, .param .u32 bytes)
{
  .reg .pred %p<4>;
  .reg .b32 %r<24>;
  .reg .b32 %c<5>;
  .reg .b64 %rd<12>;
  .shared .align 1024 .b8 tile[16384];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r4, tile;
  ld.param.u32 %r5, [bytes];
  ld.param.u64 %rd2, [in];
  shl.b32 %r8, %r1, 2;
FILL:
  setp.ge.u32 %p3, %r8, %r5;
  @%p3 bra STORE;
  cvt.u64.u32 %rd3, %r8;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r10, [%rd4];
  add.u32 %r9, %r4, %r8;
  st.shared.u32 [%r9], %r10;
  shl.b32 %r11, %r2, 2;
  add.u32 %r8, %r8, %r11;
  bra FILL;
STORE:
  fence.proxy.async.shared::cta;
  bar.sync 0;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra END;
  ld.param.u64 %rd1, [coords];
)";
  for (uint32_t d = 0; d < rank; ++d)
    s += "  ld.global.u32 %c" + std::to_string(d) + ", [%rd1+" + std::to_string(4 * d) + "];\n";
  s += "  mov.b64 %rd8, tmap;\n  cvta.param.u64 %rd9, %rd8;\n";
  s += "  cp.async.bulk.tensor." + std::to_string(rank) + "d.global.shared::cta.tile.bulk_group [%rd9, " +
       coords_list(rank, "%c") + "], [%r4];\n";
  s += "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group.read 0;\nEND:\n  ret;\n}\n";
  return s;
}

TEST(EmuPtxTma, TensorStoresAgainstReference) {
  for (uint32_t rank = 1; rank <= 5; ++rank)
    expect_ptxas_accepts(store_kernel(rank));
  for (uint32_t rank = 1; rank <= 5; ++rank)
    for (auto sw : {ip::TensorMapSwizzle::none, ip::TensorMapSwizzle::b128}) {
      Tensor t = random_tensor(rank, sw);
      Runner r;
      r.load(store_kernel(rank));
      std::vector<uint8_t> before = t.data;
      t.m.global_address = r.upload(t.data);
      ip::TensorMap map = ip::encode_tensor_map_tiled(t.m);
      const uint32_t bytes = uint32_t(ip::tensor_box_bytes(t.m));
      auto smem = random_vec<uint8_t>((bytes + 3) / 4 * 4, [] { return rand_u32() % 255 + 1; });
      uint64_t pc = r.upload(std::vector<int32_t>(t.coords.begin(), t.coords.end())), pi = r.upload(smem);
      Runner::Args a;
      a.bytes.assign(map.bytes.begin(), map.bytes.end());
      a.add(pc).add(pi).add(bytes);
      r.launch("tstore", {1, 1, 1}, {64, 1, 1}, a);
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      auto got = r.download<uint8_t>(t.m.global_address, t.data.size());
      // Reference: every in-bounds element of the box takes its bytes from the swizzled tile; the rest stays.
      std::vector<uint8_t> want = before;
      const auto& m = t.m;
      uint64_t n = 1;
      for (uint32_t d = 0; d < rank; ++d)
        n *= m.box_dim[d];
      for (uint64_t k = 0; k < n; ++k) {
        uint64_t rest = k, g = 0;
        bool in = true;
        for (uint32_t d = 0; d < rank; ++d) {
          int64_t c = int64_t(t.coords[d]) + int64_t(rest % m.box_dim[d]);
          rest /= m.box_dim[d];
          in = in && c >= 0 && c < int64_t(m.global_dim[d]);
          g += uint64_t(c) * (d == 0 ? t.esize : m.global_strides[d - 1]);
        }
        if (in)
          for (uint32_t b = 0; b < t.esize; ++b)
            want[g + b] = smem[swizzled(0, uint32_t(k * t.esize + b), m.swizzle)];
      }
      for (size_t b = 0; b < want.size(); ++b)
        ASSERT_EQ(int(got[b]), int(want[b])) << "rank " << rank << " swizzle " << int(sw) << " byte " << b;
    }
}

// The tile is written with st.shared and then read by the async proxy (the tensor store): without the
// writers' fence.proxy.async the store is reported (proxy_fence); with the fence after the barrier instead of
// before it, too (the fence must come between the write and the barrier that orders it before the store).
TEST(EmuPtxTma, TensorStoreWithoutFenceProxyAsyncIsReported) {
  const std::string fenced = "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n";
  for (int variant = 0; variant < 2; ++variant) {
    std::string k = store_kernel(2);
    const size_t at = k.find(fenced);
    ASSERT_NE(at, std::string::npos);
    k.replace(at, fenced.size(), variant == 0 ? "  bar.sync 0;\n" : "  bar.sync 0;\n  fence.proxy.async.shared::cta;\n");
    Tensor t = random_tensor(2, ip::TensorMapSwizzle::none);
    Runner r;
    r.load(k);
    t.m.global_address = r.upload(t.data);
    ip::TensorMap map = ip::encode_tensor_map_tiled(t.m);
    const uint32_t bytes = uint32_t(ip::tensor_box_bytes(t.m));
    auto smem = random_vec<uint8_t>((bytes + 3) / 4 * 4, [] { return rand_u32() % 255 + 1; });
    uint64_t pc = r.upload(std::vector<int32_t>(t.coords.begin(), t.coords.end())), pi = r.upload(smem);
    Runner::Args a;
    a.bytes.assign(map.bytes.begin(), map.bytes.end());
    a.add(pc).add(pi).add(bytes);
    r.launch("tstore", {1, 1, 1}, {64, 1, 1}, a);
    const HazardReport* h = r.find(HazardKind::proxy_fence);
    ASSERT_NE(h, nullptr) << "variant " << variant << "\n" << r.all_reports();
    EXPECT_NE(h->message.find("st.shared.u32"), std::string::npos) << h->message;
  }
}

} // namespace

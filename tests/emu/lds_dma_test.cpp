// When LDS-DMA data becomes visible (emu/src/lds_dma.h): to the issuing wave once s_waitcnt vmcnt retires the
// load, to the other waves from the next barrier; and the reports for accesses that depend on the timing
// between waves. A two-wave kernel: wave 0 loads random data into LDS with buffer_load_dword ... lds over a
// region that holds an old pattern, wave 1 reads the region in the same barrier interval (before or after the
// load in emulated time: s_sleep on one side), both read it again after a barrier.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

std::string kernel_text(const std::string& name, const std::string& body) {
  return ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.amdhsa_code_object_version 5\n.text\n.globl " +
         name + "\n.p2align 8\n.type " + name + ",@function\n" + name + ":\n" + body + "  s_endpgm\n.L" +
         name + "_end:\n.size " + name + ", .L" + name + "_end-" + name +
         "\n.p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n.rodata\n.p2align 6\n.amdhsa_kernel " + name +
         "\n  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size "
         "24\n"
         "  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_next_free_vgpr 32\n  .amdhsa_next_free_sgpr 40\n"
         "  .amdhsa_accum_offset 32\n  .amdhsa_group_segment_fixed_size 1024\n.end_amdhsa_kernel\n"
         ".amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.kernels:\n  - .name: " +
         name + "\n    .symbol: " + name +
         ".kd\n    .kernarg_segment_size: 24\n    .kernarg_segment_align: 8\n    .group_segment_fixed_size: "
         "1024\n"
         "    .private_segment_fixed_size: 0\n    .wavefront_size: 64\n    .sgpr_count: 46\n    .vgpr_count: "
         "32\n"
         "    .agpr_count: 0\n    .max_flat_workgroup_size: 128\n...\n.end_amdgpu_metadata\n";
}

struct Case {
  uint32_t writer_sleep = 0, reader_sleep = 0; // s_sleep before wave 0's load / wave 1's first read
  bool reader = true;                          // wave 1 reads in the load's barrier interval
  bool early = false;                          // wave 0 reads the region before its s_waitcnt vmcnt
};

struct Result {
  std::vector<uint32_t> in, first, second; // source data; per thread: read in the interval, after the barrier
  std::vector<HazardReport> reports;
  uint32_t old(uint32_t lane) const { return 1000 + lane; }
};

Result run(const Case& c, std::mt19937& rng, WaveOrder order = WaveOrder::timed) {
  // v3 = 4 lane: LDS address and source offset; old pattern 1000 + lane, written by wave 0 before a barrier.
  std::string body =
      "  s_load_dwordx4 s[8:11], s[0:1], 0x0\n  s_load_dwordx2 s[16:17], s[0:1], 0x10\n"
      "  v_and_b32 v1, 63, v0\n  v_lshrrev_b32 v2, 6, v0\n  s_nop 1\n  v_readfirstlane_b32 s20, v2\n"
      "  v_lshlrev_b32 v3, 2, v1\n  v_lshlrev_b32 v8, 3, v0\n  v_add_u32 v5, 1000, v1\n"
      "  v_mov_b32 v6, 0\n  s_cmp_eq_u32 s20, 0\n  s_cbranch_scc0 .Lskip\n  ds_write_b32 v3, v5\n"
      ".Lskip:\n  s_waitcnt lgkmcnt(0)\n  s_barrier\n  s_cmp_eq_u32 s20, 0\n  s_cbranch_scc0 .Lreader\n";
  if (c.writer_sleep)
    body += "  s_sleep " + std::to_string(c.writer_sleep) + "\n";
  body += "  s_mov_b32 m0, 0\n  s_nop 0\n  buffer_load_dword v3, s[8:11], 0 offen lds\n";
  if (c.early)
    body += "  ds_read_b32 v6, v3\n  s_waitcnt lgkmcnt(0)\n";
  body += "  s_waitcnt vmcnt(0)\n";
  if (!c.early)
    body += "  ds_read_b32 v6, v3\n  s_waitcnt lgkmcnt(0)\n"; // its own data, no barrier needed
  body += "  s_branch .Ljoin\n.Lreader:\n";
  if (c.reader_sleep)
    body += "  s_sleep " + std::to_string(c.reader_sleep) + "\n";
  if (c.reader)
    body += "  ds_read_b32 v6, v3\n  s_waitcnt lgkmcnt(0)\n";
  body += ".Ljoin:\n  s_barrier\n  ds_read_b32 v7, v3\n  s_waitcnt lgkmcnt(0)\n"
          "  global_store_dwordx2 v8, v[6:7], s[16:17]\n  s_waitcnt vmcnt(0)\n";

  Result r;
  r.in.resize(64);
  for (auto& x : r.in)
    x = rng() | 1u << 31; // never an old-pattern value
  EmuDevice dev({.target = "gfx942", .wave_order = order});
  uint64_t pin = dev.alloc(256), pout = dev.alloc(128 * 8);
  dev.copy_to_device(pin, r.in.data(), 256);
  std::vector<uint8_t> ka(24);
  const uint32_t vs[4] = {uint32_t(pin), uint32_t(pin >> 32) | 4u << 16, 256, 0x20000};
  std::memcpy(ka.data(), vs, 16);
  std::memcpy(ka.data() + 16, &pout, 8);
  auto code = toolchain::make_assembler("llvm")->assemble(kernel_text("dma2", body), {"gfx942", "t.s"}).code;
  dev.launch(*dev.load(code)->function("dma2"), {{1, 1, 1}, {128, 1, 1}}, ka);
  std::vector<uint32_t> out(256);
  dev.copy_to_host(out.data(), pout, out.size() * 4);
  for (uint32_t t = 0; t < 128; ++t)
    r.first.push_back(out[2 * t]), r.second.push_back(out[2 * t + 1]);
  r.reports = dev.reports();
  return r;
}

int count(const Result& r, HazardKind k) {
  int n = 0;
  for (const auto& h : r.reports)
    n += h.kind == k;
  return n;
}

std::string text(const Result& r) {
  std::string s;
  for (const auto& h : r.reports)
    s += h.str() + "\n";
  return s;
}

class EmuLdsDma : public ::testing::Test {
protected:
  void SetUp() override { ISATUNE_SKIP_IF_LLVM_LACKS("gfx942"); }
  std::mt19937 rng{std::random_device{}()};
};

} // namespace

// Ordered by a wait and a barrier: the issuing wave sees its data after s_waitcnt, every wave after the
// barrier, nothing reported.
TEST_F(EmuLdsDma, VisibleAfterWaitAndBarrier) {
  Result r = run({.reader = false}, rng);
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.first[l], r.in[l]) << "wave 0 after its wait, lane " << l;
    EXPECT_EQ(r.second[l], r.in[l]) << "wave 0 after the barrier, lane " << l;
    EXPECT_EQ(r.second[64 + l], r.in[l]) << "wave 1 after the barrier, lane " << l;
  }
  EXPECT_TRUE(r.reports.empty()) << text(r);
}

// Wave 1 reads the region first (in emulated time), then wave 0's LDS-DMA overwrites it in the same interval:
// a write-after-read race, reported at the load; wave 1 read the old data.
TEST_F(EmuLdsDma, WriteAfterReadInOneIntervalIsARace) {
  Result r = run({.writer_sleep = 40}, rng);
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.first[64 + l], r.old(l)) << "lane " << l;
    EXPECT_EQ(r.second[64 + l], r.in[l]) << "lane " << l;
  }
  EXPECT_EQ(count(r, HazardKind::race), 1) << text(r);
  ASSERT_FALSE(r.reports.empty());
  EXPECT_NE(r.reports[0].disassembly.find("buffer_load_dword"), std::string::npos) << text(r);
}

// Wave 0's load is issued and retired first, wave 1 reads it before any barrier: a read-after-write race,
// reported at the read, which gets the old data (the load's data lands at the barrier); the same result as
// the other order.
TEST_F(EmuLdsDma, ReadBeforeTheBarrierGetsTheOldData) {
  Result r = run({.reader_sleep = 40}, rng);
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.first[l], r.in[l]) << "lane " << l;
    EXPECT_EQ(r.first[64 + l], r.old(l)) << "lane " << l;
    EXPECT_EQ(r.second[64 + l], r.in[l]) << "lane " << l;
  }
  EXPECT_EQ(count(r, HazardKind::race), 1) << text(r);
  ASSERT_FALSE(r.reports.empty());
  EXPECT_NE(r.reports[0].disassembly.find("ds_read_b32"), std::string::npos) << text(r);
}

// The issuing wave reading before its s_waitcnt vmcnt: pending_read, and the old data.
TEST_F(EmuLdsDma, IssuerReadingBeforeItsWait) {
  Result r = run({.reader = false, .early = true}, rng);
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(r.first[l], r.old(l)) << "lane " << l;
    EXPECT_EQ(r.second[l], r.in[l]) << "lane " << l;
  }
  EXPECT_EQ(count(r, HazardKind::pending_read), 1) << text(r);
  EXPECT_EQ(r.reports.size(), 1u) << text(r);
}

// With no sleeps, the waves run to the barrier in index order (the load first: the race is seen at the read) or
// in reverse (the read first: seen at the load); the data is the same in both: the old value in the interval.
TEST_F(EmuLdsDma, SameDataInEveryWaveOrder) {
  for (WaveOrder order : {WaveOrder::index, WaveOrder::reverse}) {
    Result r = run({}, rng, order);
    const bool idx = order == WaveOrder::index;
    for (uint32_t l = 0; l < 64; ++l) {
      EXPECT_EQ(r.first[l], r.in[l]) << "index order " << idx << " lane " << l;
      EXPECT_EQ(r.first[64 + l], r.old(l)) << "index order " << idx << " lane " << l;
      EXPECT_EQ(r.second[64 + l], r.in[l]) << "index order " << idx << " lane " << l;
    }
    ASSERT_EQ(r.reports.size(), 1u) << text(r);
    EXPECT_EQ(r.reports[0].kind, HazardKind::race) << text(r);
    EXPECT_NE(r.reports[0].disassembly.find(idx ? "ds_read_b32" : "buffer_load_dword"), std::string::npos) << text(r);
  }
}

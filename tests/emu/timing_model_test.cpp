// The emulator's timing model (docs/emulator.md "Timing model") on micro-kernels whose cycle counts follow from
// the model's documented figures: a dependent and an independent MFMA chain, SIMD sharing, a VALU and a
// transcendental chain, an LDS bank-conflict pattern, a bandwidth-bound stream, the per-instruction profile.
// Each count is taken as the difference of two kernel lengths, so the prologue and launch overhead cancel.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;

namespace {

std::string kernel_text(const std::string& target, const std::string& body, int vgprs, int agprs, int lds,
                        int kernarg_bytes) {
  const std::string n = "k";
  std::string s = ".amdgcn_target \"amdgcn-amd-amdhsa--" + target + "\"\n.amdhsa_code_object_version 5\n.text\n";
  s += ".globl " + n + "\n.p2align 8\n.type " + n + ",@function\n" + n + ":\n" + body + "  s_endpgm\n";
  s += ".Lend:\n.size " + n + ", .Lend-" + n + "\n.rodata\n.p2align 6\n.amdhsa_kernel " + n + "\n";
  s += "  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n";
  s += "  .amdhsa_kernarg_size " + std::to_string(kernarg_bytes) + "\n";
  s += "  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_system_vgpr_workitem_id 0\n";
  s += "  .amdhsa_next_free_vgpr " + std::to_string(vgprs + agprs) + "\n  .amdhsa_next_free_sgpr 16\n";
  s += "  .amdhsa_accum_offset " + std::to_string(vgprs) + "\n";
  s += "  .amdhsa_group_segment_fixed_size " + std::to_string(lds) + "\n  .amdhsa_private_segment_fixed_size 0\n";
  s += ".end_amdhsa_kernel\n.amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\n";
  s += "amdhsa.target: amdgcn-amd-amdhsa--" + target + "\namdhsa.kernels:\n";
  s += "  - .name: " + n + "\n    .symbol: " + n + ".kd\n    .kernarg_segment_size: " + std::to_string(kernarg_bytes);
  s += "\n    .kernarg_segment_align: 8\n    .group_segment_fixed_size: " + std::to_string(lds);
  s += "\n    .private_segment_fixed_size: 0\n    .wavefront_size: 64\n    .sgpr_count: 22\n";
  s += "    .vgpr_count: " + std::to_string(vgprs + agprs) + "\n    .agpr_count: " + std::to_string(agprs) + "\n";
  s += "    .max_flat_workgroup_size: 1024\n...\n.end_amdgpu_metadata\n";
  return s;
}

struct Outcome {
  emu::LaunchStats stats;
  std::vector<emu::InstructionProfile> profile;
  std::string reports;
};

Outcome run(const std::string& target, const std::string& body, uint32_t block, uint32_t grid = 1, int agprs = 0,
        int lds = 0, std::vector<uint8_t> args = {}, emu::EmuDevice* device = nullptr) {
  auto code = toolchain::make_assembler("llvm")->assemble(
      kernel_text(target, body, 32, agprs, lds, int(args.size())), {target, "timing.s"}).code;
  auto own = device ? nullptr : emu::make_emu_device({.target = target, .threads = 1});
  emu::EmuDevice& dev = device ? *device : *own;
  auto module = dev.load(code);
  auto fn = module->function("k");
  loader::LaunchConfig cfg;
  cfg.grid = {grid, 1, 1};
  cfg.block = {block, 1, 1};
  dev.launch(*fn, cfg, args);
  Outcome r{dev.last_launch(), dev.profile(), ""};
  for (const auto& rep : dev.reports()) r.reports += rep.str() + "\n";
  dev.clear_reports();
  return r;
}

std::string repeat(const std::string& line, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += line;
  return s;
}

const char* mfma_bf16(const std::string& target) {
  return target == "gfx90a" ? "v_mfma_f32_32x32x8bf16_1k" : "v_mfma_f32_32x32x8_bf16";
}

// shared/notes/cdna.md section 4: 32x32x8 bf16 takes 64 cycles on gfx90a, 32 on gfx942 and gfx950.
uint64_t mfma_cycles(const std::string& target) { return target == "gfx90a" ? 64 : 32; }

class TimingModel : public ::testing::TestWithParam<std::string> {};

TEST_P(TimingModel, DependentAndIndependentMfmaChainsRunAtThePipeRate) {
  const std::string t = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(t);
  const std::string chained = std::string("  ") + mfma_bf16(t) + " a[0:15], v[2:3], v[4:5], a[0:15]\n";
  std::string indep;
  for (int i = 0; i < 4; ++i)
    indep += std::string("  ") + mfma_bf16(t) + " a[" + std::to_string(16 * i) + ":" + std::to_string(16 * i + 15) +
             "], v[2:3], v[4:5], a[" + std::to_string(16 * i) + ":" + std::to_string(16 * i + 15) + "]\n";
  const Outcome d8 = run(t, repeat(chained, 8), 64, 1, 64), d24 = run(t, repeat(chained, 24), 64, 1, 64);
  EXPECT_EQ(d8.reports, "");
  // One wave: each MFMA waits for its predecessor's result (srcC), which arrives as the pipe frees.
  EXPECT_EQ(d24.stats.cu_cycles - d8.stats.cu_cycles, 16 * mfma_cycles(t));
  // Four independent accumulators in one wave: still one MFMA pipe per SIMD, the same rate.
  const Outcome i8 = run(t, repeat(indep, 2), 64, 1, 64), i24 = run(t, repeat(indep, 6), 64, 1, 64);
  EXPECT_EQ(i24.stats.cu_cycles - i8.stats.cu_cycles, 16 * mfma_cycles(t));
  // Four waves, one per SIMD, run in parallel; eight waves put two on each SIMD, which take turns.
  const Outcome w4a = run(t, repeat(chained, 8), 256, 1, 64), w4b = run(t, repeat(chained, 24), 256, 1, 64);
  EXPECT_EQ(w4b.stats.cu_cycles - w4a.stats.cu_cycles, 16 * mfma_cycles(t));
  const Outcome w8a = run(t, repeat(chained, 8), 512, 1, 64), w8b = run(t, repeat(chained, 24), 512, 1, 64);
  EXPECT_EQ(w8b.stats.cu_cycles - w8a.stats.cu_cycles, 2 * 16 * mfma_cycles(t));
  // The dependent chain's stalls are attributed to the MFMA pipe / the dependency, not elsewhere.
  uint64_t mfma_stall = 0, other = 0;
  for (const auto& p : d24.profile)
    for (const auto& [cause, cycles] : p.stalls)
      (cause == "mfma_busy" || cause == "dependency" ? mfma_stall : other) += cycles;
  EXPECT_GE(mfma_stall, 23 * (mfma_cycles(t) - 4));
  EXPECT_EQ(other, 0u);
  // FLOPs issued: 2*32*32*8 per MFMA.
  EXPECT_EQ(d24.stats.flops, 24.0 * 2 * 32 * 32 * 8);
}

TEST_P(TimingModel, ValuAndTranscendentalChains) {
  const std::string t = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(t);
  const std::string pro = "  v_cvt_f32_u32 v1, v0\n";
  // Dependent VALU: back to back, one per 4-clock issue cycle (SISchedule.td Write32Bit = 1 issue cycle).
  const Outcome a = run(t, pro + repeat("  v_add_f32 v1, v1, v1\n", 10), 64);
  const Outcome b = run(t, pro + repeat("  v_add_f32 v1, v1, v1\n", 50), 64);
  EXPECT_EQ(b.stats.cu_cycles - a.stats.cu_cycles, 40u * 4);
  // Transcendental: quarter rate (WriteTrans32 = 4 issue cycles), 16 clocks each.
  const Outcome c = run(t, pro + repeat("  v_exp_f32 v1, v1\n", 10), 64);
  const Outcome d = run(t, pro + repeat("  v_exp_f32 v1, v1\n", 50), 64);
  EXPECT_EQ(d.stats.cu_cycles - c.stats.cu_cycles, 40u * 16);
  EXPECT_EQ(d.reports, "");
  // Four waves on four SIMDs do not slow each other; eight share the VALUs two by two.
  const Outcome e = run(t, pro + repeat("  v_add_f32 v1, v1, v1\n", 50), 512);
  const Outcome f = run(t, pro + repeat("  v_add_f32 v1, v1, v1\n", 10), 512);
  EXPECT_EQ(e.stats.cu_cycles - f.stats.cu_cycles, 2 * 40u * 4);
}

TEST_P(TimingModel, LdsBankConflictsCostPasses) {
  const std::string t = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(t);
  const uint32_t banks = t == "gfx950" ? 64 : 32;
  // Lane l reads dword l * stride: stride 1 touches every bank once per pass; stride = banks puts all the
  // lanes of a pass in one bank at distinct addresses.
  auto body = [&](uint32_t stride, int reads) {
    std::string s = "  v_mul_u32_u24 v1, " + std::to_string(4 * stride) + ", v0\n";
    s += repeat("  ds_read_b32 v2, v1\n  s_waitcnt lgkmcnt(0)\n", reads);
    return s;
  };
  const int lds = 64 * 4 * int(banks);
  const Outcome free4 = run(t, body(1, 4), 64, 1, 0, lds), free12 = run(t, body(1, 12), 64, 1, 0, lds);
  const Outcome bad4 = run(t, body(banks, 4), 64, 1, 0, lds), bad12 = run(t, body(banks, 12), 64, 1, 0, lds);
  EXPECT_EQ(bad12.reports, "");
  const uint64_t passes = 64 / banks;       // conflict-free: one pass of the bank array per `banks` lanes
  const uint64_t conflicted = 64;           // every lane alone in its pass
  EXPECT_EQ((bad12.stats.cu_cycles - bad4.stats.cu_cycles) - (free12.stats.cu_cycles - free4.stats.cu_cycles),
            8 * (conflicted - passes));
  uint64_t conflict = 0;
  for (const auto& p : bad12.profile)
    for (const auto& [cause, cycles] : p.stalls)
      if (cause == "lds_bank_conflict") conflict += cycles;
  EXPECT_EQ(conflict, 12 * (conflicted - passes));
}

TEST_P(TimingModel, StreamIsBoundByHbmBandwidth) {
  const std::string t = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(t);
  // y[i] = x[i] in 16-byte vectors, 4 KiB per workgroup of 256 lanes; sizes ragged in workgroups.
  std::mt19937 rng(std::random_device{}());
  const uint32_t wgs = 3000 + rng() % 500;
  const uint64_t bytes = uint64_t(wgs) * 4096;
  auto dev = emu::make_emu_device({.target = t, .threads = 2});
  const uint64_t x = dev->alloc(bytes), y = dev->alloc(bytes);
  std::vector<uint32_t> host(bytes / 4);
  for (auto& v : host) v = rng();
  dev->copy_to_device(x, host.data(), bytes);
  std::vector<uint8_t> args(16);
  std::memcpy(args.data(), &x, 8);
  std::memcpy(args.data() + 8, &y, 8);
  const std::string body =
      "  s_load_dwordx4 s[4:7], s[0:1], 0\n  v_lshlrev_b32 v1, 4, v0\n  s_lshl_b32 s8, s2, 12\n"
      "  v_add_u32 v1, s8, v1\n  s_waitcnt lgkmcnt(0)\n  global_load_dwordx4 v[2:5], v1, s[4:5]\n"
      "  s_waitcnt vmcnt(0)\n  global_store_dwordx4 v1, v[2:5], s[6:7]\n";
  const Outcome r = run(t, body, 256, wgs, 0, 0, args, dev.get());
  EXPECT_EQ(r.reports, "");
  std::vector<uint32_t> out(bytes / 4);
  dev->copy_to_host(out.data(), y, bytes);
  EXPECT_EQ(out, host);
  // Every byte read once and written once: the distinct lines, at the chip's HBM bandwidth times the calibrated
  // efficiency 0.6 (timing.h).
  EXPECT_EQ(r.stats.dram_bytes, 2.0 * double(bytes));
  EXPECT_EQ(r.stats.limiter, "dram");
  const cdna::TargetInfo* info = cdna::find_target(t);
  const double peak_cycles = 2.0 * double(bytes) / (0.6 * info->peak_hbm_tbps * 1e12) * info->peak_clock_ghz * 1e9;
  EXPECT_NEAR(double(r.stats.dram_cycles), peak_cycles, 1.0);
  EXPECT_EQ(r.stats.estimated_cycles, r.stats.dram_cycles + r.stats.launch_cycles);
}

INSTANTIATE_TEST_SUITE_P(Targets, TimingModel, ::testing::Values("gfx90a", "gfx942", "gfx950"));

} // namespace

// The CDNA emulator's speed: lane-instructions per second of host time on a VALU-heavy kernel and an MFMA-heavy
// kernel (both generated here, assembled in process), with one worker thread and with all of them.
//   build-*/bench/bench_emu [--benchmark_min_time=1s]
// Counters: lane_ips = lane instructions per second (all workers), lane_ips_per_thread = that / workers,
// wave_ips = wave instructions per second, mfma_ips = MFMA instructions per second (one 32x32x8 MFMA is 8192
// multiply-adds). An MFMA counts as 64 lane instructions, as LaunchStats counts it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <thread>

#include "isatune/codeobj/reader.h"
#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"

namespace {

using namespace isatune;

std::string kernel_text(const std::string& name, const std::string& prologue, const std::string& body, int iters,
                        int vgprs, int agprs) {
  std::string s;
  s += ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.amdhsa_code_object_version 5\n.text\n";
  s += ".globl " + name + "\n.p2align 8\n.type " + name + ",@function\n" + name + ":\n";
  s += prologue;
  s += "  s_mov_b32 s4, " + std::to_string(iters) + "\n.Lloop:\n" + body;
  s += "  s_sub_u32 s4, s4, 1\n  s_cmp_lg_u32 s4, 0\n  s_cbranch_scc1 .Lloop\n  s_endpgm\n";
  s += ".Lend:\n.size " + name + ", .Lend-" + name + "\n.p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n";
  s += ".rodata\n.p2align 6\n.amdhsa_kernel " + name + "\n";
  s += "  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 0\n";
  s += "  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_system_vgpr_workitem_id 0\n";
  s += "  .amdhsa_next_free_vgpr " + std::to_string(vgprs + agprs) + "\n  .amdhsa_next_free_sgpr 8\n";
  s += "  .amdhsa_accum_offset " + std::to_string(vgprs) + "\n";
  s += "  .amdhsa_group_segment_fixed_size 0\n  .amdhsa_private_segment_fixed_size 0\n";
  s += ".end_amdhsa_kernel\n.amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\n";
  s += "amdhsa.target: amdgcn-amd-amdhsa--gfx942\namdhsa.kernels:\n";
  s += "  - .name: " + name + "\n    .symbol: " + name + ".kd\n    .kernarg_segment_size: 0\n";
  s += "    .kernarg_segment_align: 8\n    .group_segment_fixed_size: 0\n    .private_segment_fixed_size: 0\n";
  s += "    .wavefront_size: 64\n    .sgpr_count: 16\n    .vgpr_count: " + std::to_string(vgprs + agprs) + "\n";
  s += "    .agpr_count: " + std::to_string(agprs) + "\n    .max_flat_workgroup_size: 256\n...\n";
  s += ".end_amdgpu_metadata\n";
  return s;
}

// 64 VALU instructions per loop trip: f32 FMA/mul/add and u32 add/xor over 16 registers.
std::string valu_kernel() {
  std::string pro = "  v_and_b32 v0, 0x3ff, v0\n  v_cvt_f32_u32 v1, v0\n";
  for (int r = 2; r < 18; ++r) pro += "  v_mov_b32 v" + std::to_string(r) + ", v1\n";
  std::string body;
  for (int i = 0; i < 64; ++i) {
    std::string d = "v" + std::to_string(2 + i % 16), o = "v" + std::to_string(2 + (i + 5) % 16);
    switch (i % 4) {
    case 0: body += "  v_fma_f32 " + d + ", " + o + ", 0.5, " + d + "\n"; break;
    case 1: body += "  v_mul_f32 " + d + ", " + d + ", " + o + "\n"; break;
    case 2: body += "  v_add_f32 " + d + ", " + o + ", " + d + "\n"; break;
    case 3: body += "  v_add_u32 " + d + ", " + o + ", " + d + "\n"; break;
    }
  }
  return kernel_text("valu_heavy", pro, body, 16, 20, 0);
}

// 16 MFMAs per loop trip (v_mfma_f32_32x32x8_f16, four accumulator chains) and 4 VALU instructions.
std::string mfma_kernel() {
  std::string pro = "  v_and_b32 v0, 0x3ff, v0\n  v_cvt_f32_u32 v1, v0\n  v_cvt_f16_f32 v2, v1\n";
  pro += "  v_mov_b32 v3, v2\n  v_mov_b32 v4, v2\n  v_mov_b32 v5, v2\n";
  for (int a = 0; a < 64; ++a) pro += "  v_accvgpr_write_b32 a" + std::to_string(a) + ", 0\n";
  pro += "  s_nop 7\n";
  std::string body;
  for (int i = 0; i < 16; ++i) {
    int a = 16 * (i % 4);
    std::string acc = "a[" + std::to_string(a) + ":" + std::to_string(a + 15) + "]";
    body += "  v_mfma_f32_32x32x8_f16 " + acc + ", v[2:3], v[4:5], " + acc + "\n";
    if (i % 4 == 3) body += "  v_add_u32 v6, v6, v0\n";
  }
  body += "  s_nop 7\n  s_nop 7\n  s_nop 3\n"; // the next trip's MFMAs reuse the chains
  return kernel_text("mfma_heavy", pro, body, 8, 8, 64);
}

struct Prepared {
  std::unique_ptr<emu::EmuDevice> dev;
  std::shared_ptr<loader::Module> module;
  std::shared_ptr<loader::Function> function;
};

Prepared prepare(const std::string& text, const std::string& name) {
  Prepared p;
  p.dev = emu::make_emu_device({.target = "gfx942"});
  auto code = toolchain::make_assembler("llvm")->assemble(text, {"gfx942", name + ".s"}).code;
  p.module = p.dev->load(code);
  p.function = p.module->function(name);
  return p;
}

void run_bench(benchmark::State& state, const std::string& text, const std::string& name, double mfma_per_wave) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = state.range(0) == 0 ? hw : unsigned(state.range(0));
  Prepared p = prepare(text, name);
  p.dev->set_threads(threads);
  loader::LaunchConfig cfg;
  cfg.grid = {uint32_t(8 * threads), 1, 1};
  cfg.block = {256, 1, 1};
  uint64_t lanes = 0, waves = 0, launched_waves = 0;
  double host = 0;
  for (auto _ : state) {
    p.dev->launch(*p.function, cfg, {});
    lanes += p.dev->last_launch().lane_instructions;
    waves += p.dev->last_launch().instructions;
    launched_waves += p.dev->last_launch().waves;
    host += p.dev->last_launch().host_seconds;
  }
  if (!p.dev->reports().empty()) state.SkipWithError(("hazard report: " + p.dev->reports()[0].str()).c_str());
  state.counters["workers"] = threads;
  state.counters["lane_ips"] = benchmark::Counter(double(lanes), benchmark::Counter::kIsRate);
  state.counters["lane_ips_per_thread"] = benchmark::Counter(double(lanes) / threads, benchmark::Counter::kIsRate);
  state.counters["wave_ips"] = benchmark::Counter(double(waves), benchmark::Counter::kIsRate);
  if (mfma_per_wave > 0)
    state.counters["mfma_ips"] = benchmark::Counter(double(launched_waves) * mfma_per_wave, benchmark::Counter::kIsRate);
  state.counters["host_s_per_launch"] = host / double(state.iterations());
}

void BM_Valu(benchmark::State& state) { run_bench(state, valu_kernel(), "valu_heavy", 0); }
void BM_Mfma(benchmark::State& state) { run_bench(state, mfma_kernel(), "mfma_heavy", 8 * 16); }

// AMD's production fmha forward kernel (AITER fmha_v3_fwd hd128 bf16 rtne, gfx942; tests/fixtures/aiter), as the
// AITER host launches it (csrc/cpp_itfs/mha_fwd.cu): B 1, 2 heads, seqlen_q = seqlen_k = 512, BSHD, random bf16
// inputs; 4 workgroups of 8 waves. Every wave does 32 MFMAs (v_mfma_f32_32x32x8_bf16: 16 for its 32x32 block of
// Q K^T over d = 128, 16 for its 32x128 block of P V) per 32-key step, so 32 x 512 / 32 x 32 waves = 16,384 MFMAs
// per launch (counted from the kernel structure; a temporary counter in the MFMA handler gave the same 16,384).
void BM_AiterFmhaFwd(benchmark::State& state) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = state.range(0) == 0 ? hw : unsigned(state.range(0));
  auto dev = emu::make_emu_device({.target = "gfx942"});
  dev->set_threads(threads);
  CodeObject code;
  try {
    code = codeobj::read_code_object_file(std::string(ISATUNE_BENCH_FIXTURES_DIR) +
                                          "/aiter/gfx942/fwd_hd128_bf16_rtne.co");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto module = dev->load(code);
  auto fn = module->function(code.kernels.at(0).name);
  const uint32_t B = 1, H = 2, S = 512, D = 128, row = H * D * 2;
  std::mt19937 rng(1);
  std::vector<uint16_t> qkv(size_t(B) * S * H * D);
  for (auto& x : qkv)
    x = uint16_t(0x3c00 + rng() % 0x400) ^ uint16_t((rng() & 1) << 15); // bf16 of magnitude 2^-7 .. 2^-6
  const size_t bytes = qkv.size() * 2;
  uint64_t pq = dev->alloc(bytes), pk = dev->alloc(bytes), pv = dev->alloc(bytes), po = dev->alloc(bytes);
  uint64_t pl = dev->alloc(size_t(B) * H * S * 4);
  for (uint64_t p : {pq, pk, pv})
    dev->copy_to_device(p, qkv.data(), bytes);
  std::vector<uint8_t> args;
  auto slot = [&](const void* v, size_t n) {
    size_t at = args.size();
    args.resize(at + 16, 0);
    std::memcpy(args.data() + at, v, n);
  };
  auto ptr = [&](uint64_t p) { slot(&p, 8); };
  auto u32 = [&](uint32_t v) { slot(&v, 4); };
  const float scale = 0.08838834764831845f; // 1/sqrt(128)
  ptr(po), ptr(pq), ptr(pk), ptr(pv), ptr(pl), slot(&scale, 4);
  u32(S), u32(row), u32(256 * row), u32(D * 2), u32(S * row), u32(1), u32(row), u32(D * 2), u32(S * row);
  u32(5), u32(1), u32(S), u32(D), u32(D), u32(H), u32(row), u32(D * 2), u32(S * row);
  u32(row), u32(D * 2), u32(S * row), ptr(0), ptr(0), u32(S * 4);
  for (int i = 0; i < 5; ++i)
    ptr(0);
  for (int i = 0; i < 6; ++i)
    u32(0);
  loader::LaunchConfig cfg;
  cfg.grid = {S / 256, H, B};
  cfg.block = {512, 1, 1};
  uint64_t lanes = 0, waves = 0;
  for (auto _ : state) {
    dev->launch(*fn, cfg, args);
    lanes += dev->last_launch().lane_instructions;
    waves += dev->last_launch().instructions;
  }
  const double mfma_per_launch = 32.0 * (S / 32) * (S / 256) * H * B * 8;
  state.counters["workers"] = threads;
  state.counters["lane_ips"] = benchmark::Counter(double(lanes), benchmark::Counter::kIsRate);
  state.counters["lane_ips_per_thread"] = benchmark::Counter(double(lanes) / threads, benchmark::Counter::kIsRate);
  state.counters["wave_ips"] = benchmark::Counter(double(waves), benchmark::Counter::kIsRate);
  state.counters["mfma_ips"] =
      benchmark::Counter(mfma_per_launch * double(state.iterations()), benchmark::Counter::kIsRate);
}

// Arg: worker threads (0: all hardware threads).
BENCHMARK(BM_Valu)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Mfma)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AiterFmhaFwd)->Arg(1)->Arg(0)->UseRealTime()->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

// Assembling and linking one ~2,000-instruction gfx942 kernel: in process (the "llvm" Assembler: LLVM MC +
// lld in memory) against running the llvm-mc and ld.lld programs on files. Both run in the same process and
// run; BM_Programs reports the ratio to the in-process time as the counter `speedup_in_process`.
//   build-*/bench/bench_assemble [--benchmark_min_time=2s]
#include <benchmark/benchmark.h>

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "isatune/codeobj/reader.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/llvm_mc.h"

namespace {

using isatune::toolchain::AssembleOptions;

// A kernel body mixing VALU, MFMA, global and LDS memory and waits; `n` instructions.
std::string mixed_body(int n) {
  std::string body;
  body.reserve(size_t(n) * 48);
  for (int i = 0; i < n; ++i) {
    const int r = i % 8;
    switch (i % 10) {
    case 0: body += "  global_load_dwordx4 v[" + std::to_string(20 + 4 * (r % 4)) + ":" + std::to_string(23 + 4 * (r % 4)) + "], v2, s[4:5] offset:" + std::to_string(16 * r) + "\n"; break;
    case 1: body += "  ds_read_b128 v[" + std::to_string(36 + 4 * (r % 4)) + ":" + std::to_string(39 + 4 * (r % 4)) + "], v1 offset:" + std::to_string(64 * r) + "\n"; break;
    case 2: body += "  v_fma_f32 v" + std::to_string(52 + r) + ", v" + std::to_string(20 + r) + ", v" + std::to_string(36 + r) + ", v" + std::to_string(52 + r) + "\n"; break;
    case 3: body += "  s_waitcnt vmcnt(0) lgkmcnt(0)\n"; break;
    case 4: body += "  v_mfma_f32_32x32x8_f16 a[0:15], v[20:21], v[36:37], a[0:15]\n"; break;
    case 5: body += "  ds_write_b64 v1, v[" + std::to_string(52 + (r & 6)) + ":" + std::to_string(53 + (r & 6)) + "] offset:" + std::to_string(128 + 8 * r) + "\n"; break;
    case 6: body += "  v_add_u32 v" + std::to_string(3 + r % 2) + ", s" + std::to_string(10 + r % 2) + ", v" + std::to_string(3 + r % 2) + "\n"; break;
    case 7: body += "  s_add_u32 s" + std::to_string(12 + r % 4) + ", s" + std::to_string(12 + r % 4) + ", 0x" + std::to_string(100 + r) + "\n"; break;
    case 8: body += "  global_store_dword v2, v" + std::to_string(52 + r) + ", s[8:9] offset:" + std::to_string(4 * r) + "\n"; break;
    default: body += "  v_pk_fma_f32 v[60:61], v[20:21], v[22:23], v[60:61]\n"; break;
    }
  }
  return body;
}

// The kernel around `body`: prologue, end, padding and, when `descriptors`, the .amdhsa_kernel descriptor and
// the .amdgpu_metadata block.
std::string kernel_around(const std::string& body, bool descriptors = true) {
  const std::string head = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n"
         ".amdhsa_code_object_version 5\n"
         ".text\n.globl big\n.p2align 8\n.type big,@function\nbig:\n"
         "  s_load_dwordx4 s[4:7], s[0:1], 0x0\n"
         "  s_load_dwordx2 s[8:9], s[0:1], 0x10\n"
         "  v_and_b32 v0, 0x3ff, v0\n"
         "  v_lshlrev_b32 v2, 4, v0\n"
         "  v_lshlrev_b32 v1, 3, v0\n"
         "  s_waitcnt lgkmcnt(0)\n" +
         body +
         "  s_endpgm\n.Lbig_end:\n.size big, .Lbig_end-big\n"
         ".p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n";
  if (!descriptors) return head;
  return head + ".rodata\n.p2align 6\n.amdhsa_kernel big\n"
         "  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 24\n"
         "  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_next_free_vgpr 80\n  .amdhsa_next_free_sgpr 16\n"
         "  .amdhsa_accum_offset 64\n  .amdhsa_group_segment_fixed_size 65536\n"
         ".end_amdhsa_kernel\n"
         ".amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.target: amdgcn-amd-amdhsa--gfx942\n"
         "amdhsa.kernels:\n  - .name: big\n    .symbol: big.kd\n    .kernarg_segment_size: 24\n"
         "    .kernarg_segment_align: 8\n    .group_segment_fixed_size: 65536\n    .private_segment_fixed_size: 0\n"
         "    .wavefront_size: 64\n    .sgpr_count: 22\n    .vgpr_count: 80\n    .agpr_count: 16\n"
         "    .max_flat_workgroup_size: 256\n    .args:\n"
         "      - { .name: a, .offset: 0, .size: 8, .value_kind: global_buffer, .address_space: global }\n"
         "      - { .name: b, .offset: 8, .size: 8, .value_kind: global_buffer, .address_space: global }\n"
         "      - { .name: c, .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global }\n"
         "...\n.end_amdgpu_metadata\n";
}

std::string big_kernel(int n) { return kernel_around(mixed_body(n)); }

const std::string& kernel_text() {
  static const std::string text = big_kernel(2000);
  return text;
}

// `n` copies of one instruction line (registers rotate a little so lines differ as in real code).
std::string one_class_body(const std::string& cls, int n) {
  std::string body;
  for (int i = 0; i < n; ++i) {
    const std::string r = std::to_string(20 + i % 8), r2 = std::to_string(40 + i % 8);
    if (cls == "vop3") body += "  v_fma_f32 v" + r + ", v" + r2 + ", v50, v" + r + "\n";
    else if (cls == "vop3_e64") body += "  v_fma_f32_e64 v" + r + ", v" + r2 + ", v50, v" + r + "\n";
    else if (cls == "vop2") body += "  v_add_f32 v" + r + ", v" + r2 + ", v" + r + "\n";
    else if (cls == "vop2_e32") body += "  v_add_f32_e32 v" + r + ", v" + r2 + ", v" + r + "\n";
    else if (cls == "sop2") body += "  s_add_u32 s" + std::to_string(12 + i % 4) + ", s20, 0x64\n";
    else if (cls == "smem") body += "  s_load_dwordx2 s[" + std::to_string(8 + 2 * (i % 4)) + ":" + std::to_string(9 + 2 * (i % 4)) + "], s[0:1], 0x10\n";
    else if (cls == "global") body += "  global_load_dwordx4 v[20:23], v2, s[4:5] offset:16\n";
    else if (cls == "ds") body += "  ds_read_b128 v[36:39], v1 offset:64\n";
    else if (cls == "mfma") body += "  v_mfma_f32_32x32x8_f16 a[0:15], v[20:21], v[36:37], a[0:15]\n";
    else if (cls == "waitcnt") body += "  s_waitcnt vmcnt(0) lgkmcnt(0)\n";
    else if (cls == "nop") body += "  s_nop 0\n";
  }
  return body;
}

double g_in_process_seconds = 0;     // wall time per kernel, set by BM_InProcess, read by BM_Programs
double g_in_process_cpu_seconds = 0; // CPU time (all threads of this process) per kernel

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double children_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  auto s = [](const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) * 1e-6; };
  return s(ru.ru_utime) + s(ru.ru_stime);
}

void BM_InProcess(benchmark::State& state) {
  auto as = isatune::toolchain::make_assembler("llvm");
  const AssembleOptions options{"gfx942", "big.s"};
  size_t bytes = 0;
  try {
    bytes = as->assemble(kernel_text(), options).code.bytes.size(); // warm-up and check
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  int64_t n = 0;
  for (auto _ : state) {
    auto out = as->assemble(kernel_text(), options);
    benchmark::DoNotOptimize(out.code.bytes.data());
    ++n;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g_in_process_seconds = secs / double(n);
  g_in_process_cpu_seconds = (process_cpu_seconds() - cpu0) / double(n);
  state.counters["ms_per_kernel"] = g_in_process_seconds * 1e3;
  state.counters["cpu_ms_per_kernel"] = g_in_process_cpu_seconds * 1e3;
  state.counters["code_object_bytes"] = double(bytes);
  state.counters["kernels_per_s"] = benchmark::Counter(double(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

// The two stages alone, to see where the in-process time goes.
void BM_StageMc(benchmark::State& state) {
  const AssembleOptions options{"gfx942", "big.s"};
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(kernel_text(), options));
}
BENCHMARK(BM_StageMc)->Unit(benchmark::kMillisecond)->UseRealTime();

// Fixed cost: a 10-instruction kernel, with and without the kernel descriptor and metadata block.
void BM_StageMcTiny(benchmark::State& state) {
  const std::string text = kernel_around(mixed_body(10), state.range(0) != 0);
  const AssembleOptions options{"gfx942", "tiny.s"};
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(text, options));
}
BENCHMARK(BM_StageMcTiny)->ArgName("descriptors")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The 2,000-instruction kernel without the descriptor and metadata: their share of the MC stage.
void BM_StageMcNoDescriptors(benchmark::State& state) {
  const std::string text = kernel_around(mixed_body(2000), false);
  const AssembleOptions options{"gfx942", "big.s"};
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(text, options));
}
BENCHMARK(BM_StageMcNoDescriptors)->Unit(benchmark::kMillisecond);

// Per-instruction cost by class: 2,000 lines of one kind; `us_per_1000` is the MC time per 1,000 lines above
// the tiny kernel's (CPU time).
void BM_StageMcClass(benchmark::State& state, const std::string& cls) {
  const std::string text = kernel_around(one_class_body(cls, 2000), false);
  const std::string base = kernel_around("", false);
  const AssembleOptions options{"gfx942", "class.s"};
  auto cpu_per_call = [&](const std::string& t, int reps) {
    timespec a{}, b{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (int i = 0; i < reps; ++i) benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(t, options));
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    return (double(b.tv_sec - a.tv_sec) + double(b.tv_nsec - a.tv_nsec) * 1e-9) / reps;
  };
  const double base_s = cpu_per_call(base, 50);
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    timespec a{}, b{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(text, options));
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    total += double(b.tv_sec - a.tv_sec) + double(b.tv_nsec - a.tv_nsec) * 1e-9;
    ++n;
  }
  state.counters["us_per_1000"] = (total / double(n) - base_s) * 1e6 / 2.0;
}
BENCHMARK_CAPTURE(BM_StageMcClass, vop3, std::string("vop3"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, vop3_e64, std::string("vop3_e64"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, vop2, std::string("vop2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, vop2_e32, std::string("vop2_e32"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, sop2, std::string("sop2"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, smem, std::string("smem"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, global, std::string("global"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, ds, std::string("ds"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, mfma, std::string("mfma"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, waitcnt, std::string("waitcnt"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_StageMcClass, nop, std::string("nop"))->Unit(benchmark::kMillisecond);

void BM_StageLld(benchmark::State& state) {
  const auto object = isatune::toolchain::llvm_assemble_object(kernel_text(), {"gfx942", "big.s"});
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::lld_link_shared({object}));
}
BENCHMARK(BM_StageLld)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StageRead(benchmark::State& state) {
  const auto image = isatune::toolchain::lld_link_shared(
      {isatune::toolchain::llvm_assemble_object(kernel_text(), {"gfx942", "big.s"})});
  for (auto _ : state) benchmark::DoNotOptimize(isatune::codeobj::read_code_object(image, "big.s"));
}
BENCHMARK(BM_StageRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Programs(benchmark::State& state) {
  const std::string tools = ISATUNE_BENCH_LLVM_TOOLS_DIR;
  if (::access((tools + "/llvm-mc").c_str(), X_OK) != 0 || ::access((tools + "/ld.lld").c_str(), X_OK) != 0) {
    state.SkipWithError(("llvm-mc / ld.lld not found in " + tools).c_str());
    return;
  }
  std::string dir_templ = (std::filesystem::temp_directory_path() / "isatune-bench-XXXXXX").string();
  if (!::mkdtemp(dir_templ.data())) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  const std::filesystem::path dir = dir_templ;
  { std::ofstream(dir / "k.s") << kernel_text(); }
  const std::string cmd = tools + "/llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfx942 -filetype=obj " +
                          (dir / "k.s").string() + " -o " + (dir / "k.o").string() + " && " + tools +
                          "/ld.lld -shared --no-undefined " + (dir / "k.o").string() + " -o " +
                          (dir / "k.hsaco").string();
  if (std::system(cmd.c_str()) != 0) {
    state.SkipWithError("the llvm-mc / ld.lld programs failed on the kernel");
    std::filesystem::remove_all(dir);
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  const double child0 = children_cpu_seconds();
  int64_t n = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(std::system(cmd.c_str()));
    ++n;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / double(n);
  const double cpu = (children_cpu_seconds() - child0) / double(n);
  state.counters["ms_per_kernel"] = secs * 1e3;
  state.counters["cpu_ms_per_kernel"] = cpu * 1e3; // the shell, llvm-mc and ld.lld together
  if (g_in_process_seconds > 0) state.counters["speedup_in_process"] = secs / g_in_process_seconds;
  if (g_in_process_cpu_seconds > 0) state.counters["speedup_in_process_cpu"] = cpu / g_in_process_cpu_seconds;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Programs)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

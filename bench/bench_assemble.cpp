// Assembling and linking one ~2,000-instruction gfx942 kernel made with the cdna::Builder, three ways, in one
// run: the fast path (assemble_kernel: instructions as MCInsts, no text parsing), the text path (cdna::print
// + the "llvm" Assembler: LLVM MC + lld in memory) and the llvm-mc and ld.lld programs on the printed text.
// BM_Programs runs last and reports the ratios to the two in-process paths (wall and CPU).
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

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/codeobj/reader.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "isatune/toolchain/llvm_mc.h"

namespace {

using isatune::toolchain::AssembleOptions;

// A kernel mixing VALU, VOP3P, SALU with literals, SMEM, global and LDS memory, MFMA and waits: a prologue, then
// `n` instructions cycling through ten kinds, then s_endpgm.
isatune::cdna::Kernel mixed_kernel(int n) {
  using namespace isatune::cdna;
  Builder b(parse_target_id("gfx942"), "big");
  b.add_arg("a", 8, 8, ArgKind::global_buffer);
  b.add_arg("b", 8, 8, ArgKind::global_buffer);
  b.add_arg("c", 8, 8, ArgKind::global_buffer);
  b.set_lds_bytes(65536);
  b.s_load(s(4, 4), b.kernarg_ptr(), 0);
  b.s_load(s(8, 2), b.kernarg_ptr(), 0x10);
  b.emit("v_and_b32", {v(0), 0x3ff, v(0)});
  b.emit("v_lshlrev_b32", {v(2), 4, v(0)});
  b.emit("v_lshlrev_b32", {v(1), 3, v(0)});
  b.s_waitcnt(std::nullopt, 0);
  auto u = [](int x) { return static_cast<uint16_t>(x); };
  for (int i = 0; i < n; ++i) {
    const int r = i % 8;
    Modifiers m;
    switch (i % 10) {
    case 0: m.offset = 16 * r; b.emit("global_load_dwordx4", {v(u(20 + 4 * (r % 4)), 4), v(2), s(4, 2)}, m); break;
    case 1: m.offset = 64 * r; b.emit("ds_read_b128", {v(u(36 + 4 * (r % 4)), 4), v(1)}, m); break;
    case 2: b.emit("v_fma_f32", {v(u(52 + r)), v(u(20 + r)), v(u(36 + r)), v(u(52 + r))}); break;
    case 3: b.s_waitcnt(0, 0); break;
    case 4: b.emit("v_mfma_f32_32x32x8_f16", {a(0, 16), v(20, 2), v(36, 2), a(0, 16)}); break;
    case 5: m.offset = 128 + 8 * r; b.emit("ds_write_b64", {v(1), v(u(52 + (r & 6)), 2)}, m); break;
    case 6: b.emit("v_add_u32", {v(u(3 + r % 2)), s(u(10 + r % 2)), v(u(3 + r % 2))}); break;
    case 7: b.emit("s_add_u32", {s(u(12 + r % 4)), s(u(12 + r % 4)), 0x100 + r}); break;
    case 8: m.offset = 4 * r; b.emit("global_store_dword", {v(2), v(u(52 + r)), s(8, 2)}, m); break;
    default: b.emit("v_pk_fma_f32", {v(60, 2), v(20, 2), v(22, 2), v(60, 2)}); break;
    }
  }
  b.s_endpgm();
  return b.finish();
}

const isatune::cdna::Kernel& big_kernel() {
  static const isatune::cdna::Kernel k = mixed_kernel(2000);
  return k;
}

// The printed kernel: what the text path and the programs assemble.
const std::string& kernel_text() {
  static const std::string text = isatune::cdna::print(big_kernel());
  return text;
}

// The kernel around a body of text lines, without descriptor and metadata: for the per-class parser costs.
std::string kernel_around(const std::string& body) {
  return ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n"
         ".amdhsa_code_object_version 5\n"
         ".text\n.globl big\n.p2align 8\n.type big,@function\nbig:\n" +
         body + "  s_endpgm\n.Lbig_end:\n.size big, .Lbig_end-big\n";
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

// Per kernel, set by the in-process benchmarks and read by BM_Programs: wall time and CPU time of this process.
double g_fast_seconds = 0, g_fast_cpu_seconds = 0;
double g_text_seconds = 0, g_text_cpu_seconds = 0;

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

// Runs `one` per iteration; records wall and CPU time per kernel in *wall / *cpu and as counters.
template <typename F>
void timed_loop(benchmark::State& state, F&& one, double* wall, double* cpu) {
  auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = process_cpu_seconds();
  int64_t n = 0;
  for (auto _ : state) {
    one();
    ++n;
  }
  *wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / double(n);
  *cpu = (process_cpu_seconds() - cpu0) / double(n);
  state.counters["ms_per_kernel"] = *wall * 1e3;
  state.counters["cpu_ms_per_kernel"] = *cpu * 1e3;
}

// Kernel -> code object through the fast path (templates learned by the first call, then reused).
void BM_FastPath(benchmark::State& state) {
  // The first call in the process learns the kernel's instruction shapes; Google Benchmark may run this
  // function more than once, so that call is timed once, after a text-path call has set up LLVM and lld.
  struct First {
    double ms = 0;
    size_t bytes = 0, fallback = 0, templates = 0;
    std::string error;
  };
  static const First first = [] {
    First f;
    try {
      isatune::toolchain::make_assembler("llvm")->assemble(kernel_text(), {"gfx942", "big.s"});
      isatune::toolchain::KernelAssembleStats stats;
      auto t0 = std::chrono::steady_clock::now();
      f.bytes = isatune::toolchain::assemble_kernel(big_kernel(), {}, &stats).code.bytes.size();
      f.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      f.fallback = stats.fallback;
      f.templates = stats.templates_learned;
    } catch (const std::exception& e) {
      f.error = e.what();
    }
    return f;
  }();
  if (!first.error.empty()) {
    state.SkipWithError(first.error.c_str());
    return;
  }
  state.counters["fallback_instructions"] = double(first.fallback);
  state.counters["templates"] = double(first.templates);
  double wall = 0, cpu = 0;
  timed_loop(
      state, [] { benchmark::DoNotOptimize(isatune::toolchain::assemble_kernel(big_kernel()).code.bytes.data()); },
      &wall, &cpu);
  g_fast_seconds = wall;
  g_fast_cpu_seconds = cpu;
  state.counters["first_call_ms"] = first.ms; // learning the kernel's instruction shapes included
  state.counters["code_object_bytes"] = double(first.bytes);
}
BENCHMARK(BM_FastPath)->Unit(benchmark::kMillisecond)->UseRealTime();

// Kernel -> code object through the text: cdna::print, then the "llvm" Assembler (LLVM MC parser + lld).
void BM_TextPath(benchmark::State& state) {
  auto as = isatune::toolchain::make_assembler("llvm");
  const AssembleOptions options{"gfx942", "big.s"};
  try {
    const auto fast = isatune::toolchain::assemble_kernel(big_kernel());
    const auto text = as->assemble(isatune::cdna::print(big_kernel()), options);
    if (fast.code.sha256 != text.code.sha256) {
      state.SkipWithError("the fast path and the text path give different code objects");
      return;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  double wall = 0, cpu = 0;
  timed_loop(
      state,
      [&] { benchmark::DoNotOptimize(as->assemble(isatune::cdna::print(big_kernel()), options).code.bytes.data()); },
      &wall, &cpu);
  g_text_seconds = wall;
  g_text_cpu_seconds = cpu;
}
BENCHMARK(BM_TextPath)->Unit(benchmark::kMillisecond)->UseRealTime();

// Where the time goes. Fast path: the MC stage (templates, streamer, descriptor and metadata parsed).
void BM_FastStageMc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::assemble_kernel_object(big_kernel()));
}
BENCHMARK(BM_FastStageMc)->Unit(benchmark::kMillisecond)->UseRealTime();

// Printing the kernel (part of the text path).
void BM_StagePrint(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(isatune::cdna::print(big_kernel()));
}
BENCHMARK(BM_StagePrint)->Unit(benchmark::kMillisecond)->UseRealTime();

// Text path: the MC stage on the printed text.
void BM_StageMc(benchmark::State& state) {
  const AssembleOptions options{"gfx942", "big.s"};
  for (auto _ : state) benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(kernel_text(), options));
}
BENCHMARK(BM_StageMc)->Unit(benchmark::kMillisecond)->UseRealTime();

// Fixed cost: a 10-instruction kernel (with descriptor and metadata), both paths' MC stage.
void BM_StageMcTiny(benchmark::State& state) {
  const isatune::cdna::Kernel k = mixed_kernel(10);
  const std::string text = isatune::cdna::print(k);
  const AssembleOptions options{"gfx942", "tiny.s"};
  const bool fast = state.range(0) != 0;
  for (auto _ : state) {
    if (fast) benchmark::DoNotOptimize(isatune::toolchain::assemble_kernel_object(k));
    else benchmark::DoNotOptimize(isatune::toolchain::llvm_assemble_object(text, options));
  }
}
BENCHMARK(BM_StageMcTiny)->ArgName("fast")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The text parser's cost per instruction by class: 2,000 lines of one kind; `us_per_1000` is the MC time per
// 1,000 lines above an empty kernel's (CPU time).
void BM_StageMcClass(benchmark::State& state, const std::string& cls) {
  const std::string text = kernel_around(one_class_body(cls, 2000));
  const std::string base = kernel_around("");
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
  if (g_fast_seconds > 0) state.counters["speedup_fast"] = secs / g_fast_seconds;
  if (g_fast_cpu_seconds > 0) state.counters["speedup_fast_cpu"] = cpu / g_fast_cpu_seconds;
  if (g_text_seconds > 0) state.counters["speedup_text"] = secs / g_text_seconds;
  if (g_text_cpu_seconds > 0) state.counters["speedup_text_cpu"] = cpu / g_text_cpu_seconds;
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Programs)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

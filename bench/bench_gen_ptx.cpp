// Generate + compile time of the PTX generators' variants (issue 12's benchmark): one variant after another
// on one thread (generate, then ptxas), and the parallel throughput of the tuner's compile step (threads each
// running compile_variant, as the compile pool does), reported per core. ptxas is a child process: its CPU time
// is not in Google Benchmark's CPU column, so only wall times and variants/s are meaningful here.
//   ./build/bench/bench_gen_ptx --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <atomic>
#include <thread>
#include <vector>

#include "isatune/gen/generator.h"
#include "isatune/tune/variant_runner.h"

namespace {

using namespace isatune;

struct Family {
  const char* generator;
  const char* isa;
  gen::Signature sig;
};

const Family kFamilies[] = {
    {"gemm", "sm_90a", {{"a", "bf16"}, {"b", "bf16"}, {"cd", "bf16"}, {"layout", "TN"}}},
    {"gemm", "sm_80", {{"a", "bf16"}, {"b", "bf16"}, {"cd", "bf16"}, {"layout", "TN"}}},
    {"softmax", "sm_80", {{"dtype", "bf16"}}},
    {"rmsnorm", "sm_90a", {{"dtype", "bf16"}}},
};

// Up to `count` valid points spread over the space (the tuner's candidates are not neighbours either).
std::vector<tune::VariantSpec> variants(const Family& f, size_t count) {
  const gen::Generator& g = gen::find_generator(f.generator);
  const gen::Signature sig = gen::parse_signature(g, {});
  gen::Signature full = sig;
  for (const auto& [k, v] : f.sig) full[k] = v;
  const gen::Space space = g.space(f.isa, full);
  std::vector<tune::VariantSpec> out;
  const size_t n = space.size();
  for (size_t i = 0; i < count && i < n; ++i)
    out.push_back({&g, f.isa, full, gen::params_of(space, space.valid_config(i * n / std::min(count, n)))});
  return out;
}

void BM_GenerateAndPtxas(benchmark::State& state) {
  const Family& f = kFamilies[state.range(0)];
  state.SetLabel(std::string(f.generator) + " " + f.isa);
  if (!tune::ptxas_unavailable_reason().empty()) {
    state.SkipWithError(tune::ptxas_unavailable_reason().c_str());
    return;
  }
  const auto vs = variants(f, 16);
  size_t i = 0, n = 0;
  double generate_s = 0, ptxas_s = 0;
  for (auto _ : state) {
    const tune::Compiled c = tune::compile_variant(vs[i++ % vs.size()], {.ptxas = true});
    generate_s += c.generate_s;
    ptxas_s += c.assemble_s;
    ++n;
  }
  state.counters["generate_ms"] = generate_s / double(n) * 1e3;
  state.counters["ptxas_ms"] = ptxas_s / double(n) * 1e3;
}

// `threads` workers compile the same 16 variants; variants/s per core = rate / min(threads, cores).
void BM_ParallelCompileThroughput(benchmark::State& state) {
  const Family& f = kFamilies[state.range(0)];
  const unsigned threads = unsigned(state.range(1));
  state.SetLabel(std::string(f.generator) + " " + f.isa);
  if (!tune::ptxas_unavailable_reason().empty()) {
    state.SkipWithError(tune::ptxas_unavailable_reason().c_str());
    return;
  }
  const auto vs = variants(f, 16); // the same 16 for every thread count
  size_t compiled = 0;
  for (auto _ : state) {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (size_t i; (i = next++) < vs.size();) benchmark::DoNotOptimize(tune::compile_variant(vs[i]));
      });
    for (auto& t : pool) t.join();
    compiled += vs.size();
  }
  const double cores = std::min<double>(threads, std::max(1u, std::thread::hardware_concurrency()));
  state.counters["variants_per_s"] = benchmark::Counter(double(compiled), benchmark::Counter::kIsRate);
  state.counters["per_core"] =
      benchmark::Counter(double(compiled) / cores, benchmark::Counter::kIsRate);
}

} // namespace

BENCHMARK(BM_GenerateAndPtxas)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_ParallelCompileThroughput)
    ->ArgsProduct({{0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);

BENCHMARK_MAIN();

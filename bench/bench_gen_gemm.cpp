// GEMM generator throughput (generate + assemble per variant, one core) and the emulated speed of a
// 64x64x64 bf16 GEMM on the CDNA emulator (cost-model estimate, labelled emulated; host seconds too).
#include <benchmark/benchmark.h>

#include "isatune/emu/emulator.h"
#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/tune/variant_runner.h"

using namespace isatune;

namespace {

const gen::Signature kSig{{"a", "bf16"}, {"b", "bf16"}, {"cd", "f32"}, {"layout", "NT"}};

// What the tuner's compile workers do per variant (tune::compile_variant): generate, then the toolchain's fast
// path for builder kernels (MCInsts straight into the object streamer) and lld.
void BM_GemmGenerateAssemble(benchmark::State& state) {
  const std::string isa = "gfx942";
  const gen::Generator& g = gen::find_generator("gemm");
  gen::Space space = g.space(isa, kSig);
  size_t i = 0;
  for (auto _ : state) {
    tune::VariantSpec spec{&g, isa, kSig, gen::params_of(space, space.valid_config((i * 7919) % space.size()))};
    auto compiled = tune::compile_variant(spec);
    benchmark::DoNotOptimize(compiled.code.bytes.data());
    ++i;
  }
  state.counters["variants/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemmGenerateAssemble)->Unit(benchmark::kMillisecond)->MinTime(5.0);

// The same variants through the text path (print, then LLVM's assembly parser), for comparison.
void BM_GemmGenerateAssembleText(benchmark::State& state) {
  const std::string isa = "gfx942";
  const gen::Generator& g = gen::find_generator("gemm");
  gen::Space space = g.space(isa, kSig);
  auto as = toolchain::make_assembler("llvm");
  size_t i = 0;
  for (auto _ : state) {
    gen::Params p = gen::params_of(space, space.valid_config((i * 7919) % space.size()));
    gen::Generated gd = g.generate(isa, kSig, p);
    auto code = as->assemble(gd.text, {isa, gd.kernel_name});
    benchmark::DoNotOptimize(code.code.bytes.data());
    ++i;
  }
  state.counters["variants/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemmGenerateAssembleText)->Unit(benchmark::kMillisecond)->MinTime(5.0);

void BM_GemmGenerateOnly(benchmark::State& state) {
  const std::string isa = "gfx942";
  const gen::Generator& g = gen::find_generator("gemm");
  gen::Space space = g.space(isa, kSig);
  size_t i = 0;
  for (auto _ : state) {
    gen::Params p = gen::params_of(space, space.valid_config((i * 7919) % space.size()));
    benchmark::DoNotOptimize(g.generate(isa, kSig, p).text.size());
    ++i;
  }
  state.counters["variants/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemmGenerateOnly)->Unit(benchmark::kMillisecond)->MinTime(3.0);

// 64x64x64 bf16 GEMM, one 64x64 tile, 4 waves, 32x32x8 MFMAs, depth 32, prefetch on.
void BM_GemmEmulated64(benchmark::State& state) {
  const std::string isa = "gfx942";
  const gen::Generator& g = gen::find_generator("gemm");
  gen::Params p{{"tile_m", gen::Value::num(64)},         {"tile_n", gen::Value::num(64)},
                {"depth", gen::Value::num(32)},          {"waves_m", gen::Value::num(2)},
                {"waves_n", gen::Value::num(2)},         {"mfma", gen::Value::str("32x32x8")},
                {"vw", gen::Value::num(4)},              {"lds_pad", gen::Value::num(8)},
                {"prefetch_global", gen::Value::num(1)}, {"prefetch_local", gen::Value::num(1)},
                {"split_k", gen::Value::num(1)},         {"wg_order", gen::Value::str("row")}};
  gen::Generated gd = g.generate(isa, kSig, p);
  auto as = toolchain::make_assembler("llvm");
  CodeObject code = as->assemble(gd.text, {isa, gd.kernel_name}).code;
  auto dev = emu::make_emu_device({.target = isa, .threads = 1});
  gen::Problem prob{{"M", 64}, {"N", 64}, {"K", 64}};
  auto specs = g.buffers(kSig, prob);
  auto host = gen::make_buffers(specs, 1);
  std::vector<loader::DevicePtr> ptrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    ptrs.push_back(dev->alloc(host.bytes[i].size()));
    dev->copy_to_device(ptrs.back(), host.bytes[i].data(), host.bytes[i].size());
  }
  auto module = dev->load(code);
  auto launches = g.launches(isa, kSig, p, prob, ptrs, {{"alpha", 1.0}, {"beta", 0.5}});
  auto fn = module->function(launches[0].kernel);
  loader::LaunchConfig cfg;
  cfg.grid = {launches[0].grid.x, launches[0].grid.y, 1};
  cfg.block = {launches[0].block.x, 1, 1};
  double est_ms = 0;
  for (auto _ : state) {
    dev->launch(*fn, cfg, launches[0].kernargs);
    dev->synchronize();
    est_ms = dev->last_launch().estimated_ms;
  }
  const double flops = 2.0 * 64 * 64 * 64;
  state.counters["emulated_GFLOPs"] = flops / (est_ms * 1e-3) / 1e9;
  state.counters["emulated_us"] = est_ms * 1e3;
  state.counters["host_GFLOPs"] = benchmark::Counter(flops / 1e9 * double(state.iterations()),
                                                     benchmark::Counter::kIsRate);
  if (!dev->take_diagnostics().empty())
    state.SkipWithError("emulator reports");
}
BENCHMARK(BM_GemmEmulated64)->Unit(benchmark::kMillisecond)->MinTime(3.0);

} // namespace

BENCHMARK_MAIN();

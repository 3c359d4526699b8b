// JIT latency (docs/jit.md, docs/performance.md "JIT latency"): select() of an untuned problem to a launchable
// kernel in a warm process: the nearest tuned configuration generated, assembled (CDNA in process; PTX through
// ptxas), recorded in the database and loaded on the device. Every iteration asks for a new shape, so every
// iteration builds. The devices are the emulators (loading a code object there decodes it, as a driver would
// load it); the tuned entries are the emulators' estimates, which only seed the configuration.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <functional>

#include "isatune/emu/emulator.h"
#include "isatune/emu/ptx/device.h"
#include "isatune/jit/jit.h"
#include "isatune/tune/tuning_recorder.h"
#include "isatune/tune/variant_runner.h"

using namespace isatune;

namespace {

std::string temp_db(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("isatune-bench-jit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / name);
  return (dir / name).string();
}

// Tunes one problem of one configuration on the device (the emulator's estimate), so that select() has a nearest
// entry to take the configuration from.
void seed(const std::string& path, loader::Device& device, const std::string& generator, const std::string& isa,
          const std::vector<std::string>& sig_words, const std::vector<std::string>& param_words,
          const gen::Problem& problem) {
  const gen::Generator& g = gen::find_generator(generator);
  const gen::Signature sig = gen::parse_signature(g, sig_words);
  const gen::Params params = gen::parse_params(g.space(isa, sig), param_words);
  const tune::VariantSpec spec{&g, isa, sig, params};
  const tune::Compiled c = tune::compile_variant(spec);
  const tune::RunResult r = tune::run_variant(device, c, spec, problem);
  if (r.status != tune::Status::ok) throw Error("bench_jit: seeding " + generator + " failed: " + r.message);
  auto db = db::Database::open(path);
  tune::TuningRecorder rec(db, {&g, isa, sig, {problem}}, device.properties());
  rec.record(params, &c, {{problem, r.status, r.message, r.timing}});
}

void run(benchmark::State& state, jit::Jit& jit, const std::string& generator, const std::string& sig,
         const std::function<std::string(int64_t)>& problem) {
  static int64_t next = 0; // every select() of the program asks for a shape not asked before
  int64_t& i = next;
  double build = 0, record = 0, load = 0, model = 0;
  for (auto _ : state) {
    auto k = jit.select(generator, sig, problem(i++));
    if (!k->built) state.SkipWithError("the JIT did not build");
    build += k->build_ms, record += k->record_ms, load += k->load_ms, model += k->model_ms;
    benchmark::DoNotOptimize(k->module.get());
  }
  // Phases, mean ms per select(): build = generate + assemble (+ ptxas); load = the device's (the emulator
  // decodes the code object; a GPU driver's load differs).
  const double n = double(state.iterations());
  state.counters["build_ms"] = build / n;
  state.counters["record_ms"] = record / n;
  state.counters["load_ms"] = load / n;
  if (model > 0) state.counters["model_ms"] = model / n;
}

std::string gemm_problem(int64_t i) {
  return R"({"M":)" + std::to_string(1000 + i) + R"(,"N":4096,"K":4096})";
}
std::string softmax_problem(int64_t i) { return R"({"rows":)" + std::to_string(4096 + i) + R"(,"N":4096})"; }

std::shared_ptr<loader::Device> gfx942() {
  emu::EmuOptions o;
  o.target = "gfx942";
  o.threads = 1;
  return emu::make_emu_device(o);
}

void BM_JitGemmGfx942(benchmark::State& state) {
  static const std::string path = temp_db("gemm.db");
  static auto device = gfx942();
  static bool seeded = (seed(path, *device, "gemm", "gfx942", {"layout=NT"},
                             {"tile_m=128", "tile_n=128", "depth=32", "split_k=1"}, {{"M", 128}, {"N", 128}, {"K", 64}}),
                        true);
  (void)seeded;
  jit::JitOptions o;
  o.record = state.range(0) != 0;
  loader::Loader loader(loader::TuningDb::open(path), device);
  jit::Jit jit(loader, o);
  jit.select("gemm", R"({"layout":"NT"})", R"({"M":999,"N":4096,"K":4096})"); // warm: generator version, recorder
  run(state, jit, "gemm", R"({"layout":"NT"})", gemm_problem);
}
BENCHMARK(BM_JitGemmGfx942)->Arg(1)->Arg(0)->ArgName("record")->Iterations(40)->Unit(benchmark::kMillisecond);

void BM_JitSoftmaxGfx942(benchmark::State& state) {
  static const std::string path = temp_db("softmax.db");
  static auto device = gfx942();
  static bool seeded = (seed(path, *device, "softmax", "gfx942", {"dtype=bf16"}, {}, {{"rows", 8}, {"N", 4096}}), true);
  (void)seeded;
  jit::JitOptions o;
  o.record = state.range(0) != 0;
  loader::Loader loader(loader::TuningDb::open(path), device);
  jit::Jit jit(loader, o);
  jit.select("softmax", R"({"dtype":"bf16"})", R"({"rows":1,"N":4096})");
  run(state, jit, "softmax", R"({"dtype":"bf16"})", softmax_problem);
}
BENCHMARK(BM_JitSoftmaxGfx942)->Arg(1)->Arg(0)->ArgName("record")->Iterations(40)->Unit(benchmark::kMillisecond);

// Nothing tuned: the static model ranks the space and compiles its best few before the build.
void BM_JitGemmGfx942Model(benchmark::State& state) {
  static const std::string path = temp_db("empty.db");
  static bool made = (db::Database::open(path), true);
  (void)made;
  loader::Loader loader(loader::TuningDb::open(path), gfx942());
  jit::Jit jit(loader);
  run(state, jit, "gemm", R"({"layout":"NT"})", gemm_problem);
}
BENCHMARK(BM_JitGemmGfx942Model)->Iterations(5)->Unit(benchmark::kMillisecond);

void BM_JitGemmSm90a(benchmark::State& state) {
  const std::string why = tune::ptxas_unavailable_reason();
  if (!why.empty()) {
    state.SkipWithError(("ptxas: " + why).c_str());
    return;
  }
  static const std::string path = temp_db("gemm_sm90a.db");
  static std::shared_ptr<loader::Device> device = emu::ptx::make_ptx_emu_device({});
  static bool seeded = (seed(path, *device, "gemm", "sm_90a", {"a=bf16", "b=bf16", "cd=bf16", "layout=TN"}, {},
                             {{"M", 128}, {"N", 128}, {"K", 64}}),
                        true);
  (void)seeded;
  loader::Loader loader(loader::TuningDb::open(path), device);
  jit::Jit jit(loader);
  const std::string sig = R"({"a":"bf16","b":"bf16","cd":"bf16","layout":"TN"})";
  jit.select("gemm", sig, R"({"M":999,"N":4096,"K":4096})");
  run(state, jit, "gemm", sig, gemm_problem);
}
BENCHMARK(BM_JitGemmSm90a)->Iterations(10)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();

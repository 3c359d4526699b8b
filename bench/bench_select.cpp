// select() on a tuning database of 100,000 measurements (1,000 problems x 100 variants, one device):
// hot (cached) and cold (open + first select).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "isatune/db/database.h"
#include "isatune/loader/select.h"
#include "isatune/loader/sha256.h"

using namespace isatune;

namespace {
const std::string kSig = R"({"dtype":"f32"})";

loader::DeviceProperties device() {
  loader::DeviceProperties p;
  p.isa = "gfx942";
  p.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  p.compute_units = 304;
  return p;
}

const std::string& database() {
  static std::string path = [] {
    std::string p = (std::filesystem::temp_directory_path() / "isatune_bench_select.db").string();
    std::filesystem::remove(p);
    std::filesystem::remove(p + "-wal");
    std::filesystem::remove(p + "-shm");
    auto d = db::Database::open(p);
    db::DeviceRecord dev{"amd", device().target_id, "gfx942", "MI300X", 304, 192ull << 30, "bench", "bench", false};
    int64_t dev_id = d.record_device(dev);
    int64_t gen = d.record_generator("gemm", "bench");
    d.begin();
    std::vector<int64_t> variants;
    for (int v = 0; v < 100; ++v) {
      CodeObject c;
      c.isa = "gfx942";
      c.target_id = dev.target_id;
      c.bytes.assign(1024, uint8_t(v));
      KernelInfo k;
      k.name = "gemm";
      c.kernels.push_back(k);
      std::string sha = d.record_code_object(c);
      variants.push_back(d.record_variant({gen, kSig, "{\"tile\":" + std::to_string(v) + "}", sha, "gemm", "{}"}));
    }
    for (int p = 0; p < 1000; ++p)
      for (int v = 0; v < 100; ++v) {
        db::MeasurementRecord m;
        m.variant_id = variants[size_t(v)];
        m.device_id = dev_id;
        m.problem = "{\"M\":" + std::to_string(64 * (p + 1)) + ",\"N\":4096,\"K\":4096}";
        m.median_ms = 1.0 + ((p * 31 + v * 17) % 100) * 0.01;
        m.count = 10;
        d.record_measurement(m);
      }
    d.commit();
    return p;
  }();
  return path;
}
} // namespace

static void BM_SelectHot(benchmark::State& state) {
  auto db = loader::TuningDb::open(database());
  auto dev = device();
  std::string problem = R"({"M":64000,"N":4096,"K":4096})";
  db->select("gemm", kSig, problem, dev);
  for (auto _ : state) benchmark::DoNotOptimize(db->select("gemm", kSig, problem, dev));
}
BENCHMARK(BM_SelectHot);

static void BM_SelectHotNearest(benchmark::State& state) {
  auto db = loader::TuningDb::open(database());
  auto dev = device();
  std::string problem = R"({"M":1000,"N":4096,"K":4096})";
  db->select("gemm", kSig, problem, dev);
  for (auto _ : state) benchmark::DoNotOptimize(db->select("gemm", kSig, problem, dev));
}
BENCHMARK(BM_SelectHotNearest);

static void BM_SelectCold(benchmark::State& state) {
  database();
  auto dev = device();
  for (auto _ : state) {
    auto db = loader::TuningDb::open(database());
    benchmark::DoNotOptimize(db->select("gemm", kSig, R"({"M":32000,"N":4096,"K":4096})", dev));
  }
  state.SetLabel("open + first select");
}
BENCHMARK(BM_SelectCold)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();

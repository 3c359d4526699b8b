// The CUDA test kernels of tests/fixtures/ptx/cuda (nvcc 13.0 PTX) run on the emulator against their float64
// references (references.h), on fresh random inputs with ragged shapes, and under both schedulers.
#include <fstream>
#include <sstream>

#include "../fixtures/ptx/cuda/references.h"
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/" + name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

class CudaFixtures : public ::testing::TestWithParam<eptx::Scheduler> {
protected:
  eptx::PtxEmuOptions opts(const char* target) {
    eptx::PtxEmuOptions o;
    o.target = target;
    o.scheduler = GetParam();
    return o;
  }
};

TEST_P(CudaFixtures, SoftmaxRows) {
  for (const char* target : {"sm_80", "sm_90a"}) {
    Runner r(opts(target));
    r.load(read_fixture("softmax_rows.sm_80.ptx"));
    const int rows = int(5 + rand_u32() % 20), cols = int(ragged(1, 300));
    auto x = random_vec<float>(size_t(rows) * cols, [] { return rand_float(-8, 8); });
    uint64_t pin = r.upload(x), pout = r.upload(std::vector<float>(x.size()));
    const uint32_t W = 4;
    r.launch("softmax_rows", {(uint32_t(rows) + W - 1) / W, 1, 1}, {32 * W, 1, 1},
             Runner::Args().add(pin).add(pout).add(rows).add(cols));
    auto y = r.download<float>(pout, x.size());
    auto ref = isatune::fixtures::softmax_rows_reference(x.data(), rows, cols);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], ref[i], 1e-6 + 1e-5 * ref[i]) << i << " cols " << cols;
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  }
}

TEST_P(CudaFixtures, LayerNormRows) {
  Runner r(opts("sm_80"));
  r.load(read_fixture("layernorm_rows.sm_80.ptx"));
  const int rows = int(3 + rand_u32() % 10), cols = int(ragged(1, 700));
  const float eps = 1e-5f;
  auto x = random_vec<float>(size_t(rows) * cols, [] { return rand_float(-3, 3); });
  auto gamma = random_vec<float>(size_t(cols), [] { return rand_float(0.5f, 1.5f); });
  auto beta = random_vec<float>(size_t(cols), [] { return rand_float(-1, 1); });
  uint64_t px = r.upload(x), pg = r.upload(gamma), pb = r.upload(beta),
           py = r.upload(std::vector<float>(x.size()));
  uint64_t pm = r.upload(std::vector<float>(size_t(rows))), pr = r.upload(std::vector<float>(size_t(rows)));
  for (uint32_t T : {32u, 128u, 96u}) {
    r.launch("layernorm_rows", {uint32_t(rows), 1, 1}, {T, 1, 1},
             Runner::Args().add(px).add(pg).add(pb).add(py).add(pm).add(pr).add(rows).add(cols).add(eps));
    auto y = r.download<float>(py, x.size());
    auto mean = r.download<float>(pm, size_t(rows)), rstd = r.download<float>(pr, size_t(rows));
    auto ref =
        isatune::fixtures::layernorm_rows_reference(x.data(), gamma.data(), beta.data(), rows, cols, eps);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], ref.y[i], 2e-4) << i << " T " << T;
    for (int i = 0; i < rows; ++i) {
      ASSERT_NEAR(mean[size_t(i)], ref.mean[size_t(i)], 1e-5);
      ASSERT_NEAR(rstd[size_t(i)], ref.rstd[size_t(i)], 1e-4 * ref.rstd[size_t(i)]);
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  }
}

TEST_P(CudaFixtures, ReduceSum) {
  Runner r(opts("sm_80"));
  r.load(read_fixture("reduce_sum.sm_80.ptx"));
  const int n = int(ragged(1000, 40000));
  auto x = random_vec<float>(size_t(n), [] { return rand_float(-2, 2); });
  auto u = random_vec<uint32_t>(size_t(n), [] { return rand_u32(); });
  const uint32_t T = 256, G = std::min<uint32_t>((uint32_t(n) + T - 1) / T, 64);
  uint64_t px = r.upload(x), pu = r.upload(u), pf = r.upload(std::vector<float>(1, 0.0f)),
           ps = r.upload(std::vector<uint32_t>(1, 0));
  r.launch("reduce_sum_f32", {G, 1, 1}, {T, 1, 1}, Runner::Args().add(px).add(pf).add(n));
  r.launch("reduce_sum_u32", {G, 1, 1}, {T, 1, 1}, Runner::Args().add(pu).add(ps).add(n));
  double abs_sum = 0;
  for (float v : x)
    abs_sum += std::fabs(v);
  EXPECT_NEAR(r.download<float>(pf, 1)[0], isatune::fixtures::reduce_sum_f32_reference(x.data(), n),
              double(n) * std::ldexp(1.0, -24) * abs_sum);
  EXPECT_EQ(r.download<uint32_t>(ps, 1)[0], isatune::fixtures::reduce_sum_u32_reference(u.data(), n));
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
}

INSTANTIATE_TEST_SUITE_P(Schedulers, CudaFixtures,
                         ::testing::Values(eptx::Scheduler::lockstep, eptx::Scheduler::adversarial));

} // namespace

namespace {

// nvcc's assert and printf: the calls into the CUDA runtime run (printf prints nothing), a failing assert
// stops the launch with its message and the thread.
TEST(CudaFixturesRuntime, AssertAndPrintf) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/emu/assert_printf.sm_80.ptx");
  std::stringstream s;
  s << f.rdbuf();
  Runner r;
  r.load(s.str());
  const int n = int(ragged(100, 1000));
  auto x = random_vec<float>(size_t(n), [] { return rand_float(0.01f, 5); });
  uint64_t px = r.upload(x), py = r.upload(std::vector<float>(size_t(n)));
  r.launch("checked_double", {uint32_t(n + 127) / 128, 1, 1}, {128, 1, 1},
           Runner::Args().add(px).add(py).add(n).add(n / 2));
  auto y = r.download<float>(py, size_t(n));
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(y[size_t(i)], 2 * x[size_t(i)] + 1) << i;
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  const int bad = int(rand_u32() % uint32_t(n));
  x[size_t(bad)] = -1;
  r.dev->copy_to_device(px, x.data(), x.size() * 4);
  try {
    r.launch("checked_double", {uint32_t(n + 127) / 128, 1, 1}, {128, 1, 1},
             Runner::Args().add(px).add(py).add(n).add(-1));
    FAIL() << "the assert did not stop the launch";
  } catch (const isatune::emu::EmulationError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("assertion failed (x[i] >= 0.0f)"), std::string::npos) << what;
    EXPECT_NE(
        what.find("thread (" + std::to_string(bad % 128) + ",0,0) of CTA (" + std::to_string(bad / 128)),
        std::string::npos)
        << what;
  }
}

} // namespace

namespace {

// Mutation tests (shared/notes/ptx-emulation.md section 3.4): each bar.sync of the nvcc kernels, removed (the
// line kept, blank), must be reported, under both schedulers; the unmutated kernels report nothing (above).
TEST(CudaFixturesMutants, RemovedBarSyncIsReported) {
  struct Mutant {
    const char* file;
    const char* kernel;
  };
  for (Mutant mu : {Mutant{"layernorm_rows.sm_80.ptx", "layernorm_rows"},
                    Mutant{"reduce_sum.sm_80.ptx", "reduce_sum_f32"}}) {
    const std::string text = read_fixture(mu.file);
    // The bar.sync lines inside the kernel's body.
    size_t body = text.find(".entry " + std::string(mu.kernel));
    size_t end = text.find("\n}", body);
    std::vector<size_t> bars;
    for (size_t at = text.find("bar.sync", body); at != std::string::npos && at < end;
         at = text.find("bar.sync", at + 1))
      bars.push_back(at);
    ASSERT_FALSE(bars.empty());
    for (size_t at : bars) {
      std::string mutant = text;
      size_t eol = mutant.find('\n', at);
      mutant.replace(at, eol - at, std::string(eol - at, ' '));
      const uint32_t line = uint32_t(std::count(text.begin(), text.begin() + long(at), '\n') + 1);
      for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
        eptx::PtxEmuOptions o;
        o.target = "sm_80";
        o.scheduler = sched;
        Runner r(o);
        r.load(mutant);
        if (std::string(mu.kernel) == "layernorm_rows") {
          const int rows = 3, cols = int(ragged(200, 600));
          auto x = random_vec<float>(size_t(rows) * cols, [] { return rand_float(-3, 3); });
          auto g = random_vec<float>(size_t(cols), [] { return rand_float(0.5f, 1.5f); });
          uint64_t px = r.upload(x), pg = r.upload(g), py = r.upload(std::vector<float>(x.size()));
          uint64_t pm = r.upload(std::vector<float>(rows)), ps = r.upload(std::vector<float>(rows));
          r.launch(
              mu.kernel, {uint32_t(rows), 1, 1}, {128, 1, 1},
              Runner::Args().add(px).add(pg).add(pg).add(py).add(pm).add(ps).add(rows).add(cols).add(1e-5f));
        } else {
          const int n = int(ragged(3000, 9000));
          auto x = random_vec<float>(size_t(n), [] { return rand_float(-2, 2); });
          uint64_t px = r.upload(x), pf = r.upload(std::vector<float>(1, 0.0f));
          r.launch(mu.kernel, {8, 1, 1}, {256, 1, 1}, Runner::Args().add(px).add(pf).add(n));
        }
        // layernorm's last bar.sync only follows the final read of `partial`: no shared access comes after
        // it, so removing it is no bug, and nothing must be reported.
        const bool benign = std::string(mu.kernel) == "layernorm_rows" && at == bars.back();
        if (benign)
          EXPECT_TRUE(r.reports().empty()) << mu.file << ": line " << line << "\n" << r.all_reports();
        else
          EXPECT_FALSE(r.reports().empty())
              << mu.file << ": bar.sync at line " << line << " removed, not reported";
      }
    }
  }
}

} // namespace

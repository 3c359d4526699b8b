// The final re-ranking on a test device whose times follow a known noise model: each measurement is the true
// time x a log-normal factor (sigma 2%) x a drift shared by one round (a slow random walk, as clocks and
// temperature move), plus a 30% spike with probability 5% (another tenant).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "isatune/db/database.h"
#include "isatune/loader/select.h"
#include "isatune/loader/sha256.h"
#include "isatune/tune/rerank.h"

using namespace isatune::tune;

namespace {
struct NoisyTestDevice {
  std::vector<double> true_ms;
  std::mt19937_64 rng;
  double drift = 1.0;
  size_t calls = 0;
  double measure(size_t i) {
    if (calls++ % true_ms.size() == 0) // a new round: the drift walks on
      drift *= std::exp(std::normal_distribution<double>(0, 0.01)(rng));
    double t = true_ms[i] * drift * std::exp(std::normal_distribution<double>(0, 0.02)(rng));
    if (std::uniform_real_distribution<double>(0, 1)(rng) < 0.05)
      t *= 1.3;
    return t;
  }
};
} // namespace

TEST(Rerank, PicksTheTrueBestUnderAKnownNoiseModel) {
  const std::vector<double> base{1.00, 1.02, 1.035, 1.05, 1.10}; // the true best is 2% ahead of the next
  std::mt19937_64 order_rng(7);
  int right = 0, single_right = 0;
  double flips = 0;
  const int trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    NoisyTestDevice dev{base, std::mt19937_64(1000 + trial)};
    std::shuffle(dev.true_ms.begin(), dev.true_ms.end(), order_rng); // the search's order is not the truth
    const size_t truth = static_cast<size_t>(
        std::min_element(dev.true_ms.begin(), dev.true_ms.end()) - dev.true_ms.begin());
    // one measurement each, as a search sees them
    std::vector<double> once;
    for (size_t i = 0; i < base.size(); ++i)
      once.push_back(dev.measure(i));
    single_right += static_cast<size_t>(std::min_element(once.begin(), once.end()) - once.begin()) == truth;
    RerankResult r = rerank(base.size(), [&](size_t i) { return dev.measure(i); });
    right += r.winner == truth;
    flips += r.flip_rate;
    EXPECT_GE(r.rounds, 10u);
    EXPECT_LE(r.rounds, 50u);
    for (const auto& c : r.candidates) {
      EXPECT_EQ(c.times_ms.size(), r.rounds);
      EXPECT_LE(c.lo_ms, c.median_ms);
      EXPECT_GE(c.hi_ms, c.median_ms);
      EXPECT_LE(c.relative_lo, c.relative_hi);
    }
  }
  EXPECT_GE(right, trials * 95 / 100) << "re-ranked picks of the true best: " << right << " / " << trials;
  EXPECT_LT(single_right, right) << "a single measurement each: " << single_right << " / " << trials;
  EXPECT_GT(flips / trials, 0.05); // this noise does flip single rounds
  std::printf("true best picked: re-ranked %d / %d, single measurement %d / %d; mean flip rate %.2f\n", right,
              trials, single_right, trials, flips / trials);
}

TEST(Rerank, InterleavesAndStopsWhenSeparated) {
  std::vector<size_t> calls;
  RerankResult r = rerank(3, [&](size_t i) {
    calls.push_back(i);
    return 1.0 + static_cast<double>(i) + 0.001 * static_cast<double>(calls.size() % 3);
  });
  ASSERT_GE(calls.size(), 30u);
  for (size_t k = 0; k < calls.size(); ++k)
    EXPECT_EQ(calls[k], k % 3); // A B C A B C ...
  EXPECT_EQ(r.rounds, 10u);     // clearly separated at the minimum
  EXPECT_TRUE(r.separated);
  EXPECT_EQ(r.winner, 0u);
  EXPECT_TRUE(r.first_pick_kept);
  EXPECT_EQ(r.flip_rate, 0.0);
  // n = 10: ranks floor(5 - 3.1) = 1 and ceil(5 + 3.1) = 9 (the exact binomial interval is [1, 8], 98.9%)
  EXPECT_EQ(median_interval_ranks(10), std::make_pair(size_t{1}, size_t{9}));
  EXPECT_EQ(median_interval_ranks(100).first, 40u);
}

// The winner written to the database: five variants measured once each by a "search" on the noisy test device
// (the fastest single sample is recorded in `best`), then re-ranked and the winner recorded. Over seeded trials
// where the single samples named the wrong variant, the loader's select() returns the re-ranking's winner, and
// that is the true best in at least 95% of them.
TEST(Rerank, TheWinnerIsWrittenToTheDatabaseAndTheLoaderUsesIt) {
  namespace fs = std::filesystem;
  using namespace isatune;
  const std::vector<double> base{1.00, 1.02, 1.035, 1.05, 1.10};
  const std::string target = "sm_90a", sig = R"({"dtype":"f16"})", problem = R"({"M":512})";
  loader::DeviceProperties props;
  props.target_id = props.isa = target;
  props.compute_units = 132;
  int wrong_single = 0, loader_right = 0;
  for (int trial = 0; trial < 60 && wrong_single < 12; ++trial) {
    NoisyTestDevice dev{base, std::mt19937_64(5000 + trial)};
    std::vector<double> once;
    for (size_t i = 0; i < base.size(); ++i) once.push_back(dev.measure(i));
    const size_t single = size_t(std::min_element(once.begin(), once.end()) - once.begin());
    if (single == 0) continue; // the single samples were right: nothing to show
    ++wrong_single;
    const fs::path path = fs::temp_directory_path() / ("isatune-rerank-" + std::to_string(::getpid()) + "-" +
                                                       std::to_string(trial) + ".db");
    fs::remove(path);
    {
      auto d = db::Database::open(path.string());
      db::DeviceRecord dr{"nvidia", target, target, "noisy test device", 132, 1, "test", "", false};
      const int64_t device = d.record_device(dr);
      const int64_t gen = d.record_generator("gemm", "test");
      d.record_run_start({"run-" + std::to_string(trial), "random", "5", "host", "", ""});
      std::vector<int64_t> variants;
      for (size_t i = 0; i < base.size(); ++i) {
        CodeObject c;
        c.vendor = Vendor::nvidia;
        c.isa = c.target_id = target;
        const std::string text = "variant " + std::to_string(i);
        c.bytes.assign(text.begin(), text.end());
        c.sha256 = loader::sha256_hex(c.bytes);
        KernelInfo k;
        k.name = k.symbol = "k";
        c.kernels.push_back(k);
        db::VariantRecord v{gen, sig, "{\"tile\":" + std::to_string(i) + "}", d.record_code_object(c), "k", "{}"};
        variants.push_back(d.record_variant(v));
        db::MeasurementRecord m;
        m.variant_id = variants.back();
        m.device_id = device;
        m.problem = problem;
        m.median_ms = once[i];
        m.count = 1;
        m.run_guid = "run-" + std::to_string(trial);
        d.record_measurement(m);
      }
      RerankResult r = rerank(base.size(), [&](size_t i) { return dev.measure(i); });
      db::RerankWinnerRecord w;
      w.generator = "gemm";
      w.signature = sig;
      w.target_id = target;
      w.compute_units = 132;
      w.problem = problem;
      w.variant_id = variants[r.winner];
      const auto& c = r.candidates[r.winner];
      w.rerank_median_ms = c.median_ms, w.rerank_lo_ms = c.lo_ms, w.rerank_hi_ms = c.hi_ms;
      w.candidates = int64_t(base.size()), w.rounds = int64_t(r.rounds);
      w.separated = r.separated, w.flip_rate = r.flip_rate;
      w.run_guid = "run-" + std::to_string(trial);
      d.record_rerank_winner(w);
      auto sel = loader::TuningDb::open(path.string())->select("gemm", sig, problem, props);
      EXPECT_TRUE(sel->rerank_winner);
      EXPECT_EQ(sel->variant_id, variants[r.winner]);   // the interval's winner, not the fastest sample
      EXPECT_DOUBLE_EQ(sel->median_ms, once[r.winner]); // with its own recorded median
      loader_right += sel->variant_id == variants[0];
    }
    fs::remove(path);
  }
  std::printf("single samples misled in %d trials; the loader returned the true best in %d of them\n", wrong_single,
              loader_right);
  ASSERT_GE(wrong_single, 10) << "the noise did not mislead single samples often enough to test";
  EXPECT_GE(loader_right * 100, wrong_single * 95)
      << "the loader returned the true best in " << loader_right << " of " << wrong_single << " trials";
}

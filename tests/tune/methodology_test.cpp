// isatune's methodology score against the methodology package's own numbers (tests/fixtures/methodology: the
// package ran on the same recorded spaces and the same recorded runs; README.md there says how).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

#include "datasets.h"
#include "isatune/tune/score.h"
#include "isatune/tune/trace.h"

using namespace isatune::tune;

namespace {
const std::string kDir = std::string(ISATUNE_FIXTURES_DIR) + "/methodology";

nlohmann::json expected() {
  std::ifstream in(kDir + "/expected.json");
  return nlohmann::json::parse(in);
}

void check_case(const char* name, const char* dataset, const char* strategy) {
  std::string path = isatune::tune::test::dataset_path(dataset);
  ReplayData d = read_replay(path);
  ScoreSetup s = make_score_setup(d);
  nlohmann::json e = expected()["cases"][std::string(name) + "/" + strategy];
  ASSERT_TRUE(e.is_object()) << name << "/" << strategy;
  EXPECT_EQ(s.budget_fevals, e["budget_fevals"].get<size_t>());
  EXPECT_EQ(s.start_fevals, e["start_fevals"].get<size_t>());
  EXPECT_NEAR(s.median_cost_s, e["median_cost_s"].get<double>(), 1e-9);
  EXPECT_NEAR(s.baseline_cost_s, e["baseline_cost_s"].get<double>(), 1e-9);
  EXPECT_NEAR(s.budget_s, e["budget_s"].get<double>(), 1e-6);
  EXPECT_NEAR(s.start_s, e["start_s"].get<double>(), 1e-6);
  EXPECT_DOUBLE_EQ(s.optimum, e["optimum"].get<double>());
  ASSERT_EQ(s.baseline.size(), 1000u);
  for (auto& [i, v] : e["baseline_at"].items())
    EXPECT_NEAR(s.baseline[std::stoul(i)], v.get<double>(), 1e-9 * std::fabs(v.get<double>())) << "point " << i;
  std::vector<isatune::tune::Run> runs;
  for (int seed = 1; seed <= 10; ++seed)
    runs.push_back(read_trace(kDir + "/" + name + "-" + strategy + "-" + std::to_string(seed) + ".jsonl.gz"));
  StrategyScore r = score_runs(s, runs, strategy);
  EXPECT_NEAR(r.score, e["mean_curve_score"].get<double>(), 0.01);
  EXPECT_NEAR(r.package_score, e["package_score"].get<double>(), 0.01);
  // The package as it is bags bootstrap subsamples (random): isatune's deterministic fit lies within the spread of
  // the bagged score over 20 seeds of scikit-learn's BaggingRegressor, widened by the 0.01 allowance.
  const auto& spread = e["package_score_bagged_spread"];
  EXPECT_GE(r.package_score, spread["min"].get<double>() - 0.01);
  EXPECT_LE(r.package_score, spread["max"].get<double>() + 0.01);
}
} // namespace

TEST(Methodology, AgreesWithThePackageOnPnpoly) {
  ISATUNE_NEED_DATASET(isatune::tune::test::dataset_path("pnpoly-rtx3090/RTX_3090.json.gz"));
  check_case("pnpoly", "pnpoly-rtx3090/RTX_3090.json.gz", "random");
  check_case("pnpoly", "pnpoly-rtx3090/RTX_3090.json.gz", "bayes");
}

TEST(Methodology, AgreesWithThePackageOnConvolutionMI250X) {
  ISATUNE_NEED_DATASET(isatune::tune::test::dataset_path("convolution-a100-mi250x/MI250X.json.gz"));
  check_case("mi250x", "convolution-a100-mi250x/MI250X.json.gz", "random");
  check_case("mi250x", "convolution-a100-mi250x/MI250X.json.gz", "bayes");
}

// The expected-rank rules on a distribution small enough to check by hand: N = 9 valid values 1..9.
TEST(Methodology, ExpectedRankByHand) {
  std::vector<double> asc{1, 2, 3, 4, 5, 6, 7, 8, 9};
  // worst first: 9 8 7 ... 1; target 2.5 is first reached at position i = 7 (value 2): ceil(7 / 3) = 3
  EXPECT_EQ(expected_rank_draws(asc, 2.5), 3u);
  EXPECT_EQ(expected_rank_draws(asc, 9), 0u);
  // M draws: position round(M * 10 / (M + 1)) of the worst-first list; M = 1 -> 5 (half to even) -> value 4
  EXPECT_EQ(random_at_expected_rank(asc, 1), 4);
  EXPECT_EQ(random_at_expected_rank(asc, 3), 1); // round(7.5) = 8 (half to even) -> value 1
  EXPECT_EQ(random_at_expected_rank(asc, 2), 2); // round(6.67) = 7 -> value 2
}

// A run that finds nothing valid until late is charged, before then, its own first valid value.
TEST(Methodology, FirstValidValueRule) {
  ReplayData d;
  d.path = "synthetic";
  for (int i = 0; i < 40; ++i)
    d.entries.push_back({i % 5 == 4 ? Status::runtime : Status::ok, 1.0 + 0.37 * ((i * 7) % 40), 0.5 + 0.01 * i});
  ScoreSetup s = make_score_setup(d);
  isatune::tune::Run run{{s.grid_s[1], std::nan("")}, {s.grid_s[600], 9.0}, {s.grid_s[900], 2.0}};
  auto c = mean_curve(s, {run});
  EXPECT_EQ(c[0], 9.0); // before the first valid result: that result
  EXPECT_EQ(c[300], 9.0);
  EXPECT_EQ(c[700], 9.0);
  EXPECT_EQ(c[950], 2.0);
}

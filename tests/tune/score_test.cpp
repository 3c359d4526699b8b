#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "datasets.h"
#include "isatune/tune/score.h"

using namespace isatune::tune;

TEST(RandomBaseline, MatchesMonteCarloWithFailedConfigurations) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(1.0, 10.0);
  std::vector<double> values;
  for (int i = 0; i < 60; ++i)
    values.push_back(i % 7 == 3 ? INFINITY : u(rng));
  RandomBaseline base(values);
  double worst = 0;
  for (double v : values)
    if (std::isfinite(v))
      worst = std::max(worst, v);
  for (size_t k : {1u, 2u, 5u, 13u, 40u}) {
    double sum = 0;
    const int trials = 40000;
    std::vector<double> v = values;
    for (int t = 0; t < trials; ++t) {
      std::shuffle(v.begin(), v.end(), rng);
      double best = worst;
      for (size_t i = 0; i < k; ++i)
        best = std::min(best, v[i]);
      sum += best;
    }
    EXPECT_NEAR(base.expected_best(k), sum / trials, 0.03) << "k=" << k;
  }
  EXPECT_DOUBLE_EQ(base.expected_best(values.size()), base.optimum());
  EXPECT_DOUBLE_EQ(base.expected_best(0), worst);
  size_t k = base.draws_to_reach(base.optimum() + 0.5);
  EXPECT_LE(base.expected_best(k), base.optimum() + 0.5);
  EXPECT_GT(base.expected_best(k - 1), base.optimum() + 0.5);
}

TEST(Score, RandomScoresNearZeroAndExhaustiveOrderIsNotMagic) {
  std::string path = isatune::tune::test::dataset_path("pnpoly-rtx3090/RTX_3090.json.gz");
  ISATUNE_NEED_DATASET(path);
  ReplayData d = read_replay(path);
  ScoreSetup s = make_score_setup(d);
  EXPECT_NEAR(s.optimum, 7.224, 0.001);
  EXPECT_GT(s.budget_draws, 1u);
  EXPECT_LT(s.budget_draws, d.entries.size());
  StrategyScore r = score_strategy(d, s, "random", 40, 1);
  EXPECT_NEAR(r.mean, 0.0, 0.15);
  // a curve at the optimum from the start scores 1, one with no result scores below 0
  EXPECT_NEAR(standardised_score(s, std::vector<double>(s.grid_s.size(), s.optimum)), 1.0, 1e-12);
  EXPECT_LT(standardised_score(s, std::vector<double>(s.grid_s.size(), s.no_result)), 0.0);
}

TEST(Score, SeededScoringRepeats) {
  std::string path = isatune::tune::test::dataset_path("convolution-a100-mi250x/A100.json.gz");
  ISATUNE_NEED_DATASET(path);
  ReplayData d = read_replay(path);
  ScoreSetup s = make_score_setup(d);
  auto a = score_strategy(d, s, "hybrid", 3, 9), b = score_strategy(d, s, "hybrid", 3, 9);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.stddev, b.stddev);
}

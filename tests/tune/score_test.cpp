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


TEST(Score, SeededScoringRepeatsAndRandomIsNotFarFromTheBaseline) {
  std::string path = isatune::tune::test::dataset_path("convolution-a100-mi250x/MI250X.json.gz");
  ISATUNE_NEED_DATASET(path);
  ReplayData d = read_replay(path);
  ScoreSetup s = make_score_setup(d);
  auto a = score_strategy(d, s, "hybrid", 3, 9), b = score_strategy(d, s, "hybrid", 3, 9);
  EXPECT_EQ(a.score, b.score);
  EXPECT_EQ(a.package_score, b.package_score);
  EXPECT_EQ(a.mean_evaluations, static_cast<double>(s.run_evaluations));
  StrategyScore r = score_strategy(d, s, "random", 30, 1);
  EXPECT_LT(std::fabs(r.score), 5 * r.standard_error + 0.1) << r.score << " +- " << r.standard_error;
  EXPECT_GT(r.standard_error, 0.0);
  // the optimum from the start scores 1 at every time; the worst valid value scores below 0
  EXPECT_NEAR(standardise(s, std::vector<double>(s.grid_s.size(), s.optimum)).back(), 1.0, 1e-12);
  EXPECT_LT(standardise(s, std::vector<double>(s.grid_s.size(), s.dist.back())).front(), 0.0);
}

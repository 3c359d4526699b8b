// The Gaussian-process surrogate and the `bayes` strategy built on it.
#include <gtest/gtest.h>

#include <cmath>

#include "isatune/tune/strategy.h"
#include "isatune/tune/surrogate.h"
#include "isatune/tune/tuner.h"
#include "synthetic.h"

using namespace isatune::tune;

TEST(SpaceEncoding, DropsSingleValuedParametersAndScalesOrderedOnes) {
  Space space({{"a", {Value::num(1), Value::num(2), Value::num(4)}, true},
               {"fixed", {Value::num(7)}, true},
               {"c", {Value::str("x"), Value::str("y"), Value::str("z")}, false}});
  SpaceEncoding enc(space);
  ASSERT_EQ(enc.dims(), 2u);
  auto a = enc.encode({0, 0, 0}), b = enc.encode({2, 0, 1}), c = enc.encode({1, 0, 2});
  EXPECT_DOUBLE_EQ(b[0], 1.0);
  EXPECT_DOUBLE_EQ(c[0], 0.5);
  EXPECT_DOUBLE_EQ(enc.distance2(a.data(), b.data()), 1.0 + 1.0); // ordered end to end + categorical differ
  EXPECT_DOUBLE_EQ(enc.distance2(b.data(), c.data()), 0.25 + 1.0);
  EXPECT_DOUBLE_EQ(enc.distance2(a.data(), a.data()), 0.0);
}

TEST(ExpectedImprovement, MatchesTheClosedForm) {
  EXPECT_NEAR(expected_improvement(0.0, 1.0, 0.0), 1.0 / std::sqrt(2 * M_PI), 1e-12);
  EXPECT_DOUBLE_EQ(expected_improvement(1.0, 0.0, 3.0), 2.0);
  EXPECT_DOUBLE_EQ(expected_improvement(4.0, 0.0, 3.0), 0.0);
  EXPECT_GT(expected_improvement(1.0, 2.0, 0.0), expected_improvement(1.0, 1.0, 0.0)); // grows with sd
  EXPECT_GT(expected_improvement(0.5, 1.0, 0.0), expected_improvement(1.0, 1.0, 0.0)); // and with a lower mean
}

TEST(GaussianProcess, InterpolatesAndIsUncertainAwayFromData) {
  std::vector<Parameter> p = {{"a", {}, true}, {"b", {}, true}};
  for (int i = 0; i < 9; ++i)
    p[0].values.push_back(Value::num(i)), p[1].values.push_back(Value::num(i));
  Space space(p);
  SpaceEncoding enc(space);
  std::vector<double> x, y, cost;
  auto f = [](double a, double b) { return std::sin(3 * a) + 0.5 * b * b; }; // smooth in [0,1]^2
  for (uint32_t a = 0; a < 9; a += 2)
    for (uint32_t b = 0; b < 9; b += 2) {
      auto e = enc.encode({a, b});
      x.insert(x.end(), e.begin(), e.end());
      y.push_back(f(e[0], e[1]));
      cost.push_back(1.0 + e[0]);
    }
  GaussianProcess gp(enc);
  gp.fit(x, {y, cost});
  EXPECT_EQ(gp.size(), 25u);
  double worst = 0;
  for (uint32_t a = 1; a < 9; a += 2)
    for (uint32_t b = 1; b < 9; b += 2) { // points between the training points
      auto e = enc.encode({a, b});
      double m, sd;
      gp.predict(e.data(), m, sd);
      worst = std::max(worst, std::fabs(m - f(e[0], e[1])));
      EXPECT_NEAR(gp.mean(e.data(), 1), 1.0 + e[0], 0.05);
    }
  EXPECT_LT(worst, 0.1);
  double m0, sd_at, sd_between;
  auto at = enc.encode({2, 2}), between = enc.encode({3, 3});
  gp.predict(at.data(), m0, sd_at);
  EXPECT_NEAR(m0, f(at[0], at[1]), 0.05);
  gp.predict(between.data(), m0, sd_between);
  EXPECT_LT(sd_at, sd_between);
  EXPECT_LE(sd_between, gp.max_sd() + 1e-12);
}

TEST(GaussianProcess, FitIsDeterministic) {
  Space space = test::synthetic_space();
  SpaceEncoding enc(space);
  std::vector<double> x, y;
  for (size_t i = 0; i < space.size(); i += 7) {
    auto e = enc.encode(space.valid_config(i));
    x.insert(x.end(), e.begin(), e.end());
    y.push_back(std::log(1.0 + static_cast<double>(i % 13)));
  }
  GaussianProcess a(enc), b(enc);
  a.fit(x, {y});
  b.fit(x, {y});
  EXPECT_EQ(a.length_scale(), b.length_scale());
  EXPECT_EQ(a.nugget(), b.nugget());
  auto q = enc.encode(space.valid_config(3));
  EXPECT_EQ(a.mean(q.data()), b.mean(q.data()));
}

TEST(Bayes, IsTheDefaultAndFindsTheOptimumEarly) {
  EXPECT_STREQ(kDefaultStrategy, "bayes");
  // on the synthetic space (216 valid configurations), within 60 evaluations for every seed tried
  Space space = test::synthetic_space();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    test::SyntheticEvaluator ev(space);
    auto s = make_strategy("bayes");
    TuneOptions o;
    o.budget.evaluations = 60;
    o.seed = seed;
    auto r = tune(space, ev, *s, o);
    ASSERT_TRUE(r.best);
    EXPECT_DOUBLE_EQ(r.history[*r.best].eval.time_ms, 1.0) << "seed " << seed;
  }
}

TEST(Bayes, ContinuesPastTheModelPhaseWithoutRepeats) {
  // beyond the model phase (80 evaluations) the local search goes on; nothing is evaluated twice
  Space space = test::synthetic_space();
  test::SyntheticEvaluator ev(space);
  auto s = make_strategy("bayes");
  TuneOptions o;
  o.budget.evaluations = 150;
  o.seed = 3;
  auto r = tune(space, ev, *s, o);
  EXPECT_EQ(r.history.size(), 150u);
  EXPECT_EQ(ev.calls, 150u); // every evaluation reached the evaluator once
}

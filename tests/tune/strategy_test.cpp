#include <gtest/gtest.h>

#include <set>

#include "isatune/error.h"

#include "isatune/tune/tuner.h"
#include "synthetic.h"

using namespace isatune::tune;

namespace {
TuneResult run(const std::string& name, uint64_t seed, size_t evals) {
  static Space space = test::synthetic_space();
  test::SyntheticEvaluator ev(space);
  auto s = make_strategy(name);
  TuneOptions o;
  o.budget.evaluations = evals;
  o.seed = seed;
  return tune(space, ev, *s, o);
}
} // namespace

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, FindsTheKnownOptimum) {
  // generous budget: 60% of the 216 valid configurations (random search: all 216, which without replacement
  // must include the optimum), over several seeds
  const size_t budget = GetParam() == "exhaustive" ? 216 : GetParam() == "random" ? 216 : 130;
  for (uint64_t seed : {1, 2, 3}) {
    auto r = run(GetParam(), seed, budget);
    ASSERT_TRUE(r.best) << GetParam();
    EXPECT_DOUBLE_EQ(r.history[*r.best].eval.time_ms, 1.0) << GetParam() << " seed " << seed;
    EXPECT_EQ(r.history[*r.best].config, (Config{4, 2, 1, 1}));
  }
}

TEST_P(EveryStrategy, NeverEvaluatesTwiceAndRespectsTheBudget) {
  auto r = run(GetParam(), 7, 100);
  EXPECT_EQ(r.history.size(), 100u);
  EXPECT_EQ(r.stop_reason, "evaluations");
  std::set<Config> seen;
  Space space = test::synthetic_space();
  for (const auto& rec : r.history) {
    EXPECT_TRUE(seen.insert(rec.config).second) << GetParam();
    EXPECT_TRUE(space.is_valid(rec.config));
  }
  for (size_t i = 1; i < r.history.size(); ++i)
    EXPECT_GT(r.history[i].charged_s, r.history[i - 1].charged_s);
}

TEST_P(EveryStrategy, SameSeedSameHistoryOtherSeedOther) {
  auto a = run(GetParam(), 42, 60), b = run(GetParam(), 42, 60), c = run(GetParam(), 43, 60);
  ASSERT_EQ(a.history.size(), b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i)
    EXPECT_EQ(a.history[i].config, b.history[i].config);
  if (GetParam() == "exhaustive")
    return; // deterministic by design
  bool differ = false;
  for (size_t i = 0; i < a.history.size(); ++i)
    differ |= a.history[i].config != c.history[i].config;
  EXPECT_TRUE(differ) << GetParam();
}

TEST_P(EveryStrategy, StopsWhenTheSpaceIsExhausted) {
  auto r = run(GetParam(), 5, 100000);
  EXPECT_EQ(r.history.size(), 216u) << GetParam() << " stopped: " << r.stop_reason;
}

INSTANTIATE_TEST_SUITE_P(Tune, EveryStrategy, ::testing::ValuesIn(strategy_names()));

TEST(Tuner, ChargedTimeBudget) {
  Space space = test::synthetic_space();
  test::SyntheticEvaluator ev(space);
  auto s = make_strategy("random");
  TuneOptions o;
  o.budget.charged_s = 20.0; // each evaluation costs 0.5 .. 1.08 s
  auto r = tune(space, ev, *s, o);
  EXPECT_EQ(r.stop_reason, "charged time");
  ASSERT_FALSE(r.history.empty());
  EXPECT_GE(r.history.back().charged_s, 20.0);
  EXPECT_LT(r.history[r.history.size() - 2].charged_s, 20.0);
}

TEST(Tuner, UnknownStrategyIsAnInputError) {
  EXPECT_THROW(make_strategy("nope"), isatune::InputError);
}

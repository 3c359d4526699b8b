#pragma once
// The methodology score of Willemsen, van Nieuwpoort, van Werkhoven ("A Methodology for Comparing
// Optimization Algorithms for Auto-Tuning"), computed on a recorded space. See docs/tuner.md for every choice
// made here.
#include <string>
#include <vector>

#include "isatune/tune/replay.h"
#include "isatune/tune/tuner.h"

namespace isatune::tune {

// Random search without replacement, analytically: N configurations (valid and failed), failed ones give no
// result. Before any valid result the best-so-far is `no_result` (the worst valid time).
class RandomBaseline {
public:
  // values: objective of every configuration (+inf for failed ones).
  explicit RandomBaseline(std::vector<double> values);
  double expected_best(size_t draws) const; // E[best so far after `draws` draws]
  size_t total() const { return n_; }
  double optimum() const { return sorted_.front(); }
  double median() const { return median_; }
  double no_result() const { return worst_valid_; }
  // Smallest number of draws at which expected_best <= target.
  size_t draws_to_reach(double target) const;

private:
  std::vector<double> sorted_; // ascending, failed ones as worst_valid_
  size_t n_ = 0;
  double median_ = 0, worst_valid_ = 0;
};

struct ScoreSetup {
  double optimum = 0, median = 0, target = 0; // target = optimum + (median - optimum) * (1 - cutoff)
  double mean_cost_s = 0;                     // mean charged time per evaluation over the whole file
  size_t budget_draws = 0;                    // baseline draws to reach the target
  double budget_s = 0;                        // budget_draws * mean_cost_s
  std::vector<double> grid_s;                 // time steps (budget_s * i / G, i = 1..G)
  std::vector<double> baseline;               // expected random best-so-far at each step
  double no_result = 0;
};

ScoreSetup make_score_setup(const ReplayData& data, double cutoff = 0.96, size_t steps = 100);

// Best-so-far of one run sampled on the setup's grid (charged time axis).
std::vector<double> best_so_far_curve(const ScoreSetup& setup, const std::vector<Record>& history);
// Mean over steps of (curve - random) / (optimum - random).
double standardised_score(const ScoreSetup& setup, const std::vector<double>& curve);

struct StrategyScore {
  std::string strategy;
  size_t repeats = 0;
  double mean = 0, stddev = 0, min = 0,
         max = 0; // over per-repeat scores (their mean = score of the mean curve)
  double mean_evaluations = 0;
  double found_optimum = 0; // fraction of repeats that found the optimum within the budget
};

// Runs `repeats` seeded runs (seeds seed, seed+1, ...) of a strategy under the setup's charged-time budget.
StrategyScore score_strategy(const ReplayData& data, const ScoreSetup& setup, const std::string& strategy,
                             size_t repeats, uint64_t seed);

} // namespace isatune::tune

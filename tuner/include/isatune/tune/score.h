#pragma once
// The methodology score of Willemsen, van Nieuwpoort, van Werkhoven ("A Methodology for Comparing
// Optimization Algorithms for Auto-Tuning"), computed on a recorded space as the package
// AutoTuningAssociation/autotuning_methodology computes it with the settings of its published comparisons
// (cutoff 0.96, time range from the 0.5 point, 1,000 points). docs/tuner.md walks through every step.
#include <string>
#include <vector>

#include "isatune/tune/replay.h"
#include "isatune/tune/tuner.h"

namespace isatune::tune {

// Random search without replacement, analytically: N configurations (valid and failed), failed ones give no
// result. Before any valid result the best-so-far is `no_result` (the worst valid time). The exact expected
// best-so-far; the methodology itself uses the value at the expected rank (see ScoreSetup).
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

struct MethodologyOptions {
  double cutoff = 0.96;       // the time range ends where random search reaches this fraction optimum-ward
  double cutoff_start = 0.5;  // ... and starts where it reaches this one
  size_t resolution = 1000;   // points of the time range
  double run_margin = 1.1;    // runs get this many times the budget's evaluations (the package's cutoff_margin)
};

// The methodology's view of a space. "Valid" = ran and gave a time; failed configurations count toward the
// evaluations and the cost but not the distribution.
struct ScoreSetup {
  MethodologyOptions options;
  size_t configurations = 0;          // valid + failed (constraint violations are not part of the space)
  std::vector<double> dist;           // valid objective values, ascending
  double optimum = 0, median = 0;     // of the valid values
  double target = 0, target_start = 0; // optimum + (median - optimum) * (1 - cutoff[_start])
  size_t budget_fevals = 0;           // expected-rank draws of random search to reach `target`
  size_t start_fevals = 0;            // ... to reach `target_start`
  double median_cost_s = 0;           // median charged time per evaluation (valid and failed)
  double baseline_cost_s = 0;         // mean per evaluation, failed ones weighted by their share (baseline axis)
  double budget_s = 0, start_s = 0;   // *_fevals * median_cost_s: the time range
  size_t run_evaluations = 0;         // min(ceil(budget_fevals * run_margin), configurations)
  std::vector<double> grid_s;         // `resolution` times from start_s to budget_s
  std::vector<double> baseline;       // calculated random search at each grid time (smoothed)
};

ScoreSetup make_score_setup(const ReplayData& data, const MethodologyOptions& options = {});

// Expected-rank draws to reach `target`: with the valid values worst first, the first position i holding a
// value <= target needs ceil(i / (N + 1 - i)) draws.
size_t expected_rank_draws(const std::vector<double>& ascending, double target);
// Random search at the expected rank after `draws` draws: the value at position round(M (N+1) / (M+1)) of the
// worst-first distribution.
double random_at_expected_rank(const std::vector<double>& ascending, size_t draws);

// One run as the scorer reads it: cumulative charged time and the objective (NaN when it failed).
struct RunPoint {
  double charged_s = 0;
  double time_ms = 0; // NaN: failed
};
using Run = std::vector<RunPoint>;
Run run_of(const std::vector<Record>& history);

// Mean over runs of each run's best-so-far at each grid time. Before a run's first valid result its value is
// that first valid result (a run with none contributes the worst valid value).
std::vector<double> mean_curve(const ScoreSetup& setup, const std::vector<Run>& runs);
// The package's curve: a non-increasing fit of the rank in `dist` over charged time to every run's
// best-so-far points (pooled, within 0.9 start .. 1.1 end), rounded to a rank; held constant after the median
// run end. The package averages bootstrap-bagged fits of that regression; this is the fit to all the data.
std::vector<double> package_curve(const ScoreSetup& setup, const std::vector<Run>& runs);
// (curve - random) / (optimum - random) at each grid time.
std::vector<double> standardise(const ScoreSetup& setup, const std::vector<double>& curve);

struct StrategyScore {
  std::string strategy;
  size_t repeats = 0;
  double score = 0;          // mean of the standardised mean curve
  double standard_error = 0; // of `score`, over repeats
  double stddev = 0, min = 0, max = 0; // of per-repeat scores (their mean is `score`)
  double package_score = 0;  // mean of the standardised package curve
  double package_error = 0;  // its standard deviation over the time range (the package's "error")
  double mean_evaluations = 0;
  double found_optimum = 0;  // fraction of repeats that found the optimum
};

StrategyScore score_runs(const ScoreSetup& setup, const std::vector<Run>& runs, const std::string& strategy = "");
// Runs `repeats` seeded runs (seeds seed, seed+1, ...) of a strategy for setup.run_evaluations evaluations.
StrategyScore score_strategy(const ReplayData& data, const ScoreSetup& setup, const std::string& strategy,
                             size_t repeats, uint64_t seed);

} // namespace isatune::tune

// Methodology score on a recorded space, step by step as the methodology package computes it (see score.h and
// docs/tuner.md): budget and time range from the expected rank of random search and the median cost per
// evaluation; the calculated random baseline at the expected rank, smoothed; the mean-curve score and the
// package's own isotonic-fit curve score over the same 1,000 times.
#include "isatune/tune/score.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "isatune/error.h"
#include "monotone_fit.h"

namespace isatune::tune {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v)
    s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

// numpy.linspace: start + i * step, the last point exactly `stop`.
std::vector<double> linspace(double start, double stop, size_t n) {
  std::vector<double> out(n);
  double step = n > 1 ? (stop - start) / static_cast<double>(n - 1) : 0.0;
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<double>(i) * step + start;
  if (n > 1)
    out.back() = stop;
  return out;
}

// Python's round() and numpy.round: halves to even (the default floating-point rounding mode).
double round_half_even(double v) { return std::nearbyint(v); }

std::vector<double> baseline_over_grid(const ScoreSetup& s) {
  std::vector<double> fevals, draws;
  for (double t : s.grid_s) {
    fevals.push_back(round_half_even(std::max(t / s.baseline_cost_s, 1.0)));
    draws.push_back(random_at_expected_rank(s.dist, static_cast<size_t>(fevals.back())));
  }
  if (fevals.size() <= 2)
    return draws;
  // the monotone interpolant needs distinct x: keep the first of each run of equal evaluation counts
  std::vector<double> x{fevals[0]}, y{draws[0]};
  for (size_t i = 1; i < fevals.size(); ++i)
    if (fevals[i] > fevals[i - 1]) {
      x.push_back(fevals[i]);
      y.push_back(draws[i]);
    }
  if (x.size() < 2)
    return draws;
  return pchip(x, y, linspace(fevals.front(), fevals.back(), fevals.size()));
}
} // namespace

size_t expected_rank_draws(const std::vector<double>& ascending, double target) {
  const size_t n = ascending.size();
  for (size_t i = 0; i < n; ++i)
    if (ascending[n - 1 - i] <= target)
      return (i + (n + 1 - i) - 1) / (n + 1 - i); // ceil(i / (N + 1 - i))
  throw InputError("no valid value reaches the target");
}

double random_at_expected_rank(const std::vector<double>& ascending, size_t draws) {
  const size_t n = ascending.size();
  const double m = static_cast<double>(draws);
  size_t idx = static_cast<size_t>(round_half_even(m * static_cast<double>(n + 1) / (m + 1)));
  idx = std::min(n - 1, idx);
  return ascending[n - 1 - idx]; // position idx of the worst-first distribution
}

ScoreSetup make_score_setup(const ReplayData& data, const MethodologyOptions& options) {
  if (!(options.cutoff > 0 && options.cutoff < 1) || !(options.cutoff_start >= 0 && options.cutoff_start < 1) ||
      options.cutoff_start >= options.cutoff)
    throw InputError("methodology cutoffs: need 0 <= start < cutoff < 1");
  if (options.resolution < 2)
    throw InputError("methodology resolution: need at least 2 time points");
  ScoreSetup s;
  s.options = options;
  std::vector<double> costs, valid_costs, failed_costs;
  for (const auto& e : data.entries) {
    if (e.status == Status::constraint)
      continue; // not part of the space
    costs.push_back(e.cost_s);
    if (e.status == Status::ok) {
      s.dist.push_back(e.time_ms);
      valid_costs.push_back(e.cost_s);
    } else {
      failed_costs.push_back(e.cost_s);
    }
  }
  if (s.dist.empty())
    throw InputError("'" + data.path + "': no valid configuration, nothing to score");
  std::sort(s.dist.begin(), s.dist.end());
  s.configurations = costs.size();
  s.optimum = s.dist.front();
  s.median = median_of(s.dist);
  s.target = s.optimum + (s.median - s.optimum) * (1.0 - options.cutoff);
  s.target_start = s.optimum + (s.median - s.optimum) * (1.0 - options.cutoff_start);
  s.budget_fevals = expected_rank_draws(s.dist, s.target);
  s.start_fevals = expected_rank_draws(s.dist, s.target_start);
  s.median_cost_s = median_of(costs);
  s.baseline_cost_s = failed_costs.empty() ? mean_of(costs)
                                           : mean_of(valid_costs) + static_cast<double>(failed_costs.size()) /
                                                                        static_cast<double>(costs.size()) *
                                                                        mean_of(failed_costs);
  if (!(s.median_cost_s > 0) || !(s.baseline_cost_s > 0))
    throw InputError("'" + data.path + "' records no compile or benchmark time");
  s.budget_s = static_cast<double>(s.budget_fevals) * s.median_cost_s;
  s.start_s = static_cast<double>(s.start_fevals) * s.median_cost_s;
  if (!(s.start_s < s.budget_s))
    throw InputError("'" + data.path + "': the methodology's time range is empty (start " +
                     std::to_string(s.start_fevals) + " draws, end " + std::to_string(s.budget_fevals) + ")");
  s.run_evaluations = std::min(
      static_cast<size_t>(std::ceil(static_cast<double>(s.budget_fevals) * options.run_margin)), s.configurations);
  s.grid_s = linspace(s.start_s, s.budget_s, options.resolution);
  s.baseline = baseline_over_grid(s);
  return s;
}

Run run_of(const std::vector<Record>& history) {
  Run run;
  for (const auto& r : history)
    run.push_back({r.charged_s, r.eval.status == Status::ok ? r.eval.time_ms : kNaN});
  return run;
}

std::vector<double> mean_curve(const ScoreSetup& setup, const std::vector<Run>& runs) {
  std::vector<double> sum(setup.grid_s.size(), 0.0);
  for (const auto& run : runs) {
    double first_valid = setup.dist.back();
    for (const auto& p : run)
      if (!std::isnan(p.time_ms)) {
        first_valid = p.time_ms;
        break;
      }
    double best = kNaN;
    size_t h = 0;
    for (size_t i = 0; i < setup.grid_s.size(); ++i) {
      for (; h < run.size() && run[h].charged_s <= setup.grid_s[i]; ++h)
        if (!std::isnan(run[h].time_ms))
          best = std::isnan(best) ? run[h].time_ms : std::min(best, run[h].time_ms);
      sum[i] += std::isnan(best) ? first_valid : best;
    }
  }
  for (double& v : sum)
    v /= static_cast<double>(std::max<size_t>(runs.size(), 1));
  return sum;
}

std::vector<double> package_curve(const ScoreSetup& setup, const std::vector<Run>& runs) {
  const auto& grid = setup.grid_s;
  const double lo = grid.front() * 0.9, hi = grid.back() * 1.1;
  std::vector<double> x, y, run_ends;
  for (const auto& run : runs) {
    double best = kNaN, end = kNaN;
    for (const auto& p : run) {
      if (!std::isnan(p.time_ms))
        best = std::isnan(best) ? p.time_ms : std::min(best, p.time_ms);
      if (std::isnan(best))
        continue; // no best-so-far yet: no point
      end = p.charged_s;
      if (p.charged_s >= lo && p.charged_s <= hi) {
        x.push_back(p.charged_s);
        y.push_back(static_cast<double>(std::lower_bound(setup.dist.begin(), setup.dist.end(), best) -
                                        setup.dist.begin()));
      }
    }
    if (!std::isnan(end))
      run_ends.push_back(end);
  }
  std::vector<double> curve(grid.size(), setup.dist.back());
  if (x.empty())
    return curve;
  std::vector<double> rank = isotonic_decreasing(x, y, grid);
  const double last = static_cast<double>(setup.dist.size() - 1);
  for (size_t i = 0; i < grid.size(); ++i)
    curve[i] = setup.dist[static_cast<size_t>(std::clamp(round_half_even(rank[i]), 0.0, last))];
  // past the median run end fewer than half the runs contribute: hold the value there
  double stop = median_of(run_ends);
  if (stop < grid.back()) {
    size_t from = static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), stop) - grid.begin());
    for (size_t i = from; i < grid.size(); ++i)
      curve[i] = curve[from];
  }
  return curve;
}

std::vector<double> standardise(const ScoreSetup& setup, const std::vector<double>& curve) {
  std::vector<double> out(curve.size());
  for (size_t i = 0; i < curve.size(); ++i) {
    double denom = setup.optimum - setup.baseline[i];
    if (std::fabs(denom) < 1e-12 * std::max(1.0, std::fabs(setup.optimum)))
      out[i] = curve[i] <= setup.optimum ? 1.0 : 0.0; // random search is already at the optimum
    else
      out[i] = (curve[i] - setup.baseline[i]) / denom;
  }
  return out;
}

StrategyScore score_runs(const ScoreSetup& setup, const std::vector<Run>& runs, const std::string& strategy) {
  StrategyScore out;
  out.strategy = strategy;
  out.repeats = runs.size();
  if (runs.empty())
    return out;
  std::vector<double> scores;
  double evals = 0, found = 0;
  for (const auto& run : runs) {
    scores.push_back(mean_of(standardise(setup, mean_curve(setup, {run}))));
    evals += static_cast<double>(run.size());
    for (const auto& p : run)
      if (p.time_ms <= setup.optimum) {
        found += 1;
        break;
      }
  }
  const double n = static_cast<double>(runs.size());
  out.score = mean_of(standardise(setup, mean_curve(setup, runs)));
  for (double v : scores)
    out.stddev += (v - out.score) * (v - out.score);
  out.stddev = runs.size() > 1 ? std::sqrt(out.stddev / (n - 1)) : 0.0;
  out.standard_error = out.stddev / std::sqrt(n);
  out.min = *std::min_element(scores.begin(), scores.end());
  out.max = *std::max_element(scores.begin(), scores.end());
  std::vector<double> pc = standardise(setup, package_curve(setup, runs));
  out.package_score = mean_of(pc);
  for (double v : pc)
    out.package_error += (v - out.package_score) * (v - out.package_score);
  out.package_error = std::sqrt(out.package_error / static_cast<double>(pc.size()));
  out.mean_evaluations = evals / n;
  out.found_optimum = found / n;
  return out;
}

StrategyScore score_strategy(const ReplayData& data, const ScoreSetup& setup, const std::string& strategy,
                             size_t repeats, uint64_t seed) {
  ReplayEvaluator evaluator(data);
  std::vector<Run> runs;
  for (size_t r = 0; r < repeats; ++r) {
    auto s = make_strategy(strategy);
    TuneOptions opt;
    opt.budget.evaluations = setup.run_evaluations;
    opt.seed = seed + r;
    runs.push_back(run_of(tune(evaluator.space(), evaluator, *s, opt).history));
  }
  return score_runs(setup, runs, strategy);
}

} // namespace isatune::tune

// Methodology score on a recorded space (see docs/tuner.md): the budget ends where random search is expected
// to reach optimum + (median - optimum) * (1 - cutoff); the time axis is charged time; the baseline charges
// the mean recorded cost per evaluation, strategies the recorded cost of each configuration they evaluate.
#include "isatune/tune/score.h"

#include <algorithm>
#include <cmath>

#include "isatune/error.h"

namespace isatune::tune {

ScoreSetup make_score_setup(const ReplayData& data, double cutoff, size_t steps) {
  std::vector<double> values;
  double cost = 0;
  for (const auto& e : data.entries) {
    if (e.status == Status::constraint)
      continue; // not part of the space
    values.push_back(SearchContext::objective_of(e));
    cost += e.cost_s;
  }
  RandomBaseline base(values);
  ScoreSetup s;
  s.optimum = base.optimum();
  s.median = base.median();
  s.no_result = base.no_result();
  s.target = s.optimum + (s.median - s.optimum) * (1.0 - cutoff);
  s.mean_cost_s = cost / static_cast<double>(values.size());
  if (!(s.mean_cost_s > 0))
    throw InputError("'" + data.path + "' records no compile or benchmark time");
  s.budget_draws = base.draws_to_reach(s.target);
  s.budget_s = static_cast<double>(s.budget_draws) * s.mean_cost_s;
  for (size_t i = 1; i <= steps; ++i) {
    double t = s.budget_s * static_cast<double>(i) / static_cast<double>(steps);
    s.grid_s.push_back(t);
    s.baseline.push_back(base.expected_best(static_cast<size_t>(std::floor(t / s.mean_cost_s + 1e-9))));
  }
  return s;
}

std::vector<double> best_so_far_curve(const ScoreSetup& setup, const std::vector<Record>& history) {
  std::vector<double> curve;
  double best = setup.no_result;
  size_t h = 0;
  for (double t : setup.grid_s) {
    for (; h < history.size() && history[h].charged_s <= t * (1 + 1e-12); ++h)
      if (history[h].eval.status == Status::ok)
        best = std::min(best, history[h].eval.time_ms);
    curve.push_back(best);
  }
  return curve;
}

double standardised_score(const ScoreSetup& setup, const std::vector<double>& curve) {
  double sum = 0;
  for (size_t i = 0; i < curve.size(); ++i) {
    double denom = setup.optimum - setup.baseline[i];
    if (std::fabs(denom) < 1e-12 * std::max(1.0, std::fabs(setup.optimum)))
      sum += curve[i] <= setup.optimum ? 1.0 : 0.0;
    else
      sum += (curve[i] - setup.baseline[i]) / denom;
  }
  return curve.empty() ? 0.0 : sum / static_cast<double>(curve.size());
}

StrategyScore score_strategy(const ReplayData& data, const ScoreSetup& setup, const std::string& strategy,
                             size_t repeats, uint64_t seed) {
  ReplayEvaluator evaluator(data);
  StrategyScore out;
  out.strategy = strategy;
  out.repeats = repeats;
  std::vector<double> scores;
  double evals = 0, found = 0;
  for (size_t r = 0; r < repeats; ++r) {
    auto s = make_strategy(strategy);
    TuneOptions opt;
    opt.budget.charged_s = setup.budget_s;
    opt.seed = seed + r;
    TuneResult res = tune(evaluator.space(), evaluator, *s, opt);
    auto curve = best_so_far_curve(setup, res.history);
    scores.push_back(standardised_score(setup, curve));
    evals += static_cast<double>(res.history.size());
    if (!curve.empty() && curve.back() <= setup.optimum)
      found += 1;
  }
  double n = static_cast<double>(std::max<size_t>(repeats, 1));
  for (double x : scores)
    out.mean += x / n;
  for (double x : scores)
    out.stddev += (x - out.mean) * (x - out.mean);
  out.stddev = repeats > 1 ? std::sqrt(out.stddev / static_cast<double>(repeats - 1)) : 0.0;
  out.min = scores.empty() ? 0 : *std::min_element(scores.begin(), scores.end());
  out.max = scores.empty() ? 0 : *std::max_element(scores.begin(), scores.end());
  out.mean_evaluations = evals / n;
  out.found_optimum = found / n;
  return out;
}

} // namespace isatune::tune

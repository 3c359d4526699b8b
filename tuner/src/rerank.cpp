#include "isatune/tune/rerank.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "isatune/error.h"

namespace isatune::tune {

std::pair<size_t, size_t> median_interval_ranks(size_t n) {
  // the number of values below the median is Binomial(n, 1/2): normal approximation, z = 1.96
  const double half = 0.5 * static_cast<double>(n), spread = 1.96 * std::sqrt(static_cast<double>(n) * 0.25);
  double lo = std::floor(half - spread), hi = std::ceil(half + spread);
  return {static_cast<size_t>(std::max(lo, 0.0)),
          static_cast<size_t>(std::min(hi, static_cast<double>(n - 1)))};
}

namespace {
struct Summary {
  double median, lo, hi;
};
Summary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  auto [a, b] = median_interval_ranks(n);
  double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {median, v[a], v[b]};
}
} // namespace

RerankResult rerank(size_t candidates, const std::function<double(size_t)>& measure, const RerankOptions& options) {
  if (candidates == 0)
    throw InputError("rerank: no candidates");
  if (options.min_rounds < 2 || options.max_rounds < options.min_rounds)
    throw InputError("rerank rounds: need 2 <= min_rounds <= max_rounds");
  RerankResult r;
  r.candidates.resize(candidates);
  for (size_t i = 0; i < candidates; ++i)
    r.candidates[i].candidate = i;
  std::vector<std::vector<double>> centred(candidates);
  std::vector<size_t> round_best;
  for (size_t round = 1; round <= options.max_rounds; ++round) {
    r.rounds = round;
    double best = std::numeric_limits<double>::infinity(), log_sum = 0;
    size_t who = 0;
    std::vector<double> logs(candidates);
    for (size_t i = 0; i < candidates; ++i) { // one measurement of each, in the same order every round
      double t = measure(i);
      r.candidates[i].times_ms.push_back(t);
      logs[i] = std::log(std::max(t, 1e-300));
      log_sum += logs[i];
      if (t < best)
        best = t, who = i;
    }
    for (size_t i = 0; i < candidates; ++i)
      centred[i].push_back(logs[i] - log_sum / static_cast<double>(candidates));
    round_best.push_back(who);
    if (round < options.min_rounds && round < options.max_rounds)
      continue;
    for (size_t i = 0; i < candidates; ++i) {
      auto& c = r.candidates[i];
      Summary raw = summarise(c.times_ms), rel = summarise(centred[i]);
      c.median_ms = raw.median, c.lo_ms = raw.lo, c.hi_ms = raw.hi;
      c.relative = rel.median, c.relative_lo = rel.lo, c.relative_hi = rel.hi;
    }
    r.winner = 0;
    for (size_t i = 1; i < candidates; ++i)
      if (r.candidates[i].relative_hi < r.candidates[r.winner].relative_hi ||
          (r.candidates[i].relative_hi == r.candidates[r.winner].relative_hi &&
           r.candidates[i].relative < r.candidates[r.winner].relative))
        r.winner = i;
    r.separated = true;
    for (size_t i = 0; i < candidates; ++i)
      if (i != r.winner && r.candidates[i].relative_lo <= r.candidates[r.winner].relative_hi)
        r.separated = false;
    if (r.separated)
      break;
  }
  size_t flips = 0;
  for (size_t w : round_best)
    flips += w != r.winner;
  r.flip_rate = static_cast<double>(flips) / static_cast<double>(round_best.size());
  r.first_pick_kept = r.winner == 0;
  return r;
}

} // namespace isatune::tune

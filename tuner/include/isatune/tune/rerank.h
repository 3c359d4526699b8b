#pragma once
// Winners that survive noise: after a search, the top candidates are measured again, interleaved (A B C A B C
// ...) so that drift of the device (clocks, temperature) falls on every candidate of a round alike. Each
// measurement is compared within its round (log time minus the round's mean log time: the drift cancels), and
// each candidate's median of those, with its distribution-free 95% confidence interval (order statistics: robust
// to the spikes another tenant causes), decides: rounds go on until the best candidate's interval clears every
// other's, or a round limit. The winner is the candidate with the lowest upper bound; the flip rate says how
// often a single round would have named another one.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace isatune::tune {

struct RerankOptions {
  size_t min_rounds = 10; // at least this many measurements of every candidate (a confidence interval needs some)
  size_t max_rounds = 50; // stop here even when intervals still overlap
};

struct CandidateStats {
  size_t candidate = 0; // index given to measure()
  std::vector<double> times_ms;
  double median_ms = 0, lo_ms = 0, hi_ms = 0; // median of the times and its 95% confidence interval
  double relative = 0, relative_lo = 0, relative_hi = 0; // the same of the round-centred log times (decides)
};

struct RerankResult {
  std::vector<CandidateStats> candidates; // in the order given
  size_t winner = 0;                      // index into candidates
  size_t rounds = 0;
  bool separated = false;   // the winner's interval lies below every other's
  double flip_rate = 0;     // fraction of rounds whose fastest candidate is not the winner
  bool first_pick_kept = false; // the search's own best (candidate 0) is the winner
};

// measure(i) times candidate i once (ms). Candidate 0 is the search's best.
RerankResult rerank(size_t candidates, const std::function<double(size_t)>& measure, const RerankOptions& options = {});

// Ranks (0-based, into n sorted values) of the distribution-free 95% confidence interval of the median.
std::pair<size_t, size_t> median_interval_ranks(size_t n);

} // namespace isatune::tune

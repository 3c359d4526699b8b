// Expected best-so-far of random search without replacement, from the whole distribution: with values sorted
// ascending x_1..x_N (failed configurations last, valued as "no result"), the best of k draws is x_j or worse
// with probability C(N-j+1, k) / C(N, k).
#include <algorithm>
#include <cmath>

#include "isatune/error.h"
#include "isatune/tune/score.h"

namespace isatune::tune {

RandomBaseline::RandomBaseline(std::vector<double> values) : n_(values.size()) {
  std::vector<double> valid;
  for (double v : values)
    if (std::isfinite(v))
      valid.push_back(v);
  if (valid.empty())
    throw InputError("no valid configuration: nothing to score");
  std::sort(valid.begin(), valid.end());
  worst_valid_ = valid.back();
  size_t m = valid.size();
  median_ = m % 2 ? valid[m / 2] : 0.5 * (valid[m / 2 - 1] + valid[m / 2]);
  sorted_ = std::move(valid);
  sorted_.resize(n_, worst_valid_);
}

double RandomBaseline::expected_best(size_t k) const {
  if (k == 0)
    return worst_valid_;
  if (k >= n_)
    return sorted_.front();
  const double N = static_cast<double>(n_), K = static_cast<double>(k);
  double r = 1.0, e = 0.0; // r = P(best is x_j or worse)
  for (size_t j = 1; j <= n_; ++j) {
    double next = r * (N - static_cast<double>(j) + 1 - K) / (N - static_cast<double>(j) + 1);
    if (next < 0)
      next = 0;
    e += sorted_[j - 1] * (r - next);
    r = next;
    if (r < 1e-300)
      break;
  }
  return e;
}

size_t RandomBaseline::draws_to_reach(double target) const {
  size_t lo = 1, hi = n_;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (expected_best(mid) <= target)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

} // namespace isatune::tune

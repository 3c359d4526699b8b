#pragma once
// Surrogate model of the `bayes` strategy: a Gaussian process over a space's configurations. Each parameter
// with more than one value is a feature: ordered parameters by their value index scaled to [0, 1],
// categorical ones by "same value or not" (distance 0 or 1). Kernel: Matern 5/2 of the weighted distance
// (a relevance weight per feature), unit signal variance on standardised targets, plus a nugget. When fitting
// with `select`, the weights are adjusted by two coordinate passes (each weight x1/4 or x4, kept when the
// marginal likelihood improves; warm-started from the previous fit), then the length scale and nugget are
// chosen from a small grid by maximum marginal likelihood. Exact and deterministic (no randomness).
#include <cstddef>
#include <vector>

#include "isatune/tune/space.h"

namespace isatune::tune {

// Features of configurations: ordered parameters as index / (values - 1), categorical ones as the index
// itself (compared for equality); parameters with one value are dropped.
class SpaceEncoding {
public:
  explicit SpaceEncoding(const Space& space);
  size_t dims() const { return ordered_.size(); }
  bool ordered(size_t feature) const { return ordered_[feature]; }
  std::vector<double> encode(const Config& c) const;
  // Squared distance: sum of squared differences over ordered features, + 1 per differing categorical one.
  double distance2(const double* a, const double* b) const;
  // Per-feature contributions to distance2 (size dims()).
  void contributions(const double* a, const double* b, double* out) const;

private:
  std::vector<size_t> param_;   // feature -> parameter
  std::vector<bool> ordered_;   // feature is ordered
  std::vector<double> scale_;   // 1 / (values - 1) for ordered features
};

double expected_improvement(double mean, double sd, double best); // minimisation

class GaussianProcess {
public:
  explicit GaussianProcess(const SpaceEncoding& enc) : enc_(enc) {}
  // Fits on encoded points (row-major, enc.dims() per point) and targets; chooses the hyperparameters by
  // marginal likelihood when `select` (else keeps the previous ones). Several targets share the kernel:
  // targets[j] is one vector of size n each; they are standardised internally.
  void fit(const std::vector<double>& x, const std::vector<std::vector<double>>& targets, bool select = true);
  // Predictive mean (in target units) of target j, and of target 0 the standard deviation of the latent
  // function (in target units) when sd is given.
  double mean(const double* x, size_t target = 0) const;
  void predict(const double* x, double& mean, double& sd) const;
  double max_sd() const { return scale_[0]; } // prior standard deviation of target 0
  double length_scale() const { return length_; }
  double nugget() const { return nugget_; }
  size_t size() const { return n_; }

private:
  double kernel(double d2) const;
  double log_likelihood(double length, double nugget); // fits chol_ and alpha for target 0
  void factor(double length, double nugget);
  const SpaceEncoding& enc_;
  std::vector<double> x_;
  std::vector<std::vector<double>> y_; // standardised targets
  std::vector<double> offset_, scale_;
  std::vector<double> chol_;           // lower triangle, row-major n x n
  std::vector<std::vector<double>> alpha_;
  std::vector<double> d2_;             // pairwise squared distances
  size_t n_ = 0;
  double wdist2(const double* a, const double* b) const;
  double length_ = 0.5, nugget_ = 1e-3;
  std::vector<double> weight_;         // per-feature relevance (multiplies the squared difference)
  std::vector<double> sqrt_weight_;    // for ordered features
  std::vector<char> ordered_;
  std::vector<double> parts_;          // n x n x dims per-feature contributions

  mutable std::vector<double> k_, v_;
};

} // namespace isatune::tune

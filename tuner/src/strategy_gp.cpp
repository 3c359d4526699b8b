// Gaussian-process surrogate of the `bayes` strategy (surrogate.h).
#include <algorithm>
#include <cmath>

#include "isatune/tune/surrogate.h"

namespace isatune::tune {

SpaceEncoding::SpaceEncoding(const Space& space) {
  const auto& ps = space.parameters();
  for (size_t p = 0; p < ps.size(); ++p) {
    if (ps[p].values.size() < 2)
      continue;
    param_.push_back(p);
    ordered_.push_back(ps[p].ordered);
    scale_.push_back(ps[p].ordered ? 1.0 / static_cast<double>(ps[p].values.size() - 1) : 1.0);
  }
}

std::vector<double> SpaceEncoding::encode(const Config& c) const {
  std::vector<double> f(param_.size());
  for (size_t i = 0; i < param_.size(); ++i)
    f[i] = static_cast<double>(c[param_[i]]) * scale_[i];
  return f;
}

double SpaceEncoding::distance2(const double* a, const double* b) const {
  double s = 0;
  for (size_t i = 0; i < ordered_.size(); ++i) {
    double d = a[i] - b[i];
    s += ordered_[i] ? d * d : (d != 0 ? 1.0 : 0.0);
  }
  return s;
}

void SpaceEncoding::contributions(const double* a, const double* b, double* out) const {
  for (size_t i = 0; i < ordered_.size(); ++i) {
    double d = a[i] - b[i];
    out[i] = ordered_[i] ? d * d : (d != 0 ? 1.0 : 0.0);
  }
}

double GaussianProcess::wdist2(const double* a, const double* b) const {
  const size_t d = weight_.size();
  double s = 0;
  for (size_t i = 0; i < d; ++i) {
    double t = a[i] - b[i];
    s += ordered_[i] ? weight_[i] * t * t : (t != 0 ? weight_[i] : 0.0);
  }
  return s;
}

double expected_improvement(double mean, double sd, double best) {
  if (!(sd > 0))
    return std::max(best - mean, 0.0);
  double z = (best - mean) / sd;
  double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
  return sd * (z * cdf + pdf);
}

double GaussianProcess::kernel(double d2) const {
  // Matern 5/2
  double r = std::sqrt(5.0 * d2) / length_;
  return (1.0 + r + r * r / 3.0) * std::exp(-r);
}

void GaussianProcess::factor(double length, double nugget) {
  length_ = length;
  nugget_ = nugget;
  const size_t n = n_;
  chol_.assign(n * n, 0.0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j <= i; ++j)
      chol_[i * n + j] = kernel(d2_[i * n + j]) + (i == j ? nugget : 0.0);
  for (size_t j = 0; j < n; ++j) {
    double s = chol_[j * n + j];
    for (size_t k = 0; k < j; ++k)
      s -= chol_[j * n + k] * chol_[j * n + k];
    double d = std::sqrt(std::max(s, 1e-12));
    chol_[j * n + j] = d;
    for (size_t i = j + 1; i < n; ++i) {
      double t = chol_[i * n + j];
      const double* ri = &chol_[i * n];
      const double* rj = &chol_[j * n];
      for (size_t k = 0; k < j; ++k)
        t -= ri[k] * rj[k];
      chol_[i * n + j] = t / d;
    }
  }
  alpha_.assign(y_.size(), std::vector<double>(n));
  for (size_t t = 0; t < y_.size(); ++t) {
    auto& a = alpha_[t];
    for (size_t i = 0; i < n; ++i) { // L z = y
      double s = y_[t][i];
      for (size_t k = 0; k < i; ++k)
        s -= chol_[i * n + k] * a[k];
      a[i] = s / chol_[i * n + i];
    }
    for (size_t i = n; i-- > 0;) { // L^T alpha = z
      double s = a[i];
      for (size_t k = i + 1; k < n; ++k)
        s -= chol_[k * n + i] * a[k];
      a[i] = s / chol_[i * n + i];
    }
  }
}

double GaussianProcess::log_likelihood(double length, double nugget) {
  factor(length, nugget);
  double fit = 0, logdet = 0;
  for (size_t i = 0; i < n_; ++i) {
    fit += y_[0][i] * alpha_[0][i];
    logdet += std::log(chol_[i * n_ + i]);
  }
  return -0.5 * fit - logdet;
}

void GaussianProcess::fit(const std::vector<double>& x, const std::vector<std::vector<double>>& targets,
                          bool select) {
  const size_t d = enc_.dims();
  n_ = targets.empty() ? 0 : targets[0].size();
  x_ = x;
  y_.clear();
  offset_.clear();
  scale_.clear();
  for (const auto& t : targets) {
    double m = 0, v = 0;
    for (double y : t)
      m += y / static_cast<double>(n_);
    for (double y : t)
      v += (y - m) * (y - m) / static_cast<double>(n_);
    double s = v > 1e-24 ? std::sqrt(v) : 1.0;
    std::vector<double> z(n_);
    for (size_t i = 0; i < n_; ++i)
      z[i] = (t[i] - m) / s;
    y_.push_back(std::move(z));
    offset_.push_back(m);
    scale_.push_back(s);
  }
  if (weight_.size() != d)
    weight_.assign(d, 1.0);
  ordered_.resize(d);
  for (size_t k = 0; k < d; ++k)
    ordered_[k] = enc_.ordered(k);
  parts_.assign(n_ * n_ * d, 0.0);
  for (size_t i = 0; i < n_; ++i)
    for (size_t j = 0; j < i; ++j)
      enc_.contributions(&x_[i * d], &x_[j * d], &parts_[(i * n_ + j) * d]);
  auto distances = [&] {
    d2_.assign(n_ * n_, 0.0);
    for (size_t i = 0; i < n_; ++i)
      for (size_t j = 0; j < i; ++j) {
        double s = 0;
        for (size_t k = 0; k < d; ++k)
          s += weight_[k] * parts_[(i * n_ + j) * d + k];
        d2_[i * n_ + j] = d2_[j * n_ + i] = s;
      }
  };
  distances();
  if (select) {
    // relevance per feature: two coordinate passes, each weight x1/4 or x4 when the likelihood improves
    constexpr int ard = 2;
    double cur = log_likelihood(length_, nugget_);
    for (int pass = 0; pass < ard; ++pass)
      for (size_t k = 0; k < d; ++k)
        for (double f : {0.25, 4.0}) {
          double old = weight_[k];
          weight_[k] = std::clamp(old * f, 1.0 / 64, 16.0);
          distances();
          double ll = log_likelihood(length_, nugget_);
          if (ll > cur + 1e-9)
            cur = ll;
          else {
            weight_[k] = old;
            distances();
          }
        }
  }
  if (select) {
    static const double lengths[] = {0.1, 0.15, 0.25, 0.4, 0.6, 1.0, 1.6};
    static const double nuggets[] = {1e-4, 1e-2, 0.1};
    double best = -INFINITY, bl = length_, bn = nugget_;
    for (double l : lengths)
      for (double g : nuggets)
        if (double ll = log_likelihood(l, g); ll > best) {
          best = ll;
          bl = l;
          bn = g;
        }
    length_ = bl;
    nugget_ = bn;
  }
  factor(length_, nugget_);
  k_.resize(n_);
  v_.resize(n_);
}

double GaussianProcess::mean(const double* x, size_t target) const {
  const size_t d = enc_.dims();
  double m = 0;
  for (size_t i = 0; i < n_; ++i)
    m += kernel(wdist2(x, &x_[i * d])) * alpha_[target][i];
  return offset_[target] + scale_[target] * m;
}

void GaussianProcess::predict(const double* x, double& mean, double& sd) const {
  const size_t d = enc_.dims();
  double m = 0;
  for (size_t i = 0; i < n_; ++i) {
    k_[i] = kernel(wdist2(x, &x_[i * d]));
    m += k_[i] * alpha_[0][i];
  }
  double vv = 0;
  for (size_t i = 0; i < n_; ++i) {
    double s = k_[i];
    const double* row = &chol_[i * n_];
    for (size_t k = 0; k < i; ++k)
      s -= row[k] * v_[k];
    v_[i] = s / row[i];
    vv += v_[i] * v_[i];
  }
  mean = offset_[0] + scale_[0] * m;
  sd = scale_[0] * std::sqrt(std::max(1.0 - vv, 0.0));
}

} // namespace isatune::tune

#include "monotone_fit.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace isatune::tune {

namespace {
int sign(double v) { return (v > 0) - (v < 0); }

// One-sided three-point end slope, kept shape-preserving (SciPy's rule).
double end_slope(double h0, double h1, double m0, double m1) {
  double d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
  if (sign(d) != sign(m0))
    return 0;
  if (sign(m0) != sign(m1) && std::fabs(d) > 3 * std::fabs(m0))
    return 3 * m0;
  return d;
}
} // namespace

std::vector<double> pchip(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& at) {
  const size_t n = x.size();
  std::vector<double> h(n - 1), m(n - 1), d(n, 0.0);
  for (size_t k = 0; k + 1 < n; ++k) {
    h[k] = x[k + 1] - x[k];
    m[k] = (y[k + 1] - y[k]) / h[k];
  }
  if (n == 2) {
    d[0] = d[1] = m[0];
  } else {
    for (size_t k = 1; k + 1 < n; ++k) {
      if (m[k - 1] == 0 || m[k] == 0 || sign(m[k - 1]) != sign(m[k]))
        continue; // a local extremum or a flat piece: slope 0 keeps the fit monotone
      double w1 = 2 * h[k] + h[k - 1], w2 = h[k] + 2 * h[k - 1];
      d[k] = (w1 + w2) / (w1 / m[k - 1] + w2 / m[k]); // weighted harmonic mean
    }
    d[0] = end_slope(h[0], h[1], m[0], m[1]);
    d[n - 1] = end_slope(h[n - 2], h[n - 3], m[n - 2], m[n - 3]);
  }
  std::vector<double> out;
  out.reserve(at.size());
  for (double t : at) {
    size_t k = static_cast<size_t>(std::upper_bound(x.begin(), x.end(), t) - x.begin());
    k = std::clamp<size_t>(k == 0 ? 0 : k - 1, 0, n - 2);
    double s = (t - x[k]) / h[k], s2 = s * s, s3 = s2 * s;
    out.push_back((2 * s3 - 3 * s2 + 1) * y[k] + (s3 - 2 * s2 + s) * h[k] * d[k] + (-2 * s3 + 3 * s2) * y[k + 1] +
                  (s3 - s2) * h[k] * d[k + 1]);
  }
  return out;
}

std::vector<double> isotonic_decreasing(const std::vector<double>& x, const std::vector<double>& y,
                                        const std::vector<double>& at) {
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  // tied x: one point at their mean y, weighted by their count
  std::vector<double> ux, uy, uw;
  for (size_t i : order) {
    if (!ux.empty() && x[i] == ux.back()) {
      uy.back() += y[i];
      uw.back() += 1;
    } else {
      ux.push_back(x[i]);
      uy.push_back(y[i]);
      uw.push_back(1);
    }
  }
  for (size_t i = 0; i < uy.size(); ++i)
    uy[i] /= uw[i];
  // pool adjacent violators (for a non-increasing fit a block may not be below the next one)
  std::vector<double> bv, bw;
  std::vector<size_t> bn;
  for (size_t i = 0; i < uy.size(); ++i) {
    bv.push_back(uy[i]);
    bw.push_back(uw[i]);
    bn.push_back(1);
    while (bv.size() > 1 && bv[bv.size() - 2] < bv.back()) {
      double w = bw[bw.size() - 2] + bw.back();
      double v = (bv[bv.size() - 2] * bw[bw.size() - 2] + bv.back() * bw.back()) / w;
      size_t c = bn[bn.size() - 2] + bn.back();
      bv.pop_back(), bw.pop_back(), bn.pop_back();
      bv.back() = v, bw.back() = w, bn.back() = c;
    }
  }
  std::vector<double> fit;
  for (size_t b = 0; b < bv.size(); ++b)
    fit.insert(fit.end(), bn[b], bv[b]);
  std::vector<double> out;
  out.reserve(at.size());
  for (double t : at) {
    if (t <= ux.front()) {
      out.push_back(fit.front());
    } else if (t >= ux.back()) {
      out.push_back(fit.back());
    } else {
      size_t k = static_cast<size_t>(std::upper_bound(ux.begin(), ux.end(), t) - ux.begin()) - 1;
      double f = (t - ux[k]) / (ux[k + 1] - ux[k]);
      out.push_back(fit[k] + f * (fit[k + 1] - fit[k]));
    }
  }
  return out;
}

} // namespace isatune::tune

#pragma once
// The two curve fits the methodology package uses, written from their published definitions (no code copied):
// the shape-preserving piecewise cubic Hermite interpolant of Fritsch and Carlson as SciPy's PchipInterpolator
// defines it, and a non-increasing least-squares isotonic fit as scikit-learn's IsotonicRegression(increasing=
// False, out_of_bounds="clip") does it (tied x averaged, prediction interpolated linearly, clipped at the ends).
#include <vector>

namespace isatune::tune {

// x strictly increasing (at least 2 points); evaluates the interpolant at each of `at` (inside [x0, xn]).
std::vector<double> pchip(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& at);

// Fits a non-increasing function to the points (x, y) (any order, ties allowed) and predicts it at `at`.
std::vector<double> isotonic_decreasing(const std::vector<double>& x, const std::vector<double>& y,
                                        const std::vector<double>& at);

} // namespace isatune::tune

// RMSNorm over each row: y = x / sqrt(mean(x^2) + eps) * weight, arithmetic in f32.
#include <cmath>

#include "families.h"
#include "row_common.h"

namespace isatune::gen {

namespace {

class RmsnormGenerator : public rows::RowGenerator {
public:
  RmsnormGenerator() : RowGenerator(rows::RowOp::rmsnorm) {}
  std::string description() const override {
    return "row RMSNorm y = x / sqrt(mean(x^2) + eps) * weight, f32/f16/bf16, resident or looped rows";
  }
  void reference(const Signature&, const Problem& problem, const std::map<std::string, double>& scalars,
                 std::vector<std::vector<double>>& buffers) const override {
    const rows::RowShape s = rows::row_shape(problem);
    auto it = scalars.find("eps");
    // The kernel receives eps as f32.
    const double eps = double(float(it == scalars.end() ? 1e-5 : it->second));
    const auto& x = buffers.at(0);
    const auto& w = buffers.at(1);
    auto& y = buffers.at(2);
    for (int64_t r = 0; r < s.rows; ++r) {
      const double* xr = x.data() + r * s.ld;
      double* yr = y.data() + r * s.ldy;
      double sq = 0;
      for (int64_t c = 0; c < s.n; ++c)
        sq += xr[c] * xr[c];
      const double inv = 1.0 / std::sqrt(sq / double(s.n) + eps);
      for (int64_t c = 0; c < s.n; ++c)
        yr[c] = xr[c] * inv * w[size_t(c)];
    }
  }
};

} // namespace

std::unique_ptr<Generator> make_rmsnorm_generator() {
  return std::make_unique<RmsnormGenerator>();
}

} // namespace isatune::gen

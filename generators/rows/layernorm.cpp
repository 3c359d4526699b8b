// LayerNorm over each row: y = (x - mean) / sqrt(var + eps) * weight + bias (biased variance, two passes),
// arithmetic in f32.
#include <cmath>

#include "families.h"
#include "row_common.h"

namespace isatune::gen {

namespace {

class LayernormGenerator : public rows::RowGenerator {
public:
  LayernormGenerator() : RowGenerator(rows::RowOp::layernorm) {}
  std::string description() const override {
    return "row LayerNorm y = (x - mean) / sqrt(var + eps) * weight + bias, f32/f16/bf16, resident or looped";
  }
  void reference(const Signature&, const Problem& problem, const std::map<std::string, double>& scalars,
                 std::vector<std::vector<double>>& buffers) const override {
    const rows::RowShape s = rows::row_shape(problem);
    auto it = scalars.find("eps");
    const double eps = double(float(it == scalars.end() ? 1e-5 : it->second));
    const auto& x = buffers.at(0);
    const auto& w = buffers.at(1);
    const auto& b = buffers.at(2);
    auto& y = buffers.at(3);
    for (int64_t r = 0; r < s.rows; ++r) {
      const double* xr = x.data() + r * s.ld;
      double* yr = y.data() + r * s.ldy;
      double sum = 0;
      for (int64_t c = 0; c < s.n; ++c)
        sum += xr[c];
      const double mean = sum / double(s.n);
      double var = 0;
      for (int64_t c = 0; c < s.n; ++c)
        var += (xr[c] - mean) * (xr[c] - mean);
      var /= double(s.n);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t c = 0; c < s.n; ++c)
        yr[c] = (xr[c] - mean) * inv * w[size_t(c)] + b[size_t(c)];
    }
  }
};

} // namespace

std::unique_ptr<Generator> make_layernorm_generator() {
  return std::make_unique<LayernormGenerator>();
}

} // namespace isatune::gen

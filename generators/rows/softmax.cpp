// Softmax over each row: y = exp(x - max) / sum(exp(x - max)), numerically stable, arithmetic in f32.
#include <algorithm>
#include <cmath>

#include "families.h"
#include "row_common.h"

namespace isatune::gen {

namespace {

class SoftmaxGenerator : public rows::RowGenerator {
public:
  SoftmaxGenerator() : RowGenerator(rows::RowOp::softmax) {}
  std::string description() const override {
    return "row softmax (stable: max, exp2, sum, reciprocal), f32/f16/bf16, resident or looped rows";
  }
  void reference(const Signature&, const Problem& problem, const std::map<std::string, double>&,
                 std::vector<std::vector<double>>& buffers) const override {
    const rows::RowShape s = rows::row_shape(problem);
    const auto& x = buffers.at(0);
    auto& y = buffers.at(1);
    for (int64_t r = 0; r < s.rows; ++r) {
      const double* xr = x.data() + r * s.ld;
      double* yr = y.data() + r * s.ldy;
      double m = -INFINITY;
      for (int64_t c = 0; c < s.n; ++c)
        m = std::max(m, xr[c]);
      double sum = 0;
      for (int64_t c = 0; c < s.n; ++c)
        sum += std::exp(xr[c] - m);
      for (int64_t c = 0; c < s.n; ++c)
        yr[c] = std::exp(xr[c] - m) / sum;
    }
  }
};

} // namespace

std::unique_ptr<Generator> make_softmax_generator() {
  return std::make_unique<SoftmaxGenerator>();
}

} // namespace isatune::gen

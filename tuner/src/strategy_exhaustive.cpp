// Exhaustive search: every valid configuration in Cartesian order.
#include "isatune/tune/strategy.h"

namespace isatune::tune {

namespace {
class Exhaustive : public Strategy {
public:
  void run(SearchContext& ctx) override {
    for (size_t i = 0; i < ctx.space().size(); ++i)
      ctx.evaluate(ctx.space().valid_config(i));
  }
};
} // namespace

std::unique_ptr<Strategy> make_exhaustive() {
  return std::make_unique<Exhaustive>();
}

} // namespace isatune::tune

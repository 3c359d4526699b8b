// Random search without replacement: uniformly drawn valid configurations, none twice.
#include "isatune/tune/strategy.h"

namespace isatune::tune {

namespace {
class RandomSearch : public Strategy {
public:
  void run(SearchContext& ctx) override {
    for (;;)
      ctx.evaluate(ctx.random_unvisited());
  }
};
} // namespace

std::unique_ptr<Strategy> make_random() {
  return std::make_unique<RandomSearch>();
}

} // namespace isatune::tune

// Greedy iterated local search: first-improvement hill climbing over the Hamming-1 neighbourhood (neighbours
// in random order); at a local optimum, perturb the best configuration found so far by changing 3 parameters
// at random (a random unvisited configuration when that fails) and climb again.
#include <algorithm>
#include <cmath>

#include "isatune/tune/strategy.h"

namespace isatune::tune {

namespace {
class IteratedLocalSearch : public Strategy {
public:
  void run(SearchContext& ctx) override {
    const Space& space = ctx.space();
    const size_t np = space.parameters().size();
    Config cur = ctx.random_unvisited();
    double f_cur = ctx.objective(cur);
    Config best = cur;
    double f_best = f_cur;
    for (;;) {
      // climb
      bool improved = true;
      while (improved) {
        improved = false;
        auto nbrs = space.hamming_neighbours(cur);
        std::shuffle(nbrs.begin(), nbrs.end(), ctx.rng());
        for (const auto& n : nbrs) {
          if (ctx.visited(n))
            continue;
          double f = ctx.objective(n);
          if (f < f_cur) {
            cur = n;
            f_cur = f;
            improved = true;
            break;
          }
        }
      }
      if (f_cur < f_best) {
        best = cur;
        f_best = f_cur;
      }
      // perturb the best
      Config start;
      for (int tries = 0; tries < 20 && start.empty(); ++tries) {
        Config c = best;
        for (int k = 0; k < 3; ++k) {
          std::uniform_int_distribution<size_t> p(0, np - 1);
          size_t i = p(ctx.rng());
          std::uniform_int_distribution<uint32_t> v(
              0, static_cast<uint32_t>(space.parameters()[i].values.size() - 1));
          c[i] = v(ctx.rng());
        }
        if (space.is_valid(c) && !ctx.visited(c))
          start = c;
      }
      if (start.empty())
        start = ctx.random_unvisited();
      cur = start;
      f_cur = ctx.objective(cur);
    }
  }
};
} // namespace

std::unique_ptr<Strategy> make_ils() {
  return std::make_unique<IteratedLocalSearch>();
}

} // namespace isatune::tune

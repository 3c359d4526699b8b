// Simulated annealing on log(time): a random neighbour (adjacent value of an ordered parameter, any value of
// a categorical one) is accepted with probability exp(-(log f_new - log f_cur) / T); T cools geometrically
// and the walk restarts from a random unvisited configuration when it is cold or has no unvisited neighbour.
#include <cmath>

#include "isatune/tune/strategy.h"

namespace isatune::tune {

namespace {
class Annealing : public Strategy {
public:
  void run(SearchContext& ctx) override {
    const double t_start = 0.5, t_end = 0.005, cooling = 0.97;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (;;) {
      Config cur = ctx.random_unvisited();
      double f_cur = ctx.objective(cur);
      for (double t = t_start; t > t_end; t *= cooling) {
        auto nbrs = ctx.space().hamming_neighbours(cur);
        std::vector<Config> fresh;
        for (auto& n : nbrs)
          if (!ctx.visited(n))
            fresh.push_back(std::move(n));
        if (fresh.empty())
          break;
        std::uniform_int_distribution<size_t> pick(0, fresh.size() - 1);
        Config next = fresh[pick(ctx.rng())];
        double f_next = ctx.objective(next);
        if (!std::isfinite(f_next))
          continue;
        double delta = std::isfinite(f_cur) ? std::log(f_next) - std::log(f_cur) : -1.0;
        if (delta <= 0 || unit(ctx.rng()) < std::exp(-delta / t)) {
          cur = next;
          f_cur = f_next;
        }
      }
    }
  }
};
} // namespace

std::unique_ptr<Strategy> make_annealing() {
  return std::make_unique<Annealing>();
}

} // namespace isatune::tune

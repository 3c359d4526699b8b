// Genetic algorithm: population of 20, tournament selection of parents, uniform crossover, per-parameter
// mutation (probability 1/parameters), two elites kept. A child that violates a constraint or was evaluated
// already is mutated again a few times, then replaced by a random unvisited configuration.
#include <algorithm>
#include <cmath>

#include "isatune/tune/strategy.h"

namespace isatune::tune {

namespace {
struct Member {
  Config config;
  double fitness;
};

class Genetic : public Strategy {
public:
  void run(SearchContext& ctx) override {
    const Space& space = ctx.space();
    const size_t pop_size = 20, elites = 2;
    const size_t np = space.parameters().size();
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Member> pop;
    for (size_t i = 0; i < pop_size; ++i) {
      Config c = ctx.random_unvisited();
      pop.push_back({c, ctx.objective(c)});
    }
    auto mutate = [&](Config& c, double rate) {
      for (size_t p = 0; p < np; ++p) {
        if (unit(ctx.rng()) >= rate)
          continue;
        const auto n = static_cast<uint32_t>(space.parameters()[p].values.size());
        if (n < 2)
          continue;
        std::uniform_int_distribution<uint32_t> v(0, n - 1);
        c[p] = v(ctx.rng());
      }
    };
    auto tournament = [&]() -> const Config& {
      std::uniform_int_distribution<size_t> pick(0, pop.size() - 1);
      const Member& a = pop[pick(ctx.rng())];
      const Member& b = pop[pick(ctx.rng())];
      return a.fitness <= b.fitness ? a.config : b.config;
    };
    for (;;) {
      std::sort(pop.begin(), pop.end(),
                [](const Member& a, const Member& b) { return a.fitness < b.fitness; });
      std::vector<Member> next(pop.begin(), pop.begin() + elites);
      while (next.size() < pop_size) {
        const Config& a = tournament();
        const Config& b = tournament();
        Config child(np);
        for (size_t p = 0; p < np; ++p)
          child[p] = unit(ctx.rng()) < 0.5 ? a[p] : b[p];
        mutate(child, 1.0 / static_cast<double>(np));
        for (int tries = 0; tries < 10 && (!space.is_valid(child) || ctx.visited(child)); ++tries)
          mutate(child, 2.0 / static_cast<double>(np));
        if (!space.is_valid(child) || ctx.visited(child))
          child = ctx.random_unvisited();
        next.push_back({child, ctx.objective(child)});
      }
      pop = std::move(next);
    }
  }
};
} // namespace

std::unique_ptr<Strategy> make_genetic() {
  return std::make_unique<Genetic>();
}

} // namespace isatune::tune

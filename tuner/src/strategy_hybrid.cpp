// The model-guided local search: after 8 random samples, each step fits a density-ratio model in the manner
// of a tree-structured Parzen estimator: the evaluated configurations are split into "good" (the fastest
// quarter of those that ran) and the rest (failed ones included); for each parameter value, the ratio of its
// smoothed frequency among good and among the rest says how promising it is (ordered parameters pass a quarter
// of each count to the adjacent values). The step evaluates the unvisited Hamming-1 neighbour of the best
// configuration that the model rates highest; when every neighbour has been evaluated, the highest-rated of
// the Hamming-2 neighbours of the best and 300 random unvisited configurations. One step in ten is a random
// unvisited configuration. Unlike a mean-time model, the good/rest split is not misled by values whose typical
// time is bad but whose best time is the optimum. `bayes` (strategy_bayes.cpp) continues with the same steps.
#include <algorithm>
#include <cmath>

#include "isatune/tune/strategy.h"
#include "strategy_tpe_local.h"

namespace isatune::tune {

namespace detail {
namespace {
constexpr size_t kRandomCandidates = 300;
constexpr double kExplore = 0.1;
constexpr double kGoodFraction = 0.25;
} // namespace

void TpeLocalSearch::step(SearchContext& ctx) {
  const Space& space = ctx.space();
  const size_t np = space.parameters().size();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (unit(ctx.rng()) < kExplore || !ctx.best()) {
    ctx.evaluate(ctx.random_unvisited());
    return;
  }
  fit(ctx);
  const Config best = ctx.history()[*ctx.best()].config;
  std::vector<Config> cand;
  for (auto& n : space.hamming_neighbours(best))
    if (!ctx.visited(n))
      cand.push_back(std::move(n));
  if (cand.empty()) {
    for (size_t p = 0; p < np; ++p)
      for (size_t q = p + 1; q < np; ++q)
        for (uint32_t u = 0; u < space.parameters()[p].values.size(); ++u)
          for (uint32_t w = 0; w < space.parameters()[q].values.size(); ++w) {
            if (u == best[p] || w == best[q])
              continue;
            Config c = best;
            c[p] = u;
            c[q] = w;
            if (space.is_valid(c) && !ctx.visited(c))
              cand.push_back(std::move(c));
          }
    for (size_t k = 0; k < kRandomCandidates && k < ctx.unvisited_count(); ++k)
      cand.push_back(ctx.random_unvisited());
  }
  if (cand.empty()) {
    ctx.evaluate(ctx.random_unvisited()); // throws SearchStopped once nothing is left
    return;
  }
  size_t pick = 0;
  double top = rating(cand[0]);
  for (size_t i = 1; i < cand.size(); ++i)
    if (double r = rating(cand[i]); r > top) {
      top = r;
      pick = i;
    }
  ctx.evaluate(cand[pick]);
}

void TpeLocalSearch::fit(const SearchContext& ctx) {
  const Space& space = ctx.space();
  const auto& hist = ctx.history();
  std::vector<double> ok;
  for (const auto& r : hist)
    if (r.eval.status == Status::ok)
      ok.push_back(r.eval.time_ms);
  std::sort(ok.begin(), ok.end());
  size_t n_good =
      std::max<size_t>(1, static_cast<size_t>(std::ceil(kGoodFraction * static_cast<double>(ok.size()))));
  double threshold = ok[std::min(n_good, ok.size()) - 1];
  log_ratio_.resize(space.parameters().size());
  for (size_t p = 0; p < space.parameters().size(); ++p) {
    const auto& param = space.parameters()[p];
    const size_t k = param.values.size();
    std::vector<double> good(k, 1.0 / static_cast<double>(k)), rest(k, 1.0 / static_cast<double>(k));
    for (const auto& r : hist) {
      auto& t = r.eval.status == Status::ok && r.eval.time_ms <= threshold ? good : rest;
      uint32_t v = r.config[p];
      t[v] += 1;
      if (param.ordered) {
        if (v > 0)
          t[v - 1] += 0.25;
        if (v + 1 < k)
          t[v + 1] += 0.25;
      }
    }
    double sg = 0, sr = 0;
    for (size_t v = 0; v < k; ++v)
      sg += good[v], sr += rest[v];
    log_ratio_[p].resize(k);
    for (size_t v = 0; v < k; ++v)
      log_ratio_[p][v] = std::log(good[v] / sg) - std::log(rest[v] / sr);
  }
}

double TpeLocalSearch::rating(const Config& c) const {
  double s = 0;
  for (size_t p = 0; p < c.size(); ++p)
    s += log_ratio_[p][c[p]];
  return s;
}
} // namespace detail

namespace {
constexpr size_t kInitial = 8;

class Hybrid : public Strategy {
public:
  void run(SearchContext& ctx) override {
    for (size_t i = 0; i < kInitial; ++i)
      ctx.evaluate(ctx.random_unvisited());
    detail::TpeLocalSearch local;
    for (;;)
      local.step(ctx);
  }
};
} // namespace

std::unique_ptr<Strategy> make_hybrid() {
  return std::make_unique<Hybrid>();
}

} // namespace isatune::tune

// Bayesian optimisation, then model-guided local search (docs/tuner.md). A maximin initial design of 5
// configurations (each the farthest, in the surrogate's feature space, of 50 random unvisited ones from those
// chosen so far); then, up to 80 evaluations, each step fits a Gaussian process (surrogate.h: Matern 5/2
// with per-parameter relevance chosen by marginal likelihood) to log(time) and to log(charged cost) of every
// evaluation (failed ones count as the slowest time seen) and evaluates the unvisited configuration with the
// highest expected improvement of log(time) per sqrt(predicted cost). Every unvisited configuration is scored
// when the space has at most 3000; otherwise 3000 random ones and the Hamming-1 neighbours of the best. The
// prediction is exact: candidates are ranked by an upper bound (EI at the prior standard deviation, which needs
// only the O(n) mean) and the O(n^2) variance is computed until the bound falls below the best found. After
// 80 evaluations the TPE-guided local search of `hybrid` takes over (strategy_tpe_local.h): it scales to long
// runs, where the cubic cost of the process would not.
//
// Warm start (make_bayes(prior)): a tuned neighbour's measurements (another problem size or device) give a prior
// mean, a process fitted to their log(time) (at most kPriorPoints of them: the fastest half and an even spread of
// the rest); this problem's process then models log(time) minus that prior, so where the neighbour's landscape
// holds, EI starts from it, and where it does not, the residual corrects it as measurements come in (the stacking
// of Golovin et al., "Google Vizier", KDD 2017, 3.3). The initial design shrinks to kInitialWarm.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

#include "isatune/tune/strategy.h"
#include "isatune/tune/surrogate.h"
#include "strategy_tpe_local.h"

namespace isatune::tune {

namespace {
constexpr size_t kInitial = 5;       // space-filling initial design
constexpr size_t kDesignDraws = 50;  // random candidates per design point (the farthest one is taken)
constexpr size_t kModelLimit = 80;   // evaluations steered by the Gaussian process, then local search
constexpr size_t kCandidates = 3000; // configurations scored per step when the space is larger
constexpr double kCostWeight = 0.5;  // acquisition = EI / predicted cost^kCostWeight
constexpr size_t kInitialWarm = 2;   // initial design with a prior
constexpr size_t kPriorPoints = 150; // prior observations the prior process is fitted to

class Bayes : public Strategy {
public:
  explicit Bayes(std::vector<PriorObservation> prior = {}) : prior_(std::move(prior)) {}
  void run(SearchContext& ctx) override {
    const Space& space = ctx.space();
    const size_t limit = kModelLimit, cap = kCandidates;
    const double gamma = kCostWeight;
    SpaceEncoding enc(space);
    const size_t d = enc.dims();
    // the prior mean of log(time) at every valid configuration (0 without a prior)
    std::vector<double> prior_mean(space.size(), 0.0);
    const bool warm = fit_prior(space, enc, prior_mean);
    const size_t n0 = warm ? kInitialWarm : kInitial;
    // initial design
    std::vector<double> feat; // features of evaluated configurations, in history order
    auto add_features = [&](const Config& c) {
      auto f = enc.encode(c);
      feat.insert(feat.end(), f.begin(), f.end());
    };
    for (const auto& r : ctx.history()) // evaluations made before this strategy (transfer seeds) are data too
      add_features(r.config);
    for (size_t i = ctx.history().size(); i < n0; ++i) { // seeds count toward the initial design
      Config pick = ctx.random_unvisited();
      if (warm) { // the prior's fastest unvisited configuration
        double low = INFINITY;
        for (size_t p = 0; p < space.size(); ++p)
          if (prior_mean[p] < low && !ctx.visited(space.valid_config(p)))
            low = prior_mean[p], pick = space.valid_config(p);
      } else if (i > 0) {
        double best_min = -1;
        for (size_t k = 0; k < kDesignDraws; ++k) {
          Config c = k == 0 ? pick : ctx.random_unvisited();
          auto f = enc.encode(c);
          double m = INFINITY;
          for (size_t j = 0; j < ctx.history().size(); ++j)
            m = std::min(m, enc.distance2(f.data(), &feat[j * d]));
          if (m > best_min) {
            best_min = m;
            pick = c;
          }
        }
      }
      ctx.evaluate(pick);
      add_features(ctx.history().back().config);
    }
    GaussianProcess gp(enc);
    std::vector<double> all(space.size() * d); // features of every valid configuration
    for (size_t p = 0; p < space.size(); ++p) {
      auto f = enc.encode(space.valid_config(p));
      std::copy(f.begin(), f.end(), all.begin() + static_cast<std::ptrdiff_t>(p * d));
    }
    std::vector<char> seen(space.size(), 0); // 1: evaluated
    size_t marked = 0;
    std::vector<double> cf;
    while (ctx.history().size() < limit) {
      const auto& hist = ctx.history();
      while (feat.size() < hist.size() * d)
        add_features(hist[feat.size() / d].config);
      for (; marked < hist.size(); ++marked)
        seen[static_cast<size_t>(space.position_of(hist[marked].config))] = 1;
      double worst = -INFINITY;
      for (const auto& r : hist)
        if (r.eval.status == Status::ok)
          worst = std::max(worst, std::log(r.eval.time_ms));
      if (!std::isfinite(worst)) {
        ctx.evaluate(ctx.random_unvisited());
        continue;
      }
      std::vector<double> y(hist.size()), yc(hist.size());
      double best = INFINITY;
      for (size_t i = 0; i < hist.size(); ++i) {
        const double yi = hist[i].eval.status == Status::ok ? std::log(hist[i].eval.time_ms) : worst;
        best = std::min(best, yi);
        y[i] = yi - prior_mean[static_cast<size_t>(space.position_of(hist[i].config))]; // residual when warm
        yc[i] = std::log(std::max(hist[i].eval.cost_s, 1e-9));
      }
      gp.fit(feat, {y, yc}, hist.size() <= 40 || hist.size() % 4 == 0);
      // candidates: every unvisited configuration, or `cap` random ones
      std::vector<size_t> cand;
      if (space.size() <= cap) {
        for (size_t p = 0; p < space.size(); ++p)
          cand.push_back(p);
      } else {
        std::uniform_int_distribution<size_t> pos(0, space.size() - 1);
        for (size_t k = 0; k < cap; ++k)
          cand.push_back(pos(ctx.rng()));
        for (const auto& nb : space.hamming_neighbours(hist[*ctx.best()].config))
          cand.push_back(static_cast<size_t>(space.position_of(nb)));
      }
      struct Scored {
        double bound;
        size_t pos;
      };
      std::vector<Scored> sc;
      std::vector<std::vector<double>> fs;
      for (size_t p : cand) {
        if (seen[p])
          continue;
        seen[p] = 2;
        const double* f = &all[p * d];
        double m = prior_mean[p] + gp.mean(f);
        double cost = gamma > 0 ? std::exp(gamma * gp.mean(f, 1)) : 1.0;
        sc.push_back({expected_improvement(m, gp.max_sd(), best) / cost, p});
      }
      if (sc.empty()) {
        ctx.evaluate(ctx.random_unvisited());
        continue;
      }
      for (const auto& x : sc)
        seen[x.pos] = 0;
      std::stable_sort(sc.begin(), sc.end(), [](const Scored& a, const Scored& b) { return a.bound > b.bound; });
      double top = -1;
      size_t pick = sc[0].pos;
      for (const auto& s : sc) {
        if (s.bound <= top)
          break;
        const double* f = &all[s.pos * d];
        double m, sd;
        gp.predict(f, m, sd);
        m += prior_mean[s.pos];
        double cost = gamma > 0 ? std::exp(gamma * gp.mean(f, 1)) : 1.0;
        double ei = expected_improvement(m, sd, best) / cost;
        if (ei > top) {
          top = ei;
          pick = s.pos;
        }
      }
      ctx.evaluate(space.valid_config(pick));
    }
    detail::TpeLocalSearch local;
    for (;;)
      local.step(ctx);
  }

private:
  // Fits the prior process and fills `mean` with its prediction of log(time); false when there is no prior.
  bool fit_prior(const Space& space, const SpaceEncoding& enc, std::vector<double>& mean) const {
    std::vector<const PriorObservation*> obs;
    for (const auto& o : prior_)
      if (o.time_ms > 0 && std::isfinite(o.time_ms) && space.position_of(o.config) >= 0)
        obs.push_back(&o);
    if (obs.size() < 2)
      return false;
    std::stable_sort(obs.begin(), obs.end(), [](auto* a, auto* b) { return a->time_ms < b->time_ms; });
    if (obs.size() > kPriorPoints) { // the fastest half, then an even spread of the rest
      std::vector<const PriorObservation*> kept(obs.begin(), obs.begin() + kPriorPoints / 2);
      const size_t rest = obs.size() - kPriorPoints / 2, want = kPriorPoints - kPriorPoints / 2;
      for (size_t k = 0; k < want; ++k)
        kept.push_back(obs[kPriorPoints / 2 + k * rest / want]);
      obs = std::move(kept);
    }
    std::vector<double> x, y;
    for (const auto* o : obs) {
      auto f = enc.encode(o->config);
      x.insert(x.end(), f.begin(), f.end());
      y.push_back(std::log(o->time_ms));
    }
    GaussianProcess prior(enc);
    prior.fit(x, {y}, true);
    for (size_t p = 0; p < space.size(); ++p) {
      auto e = enc.encode(space.valid_config(p));
      mean[p] = prior.mean(e.data());
    }
    return true;
  }
  std::vector<PriorObservation> prior_;
};
} // namespace

std::unique_ptr<Strategy> make_bayes() {
  return std::make_unique<Bayes>();
}

std::unique_ptr<Strategy> make_bayes(std::vector<PriorObservation> prior) {
  return std::make_unique<Bayes>(std::move(prior));
}

} // namespace isatune::tune

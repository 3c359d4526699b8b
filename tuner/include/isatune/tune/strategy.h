#pragma once
// A search strategy drives a SearchContext until it throws SearchStopped or the strategy has nothing left to
// try. Strategies are created by name; every one is seeded through the context's generator only.
#include <memory>
#include <string>
#include <vector>

#include "isatune/tune/search_context.h"

namespace isatune::tune {

class Strategy {
public:
  virtual ~Strategy() = default;
  virtual void run(SearchContext& ctx) = 0;
};

// Names: exhaustive, random, annealing, genetic, ils, hybrid, bayes (the default). Throws InputError when unknown.
std::unique_ptr<Strategy> make_strategy(const std::string& name);
const std::vector<std::string>& strategy_names();
inline constexpr const char* kDefaultStrategy = "bayes";

std::unique_ptr<Strategy> make_exhaustive();
std::unique_ptr<Strategy> make_random();
std::unique_ptr<Strategy> make_annealing();
std::unique_ptr<Strategy> make_genetic();
std::unique_ptr<Strategy> make_ils();
std::unique_ptr<Strategy> make_hybrid();
std::unique_ptr<Strategy> make_bayes();
// A measurement of a tuned neighbour (another problem size or device), carried into this space.
struct PriorObservation {
  Config config;
  double time_ms = 0; // ok results only
};
// `bayes` warm-started from a neighbour's measurements: a Gaussian process fitted to the neighbour's log(time)
// is the prior mean, and the process of this problem models the residual (the stacked transfer of Golovin et
// al., "Google Vizier", KDD 2017, section 3.3); its initial design shrinks to 2 (seeds count). Without prior
// observations it is make_bayes().
std::unique_ptr<Strategy> make_bayes(std::vector<PriorObservation> prior);
// Whether a strategy of this name takes prior observations (make_warm).
bool takes_prior(const std::string& name);
// The strategy by name, warm-started from `prior` where it takes them (bayes), else make_strategy(name).
std::unique_ptr<Strategy> make_warm(const std::string& name, std::vector<PriorObservation> prior);
// Evaluates `seeds` (those in the space) first, then runs `inner` (transfer from tuned neighbours).
std::unique_ptr<Strategy> make_seeded(std::vector<Config> seeds, std::unique_ptr<Strategy> inner);

} // namespace isatune::tune

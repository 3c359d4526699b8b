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
// Evaluates `seeds` (those in the space) first, then runs `inner` (transfer from tuned neighbours).
std::unique_ptr<Strategy> make_seeded(std::vector<Config> seeds, std::unique_ptr<Strategy> inner);

} // namespace isatune::tune

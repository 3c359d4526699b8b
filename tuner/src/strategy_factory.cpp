#include "isatune/error.h"
#include "isatune/tune/strategy.h"

namespace isatune::tune {

const std::vector<std::string>& strategy_names() {
  static const std::vector<std::string> names = {"exhaustive", "random", "annealing",
                                                 "genetic",    "ils",    "hybrid", "bayes"};
  return names;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name) {
  if (name == "exhaustive")
    return make_exhaustive();
  if (name == "random")
    return make_random();
  if (name == "annealing")
    return make_annealing();
  if (name == "genetic")
    return make_genetic();
  if (name == "ils")
    return make_ils();
  if (name == "hybrid")
    return make_hybrid();
  if (name == "bayes")
    return make_bayes();
  std::string known;
  for (const auto& n : strategy_names())
    known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown strategy '" + name + "' (known: " + known + ")");
}

bool takes_prior(const std::string& name) {
  return name == "bayes";
}

std::unique_ptr<Strategy> make_warm(const std::string& name, std::vector<PriorObservation> prior) {
  if (takes_prior(name) && !prior.empty())
    return make_bayes(std::move(prior));
  return make_strategy(name);
}

} // namespace isatune::tune

#pragma once
// The tuning loop: runs a strategy against an evaluator under a budget and returns every evaluation in order.
#include <functional>
#include <string>

#include "isatune/tune/search_context.h"
#include "isatune/tune/strategy.h"

namespace isatune::tune {

struct TuneResult {
  std::vector<Record> history; // every evaluation, in order; no configuration twice
  std::optional<size_t> best;  // index into history of the fastest ok evaluation
  std::string
      stop_reason; // "evaluations", "charged time", "wall time", "space exhausted", "strategy finished"
  double wall_s = 0;
};

struct TuneOptions {
  Budget budget;
  uint64_t seed = 1;
  std::function<void(const SearchContext&)> on_record; // progress
};

TuneResult tune(const Space& space, Evaluator& evaluator, Strategy& strategy, const TuneOptions& options);

} // namespace isatune::tune

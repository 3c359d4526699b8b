#pragma once
// Model-guided local search around the incumbent, shared by `hybrid` and `bayes` (see strategy_hybrid.cpp):
// a density-ratio model in the manner of a tree-structured Parzen estimator rates candidates; each step
// evaluates the highest-rated unvisited Hamming-1 neighbour of the best configuration (Hamming-2 neighbours
// and random unvisited configurations when none is left); one step in ten is a random unvisited configuration.
#include "isatune/tune/search_context.h"

namespace isatune::tune::detail {

class TpeLocalSearch {
public:
  // One evaluation (throws SearchStopped like SearchContext::evaluate).
  void step(SearchContext& ctx);

private:
  void fit(const SearchContext& ctx);
  double rating(const Config& c) const;
  // log(P(value | good) / P(value | rest)) per parameter value
  std::vector<std::vector<double>> log_ratio_;
};

} // namespace isatune::tune::detail

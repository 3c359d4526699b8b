#pragma once
// Transfer between tuning problems: the best configurations of a tuned neighbour (another problem size, another
// device, another recorded space of the same parameters), carried into a new space by parameter name and value,
// seed the new search (make_seeded in strategy.h).
#include <vector>

#include "isatune/tune/replay.h"
#include "isatune/tune/search_context.h"
#include "isatune/tune/strategy.h"

namespace isatune::tune {

// The `k` fastest valid configurations of `source` that `target` also holds (matched by parameter name and
// value; a parameter of `target` absent from `source` takes its first value), fastest first.
std::vector<Config> best_configs_in(const ReplayData& source, const Space& target, size_t k);

// Every valid measurement of `source` that `target` holds, as prior observations (bayes warm start), fastest first.
std::vector<PriorObservation> measurements_in(const ReplayData& source, const Space& target);

// The order in which a multi-problem tune takes its problems, given their pairwise distances (dist[i][j]): the
// first problem, then repeatedly the untuned problem nearest to any tuned one (Prim's order), each with that
// nearest tuned problem as its source (-1 for the first). Returns (problem, source) pairs.
std::vector<std::pair<size_t, long>> nearest_chain(const std::vector<std::vector<double>>& dist);

// Evaluations until the best-so-far is within `fraction` of `optimum_ms` (e.g. 0.05: 5%); 0 when never.
size_t evaluations_to_within(const std::vector<Record>& history, double optimum_ms, double fraction);

} // namespace isatune::tune

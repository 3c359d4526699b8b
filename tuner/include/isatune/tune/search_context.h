#pragma once
// What a strategy sees: the space, a seeded random generator and evaluate(). Evaluating a configuration a
// second time returns the recorded result for free; when the budget is spent (or every valid configuration
// has been evaluated) evaluate() throws SearchStopped, which the tuner catches: strategies need no
// bookkeeping.
#include <chrono>
#include <limits>
#include <optional>
#include <random>
#include <unordered_map>

#include "isatune/tune/budget.h"
#include "isatune/tune/evaluation.h"

namespace isatune::tune {

struct SearchStopped {
  const char* reason;
};

struct Record {
  Config config;
  Evaluation eval;
  double charged_s = 0; // cumulative charged time after this evaluation
  double wall_s = 0;    // wall time since the start after this evaluation
};

class SearchContext {
public:
  SearchContext(const Space& space, Evaluator& evaluator, const Budget& budget, uint64_t seed);

  const Space& space() const { return space_; }
  std::mt19937_64& rng() { return rng_; }

  const Evaluation& evaluate(const Config& c);
  // Minimised objective: time_ms, or +infinity for anything that failed or violates a constraint.
  double objective(const Config& c) { return objective_of(evaluate(c)); }
  static double objective_of(const Evaluation& e) {
    return e.status == Status::ok ? e.time_ms : std::numeric_limits<double>::infinity();
  }
  bool visited(const Config& c) const;
  const Evaluation* lookup(const Config& c) const;
  // A uniformly drawn valid configuration not evaluated yet; throws SearchStopped when none is left.
  Config random_unvisited();
  // A uniformly drawn valid configuration.
  Config random_valid();

  const std::vector<Record>& history() const { return history_; }
  std::optional<size_t> best() const { return best_; } // index into history()
  double best_objective() const {
    return best_ ? history_[*best_].eval.time_ms : std::numeric_limits<double>::infinity();
  }
  size_t unvisited_count() const { return unvisited_.size(); }

  // Called after every new evaluation (progress display).
  std::function<void(const SearchContext&)> on_record;
  const Budget& budget() const { return budget_; }
  double charged_s() const { return charged_; }
  double wall_s() const;

private:
  void check_budget();
  void mark_visited(uint32_t position);
  const Space& space_;
  Evaluator& evaluator_;
  Budget budget_;
  std::mt19937_64 rng_;
  std::vector<Record> history_;
  std::unordered_map<uint32_t, uint32_t> done_; // valid position -> history index
  std::vector<uint32_t> unvisited_;             // valid positions not evaluated (swap-remove)
  std::vector<uint32_t> slot_;                  // valid position -> index in unvisited_
  std::optional<size_t> best_;
  double charged_ = 0;
  size_t idle_hits_ = 0; // cache hits since the last new evaluation (stops a strategy that only revisits)
  std::chrono::steady_clock::time_point start_;
};

} // namespace isatune::tune

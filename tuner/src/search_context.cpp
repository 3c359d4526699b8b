#include "isatune/tune/search_context.h"

#include <numeric>

namespace isatune::tune {

namespace {
const Evaluation kConstraintViolation{Status::constraint, 0, 0};
}

SearchContext::SearchContext(const Space& space, Evaluator& evaluator, const Budget& budget, uint64_t seed)
    : space_(space), evaluator_(evaluator), budget_(budget), rng_(seed),
      start_(std::chrono::steady_clock::now()) {
  unvisited_.resize(space.size());
  std::iota(unvisited_.begin(), unvisited_.end(), 0u);
  slot_ = unvisited_;
}

double SearchContext::wall_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SearchContext::check_budget() {
  if (budget_.evaluations && history_.size() >= *budget_.evaluations)
    throw SearchStopped{"evaluations"};
  if (budget_.charged_s && charged_ >= *budget_.charged_s)
    throw SearchStopped{"charged time"};
  if (budget_.wall_s && wall_s() >= *budget_.wall_s)
    throw SearchStopped{"wall time"};
  if (unvisited_.empty())
    throw SearchStopped{"space exhausted"};
}

void SearchContext::mark_visited(uint32_t position) {
  uint32_t s = slot_[position];
  uint32_t last = unvisited_.back();
  unvisited_[s] = last;
  slot_[last] = s;
  unvisited_.pop_back();
}

const Evaluation* SearchContext::lookup(const Config& c) const {
  int64_t pos = space_.position_of(c);
  if (pos < 0)
    return &kConstraintViolation;
  auto it = done_.find(static_cast<uint32_t>(pos));
  return it == done_.end() ? nullptr : &history_[it->second].eval;
}

bool SearchContext::visited(const Config& c) const {
  int64_t pos = space_.position_of(c);
  return pos >= 0 && done_.count(static_cast<uint32_t>(pos));
}

const Evaluation& SearchContext::evaluate(const Config& c) {
  int64_t pos = space_.position_of(c);
  if (pos < 0)
    return kConstraintViolation; // pruned before any device time
  auto it = done_.find(static_cast<uint32_t>(pos));
  if (it != done_.end()) {
    // A strategy that only revisits would never stop on its own; end it once it has clearly stalled.
    if (++idle_hits_ > 100000 + 10 * space_.size())
      throw SearchStopped{"strategy stalled"};
    if (unvisited_.empty())
      throw SearchStopped{"space exhausted"};
    return history_[it->second].eval;
  }
  check_budget();
  idle_hits_ = 0;
  Record r;
  r.config = c;
  r.eval = evaluator_.evaluate(c);
  charged_ += r.eval.cost_s;
  r.charged_s = charged_;
  r.wall_s = wall_s();
  history_.push_back(std::move(r));
  done_.emplace(static_cast<uint32_t>(pos), static_cast<uint32_t>(history_.size() - 1));
  mark_visited(static_cast<uint32_t>(pos));
  const auto& e = history_.back().eval;
  if (e.status == Status::ok && (!best_ || e.time_ms < history_[*best_].eval.time_ms))
    best_ = history_.size() - 1;
  if (on_record)
    on_record(*this);
  return history_.back().eval;
}

Config SearchContext::random_unvisited() {
  if (unvisited_.empty())
    throw SearchStopped{"space exhausted"};
  std::uniform_int_distribution<size_t> pick(0, unvisited_.size() - 1);
  return space_.valid_config(unvisited_[pick(rng_)]);
}

Config SearchContext::random_valid() {
  if (space_.size() == 0)
    throw SearchStopped{"space exhausted"};
  std::uniform_int_distribution<size_t> pick(0, space_.size() - 1);
  return space_.valid_config(pick(rng_));
}

} // namespace isatune::tune

#pragma once
// What evaluating one configuration yields, and the interface of whatever evaluates (a device or a replay).
#include "isatune/tune/space.h"
#include "isatune/tune/status.h"

namespace isatune::tune {

struct Evaluation {
  Status status = Status::ok;
  double time_ms = 0; // the objective (kernel time), meaningful only when status == ok
  double cost_s = 0;  // compile + benchmark + verification + framework time charged to the budget
};

class Evaluator {
public:
  virtual ~Evaluator() = default;
  virtual Evaluation evaluate(const Config& config) = 0;
};

} // namespace isatune::tune

#pragma once
// When a tuning run stops: any limit that is set and reached ends it (checked before each evaluation).
#include <cstddef>
#include <optional>
#include <string>

namespace isatune::tune {

struct Budget {
  std::optional<size_t> evaluations; // evaluations done (failed ones included; cache hits not)
  std::optional<double> charged_s;   // sum of Evaluation::cost_s
  std::optional<double> wall_s;      // wall-clock time of the run itself

  // "250" (evaluations), "90s", "10m", "2h" (charged seconds). Throws InputError.
  static Budget parse(const std::string& text);
};

} // namespace isatune::tune

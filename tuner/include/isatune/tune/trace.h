#pragma once
// The evaluation sequence of a run as JSON lines, one evaluation a line, so that any scorer can read it:
//   {"evaluation": 1, "config": {"block_size_x": 32, ...}, "status": "ok", "time_ms": 1.25, "cost_s": 0.31,
//    "charged_s": 0.31}
// time_ms is null when the configuration failed; cost_s is the time this evaluation charged to the budget and
// charged_s the running total.
#include <iosfwd>
#include <string>

#include "isatune/tune/score.h"

namespace isatune::tune {

void write_trace(std::ostream& out, const Space& space, const std::vector<Record>& history);
// Reads a trace back as the scorer's run. Throws InputError naming the file and line.
Run read_trace(const std::string& path);

} // namespace isatune::tune

#pragma once
// What `isatune report` shows, as one JSON document built from a tuning database: per run the best-so-far curves
// and the distribution of times, failures by status, the best variant per problem with its resources and
// occupancy, rooflines and parameter importance. The HTML page draws exactly this (docs/report.md has the keys).
#include <nlohmann/json.hpp>

#include <string>

#include "isatune/db/database.h"

namespace isatune::cli {

// Emulated and real measurements are kept apart: every series, table row and chart names its device kind
// ("real" or "emulated") and the label of its time axis says which it is.
nlohmann::json report_data(db::Database& db);

// The axis label of a time for a device kind: "measured ms" or "emulated ms (instruction-cost estimate)".
std::string time_label(const std::string& device_kind);

} // namespace isatune::cli

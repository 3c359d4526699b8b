#pragma once
// A static estimate (tune::estimate) as JSON, the same keys wherever the CLI prints one (`gen`, `run KERNEL`).
#include <nlohmann/json.hpp>

#include "isatune/tune/estimate.h"

namespace isatune::cli {

nlohmann::json estimate_json(const tune::Estimate& e);

} // namespace isatune::cli

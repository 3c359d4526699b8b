#pragma once
// A static estimate (tune::estimate) as JSON, the same keys wherever the CLI prints one (`gen`, `run KERNEL`,
// `report`), in the target vendor's words (resource_names.h): NVIDIA registers/shared_bytes, AMD vgprs/lds_bytes.
#include <nlohmann/json.hpp>

#include "isatune/tune/estimate.h"

namespace isatune::cli {

nlohmann::json estimate_json(const tune::Estimate& e, bool nvidia);

} // namespace isatune::cli

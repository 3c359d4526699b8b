#pragma once
// Each vendor's words for a kernel's resources in the CLI's JSON and tables (docs/cli.md, "Resource names"):
// AMD keeps vgprs/agprs/sgprs/lds_bytes/scratch_bytes; NVIDIA says registers (per thread), shared_bytes and
// local_bytes, and has no AGPRs or SGPRs.
#include <nlohmann/json.hpp>

#include <string>

#include "isatune/code_object.h"
#include "isatune/tune/estimate.h"

namespace isatune::cli {

nlohmann::json resources_json(const tune::Estimate& e, bool nvidia);
nlohmann::json resources_json(const KernelInfo& k, Vendor vendor);
// The occupancy limiter in NVIDIA's words: "vgprs" -> "registers", "lds" -> "shared"; others as they are.
std::string nvidia_limiter_name(const std::string& limiter);

} // namespace isatune::cli

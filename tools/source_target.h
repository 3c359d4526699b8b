#pragma once
// Finds the target an assembly file declares with `.amdgcn_target "..."`, or a PTX module with
// `.target sm_90a`, so --target can be omitted.
#include <optional>
#include <string>
#include <string_view>

namespace isatune::cli {

std::optional<std::string> declared_amdgcn_target(std::string_view source);
// The first `.target sm_XX[, ...]` of a PTX module.
std::optional<std::string> declared_ptx_target(std::string_view source);

} // namespace isatune::cli

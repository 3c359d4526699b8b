// PTX targets and version strings (shared/notes/ptx.md section 1: sm_90 needs PTX 7.8, sm_90a PTX 8.0).
#include "isatune/ptx/target.h"

#include "isatune/error.h"

namespace isatune::ptx {

std::vector<Target> ptx_targets() {
  return {
      {"sm_80", 80, false, 70},
      {"sm_90", 90, false, 78},
      {"sm_90a", 90, true, 80},
  };
}

Target find_target(std::string_view name) {
  for (const Target& t : ptx_targets())
    if (t.name == name) return t;
  throw InputError("unknown PTX target '" + std::string(name) + "' (known: sm_80, sm_90, sm_90a)");
}

std::string ptx_version_string(int v) { return std::to_string(v / 10) + "." + std::to_string(v % 10); }

} // namespace isatune::ptx

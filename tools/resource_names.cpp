#include "resource_names.h"

namespace isatune::cli {

nlohmann::json resources_json(const tune::Estimate& e, bool nvidia) {
  if (nvidia)
    return {{"registers", e.vgprs}, {"shared_bytes", e.lds_bytes}, {"local_bytes", e.scratch_bytes}};
  return {{"vgprs", e.vgprs},
          {"agprs", e.agprs},
          {"sgprs", e.sgprs},
          {"lds_bytes", e.lds_bytes},
          {"scratch_bytes", e.scratch_bytes}};
}

nlohmann::json resources_json(const KernelInfo& k, Vendor vendor) {
  if (vendor == Vendor::nvidia)
    return {{"registers", k.vgprs}, {"shared_bytes", k.lds_bytes}, {"local_bytes", k.scratch_bytes}};
  return {{"vgprs", k.vgprs},
          {"agprs", k.agprs},
          {"sgprs", k.sgprs},
          {"lds_bytes", k.lds_bytes},
          {"scratch_bytes", k.scratch_bytes}};
}

std::string nvidia_limiter_name(const std::string& limiter) {
  if (limiter == "vgprs") return "registers";
  if (limiter == "lds") return "shared";
  return limiter;
}

} // namespace isatune::cli

#include "estimate_json.h"

#include "resource_names.h"

namespace isatune::cli {

nlohmann::json estimate_json(const tune::Estimate& e, bool nvidia) {
  nlohmann::json j = resources_json(e, nvidia);
  // NVIDIA: waves_per_simd is warps per SM sub-partition, workgroups_per_cu blocks per SM (tune::estimate).
  j[nvidia ? "warps_per_scheduler" : "waves_per_simd"] = e.occupancy.waves_per_simd;
  j[nvidia ? "blocks_per_sm" : "workgroups_per_cu"] = e.occupancy.workgroups_per_cu;
  j["occupancy_limiter"] = nvidia ? nvidia_limiter_name(e.occupancy.limiter) : e.occupancy.limiter;
  j.update({{"workgroups", e.workgroups},
            {"workgroup_size", e.workgroup_size},
            {"flops", e.flops},
            {"bytes", e.bytes},
            {"intensity", e.intensity},
            {"peak_tflops", e.peak_tflops},
            {"peak_tbps", e.peak_tbps},
            {"compute_ms", e.compute_ms},
            {"memory_ms", e.memory_ms},
            {"wave_efficiency", e.wave_efficiency},
            {"bound_ms", e.bound_ms},
            {"bound_by", e.bound_by},
            {"peaks_of", e.peaks_of},
            {"note", e.note}});
  return j;
}

} // namespace isatune::cli

#include "estimate_json.h"

namespace isatune::cli {

nlohmann::json estimate_json(const tune::Estimate& e) {
  return {{"vgprs", e.vgprs},
          {"agprs", e.agprs},
          {"sgprs", e.sgprs},
          {"lds_bytes", e.lds_bytes},
          {"scratch_bytes", e.scratch_bytes},
          {"waves_per_simd", e.occupancy.waves_per_simd},
          {"occupancy_limiter", e.occupancy.limiter},
          {"workgroups", e.workgroups},
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
          {"note", e.note}};
}

} // namespace isatune::cli

// Waves per SIMD (shared/notes/cdna.md section 1; LLVM AMDGPUBaseInfo getMaxWavesPerEU,
// getOccupancyWithNumSGPRs, getMaxWorkGroupsPerCU).
#include "isatune/codeobj/occupancy.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::codeobj {

namespace {

// 64-bit so that counts read from a damaged code object cannot overflow to 0.
uint64_t align_to(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

Occupancy amd_occupancy(const cdna::TargetInfo& t, uint32_t vgpr_total, uint32_t sgprs, uint32_t lds_bytes,
                        uint32_t workgroup_size) {
  const uint32_t max_waves = t.max_waves_per_simd;
  Occupancy o;

  // VGPRs: the unified file of max_vgprs_unified registers per lane, allocated in granules.
  if (vgpr_total < t.vgpr_granule)
    o.by_vgprs = max_waves;
  else
    o.by_vgprs = static_cast<uint32_t>(
        std::min<uint64_t>(max_waves, t.max_vgprs_unified / align_to(vgpr_total, t.vgpr_granule)));

  // SGPRs (GFX8/GFX9 rule, VOLCANIC_ISLANDS branch of getOccupancyWithNumSGPRs): <= 80 -> 10, <= 88 -> 9,
  // <= 100 -> 8, else 7; capped at the 8 waves CDNA has.
  o.by_sgprs = std::min(max_waves, sgprs <= 80 ? 10u : sgprs <= 88 ? 9u : sgprs <= 100 ? 8u : 7u);

  // Workgroups per CU: LDS, the 16-workgroup limit for multi-wave groups, and the CU's wave slots.
  // A workgroup larger than the hardware maximum cannot be launched at all.
  const uint32_t wg = workgroup_size == 0 ? t.wave_size : workgroup_size;
  const uint32_t waves_per_wg = static_cast<uint32_t>((uint64_t(wg) + t.wave_size - 1) / t.wave_size);
  const uint32_t wave_slots = max_waves * t.simds_per_cu;
  uint32_t wg_by_size = wg > t.max_workgroup_size ? 0 : wave_slots / waves_per_wg;
  if (waves_per_wg > 1) wg_by_size = std::min(wg_by_size, 16u);
  uint32_t wg_by_lds = UINT32_MAX;
  if (lds_bytes > 0) wg_by_lds = static_cast<uint32_t>(t.lds_bytes_per_cu / align_to(lds_bytes, t.lds_granule));
  o.workgroups_per_cu = std::min(wg_by_size, wg_by_lds);
  auto waves_for = [&](uint32_t wgs) {
    if (wgs == 0) return 0u;
    // At least one wave on the SIMD that receives a workgroup, even when fewer waves than SIMDs fit.
    return std::max(1u, std::min(max_waves, wgs * waves_per_wg / t.simds_per_cu));
  };
  o.by_lds = waves_for(o.workgroups_per_cu);

  o.waves_per_simd = std::min({max_waves, o.by_vgprs, o.by_sgprs, o.by_lds});
  if (o.waves_per_simd == max_waves && o.by_vgprs >= max_waves && o.by_sgprs >= max_waves &&
      o.by_lds >= max_waves)
    o.limiter = "none";
  else if (o.by_vgprs == o.waves_per_simd)
    o.limiter = "vgprs";
  else if (o.by_sgprs == o.waves_per_simd)
    o.limiter = "sgprs";
  else
    o.limiter = lds_bytes > 0 && wg_by_lds <= wg_by_size ? "lds" : "workgroup";
  return o;
}

Occupancy amd_occupancy(const CodeObject& code, const KernelInfo& kernel, uint32_t workgroup_size) {
  const cdna::TargetInfo* t = cdna::find_target(code.isa);
  if (!t) throw InputError("occupancy: no limits known for AMD target '" + code.isa + "'");
  uint32_t vgprs = kernel.vgprs, sgprs = kernel.sgprs, lds = kernel.lds_bytes;
  if (kernel.descriptor) {
    if (vgprs == 0) vgprs = kernel.descriptor->vgprs_allocated;
    if (sgprs == 0) sgprs = kernel.descriptor->sgprs_allocated;
    if (lds == 0) lds = kernel.descriptor->group_segment_fixed_size;
  }
  if (workgroup_size == 0) workgroup_size = kernel.max_workgroup_size;
  if (workgroup_size == 0) workgroup_size = t->max_workgroup_size;
  return amd_occupancy(*t, vgprs, sgprs, lds, workgroup_size);
}

} // namespace isatune::codeobj

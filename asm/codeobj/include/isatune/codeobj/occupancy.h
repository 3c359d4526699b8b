#pragma once
// Waves per SIMD a kernel can keep resident, as limited by VGPRs, SGPRs, LDS and workgroup size
// (formulas: shared/notes/cdna.md section 1).
#include <cstdint>
#include <string>

#include "isatune/cdna/target.h"
#include "isatune/code_object.h"

namespace isatune::codeobj {

struct Occupancy {
  uint32_t waves_per_simd = 0;  // the result: min of the limits below
  uint32_t by_vgprs = 0;
  uint32_t by_sgprs = 0;
  uint32_t by_lds = 0;          // includes the workgroups-per-CU limits
  uint32_t workgroups_per_cu = 0;
  std::string limiter;          // "vgprs", "sgprs", "lds", "workgroup" or "none" (hardware maximum)
};

// vgpr_total: unified arch+AGPR count (alignTo(arch,4)+agpr); sgprs: next_free_sgpr + extra SGPRs.
Occupancy amd_occupancy(const cdna::TargetInfo& target, uint32_t vgpr_total, uint32_t sgprs, uint32_t lds_bytes,
                        uint32_t workgroup_size);
// From a code object's kernel; workgroup_size 0 means the kernel's max_workgroup_size.
Occupancy amd_occupancy(const CodeObject& code, const KernelInfo& kernel, uint32_t workgroup_size = 0);

} // namespace isatune::codeobj

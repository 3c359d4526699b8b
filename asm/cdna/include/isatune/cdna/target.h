#pragma once
// CDNA targets and their limits (facts: shared/notes/cdna.md section 1).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isatune::cdna {

enum class Gfx { gfx90a, gfx942, gfx950 };

// A target feature state in a target id: omitted means "any".
enum class FeatureState { any, on, off };

struct TargetInfo {
  Gfx gfx;
  std::string_view name;       // "gfx942"
  std::string_view products;   // "MI300X, MI325X, MI300A"
  uint32_t elf_mach;           // e_flags & 0xff
  uint32_t compute_units;      // of the largest product
  uint32_t lds_bytes_per_cu;   // = max LDS per workgroup
  uint32_t lds_granule;        // LDS allocation granule in bytes
  uint32_t max_vgprs_unified;  // arch + AGPR, per lane
  uint32_t max_arch_vgprs;     // 256
  uint32_t max_agprs;          // 256
  uint32_t vgpr_granule;       // 8
  uint32_t max_sgprs;          // addressable s0..s101 -> 102
  uint32_t max_waves_per_simd; // 8
  uint32_t simds_per_cu;       // 4
  uint32_t wave_size;          // 64
  uint32_t max_workgroup_size; // 1024
  uint32_t min_llvm_major;     // first LLVM release that knows the target: gfx90a 13, gfx942 17, gfx950 20
  bool architected_flat_scratch;
  double peak_clock_ghz;
  double peak_hbm_tbps;
  uint32_t matrix_flops_per_clk_cu_f16; // dense FP16/BF16
};

const std::vector<TargetInfo>& all_targets();
// Looks up by ISA name ("gfx942"); nullptr when unknown.
const TargetInfo* find_target(std::string_view isa);

// A parsed AMD target id: amdgcn-amd-amdhsa--gfx942[:sramecc+][:xnack-]. A bare "gfx942" is accepted too.
struct TargetId {
  const TargetInfo* info = nullptr;
  FeatureState sramecc = FeatureState::any;
  FeatureState xnack = FeatureState::any;

  std::string isa() const { return std::string(info->name); }
  std::string str() const;           // canonical full form
  std::string llvm_features() const; // "+sramecc,-xnack" for the MC subtarget
};

// Throws isatune::InputError naming the bad part and the known targets.
TargetId parse_target_id(std::string_view text);

// Throws InputError when an LLVM of major version `llvm_major` does not know the target, naming both, e.g.
// "gfx950 needs LLVM >= 20; this build uses LLVM 19.1.7". `llvm_version` is the full version text.
void check_llvm_knows(const TargetInfo& target, unsigned llvm_major, std::string_view llvm_version);
// The major number of a version text such as "22.1.8" or "LLVM 19.1.7" (0 when there is none).
unsigned llvm_major_of(std::string_view llvm_version);

// Extra SGPRs the hardware allocates beyond next_free_sgpr (VCC, FLAT_SCRATCH, XNACK_MASK).
uint32_t extra_sgprs(const TargetId& target);

} // namespace isatune::cdna

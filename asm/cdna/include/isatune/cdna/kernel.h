#pragma once
// A CDNA kernel: its code (instructions and label positions) and everything the .amdhsa_kernel block and the
// code object v5 metadata need: kernarg layout, LDS bytes, workgroup size, wave size, entry registers
// (user and system SGPRs, workitem id VGPRs), float modes and register counts.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "isatune/cdna/instruction.h"
#include "isatune/cdna/target.h"
#include "isatune/code_object.h"

namespace isatune::cdna {

enum class ArgKind { global_buffer, by_value };

struct FloatModes {
  uint8_t denorm_32 = 3;    // .amdhsa_float_denorm_mode_32: 0 flush in+out ... 3 keep
  uint8_t denorm_16_64 = 3; // .amdhsa_float_denorm_mode_16_64
  uint8_t round_32 = 0;     // .amdhsa_float_round_mode_32: 0 round to nearest even
  uint8_t round_16_64 = 0;
  bool ieee_mode = true;
  bool dx10_clamp = true;
};

// A label placed in the code: the next instruction (if any) is its target.
struct LabelDef {
  Label label;
};

using Statement = std::variant<Instruction, LabelDef>;

struct Kernel {
  std::string name;
  TargetId target;
  std::vector<KernelArg> args; // offset, size, value_kind, address_space, access, name
  uint32_t kernarg_size = 0;
  uint32_t kernarg_align = 8;
  uint32_t lds_bytes = 0;
  uint32_t workgroup_size = 256; // .max_flat_workgroup_size
  uint32_t wave_size = 64;
  // Entry state (shared/notes/cdna.md section 2): user SGPRs from s0, then system SGPRs.
  bool kernarg_ptr = true; // s[0:1]
  std::array<bool, 3> workgroup_id{true, false, false};
  uint32_t workitem_id_dims = 1; // 1: X, 2: XY, 3: XYZ (all packed in v0)
  FloatModes float_modes;
  std::vector<Statement> body;
  std::vector<std::string> label_names; // by Label::id
  // Register counts: one past the highest register used (raised by update_register_counts()).
  uint32_t arch_vgprs = 0;
  uint32_t agprs = 0;
  uint32_t next_free_sgpr = 0;

  uint32_t user_sgpr_count() const { return kernarg_ptr ? 2 : 0; }
  uint32_t system_sgpr_count() const { return workgroup_id[0] + workgroup_id[1] + workgroup_id[2]; }
  // First AGPR in the unified file: alignTo(arch VGPRs, 4), at least 4.
  uint32_t accum_offset() const;
  // Unified VGPR count: alignTo(arch, 4) + AGPRs, or the arch count when there are no AGPRs.
  uint32_t vgpr_total() const;
  // Hardware SGPR count for the metadata: next_free_sgpr + extra SGPRs of the target.
  uint32_t sgpr_count() const { return next_free_sgpr + extra_sgprs(target); }
  // Raises the register counts to cover every register the body and the entry state use.
  void update_register_counts();
  // Checks the limits of the target (LDS, SGPRs, VGPRs, workgroup size, labels); throws InputError.
  void validate() const;
};

} // namespace isatune::cdna

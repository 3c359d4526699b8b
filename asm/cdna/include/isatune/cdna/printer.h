#pragma once
// Kernel -> assembly text that LLVM accepts (layout: shared/notes/cdna.md section 2): .amdgcn_target, code
// object v5, the code with its end padding, the .amdhsa_kernel descriptor block and the .amdgpu_metadata
// YAML.
#include <string>
#include <vector>

#include "isatune/cdna/kernel.h"

namespace isatune::cdna {

// One instruction in LLVM syntax, without indentation or newline. Labels print as `.L<name>` from
// label_names (by Label::id); without names as `.L<id>`.
std::string print_instruction(const Instruction& inst, const std::vector<std::string>& label_names = {});

// The whole .s file. Calls update_register_counts() on a copy and validate(); throws InputError.
std::string print(const Kernel& kernel);

// The ds_swizzle_b32 offset as LLVM prints it: swizzle(QUAD_PERM,..), swizzle(SWAP,n), swizzle(REVERSE,n),
// swizzle(BROADCAST,size,lane), swizzle(BITMASK_PERM,"....."); a plain number for other values.
std::string swizzle_text(uint16_t offset);

} // namespace isatune::cdna

#pragma once
// Pieces shared by the code object reader's source files; not installed.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/code_object.h"

namespace isatune::codeobj::detail {

// Registers the AMDGPU target, its MC layer and disassembler with LLVM, once per process.
void init_amdgpu_target();

// ISA name from the ELF header's EF_AMDGPU_MACH_* value: "gfx942", or "gfxXXX (mach 0x..)" when unknown.
std::string isa_from_flags(uint32_t e_flags);
// Full target id: ISA plus the code object v4+ sramecc/xnack bits (11:10, 9:8) of e_flags.
std::string target_id_from_flags(const std::string& isa, uint32_t e_flags, uint8_t abi_version);
// VGPR allocation granule of an ISA in wave64 (8 on gfx90a and later CDNA, 4 on earlier GFX9).
uint32_t vgpr_granule_for(std::string_view isa);

// What the NT_AMDGPU_METADATA note says.
struct Metadata {
  std::string target;               // amdhsa.target, empty when absent
  std::vector<KernelInfo> kernels;  // without descriptor and code location
};
// Parses the msgpack note; throws FormatError naming source on malformed content.
Metadata parse_metadata(std::string_view blob, std::string_view source);

} // namespace isatune::codeobj::detail

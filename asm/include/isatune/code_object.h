#pragma once
// A compiled code object and what the toolchain learned about its kernels. Plain data, no LLVM: every stage
// downstream (tuner, database, loader, emulator) uses these types without parsing ELF again.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace isatune {

enum class Vendor { amd, nvidia };

// One kernel argument as the code object's metadata declares it.
struct KernelArg {
  std::string name;
  uint32_t offset = 0;
  uint32_t size = 0;
  std::string value_kind;    // global_buffer, by_value, hidden_block_count_x, ...
  std::string address_space; // global, constant, ... (empty when not stated)
  std::string access;        // read_only, write_only, read_write (empty when not stated)
};

// The AMD kernel descriptor (the 64-byte `.kd` object), decoded.
struct KernelDescriptor {
  uint32_t group_segment_fixed_size = 0;
  uint32_t private_segment_fixed_size = 0;
  uint32_t kernarg_size = 0;
  int64_t kernel_code_entry_byte_offset = 0;
  uint32_t compute_pgm_rsrc1 = 0;
  uint32_t compute_pgm_rsrc2 = 0;
  uint32_t compute_pgm_rsrc3 = 0;
  uint16_t kernel_code_properties = 0;
  uint16_t kernarg_preload = 0;
  // Decoded fields.
  uint32_t vgpr_blocks = 0;       // GRANULATED_WORKITEM_VGPR_COUNT
  uint32_t sgpr_blocks = 0;       // GRANULATED_WAVEFRONT_SGPR_COUNT
  uint32_t vgprs_allocated = 0;   // (vgpr_blocks + 1) * granule
  uint32_t sgprs_allocated = 0;   // (sgpr_blocks + 1) * 8 (LLVM SGPR encoding granule on GFX9)
  uint32_t accum_offset = 0;      // first AGPR in the unified file (gfx90a+), from rsrc3
  uint32_t user_sgpr_count = 0;
  bool wave32 = false;
  bool enable_private_segment = false;
  bool workgroup_id_x = false, workgroup_id_y = false, workgroup_id_z = false;
  bool workgroup_info = false;
  uint32_t workitem_id_vgprs = 0; // 0 = X, 1 = XY, 2 = XYZ
  uint32_t float_round_mode_32 = 0, float_round_mode_16_64 = 0;
  uint32_t float_denorm_mode_32 = 0, float_denorm_mode_16_64 = 0;
  bool ieee_mode = false, dx10_clamp = false;
  bool tg_split = false;
  bool user_sgpr_kernarg_segment_ptr = false, user_sgpr_dispatch_ptr = false, user_sgpr_queue_ptr = false;
  bool user_sgpr_dispatch_id = false, user_sgpr_private_segment_size = false;
  bool user_sgpr_private_segment_buffer = false, user_sgpr_flat_scratch_init = false;
  uint32_t kernarg_preload_length = 0, kernarg_preload_offset = 0;
};

struct KernelInfo {
  std::string name;
  std::string symbol;             // the descriptor symbol (`name.kd`) on AMD, the function on NVIDIA
  uint32_t kernarg_size = 0;
  uint32_t kernarg_align = 0;
  uint32_t lds_bytes = 0;         // group segment / static shared memory
  uint32_t scratch_bytes = 0;     // private segment / local memory per thread
  uint32_t vgprs = 0;             // AMD: unified VGPR+AGPR total; NVIDIA: registers per thread
  uint32_t agprs = 0;
  // Where `agprs` comes from: "metadata" (.agpr_count), "descriptor" (the unified file's allocation above
  // accum_offset, when the metadata has no count: exact up to the VGPR granule), or "" (unknown).
  std::string agprs_source;
  uint32_t sgprs = 0;
  uint32_t max_workgroup_size = 0;
  uint32_t wave_size = 0;
  std::vector<KernelArg> args;
  std::optional<KernelDescriptor> descriptor; // AMD only
  uint64_t code_offset = 0;       // AMD: file offset of the first instruction
  uint64_t code_size = 0;         // AMD: bytes of machine code (from the symbol size; 0 if unknown)
};

// What CodeObject::bytes hold: machine code (an AMD hsaco or NVIDIA cubin ELF), or PTX text (NVIDIA: the
// PTX emulator runs it, the CUDA driver compiles it at load).
enum class CodeFormat : uint8_t { elf, ptx };

struct CodeObject {
  Vendor vendor = Vendor::amd;
  CodeFormat format = CodeFormat::elf;
  std::string isa;       // gfx942, sm_90a
  std::string target_id; // amdgcn-amd-amdhsa--gfx942:sramecc+:xnack- (AMD), sm_90a (NVIDIA)
  std::vector<uint8_t> bytes;
  std::string sha256;    // hex digest of bytes: the code object's identity
  std::vector<KernelInfo> kernels;

  const KernelInfo* find_kernel(const std::string& name) const {
    for (const auto& k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
};

} // namespace isatune

// The kernel descriptor, decoded with LLVM's offsets and masks (AMDHSAKernelDescriptor.h).
#include "isatune/codeobj/descriptor.h"

#include <cstring>

#include "llvm/Support/AMDHSAKernelDescriptor.h"
#include "llvm/Support/Endian.h"

#include "isatune/error.h"

namespace isatune::codeobj {

namespace {

uint32_t u32_at(std::span<const uint8_t> b, uint32_t offset) {
  return llvm::support::endian::read32le(b.data() + offset);
}
uint16_t u16_at(std::span<const uint8_t> b, uint32_t offset) {
  return llvm::support::endian::read16le(b.data() + offset);
}

} // namespace

KernelDescriptor decode_kernel_descriptor(std::span<const uint8_t> b, uint32_t vgpr_granule) {
  using namespace llvm::amdhsa;
  if (b.size() < kKernelDescriptorSize)
    throw InputError("kernel descriptor needs 64 bytes, got " + std::to_string(b.size()));
  KernelDescriptor d;
  d.group_segment_fixed_size = u32_at(b, GROUP_SEGMENT_FIXED_SIZE_OFFSET);
  d.private_segment_fixed_size = u32_at(b, PRIVATE_SEGMENT_FIXED_SIZE_OFFSET);
  d.kernarg_size = u32_at(b, KERNARG_SIZE_OFFSET);
  d.kernel_code_entry_byte_offset =
      static_cast<int64_t>(llvm::support::endian::read64le(b.data() + KERNEL_CODE_ENTRY_BYTE_OFFSET_OFFSET));
  d.compute_pgm_rsrc1 = u32_at(b, COMPUTE_PGM_RSRC1_OFFSET);
  d.compute_pgm_rsrc2 = u32_at(b, COMPUTE_PGM_RSRC2_OFFSET);
  d.compute_pgm_rsrc3 = u32_at(b, COMPUTE_PGM_RSRC3_OFFSET);
  d.kernel_code_properties = u16_at(b, KERNEL_CODE_PROPERTIES_OFFSET);
  d.kernarg_preload = u16_at(b, KERNARG_PRELOAD_OFFSET);

  const uint32_t r1 = d.compute_pgm_rsrc1, r2 = d.compute_pgm_rsrc2, r3 = d.compute_pgm_rsrc3;
  const uint32_t props = d.kernel_code_properties, preload = d.kernarg_preload;
#define GET(SRC, MASK) static_cast<uint32_t>(AMDHSA_BITS_GET(SRC, MASK))
  d.vgpr_blocks = GET(r1, COMPUTE_PGM_RSRC1_GRANULATED_WORKITEM_VGPR_COUNT);
  d.sgpr_blocks = GET(r1, COMPUTE_PGM_RSRC1_GRANULATED_WAVEFRONT_SGPR_COUNT);
  d.float_round_mode_32 = GET(r1, COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_32);
  d.float_round_mode_16_64 = GET(r1, COMPUTE_PGM_RSRC1_FLOAT_ROUND_MODE_16_64);
  d.float_denorm_mode_32 = GET(r1, COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_32);
  d.float_denorm_mode_16_64 = GET(r1, COMPUTE_PGM_RSRC1_FLOAT_DENORM_MODE_16_64);
  d.dx10_clamp = GET(r1, COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_DX10_CLAMP);
  d.ieee_mode = GET(r1, COMPUTE_PGM_RSRC1_GFX6_GFX11_ENABLE_IEEE_MODE);

  d.enable_private_segment = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_PRIVATE_SEGMENT);
#if ISATUNE_LLVM_MAJOR >= 21
  d.user_sgpr_count = GET(r2, COMPUTE_PGM_RSRC2_GFX6_GFX120_USER_SGPR_COUNT);
#else
  // Same field (bits 1..5); LLVM 21 renamed it when GFX12.5 moved it.
  d.user_sgpr_count = GET(r2, COMPUTE_PGM_RSRC2_USER_SGPR_COUNT);
#endif
  d.workgroup_id_x = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_X);
  d.workgroup_id_y = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Y);
  d.workgroup_id_z = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_ID_Z);
  d.workgroup_info = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_SGPR_WORKGROUP_INFO);
  d.workitem_id_vgprs = GET(r2, COMPUTE_PGM_RSRC2_ENABLE_VGPR_WORKITEM_ID);

  d.accum_offset = (GET(r3, COMPUTE_PGM_RSRC3_GFX90A_ACCUM_OFFSET) + 1) * 4;
  d.tg_split = GET(r3, COMPUTE_PGM_RSRC3_GFX90A_TG_SPLIT);

  d.user_sgpr_private_segment_buffer = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER);
  d.user_sgpr_dispatch_ptr = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_PTR);
  d.user_sgpr_queue_ptr = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_QUEUE_PTR);
  d.user_sgpr_kernarg_segment_ptr = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_KERNARG_SEGMENT_PTR);
  d.user_sgpr_dispatch_id = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_DISPATCH_ID);
  d.user_sgpr_flat_scratch_init = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_FLAT_SCRATCH_INIT);
  d.user_sgpr_private_segment_size = GET(props, KERNEL_CODE_PROPERTY_ENABLE_SGPR_PRIVATE_SEGMENT_SIZE);
  d.wave32 = GET(props, KERNEL_CODE_PROPERTY_ENABLE_WAVEFRONT_SIZE32);

  d.kernarg_preload_length = GET(preload, KERNARG_PRELOAD_SPEC_LENGTH);
  d.kernarg_preload_offset = GET(preload, KERNARG_PRELOAD_SPEC_OFFSET);
#undef GET

  // LLVM encodes blocks as alignTo(count, granule) / granule - 1; SGPRs in granules of 8 on GFX9
  // (getSGPREncodingGranule), VGPRs in granules of 8 with the gfx90a unified file (getVGPREncodingGranule).
  d.vgprs_allocated = (d.vgpr_blocks + 1) * vgpr_granule;
  d.sgprs_allocated = (d.sgpr_blocks + 1) * 8;
  return d;
}

} // namespace isatune::codeobj

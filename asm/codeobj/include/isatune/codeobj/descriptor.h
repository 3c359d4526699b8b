#pragma once
// Decoding the 64-byte AMD kernel descriptor (`<kernel>.kd`), with the field offsets and bit masks of LLVM's
// llvm/Support/AMDHSAKernelDescriptor.h.
#include <cstdint>
#include <span>

#include "isatune/code_object.h"

namespace isatune::codeobj {

constexpr size_t kKernelDescriptorSize = 64;

// bytes must hold at least 64 bytes (throws InputError otherwise). vgpr_granule: VGPRs per encoded block
// (8 on gfx90a/gfx942/gfx950 in wave64, 4 on earlier GFX9).
KernelDescriptor decode_kernel_descriptor(std::span<const uint8_t> bytes, uint32_t vgpr_granule = 8);

} // namespace isatune::codeobj

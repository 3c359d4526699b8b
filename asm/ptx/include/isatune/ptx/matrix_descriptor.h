#pragma once
// The wgmma shared-memory matrix descriptor (PTX ISA
// #asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor; CuTe
// cute/arch/mma_sm90_desc.hpp GmmaDescriptor) and the canonical layouts it addresses
// (#asynchronous-warpgroup-level-canonical-layouts).
//   bits 13-0 start address, 29-16 leading byte offset (LBO), 45-32 stride byte offset (SBO), each
//   (x & 0x3FFFF) >> 4; bits 51-49 base offset; bits 63-62 swizzle 0 none, 1 128B, 2 64B, 3 32B.
// Other bits are reserved; decode ignores them (as CUTLASS's bitfield does).
#include <cstdint>

#include "isatune/ptx/swizzle.h"

namespace isatune::ptx {

struct MatrixDescriptor {
  uint32_t start_address = 0;       // shared-window byte address, multiple of 16, < 2^18
  uint32_t leading_byte_offset = 0; // bytes, multiple of 16, < 2^18
  uint32_t stride_byte_offset = 0;  // bytes, multiple of 16, < 2^18
  uint32_t base_offset = 0;         // 0..7
  SwizzleMode swizzle = SwizzleMode::none;
  friend bool operator==(const MatrixDescriptor&, const MatrixDescriptor&) = default;
};

// The 2-bit layout-type field value of each mode (0 none, 1 128B, 2 64B, 3 32B) and back.
uint32_t descriptor_swizzle_field(SwizzleMode m);
SwizzleMode descriptor_swizzle_mode(uint32_t field);

// Throws InputError naming the field: a misaligned start/LBO/SBO, a value that does not fit its bits.
uint64_t encode_matrix_descriptor(const MatrixDescriptor& d);
MatrixDescriptor decode_matrix_descriptor(uint64_t bits);

enum class WgmmaOperand { a, b };
// K-major: K contiguous (imm-trans 0); MN-major: M (for A) or N (for B) contiguous (imm-trans 1, 16-bit
// only).
enum class OperandMajor { k, mn };

// Shared-memory byte address from which wgmma reads logical element (mn, k) of operand A (mn = m) or B
// (mn = n), given the operand's decoded descriptor. Both operands use the same canonical (MN x K) layouts;
// in elements, T = 16 bytes / elem_bytes, W = swizzle span (32/64/128 B):
//   K-major  none     ((8,m),(T,2k)):((T,SBO),(1,LBO))
//   K-major  W        Swizzle<B,4,3> o ((8,m),(T,2k)):((W/es,SBO),(1,T))     (k * elem_bytes < W)
//   MN-major none     ((T,1,m),(8,k)):((1,T,SBO),(T,LBO))
//   MN-major W        Swizzle<B,4,3> o ((T,W/16,m),(8,k)):((1,T,LBO),(W/es,SBO))
// with LBO/SBO converted to elements, the result in bytes added to the start address, the swizzle applied to
// the absolute byte address. elem_bytes: 1 (fp8/int8), 2 (f16/bf16), 4 (tf32); MN-major needs 2.
// (unverified) A non-zero base offset (pattern phase of a buffer not aligned to the swizzle repeat) is
// rejected with InputError: its exact effect on the XOR is not documented beyond its encoding.
uint32_t canonical_address(const MatrixDescriptor& d, WgmmaOperand operand, OperandMajor major,
                           uint32_t elem_bytes, uint32_t mn, uint32_t k);

} // namespace isatune::ptx

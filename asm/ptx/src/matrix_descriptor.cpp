#include "isatune/ptx/matrix_descriptor.h"

#include <string>

#include "isatune/error.h"

namespace isatune::ptx {
namespace {

// 14-bit fields hold (x & 0x3FFFF) >> 4: a byte value must be 16-aligned and below 2^18 to round-trip.
uint64_t field14(uint32_t bytes, const char* name) {
  if (bytes % 16 != 0)
    throw InputError(std::string("matrix descriptor ") + name + " " + std::to_string(bytes) +
                     " is not a multiple of 16 bytes");
  if (bytes >= (1u << 18))
    throw InputError(std::string("matrix descriptor ") + name + " " + std::to_string(bytes) +
                     " does not fit 14 bits of 16-byte units (must be < 262144)");
  return bytes >> 4;
}

} // namespace

uint32_t descriptor_swizzle_field(SwizzleMode m) {
  switch (m) {
  case SwizzleMode::none:
    return 0;
  case SwizzleMode::b128:
    return 1;
  case SwizzleMode::b64:
    return 2;
  case SwizzleMode::b32:
    return 3;
  }
  throw InputError("matrix descriptor: unknown swizzle mode");
}

SwizzleMode descriptor_swizzle_mode(uint32_t field) {
  switch (field) {
  case 0:
    return SwizzleMode::none;
  case 1:
    return SwizzleMode::b128;
  case 2:
    return SwizzleMode::b64;
  case 3:
    return SwizzleMode::b32;
  }
  throw InputError("matrix descriptor swizzle field " + std::to_string(field) + " invalid (must be 0..3)");
}

uint64_t encode_matrix_descriptor(const MatrixDescriptor& d) {
  if (d.base_offset > 7)
    throw InputError("matrix descriptor base offset " + std::to_string(d.base_offset) +
                     " does not fit 3 bits (must be 0..7)");
  uint64_t bits = field14(d.start_address, "start address");
  bits |= field14(d.leading_byte_offset, "leading byte offset") << 16;
  bits |= field14(d.stride_byte_offset, "stride byte offset") << 32;
  bits |= uint64_t{d.base_offset} << 49;
  bits |= uint64_t{descriptor_swizzle_field(d.swizzle)} << 62;
  return bits;
}

MatrixDescriptor decode_matrix_descriptor(uint64_t bits) {
  MatrixDescriptor d;
  d.start_address = static_cast<uint32_t>(bits & 0x3FFF) << 4;
  d.leading_byte_offset = static_cast<uint32_t>((bits >> 16) & 0x3FFF) << 4;
  d.stride_byte_offset = static_cast<uint32_t>((bits >> 32) & 0x3FFF) << 4;
  d.base_offset = static_cast<uint32_t>((bits >> 49) & 7);
  d.swizzle = descriptor_swizzle_mode(static_cast<uint32_t>(bits >> 62) & 3);
  return d;
}

uint32_t canonical_address(const MatrixDescriptor& d, WgmmaOperand operand, OperandMajor major,
                           uint32_t elem_bytes, uint32_t mn, uint32_t k) {
  const char* op = operand == WgmmaOperand::a ? "A" : "B";
  if (elem_bytes != 1 && elem_bytes != 2 && elem_bytes != 4)
    throw InputError(std::string("wgmma operand ") + op + ": element size " + std::to_string(elem_bytes) +
                     " bytes invalid (must be 1, 2 or 4)");
  // imm-trans-a/b (MN-major) is valid only for .f16/.bf16
  // (#asynchronous-warpgroup-level-matrix-instructions).
  if (major == OperandMajor::mn && elem_bytes != 2)
    throw InputError(std::string("wgmma operand ") + op + ": MN-major layout needs 16-bit elements");
  if (d.swizzle != SwizzleMode::none && d.base_offset != 0)
    throw InputError(std::string("wgmma operand ") + op + ": descriptor base offset " +
                     std::to_string(d.base_offset) + " is not modelled (unverified semantics)");
  const uint32_t t = 16 / elem_bytes; // elements per 16-byte core-matrix row
  const uint32_t span = swizzle_span_bytes(d.swizzle);
  uint64_t offset = 0;
  if (major == OperandMajor::k) {
    if (d.swizzle == SwizzleMode::none) {
      // Core matrices of 8 rows x 16 bytes: rows 16 B apart, 8-row groups SBO apart, K chunks LBO apart.
      offset = uint64_t{mn % 8} * 16 + uint64_t{mn / 8} * d.stride_byte_offset +
               uint64_t{k % t} * elem_bytes + uint64_t{k / t} * d.leading_byte_offset;
    } else {
      if (uint64_t{k} * elem_bytes >= span)
        throw InputError(std::string("wgmma operand ") + op + ": K index " + std::to_string(k) +
                         " beyond the " + std::to_string(span) + "-byte swizzle row");
      // Rows of `span` bytes, 8-row groups SBO apart; LBO unused (assumed 1).
      offset = uint64_t{mn % 8} * span + uint64_t{mn / 8} * d.stride_byte_offset + uint64_t{k} * elem_bytes;
    }
  } else {
    if (d.swizzle == SwizzleMode::none) {
      // Core matrices of 8 K-rows x 16 bytes of MN: MN chunks SBO apart, 8-K groups LBO apart.
      offset = uint64_t{mn % t} * elem_bytes + uint64_t{mn / t} * d.stride_byte_offset +
               uint64_t{k % 8} * 16 + uint64_t{k / 8} * d.leading_byte_offset;
    } else {
      // K-rows of `span` bytes of MN; MN beyond the span LBO apart, 8-K groups SBO apart.
      uint32_t mn_per_row = span / elem_bytes;
      offset = uint64_t{mn % mn_per_row} * elem_bytes + uint64_t{mn / mn_per_row} * d.leading_byte_offset +
               uint64_t{k % 8} * span + uint64_t{k / 8} * d.stride_byte_offset;
    }
  }
  uint64_t addr = uint64_t{d.start_address} + offset;
  if (addr >= (uint64_t{1} << 32))
    throw InputError(std::string("wgmma operand ") + op + ": address overflows 32 bits");
  return static_cast<uint32_t>(swizzle_address(d.swizzle, addr));
}

} // namespace isatune::ptx

#pragma once
// TMA tensor maps owned by isatune. CUtensorMap is "an opaque value ... only accessed through CUDA APIs and
// PTX" (cuda.h 13.0) and this project must run without libcuda, so the emulator uses its own 128-byte
// encoding, made by an encoder with the arguments and checks of cuTensorMapEncodeTiled (its doc comment in
// cuda.h 13.0; shared/notes/ptx-emulation.md 2.9), plus the tile-mode copy semantics of
// cp.async.bulk.tensor (#data-movement-and-conversion-instructions-cp-async-bulk-tensor, ISA 5.5.3 tensor
// access: bounding box, traversal stride, out-of-bound access, swizzling modes) as pure functions.
// The enum values equal cuda.h's CUtensorMap* values so a driver-backed encoder can take the same arguments.
#include <array>
#include <cstdint>
#include <functional>
#include <span>

#include "isatune/tensor_map_args.h"

namespace isatune::ptx {

// The argument values (enums, TensorMapTiledArgs, TensorMap) are in isatune/tensor_map_args.h, shared with
// the loader; they are named here too.
using isatune::TensorMap;
using isatune::TensorMapDataType;
using isatune::TensorMapInterleave;
using isatune::TensorMapL2Promotion;
using isatune::TensorMapOobFill;
using isatune::TensorMapSwizzle;
using isatune::TensorMapTiledArgs;

// Bytes of one element in memory for the unpacked types (1, 2, 4, 8); 0 for the packed 16U4/16U6 types.
uint32_t tensor_map_element_bytes(TensorMapDataType t);
bool tensor_map_is_float(TensorMapDataType t);
// Bytes from the global address to the end of the tensor's last element: dimension 0's row (packed types:
// 16 elements per 8 or 16 bytes) plus (dim - 1) strides of every other dimension. The memory a map may address.
uint64_t tensor_map_span_bytes(const TensorMapTiledArgs& args);

// Throws InputError naming the first argument that violates a cuTensorMapEncodeTiled requirement.
void validate_tensor_map_tiled(const TensorMapTiledArgs& args);
TensorMap encode_tensor_map_tiled(const TensorMapTiledArgs& args);
// The cuTensorMapEncodeTiled signature (the global address as a device address): also checks that `map` is
// 64-byte aligned and the arrays are present.
void encode_tensor_map_tiled(TensorMap* map, TensorMapDataType data_type, uint32_t rank,
                             uint64_t global_address, const uint64_t* global_dim,
                             const uint64_t* global_strides, const uint32_t* box_dim,
                             const uint32_t* element_strides, TensorMapInterleave interleave,
                             TensorMapSwizzle swizzle, TensorMapL2Promotion l2_promotion,
                             TensorMapOobFill oob_fill);
// Throws InputError for bytes that are not an isatune tensor map or hold invalid arguments.
TensorMapTiledArgs decode_tensor_map(const TensorMap& map);

// ---- tile-mode copy semantics -----------------------------------------------------------------------------
// Elements traversed per dimension: ceil(box_dim / element_stride) (dimension 0 unstrided without
// interleave).
std::array<uint32_t, 5> tensor_box_extent(const TensorMapTiledArgs& m);
// Bytes one load writes to shared memory (the dense box, OOB elements included) = the complete_tx count
// (unverified for boxes that are partly out of bounds: the notes' reading of CUTLASS's fixed tx counts).
uint64_t tensor_box_bytes(const TensorMapTiledArgs& m);
// The bytes written for an out-of-bound element with oob_fill nan_request_zero_fma, little-endian
// (unverified: a canonical quiet NaN 0x7FFF / 0x7FFFFFFF / 0x7FFFFFFFFFFFFFFF; the ISA names "a special
// NaN").
uint64_t tensor_oob_nan_bits(TensorMapDataType t);

using GlobalRead = std::function<void(uint64_t address, std::span<uint8_t> dst)>;
using GlobalWrite = std::function<void(uint64_t address, std::span<const uint8_t> src)>;

// cp.async.bulk.tensor.Nd.shared.global.tile: box origin `coords` (s32, innermost first, `rank` of them).
// Writes tensor_box_bytes(m) bytes of `smem`, whose byte 0 lives at the absolute shared address
// `smem_address`: the box is laid out densely (dimension 0 fastest) and each byte offset b is stored at
// swizzle(smem_address + b) - smem_address (16-byte chunks XORed by the absolute address). In-bound elements
// are read through `read` (one call per contiguous run); out-of-bound elements are zero or the OOB NaN.
// (unverified) With an inner box narrower than the swizzle span the rows are taken as packed densely (no
// padding to the span) before the swizzle; interleaved maps are copied as plain boxes with dimension-0
// strides. Throws InputError: wrong coordinate count, smem too small, smem_address not 16-byte (128-byte when
// swizzled) aligned, a data type or swizzle mode not modelled (packed types, 128B_ATOM_*).
void tma_load_tile(const TensorMapTiledArgs& m, std::span<const int32_t> coords, const GlobalRead& read,
                   uint32_t smem_address, std::span<uint8_t> smem);
// cp.async.bulk.tensor.Nd.global.shared.tile: the inverse; elements out of bounds are not written.
void tma_store_tile(const TensorMapTiledArgs& m, std::span<const int32_t> coords, uint32_t smem_address,
                    std::span<const uint8_t> smem, const GlobalWrite& write);

} // namespace isatune::ptx

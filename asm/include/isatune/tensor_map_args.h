#pragma once
// The arguments of cuTensorMapEncodeTiled as values, and the 128-byte tensor map it makes: the one tensor-map
// API of the loader's Device (encoded by the CUDA driver on a GPU, by the PTX emulator on the CPU) and of the
// emulator's own encoding (isatune/ptx/tensor_map.h). Values only, so that the loader and asm share them.
// The enum values equal cuda.h 13.0's CUtensorMap* values, so a driver-backed encoder takes them as they are.
#include <array>
#include <cstdint>

namespace isatune {

enum class TensorMapDataType : uint32_t {
  uint8 = 0,
  uint16 = 1,
  uint32 = 2,
  int32 = 3,
  uint64 = 4,
  int64 = 5,
  float16 = 6,
  float32 = 7,
  float64 = 8,
  bfloat16 = 9,
  float32_ftz = 10,
  tfloat32 = 11,
  tfloat32_ftz = 12,
  u4x16_align8b = 13,  // 16 x U4 packed into 8 bytes
  u4x16_align16b = 14, // 16 x U4 in 16 bytes (8-byte gaps)
  u6x16_align16b = 15, // 16 x U6 in 16 bytes (4-byte gaps)
};
enum class TensorMapInterleave : uint32_t { none = 0, b16 = 1, b32 = 2 };
enum class TensorMapSwizzle : uint32_t {
  none = 0,
  b32 = 1,
  b64 = 2,
  b128 = 3,
  b128_atom_32b = 4,
  b128_atom_32b_flip_8b = 5,
  b128_atom_64b = 6,
};
enum class TensorMapL2Promotion : uint32_t { none = 0, l2_64b = 1, l2_128b = 2, l2_256b = 3 };
enum class TensorMapOobFill : uint32_t { none = 0, nan_request_zero_fma = 1 };

// The arguments of cuTensorMapEncodeTiled (entries at and beyond `rank` are ignored).
struct TensorMapTiledArgs {
  TensorMapDataType data_type = TensorMapDataType::uint8;
  uint32_t rank = 1;
  uint64_t global_address = 0;
  std::array<uint64_t, 5> global_dim{};     // elements per dimension, innermost first
  std::array<uint64_t, 4> global_strides{}; // bytes, of dimensions 1..rank-1
  std::array<uint32_t, 5> box_dim{};        // elements traversed per dimension
  std::array<uint32_t, 5> element_strides{1, 1, 1, 1, 1};
  TensorMapInterleave interleave = TensorMapInterleave::none;
  TensorMapSwizzle swizzle = TensorMapSwizzle::none;
  TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::none;
  TensorMapOobFill oob_fill = TensorMapOobFill::none;
  friend bool operator==(const TensorMapTiledArgs&, const TensorMapTiledArgs&) = default;
};

// 128 bytes, 64-byte aligned as a kernel parameter (.param .align 64 .b8 m[128]); cuda.h's CUtensorMap
// is alignas(128).
struct alignas(128) TensorMap {
  std::array<uint8_t, 128> bytes{};
};

} // namespace isatune

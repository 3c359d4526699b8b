#include "isatune/ptx/tensor_map.h"

#include <cstring>
#include <string>
#include <vector>

#include "isatune/error.h"
#include "isatune/ptx/swizzle.h"

namespace isatune::ptx {
namespace {

// Our 128-byte layout: magic "ISTM", version, then each argument at a fixed offset (little-endian).
constexpr uint8_t kMagic[4] = {'I', 'S', 'T', 'M'};
constexpr uint8_t kVersion = 1;
constexpr size_t kTypeAt = 5, kRankAt = 6, kInterleaveAt = 7, kSwizzleAt = 8, kL2At = 9, kOobAt = 10;
constexpr size_t kAddressAt = 16, kDimAt = 24, kStrideAt = 64, kBoxAt = 96, kElemStrideAt = 106;

[[noreturn]] void fail(const std::string& arg, const std::string& why) {
  throw InputError("tensor map: " + arg + " " + why);
}

std::string at(const char* name, uint32_t i) {
  return std::string(name) + "[" + std::to_string(i) + "]";
}

bool packed_16b(TensorMapDataType t) {
  return t == TensorMapDataType::u4x16_align16b || t == TensorMapDataType::u6x16_align16b;
}

// Bits one element occupies in memory: the packed types hold 16 values in 8 (U4_ALIGN8B) or 16 bytes.
uint32_t memory_bits(TensorMapDataType t) {
  if (t == TensorMapDataType::u4x16_align8b)
    return 4;
  if (packed_16b(t))
    return 8;
  return 8 * tensor_map_element_bytes(t);
}

uint32_t swizzle_span(TensorMapSwizzle s) {
  switch (s) {
  case TensorMapSwizzle::none:
    return 0;
  case TensorMapSwizzle::b32:
    return 32;
  case TensorMapSwizzle::b64:
    return 64;
  default:
    return 128;
  }
}

template <class T> void put(TensorMap& m, size_t at, T v) {
  std::memcpy(m.bytes.data() + at, &v, sizeof v);
}
template <class T> T get(const TensorMap& m, size_t at) {
  T v;
  std::memcpy(&v, m.bytes.data() + at, sizeof v);
  return v;
}

SwizzleMode copy_swizzle(TensorMapSwizzle s) {
  switch (s) {
  case TensorMapSwizzle::none:
    return SwizzleMode::none;
  case TensorMapSwizzle::b32:
    return SwizzleMode::b32;
  case TensorMapSwizzle::b64:
    return SwizzleMode::b64;
  case TensorMapSwizzle::b128:
    return SwizzleMode::b128;
  default:
    fail("swizzle",
         std::to_string(static_cast<uint32_t>(s)) + " (128B_ATOM_*) is not modelled by the copy semantics");
  }
}

// The per-copy checks shared by load and store; returns the element size.
uint32_t check_copy(const TensorMapTiledArgs& m, std::span<const int32_t> coords, uint32_t smem_address,
                    size_t smem_size) {
  validate_tensor_map_tiled(m);
  uint32_t es = tensor_map_element_bytes(m.data_type);
  if (es == 0)
    fail("data type", std::to_string(static_cast<uint32_t>(m.data_type)) +
                          " (packed 16U4/16U6) is not modelled by the copy semantics");
  if (coords.size() != m.rank)
    fail("coordinates",
         "count " + std::to_string(coords.size()) + " differs from rank " + std::to_string(m.rank));
  SwizzleMode sw = copy_swizzle(m.swizzle);
  uint32_t align = sw == SwizzleMode::none ? 16 : 128;
  if (smem_address % align != 0)
    fail("shared address",
         std::to_string(smem_address) + " is not " + std::to_string(align) + "-byte aligned");
  if (smem_size < tensor_box_bytes(m))
    fail("shared buffer", std::to_string(smem_size) + " bytes is smaller than the box (" +
                              std::to_string(tensor_box_bytes(m)) + " bytes)");
  return es;
}

// Where dense box byte `off` lives in the buffer: the swizzle permutes 16-byte chunks inside aligned
// 32/64/128-byte blocks of the absolute address, so a box that does not fill its last block can land past it.
size_t smem_offset(SwizzleMode sw, uint32_t smem_address, uint64_t off, size_t size) {
  uint64_t pos = swizzle_address(sw, uint64_t{smem_address} + off) - smem_address;
  if (pos >= size)
    fail("shared buffer", std::to_string(size) + " bytes does not hold swizzled box byte " +
                              std::to_string(off) + " (at offset " + std::to_string(pos) + ")");
  return static_cast<size_t>(pos);
}

// Visits every box element in shared-memory order: (dense byte offset, global address, in bounds).
template <class F>
void for_each_box_element(const TensorMapTiledArgs& m, std::span<const int32_t> coords, F f) {
  std::array<uint32_t, 5> ext = tensor_box_extent(m);
  uint32_t es = tensor_map_element_bytes(m.data_type);
  std::array<uint32_t, 5> stride = m.element_strides;
  if (m.interleave == TensorMapInterleave::none)
    stride[0] = 1; // "the first element of this array is ignored"
  uint64_t total = 1;
  for (uint32_t d = 0; d < m.rank; ++d)
    total *= ext[d];
  std::array<uint32_t, 5> idx{};
  for (uint64_t n = 0; n < total; ++n) {
    bool inside = true;
    uint64_t addr = m.global_address;
    for (uint32_t d = 0; d < m.rank; ++d) {
      int64_t c = int64_t{coords[d]} + int64_t{idx[d]} * stride[d];
      if (c < 0 || static_cast<uint64_t>(c) >= m.global_dim[d]) {
        inside = false;
        break;
      }
      addr += static_cast<uint64_t>(c) * (d == 0 ? es : m.global_strides[d - 1]);
    }
    f(n * es, addr, inside);
    for (uint32_t d = 0; d < m.rank; ++d) {
      if (++idx[d] < ext[d])
        break;
      idx[d] = 0;
    }
  }
}

} // namespace

uint64_t tensor_map_span_bytes(const TensorMapTiledArgs& a) {
  const uint32_t elem = tensor_map_element_bytes(a.data_type);
  uint64_t end = elem ? a.global_dim[0] * elem
                      : (a.global_dim[0] + 15) / 16 * (a.data_type == TensorMapDataType::u4x16_align8b ? 8 : 16);
  for (uint32_t d = 1; d < a.rank && d < 5; ++d) end += (a.global_dim[d] - 1) * a.global_strides[d - 1];
  return end;
}

uint32_t tensor_map_element_bytes(TensorMapDataType t) {
  switch (t) {
  case TensorMapDataType::uint8:
    return 1;
  case TensorMapDataType::uint16:
  case TensorMapDataType::float16:
  case TensorMapDataType::bfloat16:
    return 2;
  case TensorMapDataType::uint32:
  case TensorMapDataType::int32:
  case TensorMapDataType::float32:
  case TensorMapDataType::float32_ftz:
  case TensorMapDataType::tfloat32:
  case TensorMapDataType::tfloat32_ftz:
    return 4;
  case TensorMapDataType::uint64:
  case TensorMapDataType::int64:
  case TensorMapDataType::float64:
    return 8;
  default:
    return 0;
  }
}

bool tensor_map_is_float(TensorMapDataType t) {
  switch (t) {
  case TensorMapDataType::float16:
  case TensorMapDataType::float32:
  case TensorMapDataType::float64:
  case TensorMapDataType::bfloat16:
  case TensorMapDataType::float32_ftz:
  case TensorMapDataType::tfloat32:
  case TensorMapDataType::tfloat32_ftz:
    return true;
  default:
    return false;
  }
}

// Every requirement of the cuTensorMapEncodeTiled doc comment (cuda.h 13.0), in the order it lists them.
void validate_tensor_map_tiled(const TensorMapTiledArgs& a) {
  uint32_t type = static_cast<uint32_t>(a.data_type);
  if (type > 15)
    fail("tensorDataType", std::to_string(type) + " is not a CUtensorMapDataType (0..15)");
  uint32_t interleave = static_cast<uint32_t>(a.interleave);
  if (interleave > 2)
    fail("interleave", std::to_string(interleave) + " is not a CUtensorMapInterleave (0..2)");
  uint32_t swz = static_cast<uint32_t>(a.swizzle);
  if (swz > 6)
    fail("swizzle", std::to_string(swz) + " is not a CUtensorMapSwizzle (0..6)");
  uint32_t l2 = static_cast<uint32_t>(a.l2_promotion);
  if (l2 > 3)
    fail("l2Promotion", std::to_string(l2) + " is not a CUtensorMapL2promotion (0..3)");
  uint32_t oob = static_cast<uint32_t>(a.oob_fill);
  if (oob > 1)
    fail("oobFill", std::to_string(oob) + " is not a CUtensorMapFloatOOBfill (0..1)");

  if (a.rank < 1 || a.rank > 5)
    fail("tensorRank", std::to_string(a.rank) + " must be 1..5");
  if (a.interleave != TensorMapInterleave::none && a.rank < 3)
    fail("tensorRank", std::to_string(a.rank) + " must be >= 3 with an interleaved layout");

  bool need32 = a.interleave == TensorMapInterleave::b32 || packed_16b(a.data_type);
  uint64_t addr_align = need32 ? 32 : 16;
  if (a.global_address % addr_align != 0)
    fail("globalAddress",
         std::to_string(a.global_address) + " is not " + std::to_string(addr_align) + "-byte aligned");

  for (uint32_t i = 0; i < a.rank; ++i) {
    if (a.global_dim[i] == 0 || a.global_dim[i] > (uint64_t{1} << 32))
      fail(at("globalDim", i), std::to_string(a.global_dim[i]) + " must be 1..2^32");
  }
  if (packed_16b(a.data_type) && a.global_dim[0] % 128 != 0)
    fail("globalDim[0]",
         std::to_string(a.global_dim[0]) + " must be a multiple of 128 for 16U4/16U6_ALIGN16B");
  if (a.data_type == TensorMapDataType::u4x16_align8b && a.global_dim[0] % 2 != 0)
    fail("globalDim[0]", std::to_string(a.global_dim[0]) + " must be a multiple of 2 for 16U4_ALIGN8B");

  for (uint32_t i = 0; i + 1 < a.rank; ++i) {
    uint64_t s = a.global_strides[i];
    uint64_t mult = need32 ? 32 : 16;
    if (s % mult != 0)
      fail(at("globalStrides", i),
           std::to_string(s) + " is not a multiple of " + std::to_string(mult) + " bytes");
    if (s >= (uint64_t{1} << 40))
      fail(at("globalStrides", i), std::to_string(s) + " must be < 2^40");
  }

  for (uint32_t i = 0; i < a.rank; ++i) {
    if (a.box_dim[i] == 0 || a.box_dim[i] > 256)
      fail(at("boxDim", i), std::to_string(a.box_dim[i]) + " must be 1..256");
  }
  uint64_t inner_bits = uint64_t{a.box_dim[0]} * memory_bits(a.data_type);
  if (a.interleave == TensorMapInterleave::none && inner_bits % 128 != 0)
    fail("boxDim[0]", std::to_string(a.box_dim[0]) + " elements is not a multiple of 16 bytes");
  if (packed_16b(a.data_type) && a.box_dim[0] != 128)
    fail("boxDim[0]", std::to_string(a.box_dim[0]) + " must be 128 for 16U4/16U6_ALIGN16B");

  for (uint32_t i = 0; i < a.rank; ++i) {
    if (a.element_strides[i] == 0 || a.element_strides[i] > 8)
      fail(at("elementStrides", i), std::to_string(a.element_strides[i]) + " must be 1..8");
  }

  if (a.data_type == TensorMapDataType::u6x16_align16b && a.interleave != TensorMapInterleave::none)
    fail("interleave", "must be NONE for 16U6_ALIGN16B");

  if (a.interleave == TensorMapInterleave::b32 && a.swizzle != TensorMapSwizzle::b32)
    fail("swizzle", "must be SWIZZLE_32B with INTERLEAVE_32B");
  if (a.interleave == TensorMapInterleave::none && a.swizzle != TensorMapSwizzle::none &&
      inner_bits > 8ull * swizzle_span(a.swizzle))
    fail("swizzle", "inner box " + std::to_string(inner_bits / 8) + " bytes exceeds the " +
                        std::to_string(swizzle_span(a.swizzle)) + "-byte swizzle span");
  // Swizzle modes the packed types allow (the union of the load and store lists).
  if (a.data_type == TensorMapDataType::u6x16_align16b &&
      !(a.swizzle == TensorMapSwizzle::none || a.swizzle == TensorMapSwizzle::b128 ||
        a.swizzle == TensorMapSwizzle::b128_atom_32b || a.swizzle == TensorMapSwizzle::b128_atom_64b))
    fail("swizzle", std::to_string(swz) + " is not supported for 16U6_ALIGN16B");
  if (a.data_type == TensorMapDataType::u4x16_align16b &&
      !(a.swizzle == TensorMapSwizzle::none || a.swizzle == TensorMapSwizzle::b128 ||
        a.swizzle == TensorMapSwizzle::b128_atom_32b))
    fail("swizzle", std::to_string(swz) + " is not supported for 16U4_ALIGN16B");

  if (a.oob_fill == TensorMapOobFill::nan_request_zero_fma && !tensor_map_is_float(a.data_type))
    fail("oobFill", "NAN_REQUEST_ZERO_FMA needs a floating-point data type");
}

TensorMap encode_tensor_map_tiled(const TensorMapTiledArgs& a) {
  validate_tensor_map_tiled(a);
  TensorMap m;
  std::memcpy(m.bytes.data(), kMagic, 4);
  m.bytes[4] = kVersion;
  m.bytes[kTypeAt] = static_cast<uint8_t>(a.data_type);
  m.bytes[kRankAt] = static_cast<uint8_t>(a.rank);
  m.bytes[kInterleaveAt] = static_cast<uint8_t>(a.interleave);
  m.bytes[kSwizzleAt] = static_cast<uint8_t>(a.swizzle);
  m.bytes[kL2At] = static_cast<uint8_t>(a.l2_promotion);
  m.bytes[kOobAt] = static_cast<uint8_t>(a.oob_fill);
  put<uint64_t>(m, kAddressAt, a.global_address);
  // Unused dimensions are stored as their defaults so equal maps have equal bytes.
  for (uint32_t i = 0; i < 5; ++i) {
    bool used = i < a.rank;
    put<uint64_t>(m, kDimAt + 8 * i, used ? a.global_dim[i] : 0);
    put<uint16_t>(m, kBoxAt + 2 * i, static_cast<uint16_t>(used ? a.box_dim[i] : 0));
    m.bytes[kElemStrideAt + i] = static_cast<uint8_t>(used ? a.element_strides[i] : 1);
    if (i < 4)
      put<uint64_t>(m, kStrideAt + 8 * i, i + 1 < a.rank ? a.global_strides[i] : 0);
  }
  return m;
}

void encode_tensor_map_tiled(TensorMap* map, TensorMapDataType data_type, uint32_t rank,
                             uint64_t global_address, const uint64_t* global_dim,
                             const uint64_t* global_strides, const uint32_t* box_dim,
                             const uint32_t* element_strides, TensorMapInterleave interleave,
                             TensorMapSwizzle swizzle, TensorMapL2Promotion l2_promotion,
                             TensorMapOobFill oob_fill) {
  if (map == nullptr)
    fail("tensorMap", "is null");
  if (reinterpret_cast<uintptr_t>(map) % 64 != 0)
    fail("tensorMap", "address is not 64-byte aligned");
  if (rank < 1 || rank > 5)
    fail("tensorRank", std::to_string(rank) + " must be 1..5");
  if (global_dim == nullptr)
    fail("globalDim", "is null");
  if (rank > 1 && global_strides == nullptr)
    fail("globalStrides", "is null");
  if (box_dim == nullptr)
    fail("boxDim", "is null");
  if (element_strides == nullptr)
    fail("elementStrides", "is null");
  TensorMapTiledArgs a;
  a.data_type = data_type;
  a.rank = rank;
  a.global_address = global_address;
  for (uint32_t i = 0; i < rank; ++i) {
    a.global_dim[i] = global_dim[i];
    a.box_dim[i] = box_dim[i];
    a.element_strides[i] = element_strides[i];
    if (i + 1 < rank)
      a.global_strides[i] = global_strides[i];
  }
  a.interleave = interleave;
  a.swizzle = swizzle;
  a.l2_promotion = l2_promotion;
  a.oob_fill = oob_fill;
  *map = encode_tensor_map_tiled(a);
}

TensorMapTiledArgs decode_tensor_map(const TensorMap& m) {
  if (std::memcmp(m.bytes.data(), kMagic, 4) != 0 || m.bytes[4] != kVersion)
    throw InputError("tensor map: the 128 bytes are not an isatune tensor map (bad magic or version)");
  TensorMapTiledArgs a;
  a.data_type = static_cast<TensorMapDataType>(m.bytes[kTypeAt]);
  a.rank = m.bytes[kRankAt];
  a.interleave = static_cast<TensorMapInterleave>(m.bytes[kInterleaveAt]);
  a.swizzle = static_cast<TensorMapSwizzle>(m.bytes[kSwizzleAt]);
  a.l2_promotion = static_cast<TensorMapL2Promotion>(m.bytes[kL2At]);
  a.oob_fill = static_cast<TensorMapOobFill>(m.bytes[kOobAt]);
  a.global_address = get<uint64_t>(m, kAddressAt);
  for (uint32_t i = 0; i < 5; ++i) {
    a.global_dim[i] = get<uint64_t>(m, kDimAt + 8 * i);
    a.box_dim[i] = get<uint16_t>(m, kBoxAt + 2 * i);
    a.element_strides[i] = m.bytes[kElemStrideAt + i];
    if (i < 4)
      a.global_strides[i] = get<uint64_t>(m, kStrideAt + 8 * i);
  }
  validate_tensor_map_tiled(a);
  return a;
}

std::array<uint32_t, 5> tensor_box_extent(const TensorMapTiledArgs& m) {
  std::array<uint32_t, 5> ext{1, 1, 1, 1, 1};
  for (uint32_t d = 0; d < m.rank && d < 5; ++d) {
    uint32_t s = (d == 0 && m.interleave == TensorMapInterleave::none) ? 1 : m.element_strides[d];
    if (s == 0)
      s = 1;
    ext[d] = (m.box_dim[d] + s - 1) / s;
  }
  return ext;
}

uint64_t tensor_box_bytes(const TensorMapTiledArgs& m) {
  std::array<uint32_t, 5> ext = tensor_box_extent(m);
  uint64_t elems = 1;
  for (uint32_t d = 0; d < m.rank && d < 5; ++d)
    elems *= ext[d];
  return elems * memory_bits(m.data_type) / 8;
}

uint64_t tensor_oob_nan_bits(TensorMapDataType t) {
  switch (tensor_map_element_bytes(t)) {
  case 2:
    return 0x7FFF;
  case 4:
    return 0x7FFFFFFF;
  case 8:
    return 0x7FFFFFFFFFFFFFFF;
  default:
    return 0;
  }
}

void tma_load_tile(const TensorMapTiledArgs& m, std::span<const int32_t> coords, const GlobalRead& read,
                   uint32_t smem_address, std::span<uint8_t> smem) {
  uint32_t es = check_copy(m, coords, smem_address, smem.size());
  SwizzleMode sw = copy_swizzle(m.swizzle);
  uint64_t fill = m.oob_fill == TensorMapOobFill::nan_request_zero_fma ? tensor_oob_nan_bits(m.data_type) : 0;
  // Gather the dense box first: contiguous in-bound runs of dimension 0 are read with one call.
  std::vector<uint8_t> box(tensor_box_bytes(m));
  uint64_t run_begin = 0, run_addr = 0, run_len = 0;
  auto flush = [&] {
    if (run_len != 0)
      read(run_addr, std::span<uint8_t>(box.data() + run_begin, run_len));
    run_len = 0;
  };
  bool dim0_unit = m.interleave == TensorMapInterleave::none || m.element_strides[0] == 1;
  for_each_box_element(m, coords, [&](uint64_t off, uint64_t addr, bool inside) {
    if (inside) {
      if (run_len != 0 && dim0_unit && off == run_begin + run_len && addr == run_addr + run_len) {
        run_len += es;
        return;
      }
      flush();
      run_begin = off, run_addr = addr, run_len = es;
      return;
    }
    flush();
    for (uint32_t b = 0; b < es; ++b)
      box[off + b] = static_cast<uint8_t>(fill >> (8 * b));
  });
  flush();
  for (uint64_t off = 0; off < box.size(); ++off)
    smem[smem_offset(sw, smem_address, off, smem.size())] = box[off];
}

void tma_store_tile(const TensorMapTiledArgs& m, std::span<const int32_t> coords, uint32_t smem_address,
                    std::span<const uint8_t> smem, const GlobalWrite& write) {
  uint32_t es = check_copy(m, coords, smem_address, smem.size());
  SwizzleMode sw = copy_swizzle(m.swizzle);
  std::vector<uint8_t> elem(es);
  for_each_box_element(m, coords, [&](uint64_t off, uint64_t addr, bool inside) {
    if (!inside)
      return;
    for (uint32_t b = 0; b < es; ++b)
      elem[b] = smem[smem_offset(sw, smem_address, off + b, smem.size())];
    write(addr, std::span<const uint8_t>(elem));
  });
}

} // namespace isatune::ptx

// Tensor maps: every cuTensorMapEncodeTiled check (cuda.h 13.0 doc comment) rejected with a message naming
// the argument, encode/decode round trips, and the tile-mode copy (cp.async.bulk.tensor) against a naive
// nested-loop reference on random ragged tensors, out-of-bound and negative boxes, every swizzle, ranks 1-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isatune/error.h"
#include "isatune/ptx/matrix_descriptor.h"
#include "isatune/ptx/tensor_map.h"
#include "layout_cute.h"

using namespace isatune::ptx;

namespace {

TensorMapTiledArgs valid_2d() {
  TensorMapTiledArgs a;
  a.data_type = TensorMapDataType::bfloat16;
  a.rank = 2;
  a.global_address = 0x10000;
  a.global_dim = {1000, 300, 0, 0, 0};
  a.global_strides = {2048, 0, 0, 0};
  a.box_dim = {64, 128, 0, 0, 0};
  a.swizzle = TensorMapSwizzle::b128;
  return a;
}

TensorMapTiledArgs valid_interleaved() {
  TensorMapTiledArgs a;
  a.data_type = TensorMapDataType::float16;
  a.rank = 4;
  a.global_address = 0x10000;
  a.global_dim = {16, 7, 9, 4, 1};
  a.global_strides = {32, 32 * 7, 32 * 7 * 9, 0};
  a.box_dim = {16, 4, 4, 2, 1};
  a.interleave = TensorMapInterleave::b32;
  a.swizzle = TensorMapSwizzle::b32;
  return a;
}

// The message of the InputError that validation throws ("" if none).
std::string rejection(const TensorMapTiledArgs& a) {
  try {
    encode_tensor_map_tiled(a);
  } catch (const isatune::InputError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_REJECTED(args, name)                                                                          \
  do {                                                                                                       \
    std::string msg = rejection(args);                                                                       \
    EXPECT_NE(msg.find(name), std::string::npos)                                                             \
        << "expected a rejection naming " << name << ", got '" << msg << "'";                                \
  } while (0)

} // namespace

TEST(TensorMap, EnumValuesMatchCudaH) {
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::uint8), 0u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::float16), 6u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::float32), 7u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::bfloat16), 9u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::tfloat32_ftz), 12u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapDataType::u6x16_align16b), 15u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapInterleave::b32), 2u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapSwizzle::b128), 3u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapSwizzle::b128_atom_64b), 6u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapL2Promotion::l2_256b), 3u);
  EXPECT_EQ(static_cast<uint32_t>(TensorMapOobFill::nan_request_zero_fma), 1u);
  EXPECT_EQ(sizeof(TensorMap), 128u);
  EXPECT_EQ(alignof(TensorMap), 128u);
}

TEST(TensorMap, AcceptsValidMaps) {
  EXPECT_EQ(rejection(valid_2d()), "");
  EXPECT_EQ(rejection(valid_interleaved()), "");
  // fast.cu's K-major bf16 map: {64, rows, K/64} with strides {row pitch, 128 B} (not nested strides).
  TensorMapTiledArgs f;
  f.data_type = TensorMapDataType::bfloat16;
  f.rank = 3;
  f.global_address = 0x200000;
  f.global_dim = {64, 4096, 64, 1, 1};
  f.global_strides = {8192, 128, 0, 0};
  f.box_dim = {64, 128, 1, 1, 1};
  f.swizzle = TensorMapSwizzle::b128;
  EXPECT_EQ(rejection(f), "");
  TensorMapTiledArgs r1;
  r1.data_type = TensorMapDataType::float32;
  r1.rank = 1;
  r1.global_address = 16;
  r1.global_dim = {1ull << 32, 0, 0, 0, 0};
  r1.box_dim = {256, 0, 0, 0, 0};
  r1.oob_fill = TensorMapOobFill::nan_request_zero_fma;
  EXPECT_EQ(rejection(r1), "");
}

TEST(TensorMap, RejectsDataType) {
  TensorMapTiledArgs a = valid_2d();
  a.data_type = static_cast<TensorMapDataType>(16);
  EXPECT_REJECTED(a, "tensorDataType");
}

TEST(TensorMap, RejectsRank) {
  TensorMapTiledArgs a = valid_2d();
  a.rank = 0;
  EXPECT_REJECTED(a, "tensorRank");
  a.rank = 6;
  EXPECT_REJECTED(a, "tensorRank");
  TensorMapTiledArgs b = valid_interleaved();
  b.rank = 2;
  EXPECT_REJECTED(b, "tensorRank");
}

TEST(TensorMap, RejectsGlobalAddress) {
  TensorMapTiledArgs a = valid_2d();
  a.global_address = 0x10008;
  EXPECT_REJECTED(a, "globalAddress");
  TensorMapTiledArgs b = valid_interleaved();
  b.global_address = 0x10010; // 16- but not 32-byte aligned
  EXPECT_REJECTED(b, "globalAddress");
}

TEST(TensorMap, RejectsGlobalDim) {
  TensorMapTiledArgs a = valid_2d();
  a.global_dim[1] = 0;
  EXPECT_REJECTED(a, "globalDim[1]");
  a = valid_2d();
  a.global_dim[0] = (1ull << 32) + 1;
  EXPECT_REJECTED(a, "globalDim[0]");
}

TEST(TensorMap, RejectsGlobalStrides) {
  TensorMapTiledArgs a = valid_2d();
  a.global_strides[0] = 2056;
  EXPECT_REJECTED(a, "globalStrides[0]");
  a.global_strides[0] = 1ull << 40;
  EXPECT_REJECTED(a, "globalStrides[0]");
  TensorMapTiledArgs b = valid_interleaved();
  b.global_strides[1] = 48 * 7; // multiple of 16, not of 32
  EXPECT_REJECTED(b, "globalStrides[1]");
}

TEST(TensorMap, RejectsBoxDim) {
  TensorMapTiledArgs a = valid_2d();
  a.box_dim[1] = 0;
  EXPECT_REJECTED(a, "boxDim[1]");
  a.box_dim[1] = 257;
  EXPECT_REJECTED(a, "boxDim[1]");
  a = valid_2d();
  a.box_dim[0] = 60; // 120 bytes
  EXPECT_REJECTED(a, "boxDim[0]");
}

TEST(TensorMap, RejectsElementStrides) {
  TensorMapTiledArgs a = valid_2d();
  a.element_strides[1] = 0;
  EXPECT_REJECTED(a, "elementStrides[1]");
  a.element_strides[1] = 9;
  EXPECT_REJECTED(a, "elementStrides[1]");
}

TEST(TensorMap, RejectsInterleave) {
  TensorMapTiledArgs a = valid_2d();
  a.interleave = static_cast<TensorMapInterleave>(3);
  EXPECT_REJECTED(a, "interleave");
  TensorMapTiledArgs b = valid_interleaved();
  b.data_type = TensorMapDataType::u6x16_align16b;
  b.global_dim[0] = 128;
  b.box_dim[0] = 128;
  EXPECT_REJECTED(b, "interleave");
}

TEST(TensorMap, RejectsSwizzle) {
  TensorMapTiledArgs a = valid_2d();
  a.swizzle = static_cast<TensorMapSwizzle>(7);
  EXPECT_REJECTED(a, "swizzle");
  a = valid_2d();
  a.box_dim[0] = 128; // 256 bytes > 128
  EXPECT_REJECTED(a, "swizzle");
  a = valid_2d();
  a.box_dim[0] = 32; // 64 bytes
  a.swizzle = TensorMapSwizzle::b32;
  EXPECT_REJECTED(a, "swizzle");
  a.swizzle = TensorMapSwizzle::b64;
  EXPECT_EQ(rejection(a), "");
  TensorMapTiledArgs b = valid_interleaved();
  b.swizzle = TensorMapSwizzle::b64;
  EXPECT_REJECTED(b, "swizzle");
}

TEST(TensorMap, RejectsL2Promotion) {
  TensorMapTiledArgs a = valid_2d();
  a.l2_promotion = static_cast<TensorMapL2Promotion>(4);
  EXPECT_REJECTED(a, "l2Promotion");
}

TEST(TensorMap, RejectsOobFill) {
  TensorMapTiledArgs a = valid_2d();
  a.oob_fill = static_cast<TensorMapOobFill>(2);
  EXPECT_REJECTED(a, "oobFill");
  a = valid_2d();
  a.data_type = TensorMapDataType::uint16;
  a.oob_fill = TensorMapOobFill::nan_request_zero_fma;
  EXPECT_REJECTED(a, "oobFill");
}

TEST(TensorMap, RejectsPackedTypeRules) {
  TensorMapTiledArgs a = valid_2d();
  a.data_type = TensorMapDataType::u4x16_align16b;
  a.swizzle = TensorMapSwizzle::none;
  a.global_address = 0x10000;
  a.global_dim[0] = 1024;
  a.box_dim[0] = 128;
  EXPECT_EQ(rejection(a), "");
  a.global_dim[0] = 1000;
  EXPECT_REJECTED(a, "globalDim[0]");
  a.global_dim[0] = 1024;
  a.box_dim[0] = 64;
  EXPECT_REJECTED(a, "boxDim[0]");
  a.box_dim[0] = 128;
  a.global_address = 0x10010;
  EXPECT_REJECTED(a, "globalAddress");
  a.global_address = 0x10000;
  a.swizzle = TensorMapSwizzle::b64;
  EXPECT_REJECTED(a, "swizzle");
  TensorMapTiledArgs b = valid_2d();
  b.data_type = TensorMapDataType::u4x16_align8b;
  b.swizzle = TensorMapSwizzle::none;
  b.global_dim[0] = 1001;
  b.box_dim[0] = 32;
  EXPECT_REJECTED(b, "globalDim[0]");
}

TEST(TensorMap, PointerApiChecks) {
  alignas(128) unsigned char storage[256];
  TensorMapTiledArgs a = valid_2d();
  auto* ok = reinterpret_cast<TensorMap*>(storage);
  encode_tensor_map_tiled(ok, a.data_type, a.rank, a.global_address, a.global_dim.data(),
                          a.global_strides.data(), a.box_dim.data(), a.element_strides.data(), a.interleave,
                          a.swizzle, a.l2_promotion, a.oob_fill);
  EXPECT_EQ(decode_tensor_map(*ok), a);
  auto call = [&](TensorMap* m, const uint64_t* dims) {
    try {
      encode_tensor_map_tiled(m, a.data_type, a.rank, a.global_address, dims, a.global_strides.data(),
                              a.box_dim.data(), a.element_strides.data(), a.interleave, a.swizzle,
                              a.l2_promotion, a.oob_fill);
    } catch (const isatune::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(call(reinterpret_cast<TensorMap*>(storage + 32), a.global_dim.data()).find("tensorMap"),
            std::string::npos);
  EXPECT_NE(call(ok, nullptr).find("globalDim"), std::string::npos);
}

TEST(TensorMap, EncodeDecodeRoundTrip) {
  std::mt19937 rng(11);
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    TensorMapTiledArgs a;
    a.data_type = static_cast<TensorMapDataType>(rng() % 13);
    a.rank = 1 + rng() % 5;
    a.global_address = uint64_t{rng() % 1000} * 32;
    uint32_t es = tensor_map_element_bytes(a.data_type);
    for (uint32_t d = 0; d < a.rank; ++d) {
      a.global_dim[d] = 1 + rng() % 5000;
      a.box_dim[d] = d == 0 ? (16 / es) * (1 + rng() % 4) : 1 + rng() % 256;
      a.element_strides[d] = 1 + rng() % 8;
      if (d + 1 < a.rank)
        a.global_strides[d] = uint64_t{16} * (1 + rng() % 100000);
    }
    a.swizzle = static_cast<TensorMapSwizzle>(rng() % 7);
    a.l2_promotion = static_cast<TensorMapL2Promotion>(rng() % 4);
    a.oob_fill =
        tensor_map_is_float(a.data_type) ? static_cast<TensorMapOobFill>(rng() % 2) : TensorMapOobFill::none;
    if (!rejection(a).empty())
      continue;
    ++accepted;
    TensorMap m = encode_tensor_map_tiled(a);
    ASSERT_EQ(decode_tensor_map(m), a);
  }
  EXPECT_GT(accepted, 1000);
  TensorMap junk;
  EXPECT_THROW(decode_tensor_map(junk), isatune::InputError);
  TensorMap bad = encode_tensor_map_tiled(valid_2d());
  bad.bytes[6] = 9; // rank
  EXPECT_THROW(decode_tensor_map(bad), isatune::InputError);
}

TEST(TensorMap, BoxBytes) {
  TensorMapTiledArgs a = valid_2d();
  EXPECT_EQ(tensor_box_bytes(a), 64u * 128u * 2u);
  a.element_strides = {5, 3, 1, 1, 1}; // dimension 0's stride is ignored without interleave
  EXPECT_EQ(tensor_box_bytes(a), 64u * 43u * 2u);
  TensorMapTiledArgs b = valid_interleaved();
  b.element_strides = {2, 1, 3, 1, 1};
  EXPECT_EQ(tensor_box_bytes(b), 8u * 4u * 2u * 2u * 2u);
}

namespace {

struct Global {
  uint64_t base = 0;
  std::vector<uint8_t> bytes;
  bool in_range(uint64_t addr, size_t n) const { return addr >= base && addr + n <= base + bytes.size(); }
};

bool is_nan_bits(const uint8_t* p, uint32_t es, TensorMapDataType t) {
  uint64_t v = 0;
  std::memcpy(&v, p, es);
  switch (es) {
  case 2:
    if (t == TensorMapDataType::bfloat16)
      return (v & 0x7F80) == 0x7F80 && (v & 0x7F) != 0;
    return (v & 0x7C00) == 0x7C00 && (v & 0x3FF) != 0;
  case 4: {
    float f;
    std::memcpy(&f, p, 4);
    return std::isnan(f);
  }
  case 8: {
    double d;
    std::memcpy(&d, p, 8);
    return std::isnan(d);
  }
  }
  return false;
}

uint32_t span_bytes(TensorMapSwizzle s) {
  return s == TensorMapSwizzle::b32    ? 32
         : s == TensorMapSwizzle::b64  ? 64
         : s == TensorMapSwizzle::b128 ? 128
                                       : 0;
}

uint64_t ref_swizzle(TensorMapSwizzle s, uint64_t a) {
  uint32_t b = s == TensorMapSwizzle::b32    ? 1
               : s == TensorMapSwizzle::b64  ? 2
               : s == TensorMapSwizzle::b128 ? 3
                                             : 0;
  return layout_test::swizzle_bits_reference(b, 4, 3, a);
}

struct Case {
  TensorMapTiledArgs map;
  std::vector<int32_t> coords;
  Global global;
  uint32_t smem_address = 0;
  size_t smem_size = 0;
};

Case random_case(std::mt19937& rng, uint32_t rank, TensorMapSwizzle sw) {
  const TensorMapDataType types[] = {TensorMapDataType::uint8,   TensorMapDataType::bfloat16,
                                     TensorMapDataType::float16, TensorMapDataType::float32,
                                     TensorMapDataType::float64, TensorMapDataType::int32};
  Case c;
  TensorMapTiledArgs& a = c.map;
  a.data_type = types[rng() % 6];
  uint32_t es = tensor_map_element_bytes(a.data_type);
  a.rank = rank;
  a.swizzle = sw;
  uint32_t max_inner = sw == TensorMapSwizzle::none ? 128 : span_bytes(sw);
  uint32_t inner_bytes = 16 * (1 + rng() % (max_inner / 16));
  a.box_dim[0] = inner_bytes / es;
  a.global_dim[0] = 1 + rng() % (a.box_dim[0] + 9);
  a.element_strides[0] = 1 + rng() % 8; // ignored without interleave
  uint64_t stride = (a.global_dim[0] * es + 15) / 16 * 16 + 16 * (rng() % 3);
  for (uint32_t d = 1; d < rank; ++d) {
    a.box_dim[d] = 1 + rng() % (rank <= 2 ? 12 : 4);
    a.element_strides[d] = 1 + rng() % 3;
    a.global_dim[d] = 1 + rng() % (rank <= 2 ? 14 : 5);
    a.global_strides[d - 1] = stride;
    stride = stride * a.global_dim[d] + 16 * (rng() % 2);
  }
  if (tensor_map_is_float(a.data_type) && rng() % 2)
    a.oob_fill = TensorMapOobFill::nan_request_zero_fma;
  a.l2_promotion = static_cast<TensorMapL2Promotion>(rng() % 4);
  c.global.base = 0x100000 + 16 * (rng() % 64);
  a.global_address = c.global.base;
  c.global.bytes.resize(stride);
  for (uint8_t& b : c.global.bytes)
    b = static_cast<uint8_t>(rng());
  for (uint32_t d = 0; d < rank; ++d) {
    int32_t lo = -static_cast<int32_t>(a.box_dim[d]) - 2;
    int32_t hi = static_cast<int32_t>(a.global_dim[d]) + 2;
    c.coords.push_back(lo + static_cast<int32_t>(rng() % static_cast<uint32_t>(hi - lo)));
  }
  c.smem_address = 1024 * (1 + rng() % 100) + (sw == TensorMapSwizzle::none ? 16 * (rng() % 8) : 0);
  c.smem_size = (tensor_box_bytes(a) + 1023) / 1024 * 1024;
  return c;
}

// The naive reference: five nested loops over the traversed box, element by element.
template <class F> void reference_walk(const Case& c, F f) {
  const TensorMapTiledArgs& a = c.map;
  uint32_t es = tensor_map_element_bytes(a.data_type);
  uint32_t n[5] = {1, 1, 1, 1, 1}, st[5] = {1, 1, 1, 1, 1};
  for (uint32_t d = 0; d < a.rank; ++d) {
    st[d] = d == 0 ? 1 : a.element_strides[d];
    n[d] = (a.box_dim[d] + st[d] - 1) / st[d];
  }
  uint64_t off = 0;
  for (uint32_t i4 = 0; i4 < n[4]; ++i4)
    for (uint32_t i3 = 0; i3 < n[3]; ++i3)
      for (uint32_t i2 = 0; i2 < n[2]; ++i2)
        for (uint32_t i1 = 0; i1 < n[1]; ++i1)
          for (uint32_t i0 = 0; i0 < n[0]; ++i0, off += es) {
            uint32_t idx[5] = {i0, i1, i2, i3, i4};
            bool inside = true;
            uint64_t g = 0;
            for (uint32_t d = 0; d < a.rank; ++d) {
              int64_t x = c.coords[d] + int64_t{idx[d]} * st[d];
              inside = inside && x >= 0 && x < static_cast<int64_t>(a.global_dim[d]);
              if (inside)
                g += static_cast<uint64_t>(x) * (d == 0 ? es : a.global_strides[d - 1]);
            }
            f(off, g, inside);
          }
}

} // namespace

TEST(TensorMap, LoadMatchesNaiveReference) {
  std::mt19937 rng(2024);
  const TensorMapSwizzle modes[] = {TensorMapSwizzle::none, TensorMapSwizzle::b32, TensorMapSwizzle::b64,
                                    TensorMapSwizzle::b128};
  int oob_seen = 0, nan_seen = 0;
  for (uint32_t rank = 1; rank <= 5; ++rank)
    for (TensorMapSwizzle sw : modes)
      for (int iter = 0; iter < 40; ++iter) {
        Case c = random_case(rng, rank, sw);
        uint32_t es = tensor_map_element_bytes(c.map.data_type);
        std::vector<uint8_t> got(c.smem_size, 0xCD), want(c.smem_size, 0xCD);
        std::vector<bool> nan_at(c.smem_size, false);
        reference_walk(c, [&](uint64_t off, uint64_t g, bool inside) {
          for (uint32_t b = 0; b < es; ++b) {
            uint64_t phys = ref_swizzle(sw, c.smem_address + off + b) - c.smem_address;
            ASSERT_LT(phys, want.size());
            if (inside) {
              want[phys] = c.global.bytes[g + b];
            } else if (c.map.oob_fill == TensorMapOobFill::none) {
              want[phys] = 0;
            } else {
              nan_at[phys] = true;
            }
          }
          oob_seen += !inside;
        });
        tma_load_tile(
            c.map, c.coords,
            [&](uint64_t addr, std::span<uint8_t> dst) {
              ASSERT_TRUE(c.global.in_range(addr, dst.size())) << addr;
              std::memcpy(dst.data(), c.global.bytes.data() + (addr - c.global.base), dst.size());
            },
            c.smem_address, got);
        for (size_t i = 0; i < got.size(); ++i) {
          if (nan_at[i])
            continue;
          ASSERT_EQ(got[i], want[i]) << "rank " << rank << " swizzle " << static_cast<int>(sw) << " byte "
                                     << i;
        }
        // NaN-filled elements: whole elements, each a NaN of the data type.
        for (size_t i = 0; i < got.size(); ++i) {
          if (!nan_at[i])
            continue;
          // Find the element's dense start by un-swizzling this byte's chunk (swizzle keeps bytes in a
          // chunk).
          uint64_t dense = ref_swizzle(sw, c.smem_address + i) - c.smem_address;
          if (dense % es != 0)
            continue;
          uint8_t elem[8];
          for (uint32_t b = 0; b < es; ++b)
            elem[b] = got[ref_swizzle(sw, c.smem_address + dense + b) - c.smem_address];
          EXPECT_TRUE(is_nan_bits(elem, es, c.map.data_type));
          ++nan_seen;
        }
      }
  EXPECT_GT(oob_seen, 1000);
  EXPECT_GT(nan_seen, 100);
}

TEST(TensorMap, StoreMatchesNaiveReference) {
  std::mt19937 rng(99);
  const TensorMapSwizzle modes[] = {TensorMapSwizzle::none, TensorMapSwizzle::b32, TensorMapSwizzle::b64,
                                    TensorMapSwizzle::b128};
  for (uint32_t rank = 1; rank <= 5; ++rank)
    for (TensorMapSwizzle sw : modes)
      for (int iter = 0; iter < 40; ++iter) {
        Case c = random_case(rng, rank, sw);
        for (int32_t& x : c.coords) // stores start in bounds (the box may still run past the end)
          x = std::max(x, 0) % 3;
        uint32_t es = tensor_map_element_bytes(c.map.data_type);
        std::vector<uint8_t> smem(c.smem_size);
        for (uint8_t& b : smem)
          b = static_cast<uint8_t>(rng());
        std::vector<uint8_t> want = c.global.bytes;
        reference_walk(c, [&](uint64_t off, uint64_t g, bool inside) {
          if (!inside)
            return;
          for (uint32_t b = 0; b < es; ++b)
            want[g + b] = smem[ref_swizzle(sw, c.smem_address + off + b) - c.smem_address];
        });
        Global got = c.global;
        tma_store_tile(c.map, c.coords, c.smem_address, smem,
                       [&](uint64_t addr, std::span<const uint8_t> src) {
                         ASSERT_TRUE(got.in_range(addr, src.size())) << addr;
                         std::memcpy(got.bytes.data() + (addr - got.base), src.data(), src.size());
                       });
        ASSERT_EQ(got.bytes, want) << "rank " << rank << " swizzle " << static_cast<int>(sw);
      }
}

TEST(TensorMap, CopyRejects) {
  TensorMapTiledArgs a = valid_2d();
  std::vector<uint8_t> smem(tensor_box_bytes(a));
  auto read = [](uint64_t, std::span<uint8_t>) {};
  int32_t two[2] = {0, 0}, one[1] = {0};
  EXPECT_THROW(tma_load_tile(a, one, read, 1024, smem), isatune::InputError);
  EXPECT_THROW(tma_load_tile(a, two, read, 1024 + 16, smem), isatune::InputError); // swizzled: 128-aligned
  std::vector<uint8_t> small(100);
  EXPECT_THROW(tma_load_tile(a, two, read, 1024, small), isatune::InputError);
  a.swizzle = TensorMapSwizzle::b128_atom_32b;
  EXPECT_THROW(tma_load_tile(a, two, read, 1024, smem), isatune::InputError);
  a.swizzle = TensorMapSwizzle::none;
  EXPECT_NO_THROW(tma_load_tile(a, two, read, 1024 + 16, smem));
}

// What wgmma reads through a K-major 128B descriptor is what a SWIZZLE_128B TMA load of a 64 x 64 bf16 box
// wrote: both land logical (row, k) at the same swizzled byte.
TEST(TensorMap, TmaTileFeedsWgmmaDescriptor) {
  TensorMapTiledArgs a;
  a.data_type = TensorMapDataType::bfloat16;
  a.rank = 2;
  a.global_address = 0x40000;
  a.global_dim = {200, 150, 1, 1, 1};
  a.global_strides = {400, 0, 0, 0};
  a.box_dim = {64, 64, 1, 1, 1};
  a.swizzle = TensorMapSwizzle::b128;
  std::vector<uint16_t> g(200 * 150);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = static_cast<uint16_t>(i * 2654435761u >> 7);
  const uint32_t smem_base = 0x2000;
  std::vector<uint8_t> smem(0x2000 + 8192);
  int32_t coords[2] = {64, 70};
  tma_load_tile(
      a, coords,
      [&](uint64_t addr, std::span<uint8_t> dst) {
        std::memcpy(dst.data(), reinterpret_cast<const uint8_t*>(g.data()) + (addr - a.global_address),
                    dst.size());
      },
      smem_base, std::span<uint8_t>(smem).subspan(smem_base, 8192));
  for (uint32_t step = 0; step < 4; ++step) {
    MatrixDescriptor d{smem_base + 32 * step, 16, 1024, 0, SwizzleMode::b128};
    for (uint32_t r = 0; r < 64; ++r)
      for (uint32_t k = 0; k < 16; ++k) {
        uint32_t addr = canonical_address(d, WgmmaOperand::a, OperandMajor::k, 2, r, k);
        uint16_t v;
        std::memcpy(&v, smem.data() + addr, 2);
        ASSERT_EQ(v, g[(70 + r) * 200 + 64 + 16 * step + k]) << step << " " << r << " " << k;
      }
  }
}

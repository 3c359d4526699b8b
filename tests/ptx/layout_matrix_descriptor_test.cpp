// The wgmma shared-memory matrix descriptor: bit fields (shared/notes/ptx-emulation.md 2.7), the fast.cu
// constants, round trips, errors, and the canonical-layout address function against the ISA's canonical
// layouts written as CuTe layouts (layout_cute.h) composed with the bitwise Swizzle<B,4,3>.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "isatune/error.h"
#include "isatune/ptx/matrix_descriptor.h"
#include "layout_cute.h"

using namespace isatune::ptx;
using layout_test::Layout;

namespace {

template <class F> std::string error_of(F f) {
  try {
    f();
  } catch (const isatune::InputError& e) {
    return e.what();
  }
  return "";
}

uint32_t b_of(SwizzleMode m) {
  return m == SwizzleMode::b32 ? 1 : m == SwizzleMode::b64 ? 2 : m == SwizzleMode::b128 ? 3 : 0;
}
uint32_t span_of(SwizzleMode m) {
  return m == SwizzleMode::b32 ? 32 : m == SwizzleMode::b64 ? 64 : 128;
}

// The ISA's canonical layout (#asynchronous-warpgroup-level-canonical-layouts) in elements, T = 16 B / es.
Layout canonical(OperandMajor major, SwizzleMode sw, uint32_t es, uint32_t mn, uint32_t k, uint32_t lbo,
                 uint32_t sbo) {
  auto s = [](uint64_t v) { return std::to_string(v); };
  uint32_t t = 16 / es;
  if (major == OperandMajor::k) {
    if (sw == SwizzleMode::none)
      return Layout("((8," + s(mn / 8) + "),(" + s(t) + "," + s(k / t) + ")):((" + s(t) + "," + s(sbo / es) +
                    "),(1," + s(lbo / es) + "))");
    uint32_t w = span_of(sw);
    return Layout("((8," + s(mn / 8) + "),(" + s(t) + "," + s(k / t) + ")):((" + s(w / es) + "," +
                  s(sbo / es) + "),(1," + s(t) + "))");
  }
  if (sw == SwizzleMode::none)
    return Layout("((" + s(t) + ",1," + s(mn / t) + "),(8," + s(k / 8) + ")):((1," + s(t) + "," +
                  s(sbo / es) + "),(" + s(t) + "," + s(lbo / es) + "))");
  uint32_t w = span_of(sw);
  return Layout("((" + s(t) + "," + s(w / 16) + "," + s(mn / (w / es)) + "),(8," + s(k / 8) + ")):((1," +
                s(t) + "," + s(lbo / es) + "),(" + s(w / es) + "," + s(sbo / es) + "))");
}

} // namespace

TEST(MatrixDescriptor, FieldPositions) {
  MatrixDescriptor d{0x12340, 0x560, 0x7890, 5, SwizzleMode::b64};
  uint64_t want = (uint64_t{0x12340 >> 4}) | (uint64_t{0x560 >> 4} << 16) | (uint64_t{0x7890 >> 4} << 32) |
                  (uint64_t{5} << 49) | (uint64_t{2} << 62);
  EXPECT_EQ(encode_matrix_descriptor(d), want);
  EXPECT_EQ(descriptor_swizzle_field(SwizzleMode::none), 0u);
  EXPECT_EQ(descriptor_swizzle_field(SwizzleMode::b128), 1u);
  EXPECT_EQ(descriptor_swizzle_field(SwizzleMode::b64), 2u);
  EXPECT_EQ(descriptor_swizzle_field(SwizzleMode::b32), 3u);
}

// fast.cu: K-major 128B bf16 tiles OR 0x4000004000000000 (SBO 1024 B, mode 1) and, with LBO 16 B,
// 0x4000004000010000 | ((addr & 0x3FFFF) >> 4); stepping K by 16 bf16 adds 32 B >> 4 = 2.
TEST(MatrixDescriptor, FastCuConstants) {
  for (uint32_t addr : {0u, 1024u, 0x8400u, 0x3FC00u}) {
    EXPECT_EQ(encode_matrix_descriptor({addr, 0, 1024, 0, SwizzleMode::b128}),
              0x4000004000000000ull | ((addr & 0x3FFFF) >> 4));
    EXPECT_EQ(encode_matrix_descriptor({addr, 16, 1024, 0, SwizzleMode::b128}),
              0x4000004000010000ull | ((addr & 0x3FFFF) >> 4));
  }
  uint64_t d0 = encode_matrix_descriptor({0x8000, 16, 1024, 0, SwizzleMode::b128});
  EXPECT_EQ(encode_matrix_descriptor({0x8000 + 32, 16, 1024, 0, SwizzleMode::b128}), d0 + 2);
  MatrixDescriptor d = decode_matrix_descriptor(0x4000004000010000ull | (0x8000 >> 4));
  EXPECT_EQ(d, (MatrixDescriptor{0x8000, 16, 1024, 0, SwizzleMode::b128}));
}

TEST(MatrixDescriptor, RoundTripRandomFields) {
  std::mt19937_64 rng(7);
  const SwizzleMode modes[] = {SwizzleMode::none, SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128};
  for (int i = 0; i < 20000; ++i) {
    MatrixDescriptor d;
    d.start_address = static_cast<uint32_t>(rng() & 0x3FFF) << 4;
    d.leading_byte_offset = static_cast<uint32_t>(rng() & 0x3FFF) << 4;
    d.stride_byte_offset = static_cast<uint32_t>(rng() & 0x3FFF) << 4;
    d.base_offset = static_cast<uint32_t>(rng() & 7);
    d.swizzle = modes[rng() & 3];
    uint64_t bits = encode_matrix_descriptor(d);
    ASSERT_EQ(decode_matrix_descriptor(bits), d);
    // Reserved bits (14-15, 30-31, 46-48, 52-61) are ignored by decode.
    uint64_t reserved = (3ull << 14) | (3ull << 30) | (7ull << 46) | (0x3FFull << 52);
    ASSERT_EQ(decode_matrix_descriptor(bits | (rng() & reserved)), d);
    ASSERT_EQ(bits & reserved, 0u);
  }
}

TEST(MatrixDescriptor, RejectsBadFields) {
  EXPECT_NE(error_of([] {
              encode_matrix_descriptor({0x108, 0, 0, 0, SwizzleMode::none});
            }).find("start address"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              encode_matrix_descriptor({1u << 18, 0, 0, 0, SwizzleMode::none});
            }).find("start address"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              encode_matrix_descriptor({0, 24, 0, 0, SwizzleMode::none});
            }).find("leading byte offset"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              encode_matrix_descriptor({0, 0, 1u << 18, 0, SwizzleMode::none});
            }).find("stride byte offset"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              encode_matrix_descriptor({0, 0, 0, 8, SwizzleMode::b128});
            }).find("base offset"),
            std::string::npos);
  EXPECT_THROW(descriptor_swizzle_mode(4), isatune::InputError);
}

// Every canonical layout, element by element, with LBO/SBO chosen so the tile is packed: bijective too.
TEST(MatrixDescriptor, CanonicalAddressMatchesIsaLayouts) {
  const SwizzleMode modes[] = {SwizzleMode::none, SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128};
  for (OperandMajor major : {OperandMajor::k, OperandMajor::mn})
    for (SwizzleMode sw : modes)
      for (uint32_t es : {1u, 2u, 4u}) {
        if (major == OperandMajor::mn && es != 2)
          continue;
        uint32_t mn = major == OperandMajor::k ? 64 : 128; // rows (K-major) or MN extent (MN-major)
        uint32_t kbytes = 32;                              // one wgmma's K: k16 bf16, k32 fp8, k8 tf32
        uint32_t k = kbytes / es;
        uint32_t lbo, sbo;
        if (major == OperandMajor::k) {
          lbo = sw == SwizzleMode::none ? 128 : 16;              // next 16-byte K chunk
          sbo = sw == SwizzleMode::none ? 256 : 8 * span_of(sw); // next 8-row group
        } else if (sw == SwizzleMode::none) {
          sbo = 128;      // next T-element MN chunk (a core matrix is 8 K-rows x 16 B)
          lbo = 128 * 16; // next 8-K group, after all MN chunks
        } else {
          lbo = 8 * span_of(sw);               // next span-wide MN block
          sbo = lbo * (mn * es / span_of(sw)); // next 8-K group, after all MN blocks
        }
        Layout ref = canonical(major, sw, es, mn, k, lbo, sbo);
        for (uint32_t base : {0x4000u, 0x4000u + (sw == SwizzleMode::none ? 48u : 1024u)}) {
          MatrixDescriptor d{base, lbo, sbo, 0, sw};
          std::set<uint32_t> seen;
          for (uint32_t r = 0; r < mn; ++r)
            for (uint32_t c = 0; c < k; ++c) {
              uint64_t logical = base + static_cast<uint64_t>(ref(r, c)) * es;
              uint64_t want = layout_test::swizzle_bits_reference(b_of(sw), 4, 3, logical);
              uint32_t got = canonical_address(d, WgmmaOperand::a, major, es, r, c);
              ASSERT_EQ(got, want) << static_cast<int>(major) << " sw" << b_of(sw) << " es" << es << " (" << r
                                   << "," << c << ")";
              EXPECT_EQ(canonical_address(d, WgmmaOperand::b, major, es, r, c), got);
              seen.insert(got / es);
            }
          EXPECT_EQ(seen.size(), size_t{mn} * k);
        }
      }
}

// The notes' K-major 128B table for a bf16 64 x 64 tile at a 1024-aligned base, stepping K by 16 elements
// through the start address: logical (r, k) lives at base + r*128 + ((2k/16) ^ (r%8))*16 + (2k)%16.
TEST(MatrixDescriptor, KMajor128BKSteps) {
  const uint32_t base = 0x6000;
  for (uint32_t step = 0; step < 4; ++step) {
    MatrixDescriptor d = decode_matrix_descriptor(
        encode_matrix_descriptor({base + 32 * step, 16, 1024, 0, SwizzleMode::b128}));
    for (uint32_t r = 0; r < 64; ++r)
      for (uint32_t kk = 0; kk < 16; ++kk) {
        uint32_t k = 16 * step + kk;
        uint32_t want = base + r * 128 + (((2 * k) / 16) ^ (r % 8)) * 16 + (2 * k) % 16;
        ASSERT_EQ(canonical_address(d, WgmmaOperand::b, OperandMajor::k, 2, r, kk), want) << step << " " << r;
      }
  }
}

TEST(MatrixDescriptor, CanonicalAddressRejects) {
  MatrixDescriptor d{0x4000, 16, 1024, 0, SwizzleMode::b128};
  EXPECT_THROW(canonical_address(d, WgmmaOperand::a, OperandMajor::k, 3, 0, 0), isatune::InputError);
  EXPECT_THROW(canonical_address(d, WgmmaOperand::a, OperandMajor::mn, 1, 0, 0), isatune::InputError);
  EXPECT_THROW(canonical_address(d, WgmmaOperand::a, OperandMajor::k, 2, 0, 64), isatune::InputError);
  MatrixDescriptor phased{0x4080, 16, 1024, 1, SwizzleMode::b128};
  EXPECT_NE(error_of([&] {
              canonical_address(phased, WgmmaOperand::b, OperandMajor::k, 2, 0, 0);
            }).find("base offset"),
            std::string::npos);
}

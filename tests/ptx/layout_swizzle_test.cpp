// Swizzle<B,M,S> and the TMA/GMMA byte swizzles against the bit-by-bit statement of cute/swizzle.hpp, the
// byte formulas of shared/notes/ptx-emulation.md 2.8, and their periodicity and invertibility.
#include <gtest/gtest.h>

#include <set>

#include "isatune/ptx/swizzle.h"
#include "layout_cute.h"

using namespace isatune::ptx;

TEST(Swizzle, MatchesBitwiseDefinition) {
  for (uint32_t b = 0; b <= 3; ++b)
    for (uint32_t m = 0; m <= 4; ++m)
      for (uint32_t s = b; s <= 4; ++s) {
        if (s == 0)
          continue;
        for (uint64_t x = 0; x < 8192; ++x)
          ASSERT_EQ(swizzle(b, m, s, x), layout_test::swizzle_bits_reference(b, m, s, x)) << b << m << s << x;
      }
  static_assert(Swizzle<3, 4, 3>::apply(0x80) == 0x90);
  EXPECT_EQ((Swizzle<2, 4, 3>{}(0x1A0)), layout_test::swizzle_bits_reference(2, 4, 3, 0x1A0));
}

// 32B: x ^ ((x>>3)&0x10); 64B: x ^ ((x>>3)&0x30); 128B: x ^ ((x>>3)&0x70).
TEST(Swizzle, TmaByteFormulas) {
  for (uint64_t x = 0; x < (1u << 18); x += 3) {
    EXPECT_EQ(swizzle_address(SwizzleMode::none, x), x);
    ASSERT_EQ(swizzle_address(SwizzleMode::b32, x), x ^ ((x >> 3) & 0x10));
    ASSERT_EQ(swizzle_address(SwizzleMode::b64, x), x ^ ((x >> 3) & 0x30));
    ASSERT_EQ(swizzle_address(SwizzleMode::b128, x), x ^ ((x >> 3) & 0x70));
  }
  EXPECT_EQ(swizzle_span_bytes(SwizzleMode::b64), 64u);
  EXPECT_EQ(swizzle_repeat_bytes(SwizzleMode::b32), 256u);
  EXPECT_EQ(swizzle_repeat_bytes(SwizzleMode::b128), 1024u);
}

// Chunk c of 128-byte row r lands at chunk c ^ (r % 8); bytes inside a chunk keep their order.
TEST(Swizzle, Chunk128Table) {
  for (uint32_t r = 0; r < 16; ++r)
    for (uint32_t c = 0; c < 8; ++c)
      for (uint32_t byte = 0; byte < 16; ++byte) {
        uint64_t logical = 128 * r + 16 * c + byte;
        EXPECT_EQ(swizzle_address(SwizzleMode::b128, logical), 128 * r + 16 * (c ^ (r % 8)) + byte);
      }
}

TEST(Swizzle, PeriodicInvolutionAndBijective) {
  for (SwizzleMode m : {SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128}) {
    uint64_t rep = swizzle_repeat_bytes(m);
    std::set<uint64_t> image;
    for (uint64_t x = 0; x < rep; ++x) {
      uint64_t y = swizzle_address(m, x);
      EXPECT_LT(y, rep);
      EXPECT_EQ(swizzle_address(m, y), x);
      // Stays inside its aligned span-sized block (what lets a 128-aligned box be swizzled in place).
      EXPECT_EQ(y / swizzle_span_bytes(m), x / swizzle_span_bytes(m));
      image.insert(y);
      for (uint64_t k = 1; k < 5; ++k)
        EXPECT_EQ(swizzle_address(m, x + k * rep * 7), y + k * rep * 7);
    }
    EXPECT_EQ(image.size(), rep);
    // Not the identity: address bit 7 moves chunk 0 to chunk 1 in every mode.
    EXPECT_EQ(swizzle_address(m, 128), 144u);
  }
}

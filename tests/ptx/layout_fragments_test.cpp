// The fragment maps of mma.sync, ldmatrix/stmatrix and wgmma against the CuTe layouts quoted in
// shared/notes/ptx-emulation.md 2.1-2.6 (evaluated by layout_cute.h), the worked examples of
// shared/notes/ptx.md section 3, and bijectivity (every element held exactly once).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "isatune/error.h"
#include "isatune/ptx/fragments.h"
#include "layout_cute.h"

using namespace isatune::ptx;
using layout_test::Layout;

namespace {

// CuTe (thread, value) -> index into a rows x cols column-major tile.
MatrixCoord colmajor(int64_t idx, uint32_t rows) {
  return {static_cast<uint32_t>(idx % rows), static_cast<uint32_t>(idx / rows)};
}

} // namespace

// cute/atom/mma_traits_sm80.hpp SM80_16x8x16: ALayout over M x K = 16 x 16; value v = 2*reg + half.
TEST(LayoutMma, M16n8k16AMatchesCute) {
  Layout a("((4,8),(2,2,2)):((32,1),(16,8,128))");
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t reg = 0; reg < 4; ++reg)
      for (uint32_t half = 0; half < 2; ++half) {
        MatrixCoord c = mma_a(MmaShape::m16n8k16, lane, reg, half);
        EXPECT_EQ(c, colmajor(a(lane, 2 * reg + half), 16)) << lane << " " << reg << " " << half;
        seen.insert({c.row, c.col});
      }
  EXPECT_EQ(seen.size(), 256u);
}

// BLayout over N x K = 8 x 16: (n, k) -> our (row k, col n).
TEST(LayoutMma, M16n8k16BMatchesCute) {
  Layout b("((4,8),(2,2)):((16,1),(8,64))");
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t reg = 0; reg < 2; ++reg)
      for (uint32_t half = 0; half < 2; ++half) {
        MatrixCoord nk = colmajor(b(lane, 2 * reg + half), 8);
        MatrixCoord c = mma_b(MmaShape::m16n8k16, lane, reg, half);
        EXPECT_EQ(c.row, nk.col);
        EXPECT_EQ(c.col, nk.row);
        seen.insert({c.row, c.col});
      }
  EXPECT_EQ(seen.size(), 128u);
}

// SM80_16x8_Row over M x N = 16 x 8, for f32 (value = register) and f16 (value = 2*reg + half).
TEST(LayoutMma, AccumulatorMatchesCute) {
  Layout c("((4,8),(2,2)):((32,1),(16,8))");
  std::set<std::pair<uint32_t, uint32_t>> seen32, seen16;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t reg = 0; reg < 4; ++reg) {
      MatrixCoord e = mma_c_f32(lane, reg);
      EXPECT_EQ(e, colmajor(c(lane, reg), 16));
      seen32.insert({e.row, e.col});
    }
    for (uint32_t reg = 0; reg < 2; ++reg)
      for (uint32_t half = 0; half < 2; ++half) {
        MatrixCoord e = mma_c_f16(lane, reg, half);
        EXPECT_EQ(e, colmajor(c(lane, 2 * reg + half), 16));
        seen16.insert({e.row, e.col});
      }
  }
  EXPECT_EQ(seen32.size(), 128u);
  EXPECT_EQ(seen16.size(), 128u);
}

// SM80_16x8x8: ALayout = SM80_16x8_Row over M x K = 16 x 8; BLayout ((4,8),2):((16,1),8) over N x K = 8 x 8.
TEST(LayoutMma, M16n8k8MatchesCute) {
  Layout a("((4,8),(2,2)):((32,1),(16,8))");
  Layout b("((4,8),(2)):((16,1),(8))");
  std::set<std::pair<uint32_t, uint32_t>> sa, sb;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t reg = 0; reg < 2; ++reg)
      for (uint32_t half = 0; half < 2; ++half) {
        MatrixCoord e = mma_a(MmaShape::m16n8k8, lane, reg, half);
        EXPECT_EQ(e, colmajor(a(lane, 2 * reg + half), 16));
        sa.insert({e.row, e.col});
      }
    for (uint32_t half = 0; half < 2; ++half) {
      MatrixCoord nk = colmajor(b(lane, half), 8);
      MatrixCoord e = mma_b(MmaShape::m16n8k8, lane, 0, half);
      EXPECT_EQ(e, (MatrixCoord{nk.col, nk.row}));
      sb.insert({e.row, e.col});
    }
  }
  EXPECT_EQ(sa.size(), 128u);
  EXPECT_EQ(sb.size(), 64u);
  EXPECT_EQ(mma_a_registers(MmaShape::m16n8k8), 2u);
  EXPECT_EQ(mma_b_registers(MmaShape::m16n8k8), 1u);
  EXPECT_EQ(mma_k(MmaShape::m16n8k8), 8u);
}

// SM80_16x8x8_F32TF32TF32F32_TN: ALayout ((4,8),(2,2)):((16,1),(8,64)) over M x K = 16 x 8, BLayout
// ((4,8),2):((8,1),32) over N x K = 8 x 8; one tf32 element per register (value = register).
TEST(LayoutMma, M16n8k8Tf32MatchesCute) {
  Layout a("((4,8),(2,2)):((16,1),(8,64))");
  Layout b("((4,8),(2)):((8,1),(32))");
  std::set<std::pair<uint32_t, uint32_t>> sa, sb;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    for (uint32_t reg = 0; reg < 4; ++reg) {
      MatrixCoord e = mma_a_tf32(lane, reg);
      EXPECT_EQ(e, colmajor(a(lane, reg), 16)) << lane << " " << reg;
      sa.insert({e.row, e.col});
    }
    for (uint32_t reg = 0; reg < 2; ++reg) {
      MatrixCoord nk = colmajor(b(lane, reg), 8);
      MatrixCoord e = mma_b_tf32(lane, reg);
      EXPECT_EQ(e, (MatrixCoord{nk.col, nk.row})) << lane << " " << reg;
      sb.insert({e.row, e.col});
    }
  }
  EXPECT_EQ(sa.size(), 128u);
  EXPECT_EQ(sb.size(), 64u);
  // Lane 6 (groupID 1, threadID_in_group 2) by the ISA formulas.
  EXPECT_EQ(mma_a_tf32(6, 3), (MatrixCoord{9, 6}));
  EXPECT_EQ(mma_b_tf32(6, 1), (MatrixCoord{6, 1}));
  EXPECT_THROW(mma_a_tf32(0, 4), isatune::InputError);
  EXPECT_THROW(mma_b_tf32(0, 2), isatune::InputError);
}

// shared/notes/ptx.md section 3, worked example for lane 5 (g = 1, t = 1).
TEST(LayoutMma, WorkedExampleLane5) {
  auto a = [](uint32_t i) { return mma_a(MmaShape::m16n8k16, 5, i / 2, i % 2); };
  EXPECT_EQ(a(0), (MatrixCoord{1, 2}));
  EXPECT_EQ(a(1), (MatrixCoord{1, 3}));
  EXPECT_EQ(a(2), (MatrixCoord{9, 2}));
  EXPECT_EQ(a(3), (MatrixCoord{9, 3}));
  EXPECT_EQ(a(4), (MatrixCoord{1, 10}));
  EXPECT_EQ(a(5), (MatrixCoord{1, 11}));
  EXPECT_EQ(a(6), (MatrixCoord{9, 10}));
  EXPECT_EQ(a(7), (MatrixCoord{9, 11}));
  EXPECT_EQ(mma_b(MmaShape::m16n8k16, 5, 0, 0), (MatrixCoord{2, 1}));
  EXPECT_EQ(mma_b(MmaShape::m16n8k16, 5, 0, 1), (MatrixCoord{3, 1}));
  EXPECT_EQ(mma_b(MmaShape::m16n8k16, 5, 1, 0), (MatrixCoord{10, 1}));
  EXPECT_EQ(mma_b(MmaShape::m16n8k16, 5, 1, 1), (MatrixCoord{11, 1}));
  EXPECT_EQ(mma_c_f32(5, 0), (MatrixCoord{1, 2}));
  EXPECT_EQ(mma_c_f32(5, 3), (MatrixCoord{9, 3}));
}

TEST(LayoutMma, RejectsOutOfRange) {
  EXPECT_THROW(mma_a(MmaShape::m16n8k16, 32, 0, 0), isatune::InputError);
  EXPECT_THROW(mma_a(MmaShape::m16n8k8, 0, 2, 0), isatune::InputError);
  EXPECT_THROW(mma_b(MmaShape::m16n8k8, 0, 1, 0), isatune::InputError);
  EXPECT_THROW(mma_c_f32(0, 4), isatune::InputError);
  EXPECT_THROW(mma_c_f16(0, 0, 2), isatune::InputError);
}

// ldmatrix against CuTe copy_traits_sm75.hpp, in bits: the source rows are SrcLayout (32,128):(128,1) (lane s
// gives the 128-bit row s = 8*matrix + row); DstLayout maps (lane, bit-of-registers) to a source bit.
TEST(LayoutLdmatrix, NonTransMatchesCute) {
  Layout dst("(32,(32,4)):(32,(1,1024))"); // SM75_U32x4_LDSM_N
  for (uint32_t num : {1u, 2u, 4u}) {
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
    for (uint32_t lane = 0; lane < 32; ++lane)
      for (uint32_t reg = 0; reg < num; ++reg)
        for (uint32_t half = 0; half < 2; ++half) {
          int64_t bit = dst(lane, 32 * reg + 16 * half);
          uint32_t src_lane = static_cast<uint32_t>(bit / 128);
          MatrixElement want{src_lane / 8, src_lane % 8, static_cast<uint32_t>(bit % 128) / 16};
          MatrixElement got = ldmatrix_element(num, false, lane, reg, half);
          EXPECT_EQ(got, want) << num << " " << lane << " " << reg << " " << half;
          EXPECT_EQ(ldmatrix_address_lane(num, got.matrix, got.row), src_lane);
          seen.insert({got.matrix, got.row, got.col});
        }
    EXPECT_EQ(seen.size(), 64u * num);
  }
}

TEST(LayoutLdmatrix, TransMatchesCute) {
  Layout dst("((4,8),(16,2,4)):((256,16),(1,128,1024))"); // SM75_U16x8_LDSM_T
  for (uint32_t num : {1u, 2u, 4u}) {
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> seen;
    for (uint32_t lane = 0; lane < 32; ++lane)
      for (uint32_t reg = 0; reg < num; ++reg)
        for (uint32_t half = 0; half < 2; ++half) {
          int64_t bit = dst(lane, 16 * half + 32 * reg); // value = (bit 16, half 2, reg 4)
          uint32_t src_lane = static_cast<uint32_t>(bit / 128);
          MatrixElement want{src_lane / 8, src_lane % 8, static_cast<uint32_t>(bit % 128) / 16};
          MatrixElement got = ldmatrix_element(num, true, lane, reg, half);
          EXPECT_EQ(got, want) << num << " " << lane << " " << reg << " " << half;
          seen.insert({got.matrix, got.row, got.col});
        }
    EXPECT_EQ(seen.size(), 64u * num);
  }
}

// .x1 uses lanes 0-7 only (CuTe SM75_U32x1_LDSM_N SrcLayout ((8,4),128):((128,0),1)): lanes 8-31 alias 0-7.
TEST(LayoutLdmatrix, AddressLanes) {
  Layout src_x1("((8,4),128):((128,0),1)");
  for (uint32_t lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(ldmatrix_lane_gives_address(1, lane), src_x1(lane, 0) == 128 * lane);
    EXPECT_EQ(ldmatrix_lane_gives_address(2, lane), lane < 16);
    EXPECT_TRUE(ldmatrix_lane_gives_address(4, lane));
    MatrixRow r = ldmatrix_lane_row(4, lane);
    EXPECT_EQ(ldmatrix_address_lane(4, r.matrix, r.row), lane);
  }
  EXPECT_THROW(ldmatrix_lane_row(2, 16), isatune::InputError);
  EXPECT_THROW(ldmatrix_address_lane(2, 2, 0), isatune::InputError);
  EXPECT_THROW(ldmatrix_element(3, false, 0, 0, 0), isatune::InputError);
  EXPECT_THROW(ldmatrix_element(2, false, 0, 2, 0), isatune::InputError);
}

// stmatrix is ldmatrix's inverse: checked against the CuTe LDSM layouts directly, and for bijectivity.
TEST(LayoutStmatrix, InverseOfLdmatrix) {
  Layout dst_n("(32,(32,4)):(32,(1,1024))");
  Layout dst_t("((4,8),(16,2,4)):((256,16),(1,128,1024))");
  for (bool trans : {false, true})
    for (uint32_t num : {1u, 2u, 4u}) {
      std::set<std::tuple<uint32_t, uint32_t, uint32_t>> slots;
      for (uint32_t m = 0; m < num; ++m)
        for (uint32_t row = 0; row < 8; ++row)
          for (uint32_t col = 0; col < 8; ++col) {
            FragmentSlot s = stmatrix_source(num, trans, {m, row, col});
            ASSERT_LT(s.lane, 32u);
            int64_t bit = (trans ? dst_t : dst_n)(s.lane, 32 * s.reg + 16 * s.part);
            EXPECT_EQ(bit, 128 * (8 * m + row) + 16 * col);
            EXPECT_EQ(ldmatrix_element(num, trans, s.lane, s.reg, s.part), (MatrixElement{m, row, col}));
            slots.insert({s.lane, s.reg, s.part});
          }
      EXPECT_EQ(slots.size(), 64u * num);
    }
  EXPECT_THROW(stmatrix_source(2, false, {2, 0, 0}), isatune::InputError);
  EXPECT_THROW(stmatrix_source(4, true, {0, 8, 0}), isatune::InputError);
}

// mma_traits_sm90_gmma.hpp CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) over 64 x N col-major.
TEST(LayoutWgmma, AccumulatorMatchesCuteForEveryN) {
  for (uint32_t n = 8; n <= 256; n += 8) {
    Layout c("((4,8,4),(2,2," + std::to_string(n / 8) + ")):((128,1,16),(64,8,512))");
    std::set<std::pair<uint32_t, uint32_t>> seen32, seen16;
    for (uint32_t t = 0; t < 128; ++t) {
      for (uint32_t reg = 0; reg < n / 2; ++reg) {
        MatrixCoord e = wgmma_d_f32(n, t, reg);
        ASSERT_EQ(e, colmajor(c(t, reg), 64)) << n << " " << t << " " << reg;
        seen32.insert({e.row, e.col});
      }
      for (uint32_t reg = 0; reg < n / 4; ++reg)
        for (uint32_t half = 0; half < 2; ++half) {
          MatrixCoord e = wgmma_d_f16(n, t, reg, half);
          ASSERT_EQ(e, colmajor(c(t, 2 * reg + half), 64));
          seen16.insert({e.row, e.col});
        }
    }
    EXPECT_EQ(seen32.size(), 64u * n);
    EXPECT_EQ(seen16.size(), 64u * n);
  }
}

// shared/notes/ptx.md section 3: thread 37 (w=1, g=1, t=1).
TEST(LayoutWgmma, WorkedExampleThread37) {
  EXPECT_EQ(wgmma_d_f32(256, 37, 0), (MatrixCoord{17, 2}));
  EXPECT_EQ(wgmma_d_f32(256, 37, 1), (MatrixCoord{17, 3}));
  EXPECT_EQ(wgmma_d_f32(256, 37, 2), (MatrixCoord{25, 2}));
  EXPECT_EQ(wgmma_d_f32(256, 37, 3), (MatrixCoord{25, 3}));
  EXPECT_EQ(wgmma_d_f32(256, 37, 4), (MatrixCoord{17, 10}));
  EXPECT_EQ(wgmma_d_f32(256, 37, 127), (MatrixCoord{25, 251}));
  EXPECT_THROW(wgmma_d_f32(256, 37, 128), isatune::InputError);
  EXPECT_THROW(wgmma_d_f32(12, 0, 0), isatune::InputError);
  EXPECT_THROW(wgmma_d_f32(264, 0, 0), isatune::InputError);
  EXPECT_THROW(wgmma_d_f32(64, 128, 0), isatune::InputError);
}

// ALayout_64x16 = ((4,8,4),(2,2,2)):((128,1,16),(64,8,512)) over M x K = 64 x 16 (CuTe; the notes give it as
// "mma.m16n8k16's A per warp, rows offset by 16w", which the evaluator reproduces independently).
TEST(LayoutWgmma, A16BitMatchesCute) {
  Layout a("((4,8,4),(2,2,2)):((128,1,16),(64,8,512))");
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t reg = 0; reg < 4; ++reg)
      for (uint32_t half = 0; half < 2; ++half) {
        MatrixCoord e = wgmma_a_16bit(t, reg, half);
        EXPECT_EQ(e, colmajor(a(t, 2 * reg + half), 64));
        seen.insert({e.row, e.col});
      }
  EXPECT_EQ(seen.size(), 64u * 16u);
}

// (unverified) ALayout_64x32 for 8-bit A, as recalled from CuTe mma_traits_sm90_gmma.hpp:
// ((4,8,4),(4,2,2)):((256,1,16),(64,8,1024)) over M x K = 64 x 32; value = 4*reg + byte.
TEST(LayoutWgmma, A8BitMatchesCuteAlayout64x32) {
  Layout a("((4,8,4),(4,2,2)):((256,1,16),(64,8,1024))");
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t reg = 0; reg < 4; ++reg)
      for (uint32_t byte = 0; byte < 4; ++byte) {
        MatrixCoord e = wgmma_a_8bit(t, reg, byte);
        EXPECT_EQ(e, colmajor(a(t, 4 * reg + byte), 64));
        seen.insert({e.row, e.col});
      }
  EXPECT_EQ(seen.size(), 64u * 32u);
  EXPECT_THROW(wgmma_a_8bit(0, 0, 4), isatune::InputError);
}

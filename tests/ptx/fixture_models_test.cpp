// Models of the data paths of the two GEMM fixtures (tests/fixtures/ptx/cuda/gemm_bf16_sm80.cu and
// gemm_bf16_ws_sm90a.cu): each kernel's index arithmetic, as written in the .cu, replayed through this
// library's instruction semantics (cp.async zero fill, ldmatrix, mma fragments; TMA tile loads with the
// README's tensor-map arguments, multicast halves, wgmma descriptors and the D fragment), compared with the
// float64 references. This checks the kernels' addressing and the README's launch description before the
// emulator can run them; it does not run the PTX (synchronisation is not modelled).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "../fixtures/ptx/cuda/references.h"
#include "isatune/ptx/fragments.h"
#include "isatune/ptx/matrix_descriptor.h"
#include "isatune/ptx/tensor_map.h"

using namespace isatune::ptx;
using isatune::fixtures::bf16_to_double;
using isatune::fixtures::float_to_bf16;

namespace {

std::vector<uint16_t> random_bf16(std::mt19937& rng, int rows, int cols, int valid_cols) {
  std::vector<uint16_t> v(static_cast<size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) // padding holds a value that would show up in a wrong result
      v[static_cast<size_t>(r) * cols + c] =
          float_to_bf16(c < valid_cols ? static_cast<float>(static_cast<int>(rng() % 7) - 3) : 1000.0f);
  return v;
}

} // namespace

// gemm_bf16_sm80: block tile 64 x 64 x 32, 4 warps of 32 x 32, smem pitches 40 / 72 bf16.
TEST(FixtureModels, GemmBf16Sm80DataPath) {
  std::mt19937 rng(5);
  for (auto [M, N, K] :
       std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {17, 9, 13}, {65, 70, 33}, {3, 130, 70}}) {
    const int lda = (K + 7) / 8 * 8 + 8, ldb = (N + 7) / 8 * 8;
    std::vector<uint16_t> A = random_bf16(rng, M, lda, K), B = random_bf16(rng, K, ldb, N);
    std::vector<double> C(static_cast<size_t>(M) * N, -1e300);
    for (int by = 0; by < (M + 63) / 64; ++by)
      for (int bx = 0; bx < (N + 63) / 64; ++bx) {
        const int m0 = 64 * by, n0 = 64 * bx;
        std::vector<double> acc(4 * 2 * 4 * 32 * 4, 0.0); // [warp][mi][ni][lane][reg]
        for (int k0 = 0; k0 < K; k0 += 32) {
          uint16_t As[64][40] = {}, Bs[32][72] = {};
          for (int tid = 0; tid < 128; ++tid)
            for (int i = 0; i < 2; ++i) { // cp.async 16 B, src-size bytes copied, the rest zero-filled
              int c = tid + 128 * i;
              int r = c / 4, kc = (c % 4) * 8, gr = m0 + r, gk = k0 + kc;
              int bytes = gr < M ? std::clamp((K - gk) * 2, 0, 16) : 0;
              for (int e = 0; e < 8; ++e)
                As[r][kc + e] = 2 * e < bytes ? A[static_cast<size_t>(gr) * lda + gk + e] : 0;
              r = c / 8;
              int nc = (c % 8) * 8, gn = n0 + nc;
              gk = k0 + r;
              bytes = gk < K ? std::clamp((N - gn) * 2, 0, 16) : 0;
              for (int e = 0; e < 8; ++e)
                Bs[r][nc + e] = 2 * e < bytes ? B[static_cast<size_t>(gk) * ldb + gn + e] : 0;
            }
          for (int warp = 0; warp < 4; ++warp) {
            const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
            for (int kk = 0; kk < 32; kk += 16)
              for (int mi = 0; mi < 2; ++mi)
                for (int ni = 0; ni < 4; ++ni) {
                  double a[16][16], b[16][8];
                  for (uint32_t lane = 0; lane < 32; ++lane) {
                    for (uint32_t reg = 0; reg < 4; ++reg) // ldmatrix.x4 at &As[wm+16mi+L%16][kk+8(L/16)]
                      for (uint32_t h = 0; h < 2; ++h) {
                        MatrixElement e = ldmatrix_element(4, false, lane, reg, h);
                        uint32_t src = ldmatrix_address_lane(4, e.matrix, e.row);
                        uint16_t v = As[wm + 16 * mi + src % 16][kk + 8 * (src / 16) + e.col];
                        MatrixCoord c = mma_a(MmaShape::m16n8k16, lane, reg, h);
                        a[c.row][c.col] = bf16_to_double(v);
                      }
                    for (uint32_t reg = 0; reg < 2; ++reg) // ldmatrix.x2.trans at &Bs[kk+L%16][wn+8ni]
                      for (uint32_t h = 0; h < 2; ++h) {
                        MatrixElement e = ldmatrix_element(2, true, lane, reg, h);
                        uint32_t src = ldmatrix_address_lane(2, e.matrix, e.row);
                        uint16_t v = Bs[kk + src % 16][wn + 8 * ni + e.col];
                        MatrixCoord c = mma_b(MmaShape::m16n8k16, lane, reg, h);
                        b[c.row][c.col] = bf16_to_double(v);
                      }
                  }
                  for (uint32_t lane = 0; lane < 32; ++lane)
                    for (uint32_t reg = 0; reg < 4; ++reg) {
                      MatrixCoord c = mma_c_f32(lane, reg);
                      double s = 0;
                      for (int k = 0; k < 16; ++k)
                        s += a[c.row][k] * b[k][c.col];
                      acc[(((warp * 2 + mi) * 4 + ni) * 32 + lane) * 4 + reg] += s;
                    }
                }
          }
        }
        // Epilogue as in the kernel: row g + 8(i/2), column 2t + i%2 of each tile.
        for (int warp = 0; warp < 4; ++warp)
          for (int mi = 0; mi < 2; ++mi)
            for (int ni = 0; ni < 4; ++ni)
              for (int lane = 0; lane < 32; ++lane)
                for (int i = 0; i < 4; ++i) {
                  int row = m0 + (warp / 2) * 32 + 16 * mi + lane / 4 + 8 * (i / 2);
                  int col = n0 + (warp % 2) * 32 + 8 * ni + 2 * (lane % 4) + i % 2;
                  if (row < M && col < N)
                    C[static_cast<size_t>(row) * N + col] =
                        acc[(((warp * 2 + mi) * 4 + ni) * 32 + lane) * 4 + i];
                }
      }
    EXPECT_EQ(C, isatune::fixtures::gemm_bf16_reference(A.data(), B.data(), M, N, K, lda, ldb))
        << M << " " << N << " " << K;
  }
}

// gemm_bf16_ws_sm90a: README's tensor maps, 3 stages, A box {64,128} per CTA, B half boxes {64,64} multicast
// to both CTAs of the cluster at B[s] + 8192 * rank, consumer w reads A from A[s] + 8192 w + 32 kk.
TEST(FixtureModels, GemmBf16WsSm90aDataPath) {
  std::mt19937 rng(9);
  const uint64_t a_base = 0x100000, b_base = 0x800000;
  const uint32_t smem_base = 0x400, stage = 16384, stages = 3;
  for (auto [M, N, K] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {100, 129, 100}, {129, 140, 200}}) {
    const int lda = (K + 7) / 8 * 8 + 8, ldb = (K + 7) / 8 * 8;
    std::vector<uint16_t> A = random_bf16(rng, M, lda, K), Bt = random_bf16(rng, N, ldb, K);
    GlobalRead read = [&](uint64_t addr, std::span<uint8_t> dst) {
      const std::vector<uint16_t>& v = addr >= b_base ? Bt : A;
      uint64_t off = addr - (addr >= b_base ? b_base : a_base);
      ASSERT_LE(off + dst.size(), v.size() * 2);
      std::memcpy(dst.data(), reinterpret_cast<const uint8_t*>(v.data()) + off, dst.size());
    };
    TensorMapTiledArgs ta;
    ta.data_type = TensorMapDataType::bfloat16;
    ta.rank = 2;
    ta.global_address = a_base;
    ta.global_dim = {uint64_t(K), uint64_t(M), 0, 0, 0};
    ta.global_strides = {uint64_t(lda) * 2, 0, 0, 0};
    ta.box_dim = {64, 128, 0, 0, 0};
    ta.swizzle = TensorMapSwizzle::b128;
    TensorMapTiledArgs tb = ta;
    tb.global_address = b_base;
    tb.global_dim = {uint64_t(K), uint64_t(N), 0, 0, 0};
    tb.global_strides = {uint64_t(ldb) * 2, 0, 0, 0};
    tb.box_dim = {64, 64, 0, 0, 0};
    // The kernel receives the encoded maps; model it from their decoded form.
    ta = decode_tensor_map(encode_tensor_map_tiled(ta));
    tb = decode_tensor_map(encode_tensor_map_tiled(tb));

    std::vector<double> C(static_cast<size_t>(M) * N, -1e300);
    const int grid_x = 2 * (((M + 127) / 128 + 1) / 2), grid_y = (N + 127) / 128, k_tiles = (K + 63) / 64;
    for (int cluster = 0; cluster < grid_x / 2; ++cluster)
      for (int by = 0; by < grid_y; ++by) {
        const int n0 = 128 * by;
        std::vector<uint8_t> smem[2] = {std::vector<uint8_t>(smem_base + 2 * stages * stage),
                                        std::vector<uint8_t>(smem_base + 2 * stages * stage)};
        std::vector<double> acc[2][2]; // [rank][consumer] -> [thread][reg]
        for (auto& r : acc)
          for (auto& w : r)
            w.assign(128 * 64, 0.0);
        for (int kt = 0; kt < k_tiles; ++kt) {
          const uint32_t s = kt % stages;
          const uint32_t a_s = smem_base + s * stage, b_s = smem_base + stages * stage + s * stage;
          for (int rank = 0; rank < 2; ++rank) {
            int32_t ca[2] = {64 * kt, 128 * (2 * cluster + rank)};
            tma_load_tile(ta, ca, read, a_s, std::span<uint8_t>(smem[rank]).subspan(a_s, stage));
            int32_t cb[2] = {64 * kt, n0 + 64 * rank};
            for (int dst = 0; dst < 2; ++dst) // .multicast::cluster, ctaMask 0b11
              tma_load_tile(tb, cb, read, b_s + 8192 * rank,
                            std::span<uint8_t>(smem[dst]).subspan(b_s + 8192 * rank, 8192));
          }
          for (int rank = 0; rank < 2; ++rank)
            for (int w = 0; w < 2; ++w)
              for (uint32_t kk = 0; kk < 4; ++kk) {
                MatrixDescriptor da = decode_matrix_descriptor(
                    encode_matrix_descriptor({a_s + 8192 * w + 32 * kk, 16, 1024, 0, SwizzleMode::b128}));
                MatrixDescriptor db = decode_matrix_descriptor(
                    encode_matrix_descriptor({b_s + 32 * kk, 16, 1024, 0, SwizzleMode::b128}));
                auto elem = [&](uint32_t addr) {
                  uint16_t v;
                  std::memcpy(&v, smem[rank].data() + addr, 2);
                  return bf16_to_double(v);
                };
                double a[64][16], b[128][16];
                for (uint32_t m = 0; m < 64; ++m)
                  for (uint32_t k = 0; k < 16; ++k)
                    a[m][k] = elem(canonical_address(da, WgmmaOperand::a, OperandMajor::k, 2, m, k));
                for (uint32_t n = 0; n < 128; ++n)
                  for (uint32_t k = 0; k < 16; ++k)
                    b[n][k] = elem(canonical_address(db, WgmmaOperand::b, OperandMajor::k, 2, n, k));
                for (uint32_t t = 0; t < 128; ++t)
                  for (uint32_t i = 0; i < 64; ++i) {
                    MatrixCoord c = wgmma_d_f32(128, t, i);
                    double sum = 0;
                    for (int k = 0; k < 16; ++k)
                      sum += a[c.row][k] * b[c.col][k];
                    acc[rank][w][t * 64 + i] += sum;
                  }
              }
        }
        // The kernel's epilogue formula (not wgmma_d_f32): row 16 warp + g + 8((i>>1)&1), col 8(i>>2) + 2q +
        // (i&1).
        for (int rank = 0; rank < 2; ++rank)
          for (int w = 0; w < 2; ++w)
            for (int t = 0; t < 128; ++t)
              for (int i = 0; i < 64; ++i) {
                int row =
                    128 * (2 * cluster + rank) + 64 * w + 16 * (t / 32) + (t % 32) / 4 + 8 * ((i >> 1) & 1);
                int col = n0 + 8 * (i >> 2) + 2 * (t % 4) + (i & 1);
                if (row < M && col < N)
                  C[static_cast<size_t>(row) * N + col] = acc[rank][w][t * 64 + i];
              }
      }
    EXPECT_EQ(C, isatune::fixtures::gemm_bf16_nt_reference(A.data(), Bt.data(), M, N, K, lda, ldb))
        << M << " " << N << " " << K;
  }
}

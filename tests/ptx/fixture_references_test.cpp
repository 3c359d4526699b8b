// The float64 references of the CUDA test kernels (tests/fixtures/ptx/cuda/references.h) on inputs whose
// results are known in closed form, so the emulator tests compare against something checked.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../fixtures/ptx/cuda/references.h"

using namespace isatune::fixtures;

TEST(FixtureReferences, Softmax) {
  const float in[6] = {0.0f, std::log(3.0f), 0.0f, 5.0f, 5.0f, 5.0f}; // rows {1,3,1}/5 and uniform
  std::vector<double> out = softmax_rows_reference(in, 2, 3);
  EXPECT_NEAR(out[0], 1.0 / 5.0, 1e-7);
  EXPECT_NEAR(out[1], 3.0 / 5.0, 1e-7);
  EXPECT_NEAR(out[2], 1.0 / 5.0, 1e-7);
  EXPECT_NEAR(out[0] + out[1] + out[2], 1.0, 1e-12);
  EXPECT_NEAR(out[3], 1.0 / 3.0, 1e-12);
}

TEST(FixtureReferences, LayerNorm) {
  const float x[4] = {1.0f, 3.0f, 2.0f, 2.0f};
  const float gamma[2] = {2.0f, 1.0f}, beta[2] = {0.5f, -0.5f};
  LayerNormReference r = layernorm_rows_reference(x, gamma, beta, 2, 2, 0.0f);
  EXPECT_DOUBLE_EQ(r.mean[0], 2.0);
  EXPECT_DOUBLE_EQ(r.rstd[0], 1.0); // var = 1
  EXPECT_DOUBLE_EQ(r.y[0], -1.0 * 2.0 + 0.5);
  EXPECT_DOUBLE_EQ(r.y[1], 1.0 * 1.0 - 0.5);
  LayerNormReference e = layernorm_rows_reference(x + 2, gamma, beta, 1, 2, 0.25f);
  EXPECT_DOUBLE_EQ(e.rstd[0], 2.0); // var 0 + eps 0.25
  EXPECT_DOUBLE_EQ(e.y[0], 0.5);
}

TEST(FixtureReferences, Reductions) {
  std::vector<float> f(1000, 0.5f);
  EXPECT_DOUBLE_EQ(reduce_sum_f32_reference(f.data(), 1000), 500.0);
  std::vector<uint32_t> u = {0xFFFFFFFFu, 2u, 7u};
  EXPECT_EQ(reduce_sum_u32_reference(u.data(), 3), 8u);
}

TEST(FixtureReferences, Bf16AndGemms) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.00390625f), 0x3F80); // tie -> even
  EXPECT_EQ(float_to_bf16(1.01171875f), 0x3F82); // tie -> even (up)
  EXPECT_DOUBLE_EQ(bf16_to_double(0xC040), -3.0);
  // A = [[1,2],[3,4]] (lda 3), B = [[5,6],[7,8]] (ldb 2): A*B = [[19,22],[43,50]].
  auto b = [](float v) { return float_to_bf16(v); };
  const uint16_t A[6] = {b(1), b(2), 0, b(3), b(4), 0};
  const uint16_t B[4] = {b(5), b(6), b(7), b(8)};
  std::vector<double> c = gemm_bf16_reference(A, B, 2, 2, 2, 3, 2);
  EXPECT_EQ(c, (std::vector<double>{19, 22, 43, 50}));
  // Bt = B^T stored N x K: the NT reference gives the same product.
  const uint16_t Bt[4] = {b(5), b(7), b(6), b(8)};
  EXPECT_EQ(gemm_bf16_nt_reference(A, Bt, 2, 2, 2, 3, 2), c);
}

// MFMA: single-block f16, bf16, fp8/bf8 and f32 shapes with the register layouts of shared/notes/cdna.md
// section 4. A lane holds `epl` consecutive K elements of one row of A (column of B), packed low first:
//   A[i][k] -> lane M*floor(k/epl) + i, element k mod epl;  B[k][j] likewise with j.
//   C/D 32x32: i = 8*floor(r/4) + 4*floor(l/32) + r mod 4, j = l mod 32;  16x16: i = 4*floor(l/16) + r, j = l mod 16.
// Products are summed in f32 in K order (hardware rounding may differ in the last bits).
// i8 shapes (v_mfma_i32_*): signed 8-bit A and B, i32 C/D, the sum wrapping modulo 2^32 (exact: integer
// arithmetic has no order); same layouts with 8 (gfx942) or 16 (gfx950 _i8 shapes) bytes per lane, K
// contiguous in a lane: rocRoller's atom for v_mfma_i32_32x32x32_i8 has num_input_blks 2, k_per_blk 16.
#include <array>
#include <cstring>
#include <type_traits>

#include "ops.h"
#include "util.h"

namespace isatune::emu {

namespace {

// cycles: gfx90a, gfx942, gfx950 (notes section 4).
const MfmaShape kShapes[] = {
    {"V_MFMA_F32_32X32X8F16", 32, 32, 8, MType::f16, MType::f16, 2, 16, {64, 32, 32}},
    {"V_MFMA_F32_16X16X16F16", 16, 16, 16, MType::f16, MType::f16, 2, 4, {32, 16, 16}},
    {"V_MFMA_F32_32X32X8BF16_1K", 32, 32, 8, MType::bf16, MType::bf16, 2, 16, {64, 32, 32}},
    {"V_MFMA_F32_16X16X16BF16_1K", 16, 16, 16, MType::bf16, MType::bf16, 2, 4, {32, 16, 16}},
    {"V_MFMA_F32_16X16X32_F16", 16, 16, 32, MType::f16, MType::f16, 4, 4, {0, 0, 16}},
    {"V_MFMA_F32_32X32X16_F16", 32, 32, 16, MType::f16, MType::f16, 4, 16, {0, 0, 32}},
    {"V_MFMA_F32_16X16X32_BF16", 16, 16, 32, MType::bf16, MType::bf16, 4, 4, {0, 0, 16}},
    {"V_MFMA_F32_32X32X16_BF16", 32, 32, 16, MType::bf16, MType::bf16, 4, 16, {0, 0, 32}},
    {"V_MFMA_F32_16X16X32_FP8_FP8", 16, 16, 32, MType::fp8, MType::fp8, 2, 4, {0, 16, 16}},
    {"V_MFMA_F32_16X16X32_FP8_BF8", 16, 16, 32, MType::fp8, MType::bf8, 2, 4, {0, 16, 16}},
    {"V_MFMA_F32_16X16X32_BF8_FP8", 16, 16, 32, MType::bf8, MType::fp8, 2, 4, {0, 16, 16}},
    {"V_MFMA_F32_16X16X32_BF8_BF8", 16, 16, 32, MType::bf8, MType::bf8, 2, 4, {0, 16, 16}},
    {"V_MFMA_F32_32X32X16_FP8_FP8", 32, 32, 16, MType::fp8, MType::fp8, 2, 16, {0, 32, 32}},
    {"V_MFMA_F32_32X32X16_FP8_BF8", 32, 32, 16, MType::fp8, MType::bf8, 2, 16, {0, 32, 32}},
    {"V_MFMA_F32_32X32X16_BF8_FP8", 32, 32, 16, MType::bf8, MType::fp8, 2, 16, {0, 32, 32}},
    {"V_MFMA_F32_32X32X16_BF8_BF8", 32, 32, 16, MType::bf8, MType::bf8, 2, 16, {0, 32, 32}},
    // Integer: gfx942 (CDNA3 ISA) and gfx950; gfx950-only 16x16x64 and 32x32x32 (CDNA4 ISA). Passes from
    // rocRoller's GPUInstructionInfo (4 / 8: 16 / 32 cycles).
    {"V_MFMA_I32_16X16X32I8", 16, 16, 32, MType::i8, MType::i8, 2, 4, {0, 16, 16}},
    {"V_MFMA_I32_32X32X16I8", 32, 32, 16, MType::i8, MType::i8, 2, 16, {0, 32, 32}},
    {"V_MFMA_I32_16X16X64_I8", 16, 16, 64, MType::i8, MType::i8, 4, 4, {0, 0, 16}},
    {"V_MFMA_I32_32X32X32_I8", 32, 32, 32, MType::i8, MType::i8, 4, 16, {0, 0, 32}},
    {"V_MFMA_F32_32X32X2F32", 32, 32, 2, MType::f32, MType::f32, 1, 16, {64, 64, 64}},
    {"V_MFMA_F32_16X16X4F32", 16, 16, 4, MType::f32, MType::f32, 1, 4, {32, 32, 32}},
};

// The arithmetic runs on GCC/Clang vector extensions (4 lanes of f32 or u32: one SSE2 / NEON register). D is
// kept as an M x N matrix, row i accumulating a[i][k] * b[k][0..N) for k = 0, 1, ... in turn, so every element
// still sums its products in K order exactly as the scalar loop did (same roundings, same results), several
// times faster.
typedef float F32x4 __attribute__((vector_size(16)));
typedef uint32_t U32x4 __attribute__((vector_size(16)));

// 8-bit float decodes, one table per (bf8, fnuz) pair, filled once from fp8_to_f32.
const float* fp8_table(bool bf8, bool fnuz) {
  static const auto tables = [] {
    std::array<std::array<float, 256>, 4> t{};
    for (int v = 0; v < 4; ++v)
      for (int x = 0; x < 256; ++x) t[size_t(v)][size_t(x)] = fp8_to_f32(uint8_t(x), v & 1, v & 2);
    return t;
  }();
  return tables[size_t((bf8 ? 1 : 0) | (fnuz ? 2 : 0))].data();
}

// Element e (K order) of a lane's A or B operand, decoded to the accumulator type.
template <MType t> inline auto decode(const Wave& w, uint16_t reg, int lane, int e, const float* fp8) {
  if constexpr (t == MType::f32) return as_f(w.v[reg + e][lane]);
  else if constexpr (t == MType::f16 || t == MType::bf16) {
    uint16_t x = uint16_t(w.v[reg + e / 2][lane] >> (16 * (e % 2)));
    return t == MType::f16 ? f16_to_f32(x) : bf16_to_f32(x);
  } else if constexpr (t == MType::i8) {
    return uint32_t(int32_t(int8_t(w.v[reg + e / 4][lane] >> (8 * (e % 4)))));
  } else {
    return fp8[uint8_t(w.v[reg + e / 4][lane] >> (8 * (e % 4)))];
  }
}

// Output element (i, j) of C/D register r, lane l, as i * N + j, per M (32 or 16).
const uint16_t* out_index(int m) {
  static const auto tables = [] {
    std::array<std::array<uint16_t, 16 * 64>, 2> t{};
    for (int r = 0; r < 16; ++r)
      for (int l = 0; l < 64; ++l) {
        int i32 = 8 * (r / 4) + 4 * (l / 32) + r % 4, i16 = 4 * (l / 16) + r % 4;
        t[0][size_t(r * 64 + l)] = uint16_t(i32 * 32 + l % 32);
        t[1][size_t(r * 64 + l)] = uint16_t(i16 * 16 + l % 16);
      }
    return t;
  }();
  return tables[m == 32 ? 0 : 1].data();
}

template <int M, MType TA, MType TB> void mfma_shape(Wave& w, const Inst& in) {
  constexpr int N = M, NV = N / 4;
  using T = std::conditional_t<TA == MType::i8, uint32_t, float>;
  using V = std::conditional_t<TA == MType::i8, U32x4, F32x4>;
  const MfmaShape& s = *in.mfma;
  const Opnd &A = in.src[0], &B = in.src[1], &C = in.src[2], &D = in.dst[0];
  const bool fnuz = w.ctx->gfx == cdna::Gfx::gfx942;
  const float* fa = fp8_table(TA == MType::bf8, fnuz);
  const float* fb = fp8_table(TB == MType::bf8, fnuz);
  const int K = s.k, epl = s.ab_regs * 4 / (TA == MType::f32 ? 4 : TA == MType::f16 || TA == MType::bf16 ? 2 : 1);
  // A as M x K (row i contiguous), B as K rows of N.
  T a[M * 64];
  alignas(32) T b[64 * N];
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < epl; ++e) {
      int row = l % M, k = (l / M) * epl + e;
      if (k >= K) continue;
      a[row * K + k] = decode<TA>(w, A.reg, l, e, fa);
      b[k * N + row] = decode<TB>(w, B.reg, l, e, fb);
    }
  alignas(32) T accs[M * N];
  const uint16_t* idx = out_index(M);
  if (C.kind == OpKind::vgpr) {
    for (int r = 0; r < s.cd_regs; ++r)
      for (int l = 0; l < 64; ++l) std::memcpy(&accs[idx[r * 64 + l]], &w.v[C.reg + r][l], 4);
  } else if (C.kind == OpKind::imm) {
    const uint32_t c = uint32_t(C.imm);
    for (int r = 0; r < s.cd_regs; ++r)
      for (int l = 0; l < 64; ++l) std::memcpy(&accs[idx[r * 64 + l]], &c, 4);
  } else {
    unsupported(w, "MFMA SrcC not modelled");
  }
  for (int i = 0; i < M; ++i) {
    V acc[NV]; // row i of D, kept in registers across the K loop
    std::memcpy(acc, accs + i * N, sizeof acc);
    for (int k = 0; k < K; ++k) {
      const V av = V{} + a[i * K + k];
#pragma GCC unroll 8
      for (int jv = 0; jv < NV; ++jv) {
        V bv;
        std::memcpy(&bv, b + k * N + jv * 4, sizeof bv);
        V p = av * bv; // the product rounded on its own, then added: no fused multiply-add
        acc[jv] += p;
      }
    }
    std::memcpy(accs + i * N, acc, sizeof acc);
  }
  // MFMA ignores EXEC (all lanes take part).
  for (int r = 0; r < s.cd_regs; ++r)
    for (int l = 0; l < 64; ++l) {
      std::memcpy(&w.v[D.reg + r][l], &accs[idx[r * 64 + l]], 4);
    }
}

template <int M> void mfma_m(Wave& w, const Inst& in) {
  const MfmaShape& s = *in.mfma;
  auto pair = [&](MType a, MType b) { return s.a == a && s.b == b; };
  if (pair(MType::f16, MType::f16)) return mfma_shape<M, MType::f16, MType::f16>(w, in);
  if (pair(MType::bf16, MType::bf16)) return mfma_shape<M, MType::bf16, MType::bf16>(w, in);
  if (pair(MType::f32, MType::f32)) return mfma_shape<M, MType::f32, MType::f32>(w, in);
  if (pair(MType::i8, MType::i8)) return mfma_shape<M, MType::i8, MType::i8>(w, in);
  if (pair(MType::fp8, MType::fp8)) return mfma_shape<M, MType::fp8, MType::fp8>(w, in);
  if (pair(MType::fp8, MType::bf8)) return mfma_shape<M, MType::fp8, MType::bf8>(w, in);
  if (pair(MType::bf8, MType::fp8)) return mfma_shape<M, MType::bf8, MType::fp8>(w, in);
  if (pair(MType::bf8, MType::bf8)) return mfma_shape<M, MType::bf8, MType::bf8>(w, in);
  unsupported(w, "MFMA operand types not modelled");
}

void mfma(Wave& w, const Inst& in) {
  const MfmaShape& s = *in.mfma;
  if (in.nimm >= 3 && (in.imm[0] || in.imm[1] || in.imm[2]))
    unsupported(w, "MFMA with cbsz/abid/blgp broadcast is not modelled");
  const Opnd &A = in.src[0], &B = in.src[1], &D = in.dst[0];
  if (A.kind != OpKind::vgpr || B.kind != OpKind::vgpr || D.kind != OpKind::vgpr)
    unsupported(w, "MFMA operands not modelled");
  if (s.m == 32 && s.n == 32) return mfma_m<32>(w, in);
  if (s.m == 16 && s.n == 16) return mfma_m<16>(w, in);
  unsupported(w, "MFMA shape not modelled");
}

} // namespace

const MfmaShape* find_mfma(std::string_view base_name) {
  for (const auto& s : kShapes)
    if (base_name == s.name) return &s;
  return nullptr;
}

void register_mfma_ops() {
  for (const auto& s : kShapes) add_op(s.name, mfma, Cat::mfma);
}

} // namespace isatune::emu

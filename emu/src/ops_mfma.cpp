// MFMA: single-block f16, bf16, fp8/bf8 and f32 shapes with the register layouts of shared/notes/cdna.md
// section 4. A lane holds `epl` consecutive K elements of one row of A (column of B), packed low first:
//   A[i][k] -> lane M*floor(k/epl) + i, element k mod epl;  B[k][j] likewise with j.
//   C/D 32x32: i = 8*floor(r/4) + 4*floor(l/32) + r mod 4, j = l mod 32;  16x16: i = 4*floor(l/16) + r, j = l mod 16.
// Products are summed in f32 in K order (hardware rounding may differ in the last bits).
// i8 shapes (v_mfma_i32_*): signed 8-bit A and B, i32 C/D, the sum wrapping modulo 2^32 (exact: integer
// arithmetic has no order); same layouts with 8 (gfx942) or 16 (gfx950 _i8 shapes) bytes per lane, K
// contiguous in a lane: rocRoller's atom for v_mfma_i32_32x32x32_i8 has num_input_blks 2, k_per_blk 16.
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

float element(const Wave& w, uint16_t reg, int lane, int e, MType t, bool fnuz) {
  switch (t) {
  case MType::f32: return as_f(w.v[reg + e][lane]);
  case MType::f16:
  case MType::bf16: {
    uint16_t x = uint16_t(w.v[reg + e / 2][lane] >> (16 * (e % 2)));
    return t == MType::f16 ? f16_to_f32(x) : bf16_to_f32(x);
  }
  default: {
    uint8_t x = uint8_t(w.v[reg + e / 4][lane] >> (8 * (e % 4)));
    return fp8_to_f32(x, t == MType::bf8, fnuz);
  }
  }
}

int bytes_of(MType t) { return t == MType::f32 ? 4 : (t == MType::f16 || t == MType::bf16) ? 2 : 1; }

// Output element (i, j) of C/D register r, lane l.
inline void out_ij(const MfmaShape& s, int r, int l, int& i, int& j) {
  i = s.m == 32 ? 8 * (r / 4) + 4 * (l / 32) + r % 4 : 4 * (l / 16) + r;
  j = l % s.n;
}

void mfma_i8(Wave& w, const Inst& in) {
  const MfmaShape& s = *in.mfma;
  const Opnd &A = in.src[0], &B = in.src[1], &C = in.src[2], &D = in.dst[0];
  const int epl = s.ab_regs * 4;
  int32_t a[32 * 64], b[64 * 32];
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < epl; ++e) {
      int row = l % s.m, k = (l / s.m) * epl + e;
      if (k >= s.k) continue;
      a[row * s.k + k] = int8_t(w.v[A.reg + e / 4][l] >> (8 * (e % 4)));
      b[k * s.n + row] = int8_t(w.v[B.reg + e / 4][l] >> (8 * (e % 4)));
    }
  uint32_t c[16][64];
  for (int r = 0; r < s.cd_regs; ++r)
    for (int l = 0; l < 64; ++l) {
      if (C.kind == OpKind::vgpr) c[r][l] = w.v[C.reg + r][l];
      else if (C.kind == OpKind::imm) c[r][l] = uint32_t(C.imm);
      else unsupported(w, "MFMA SrcC not modelled");
    }
  for (int r = 0; r < s.cd_regs; ++r)
    for (int l = 0; l < 64; ++l) {
      int i, j;
      out_ij(s, r, l, i, j);
      uint32_t acc = c[r][l];
      for (int k = 0; k < s.k; ++k) acc += uint32_t(a[i * s.k + k] * b[k * s.n + j]);
      w.v[D.reg + r][l] = acc;
    }
}

void mfma(Wave& w, const Inst& in) {
  const MfmaShape& s = *in.mfma;
  if (in.nimm >= 3 && (in.imm[0] || in.imm[1] || in.imm[2]))
    unsupported(w, "MFMA with cbsz/abid/blgp broadcast is not modelled");
  const Opnd &A = in.src[0], &B = in.src[1], &C = in.src[2], &D = in.dst[0];
  if (A.kind != OpKind::vgpr || B.kind != OpKind::vgpr || D.kind != OpKind::vgpr)
    unsupported(w, "MFMA operands not modelled");
  if (s.a == MType::i8) return mfma_i8(w, in);
  const bool fnuz = w.ctx->gfx == cdna::Gfx::gfx942;
  const int epl = s.ab_regs * 4 / bytes_of(s.a);
  // Gather A (M x K) and B (K x N) in f32.
  float a[32 * 64], b[64 * 32];
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < epl; ++e) {
      int row = l % s.m, k = (l / s.m) * epl + e;
      if (k >= s.k) continue;
      a[row * s.k + k] = element(w, A.reg, l, e, s.a, fnuz);
      b[k * s.n + row] = element(w, B.reg, l, e, s.b, fnuz);
    }
  float c[16][64];
  for (int r = 0; r < s.cd_regs; ++r)
    for (int l = 0; l < 64; ++l) {
      if (C.kind == OpKind::vgpr) c[r][l] = as_f(w.v[C.reg + r][l]);
      else if (C.kind == OpKind::imm) c[r][l] = as_f(uint32_t(C.imm));
      else unsupported(w, "MFMA SrcC not modelled");
    }
  // MFMA ignores EXEC (all lanes take part).
  for (int r = 0; r < s.cd_regs; ++r)
    for (int l = 0; l < 64; ++l) {
      int i, j;
      out_ij(s, r, l, i, j);
      float acc = c[r][l];
      for (int k = 0; k < s.k; ++k) acc += a[i * s.k + k] * b[k * s.n + j];
      w.v[D.reg + r][l] = as_u(acc);
    }
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

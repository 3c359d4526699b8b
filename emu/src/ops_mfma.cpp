// MFMA: single-block f16, bf16, fp8/bf8 and f32 shapes with the register layouts of shared/notes/cdna.md
// section 4. A lane holds `epl` consecutive K elements of one row of A (column of B), packed low first:
//   A[i][k] -> lane M*floor(k/epl) + i, element k mod epl;  B[k][j] likewise with j.
//   C/D 32x32: i = 8*floor(r/4) + 4*floor(l/32) + r mod 4, j = l mod 32;  16x16: i = 4*floor(l/16) + r, j = l mod 16.
// Products are summed in f32 in K order (hardware rounding may differ in the last bits).
// i8 shapes (v_mfma_i32_*): signed 8-bit A and B, i32 C/D, the sum wrapping modulo 2^32 (exact: integer
// arithmetic has no order); same layouts with 8 (gfx942) or 16 (gfx950 _i8 shapes) bytes per lane, K
// contiguous in a lane: rocRoller's atom for v_mfma_i32_32x32x32_i8 has num_input_blks 2, k_per_blk 16.
// gfx950 f8f6f4 shapes (v_mfma_[scale_]f32_{16x16x128,32x32x64}_f8f6f4, v_smfmac_f32_16x16x128_fp8_fp8): see
// f8f6f4() and smfmac() below.
#include <array>
#include <cmath>
#include <string>
#include <vector>
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

// ---- gfx950 f8f6f4 MFMAs ----
// v_mfma_f32_16x16x128_f8f6f4, v_mfma_f32_32x32x64_f8f6f4 and their v_mfma_scale_ forms (CDNA4 ISA; LLVM
// names one opcode per register-tuple pair, V_MFMA_[SCALE_]F32_..._F8F6F4_{f8,f6,f4}_{f8,f6,f4}: 8, 6 or 4
// VGPRs). cbsz gives A's format, blgp B's (0 FP8 E4M3, 1 BF8 E5M2, 2 FP6 E2M3, 3 BF6 E3M2, 4 FP4 E2M1;
// LLVM's AMDGPUUsage / mai-gfx950.s: "wrong register tuple size for cbsz value" otherwise, so the tuple size
// and the format agree). Each lane holds 32 elements of one row of A (column of B), G = 64/M lane groups:
//   FP6 / FP4 (packed low bits first, FP6 at bit 6e of the 192-bit tuple): element e of lane l is
//     A[l mod M][32 floor(l/M) + e]                      (ROCm blog "Matrix Core Programming on CDNA3 and
//     CDNA4", FP4 32x32x64 example; Modular's MXFP4 kernel notes for 16x16x128: "each lane loads 16
//     contiguous bytes ... lane_chunk = lane / 16")
//   FP8 / BF8 (byte e of the 32-byte tuple): A[l mod M][(K/2) floor(e/16) + 16 floor(l/M) + (e mod 16)], two
//     halves of 16 (the blog's FP8 32x32x64 example: "this scheme is valid only if both ... have FP8 type").
//     The FP6 layout (no published example) is the emulator's reading: that of FP4.
// v_mfma_scale_ (CDNA4 ISA; OCP MX v1.0 block scaling, 32 elements per scale): scale_src0 / scale_src1 are
// VGPRs holding an E8M0 byte per lane (LLVM allows VGPRs only: "For all Inline/SGPR constants, SP HW use bits
// [30:23] as the scale"), the byte chosen by op_sel (bit 0) and op_sel_hi (bit 1) of each scale operand
// (LLVM's selection of llvm.amdgcn.mfma.scale.*: OPSEL 1 -> op_sel, 2 -> op_sel_hi, checked with llc 22). The
// scale of A's row i, K block b (K = 32b .. 32b+31) is that byte of lane i + M b; B's column j likewise
// (lane j + N b). The scales are applied "after the normal dot product and prior to output/accumulation" (the
// blog): per block the products are summed in f32, the sum is multiplied by 2^(Sa + Sb - 254) and added to the
// accumulator; E8M0 0xFF is NaN (OCP MX 5.4). Without scales the products are summed in K order as elsewhere.
struct F8f6f4Op {
  const char* suffix;
  uint8_t a_regs, b_regs;
};
const F8f6f4Op kF8f6f4Pairs[] = {{"f8_f8", 8, 8}, {"f8_f6", 8, 6}, {"f6_f8", 6, 8},
                                 {"f6_f6", 6, 6}, {"f8_f4", 8, 4}, {"f4_f8", 4, 8},
                                 {"f6_f4", 6, 4}, {"f4_f6", 4, 6}, {"f4_f4", 4, 4}};

const std::vector<MfmaShape>& f8f6f4_shapes() {
  static const std::vector<MfmaShape> shapes = [] {
    static std::vector<std::string> names; // storage for MfmaShape::name
    names.reserve(4 * std::size(kF8f6f4Pairs) + 1);
    std::vector<MfmaShape> v;
    for (int scaled = 0; scaled < 2; ++scaled)
      for (int m : {16, 32})
        for (const auto& p : kF8f6f4Pairs) {
          names.push_back(std::string(scaled ? "V_MFMA_SCALE_F32_" : "V_MFMA_F32_") +
                          (m == 16 ? "16X16X128" : "32X32X64") + "_F8F6F4_" + p.suffix);
          MfmaShape s{};
          s.name = names.back().c_str();
          s.m = s.n = uint8_t(m), s.k = uint8_t(m == 16 ? 128 : 64);
          s.a = s.b = MType::f8f6f4;
          s.ab_regs = p.a_regs, s.b_regs = p.b_regs, s.cd_regs = m == 16 ? 4 : 16;
          // Cycles (shared/notes/cdna.md section 4, LLVM SISchedule.td for gfx950): 16x16x128 32 with an FP8
          // operand, else 16; 32x32x64 64 / 32.
          const bool f8 = p.a_regs == 8 || p.b_regs == 8;
          s.cycles[2] = uint16_t((m == 16 ? 16 : 32) * (f8 ? 2 : 1));
          s.scaled = scaled;
          v.push_back(s);
        }
    // v_smfmac_f32_16x16x128_fp8_fp8 (gfx950): 4:2 sparse A (4 VGPRs), B 8 VGPRs, 16 passes (rocRoller / LLVM
    // SISchedule.td: as the dense 16x16x128 FP8 MFMA, 32 cycles).
    names.push_back("V_SMFMAC_F32_16X16X128_FP8_FP8");
    MfmaShape s{};
    s.name = names.back().c_str();
    s.m = s.n = 16, s.k = 128, s.a = s.b = MType::fp8, s.ab_regs = 4, s.b_regs = 8, s.cd_regs = 4;
    s.cycles[2] = 32;
    s.sparse = true;
    v.push_back(s);
    return v;
  }();
  return shapes;
}

// The 5 format tables (mx_to_f32 of every code), filled once.
const float* mx_table(int fmt) {
  static const auto tables = [] {
    std::array<std::array<float, 256>, 5> t{};
    for (int f = 0; f < 5; ++f)
      for (int c = 0; c < (f <= 1 ? 256 : f == 4 ? 16 : 64); ++c)
        t[size_t(f)][size_t(c)] = mx_to_f32(uint32_t(c), f);
    return t;
  }();
  return tables[size_t(fmt)].data();
}

// Decodes one operand into rows of K: out[row * K + k], row = lane mod M (A's row i or B's column j).
void gather_f8f6f4(const Wave& w, uint16_t reg, int regs, int fmt, int m, int kdim, float* out) {
  const float* t = mx_table(fmt);
  for (int l = 0; l < 64; ++l) {
    const int row = l % m, g = l / m;
    uint32_t d[8] = {};
    for (int r = 0; r < regs; ++r) d[r] = w.v[reg + r][l];
    for (int e = 0; e < 32; ++e) {
      uint32_t code;
      int k;
      if (regs == 8) {
        code = (d[e / 4] >> (8 * (e % 4))) & 0xff;
        k = (kdim / 2) * (e / 16) + 16 * g + e % 16;
      } else if (regs == 6) {
        const int bit = 6 * e, word = bit / 32, sh = bit % 32;
        uint64_t two = uint64_t(d[word]) | (word + 1 < 8 ? uint64_t(d[word + 1]) << 32 : 0);
        code = uint32_t(two >> sh) & 0x3f;
        k = 32 * g + e;
      } else {
        code = (d[e / 8] >> (4 * (e % 8))) & 0xf;
        k = 32 * g + e;
      }
      out[row * kdim + k] = t[code];
    }
  }
}

void load_acc(Wave& w, const Opnd& C, int cd_regs, int m, float* accs) {
  const uint16_t* idx = out_index(m);
  if (C.kind == OpKind::vgpr) {
    for (int r = 0; r < cd_regs; ++r)
      for (int l = 0; l < 64; ++l) std::memcpy(&accs[idx[r * 64 + l]], &w.v[C.reg + r][l], 4);
  } else if (C.kind == OpKind::imm) {
    const uint32_t c = uint32_t(C.imm);
    for (int r = 0; r < cd_regs; ++r)
      for (int l = 0; l < 64; ++l) std::memcpy(&accs[idx[r * 64 + l]], &c, 4);
  } else {
    unsupported(w, "MFMA SrcC not modelled");
  }
}

void store_acc(Wave& w, const Opnd& D, int cd_regs, int m, const float* accs) {
  const uint16_t* idx = out_index(m);
  for (int r = 0; r < cd_regs; ++r)
    for (int l = 0; l < 64; ++l) std::memcpy(&w.v[D.reg + r][l], &accs[idx[r * 64 + l]], 4);
}

// acc[i][j] += sum over k in [k0, k1) of a[i][k] * b[j][k] (a and b as rows of K), in K order, each product
// rounded to f32 before the add.
template <int M> void dot_rows(const float* a, const float* b, int kdim, int k0, int k1, float* acc) {
  constexpr int NV = M / 4;
  alignas(32) float bt[128 * M]; // B transposed to K rows of N for the vector loop
  for (int k = k0; k < k1; ++k)
    for (int j = 0; j < M; ++j) bt[k * M + j] = b[j * kdim + k];
  for (int i = 0; i < M; ++i) {
    F32x4 v[NV];
    std::memcpy(v, acc + i * M, sizeof v);
    for (int k = k0; k < k1; ++k) {
      const F32x4 av = F32x4{} + a[i * kdim + k];
#pragma GCC unroll 8
      for (int jv = 0; jv < NV; ++jv) {
        F32x4 bv;
        std::memcpy(&bv, bt + k * M + jv * 4, sizeof bv);
        F32x4 p = av * bv;
        v[jv] += p;
      }
    }
    std::memcpy(acc + i * M, v, sizeof v);
  }
}

template <int M> void f8f6f4_m(Wave& w, const Inst& in) {
  const MfmaShape& s = *in.mfma;
  constexpr int G = 64 / M;
  const int K = s.k;
  const Opnd &A = in.src[0], &B = in.src[1], &C = in.src[2], &D = in.dst[0];
  const int fa = int(in.imm[0]), fb = int(in.imm[1]);
  if (fa > 4 || fb > 4) unsupported(w, "f8f6f4 format (cbsz/blgp) above 4 is not defined");
  if ((fa <= 1) != (s.ab_regs == 8) || (fa == 4) != (s.ab_regs == 4) ||
      (fb <= 1) != (s.b_regs == 8) || (fb == 4) != (s.b_regs == 4))
    unsupported(w, "f8f6f4 format (cbsz/blgp) does not match the register tuple size");
  alignas(32) float a[32 * 128], b[32 * 128];
  gather_f8f6f4(w, A.reg, s.ab_regs, fa, M, K, a);
  gather_f8f6f4(w, B.reg, s.b_regs, fb, M, K, b);
  alignas(32) float acc[M * M];
  load_acc(w, C, s.cd_regs, M, acc);
  if (!s.scaled) {
    dot_rows<M>(a, b, K, 0, K, acc);
  } else {
    const Opnd &SA = in.src[3], &SB = in.src[4];
    if (SA.kind != OpKind::vgpr || SB.kind != OpKind::vgpr)
      unsupported(w, "v_mfma_scale_* with a scale operand that is not a VGPR is not modelled");
    // op_sel / op_sel_hi of the scale operands: the trailing two immediates (src0/src1 modifiers).
    const int nmods = in.nimm - 2;
    const int ma = nmods >= 1 ? int(in.imm[2]) : 0, mb = nmods >= 2 ? int(in.imm[3]) : 0;
    const int sela = ((ma >> 2) & 1) | ((ma >> 3) & 1) << 1, selb = ((mb >> 2) & 1) | ((mb >> 3) & 1) << 1;
    int ea[M][G], eb[M][G];
    for (int r = 0; r < M; ++r)
      for (int g = 0; g < G; ++g) {
        ea[r][g] = int((w.v[SA.reg][r + M * g] >> (8 * sela)) & 0xff);
        eb[r][g] = int((w.v[SB.reg][r + M * g] >> (8 * selb)) & 0xff);
      }
    for (int blk = 0; blk < G; ++blk) {
      alignas(32) float part[M * M] = {};
      dot_rows<M>(a, b, K, 32 * blk, 32 * blk + 32, part);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j) {
          const int x = ea[i][blk], y = eb[j][blk];
          const float scaled =
              (x == 0xff || y == 0xff) ? NAN : float(std::ldexp(double(part[i * M + j]), x + y - 254));
          acc[i * M + j] += scaled;
        }
    }
  }
  store_acc(w, D, s.cd_regs, M, acc); // MFMA ignores EXEC
}

// v_smfmac_f32_16x16x128_fp8_fp8 vdst, A (4 VGPRs), B (8 VGPRs), idx (1 VGPR) (gfx950; D += A B with D
// tied as C; OCP E4M3 as the dense gfx950 MFMAs). A is 4:2 structured-sparse: of every 4 consecutive K one row
// stores 2 values, and 2 index bits each say where they sit. The CDNA3 layout of v_smfmac_f32_16x16x64_fp8_fp8
// (AMD matrix instruction calculator, -a cdna3 -d: A[i][k] lane 16 floor(k/16) + i, A VGPR floor(k/8) mod 2
// bits 16 (floor(k/4) mod 2); index bits 4 (floor(k/4) mod 4) .. +3; B[k][j] lane 16 floor(k/16) + j, byte k
// mod 16) is taken twice, as the dense gfx950 FP8 MFMA takes the CDNA3 one: half h (K 64h .. 64h+63) uses A
// VGPRs 2h, 2h+1, B VGPRs 4h .. 4h+3 and index bits 16h .. 16h+15 (the emulator's reading: no published
// gfx950 layout; no AITER kernel that uses it has been run). Within a group of 4 K, the low 2 index bits place
// the first stored byte, the next 2 the second. cbsz/abid (index-set selection) other than 0 stop the launch.
void smfmac(Wave& w, const Inst& in) {
  const Opnd &A = in.src[0], &B = in.src[1], &I = in.src[2], &D = in.dst[0];
  if (A.kind != OpKind::vgpr || B.kind != OpKind::vgpr || I.kind != OpKind::vgpr || D.kind != OpKind::vgpr)
    unsupported(w, "SMFMAC operands not modelled");
  if (in.nimm >= 2 && (in.imm[0] || in.imm[1]))
    unsupported(w, "SMFMAC with cbsz/abid index selection is not modelled");
  constexpr int M = 16, K = 128;
  const float* t = fp8_table(false, false);
  alignas(32) float a[M * K] = {}, b[M * K];
  for (int l = 0; l < 64; ++l) {
    const int row = l % M, g = l / M;
    const uint32_t idx = w.v[I.reg][l];
    for (int h = 0; h < 2; ++h) {
      for (int e = 0; e < 16; ++e) // B: bytes of VGPRs 4h..4h+3
        b[row * K + 64 * h + 16 * g + e] = t[(w.v[B.reg + 4 * h + e / 4][l] >> (8 * (e % 4))) & 0xff];
      for (int q = 0; q < 4; ++q) { // A: group q of 4 K, 2 stored bytes
        const uint32_t word = w.v[A.reg + 2 * h + q / 2][l] >> (16 * (q % 2));
        const uint32_t bits = idx >> (16 * h + 4 * q);
        const int base = 64 * h + 16 * g + 4 * q;
        a[row * K + base + int(bits & 3)] += t[word & 0xff];
        a[row * K + base + int((bits >> 2) & 3)] += t[(word >> 8) & 0xff];
      }
    }
  }
  alignas(32) float acc[M * M];
  load_acc(w, D, 4, M, acc);
  dot_rows<M>(a, b, K, 0, K, acc);
  store_acc(w, D, 4, M, acc);
}

void f8f6f4(Wave& w, const Inst& in) {
  const Opnd &A = in.src[0], &B = in.src[1], &D = in.dst[0];
  if (A.kind != OpKind::vgpr || B.kind != OpKind::vgpr || D.kind != OpKind::vgpr || in.nimm < 2)
    unsupported(w, "MFMA operands not modelled");
  if (in.mfma->m == 32) return f8f6f4_m<32>(w, in);
  return f8f6f4_m<16>(w, in);
}

} // namespace

const MfmaShape* find_mfma(std::string_view base_name) {
  for (const auto& s : kShapes)
    if (base_name == s.name) return &s;
  for (const auto& s : f8f6f4_shapes())
    if (base_name == s.name) return &s;
  return nullptr;
}

void register_mfma_ops() {
  for (const auto& s : kShapes) add_op(s.name, mfma, Cat::mfma);
  for (const auto& s : f8f6f4_shapes()) add_op(s.name, s.sparse ? smfmac : f8f6f4, Cat::mfma);
}

} // namespace isatune::emu

#pragma once
// The GEMM generator's signature, parameters and the plan derived from them (register and LDS budgets, load
// slots), shared by the space's constraints and the code emission so that every valid point generates.
//
// Convention (BLAS, column-major): D = alpha * op(A) * op(B) + beta * C, op(A) M x K, op(B) K x N, C and D
// M x N column-major with ldc, ldd >= M. Layout letter 'N': A stored column-major M x K (lda >= M);
// 'T': A stored K x M column-major (lda >= K), i.e. op(A) = A^T. Same for B (K x N; 'T': stored N x K).
#include <string>
#include <vector>

#include "isatune/gen/dtype.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::gemm {

struct GemmSig {
  DType a = DType::f16, b = DType::f16; // A and B: both f16, both bf16, or two fp8 types of one family
  DType cd = DType::f32;                // C and D
  bool a_trans = false, b_trans = false;
  std::string layout = "NN";
  bool fp8() const { return is_fp8(a); }
  int in_bytes() const { return int(size_of(a)); } // bytes per A/B element (1 or 2)
};
// Throws InputError for an unsupported combination (16-bit a != b, fp8 mixed with 16-bit or OCP with FNUZ).
GemmSig parse_sig(const Signature& sig);
// Throws InputError when the target's MFMAs cannot read the signature's input types: fp8 needs gfx942 (FNUZ
// encodings, fp8_*_fnuz) or gfx950 (OCP encodings, fp8_e4m3 / fp8_e5m2); gfx90a has no fp8 MFMA.
void check_target(const std::string& isa, const GemmSig& sig);

struct MfmaShape {
  std::string name; // "32x32x8"
  int m = 32, n = 32, k = 8;
  int ab_regs = 2;  // VGPRs per lane for A and for B
  int cd_regs = 16; // VGPRs per lane for C/D
  int epl() const { return k * m / 64; } // consecutive K elements per lane (4 or 8)
};
// The shapes a target offers for the signature's input types, in parameter order.
std::vector<MfmaShape> shapes_for(const std::string& isa, const GemmSig& sig);
// Canonical (gfx942) form name of the shape for the input types.
std::string mfma_form(const MfmaShape& s, const GemmSig& sig);

struct GemmConfig {
  int tile_m = 64, tile_n = 64, depth = 16;
  int waves_m = 1, waves_n = 1;
  MfmaShape shape;
  int vw = 1;       // dwords per global load (fast path)
  int lds_pad = 0;  // input elements added to each LDS row
  bool pgr = false; // global read prefetch with double-buffered LDS
  bool plr = false; // local read prefetch (double-buffered fragments)
  int split_k = 1;
  std::string wg_order = "row"; // row, col, g4, g8
};

// One operand's global -> LDS copy: the tile is Tmn (M or N extent) x depth; `kcontig` when K is the stored
// contiguous dimension (A 'T', B 'N').
struct OperandPlan {
  bool kcontig = false;
  int tmn = 0;       // tile extent in M (A) or N (B)
  int tc = 0, ts = 0; // contiguous and strided tile extents
  int e = 2;         // elements per slot (4 * vw / element bytes)
  int slots = 0;     // slots per thread
};

struct Plan {
  int waves = 1, threads = 64;
  int wm = 0, wn = 0; // wave tile
  int bm = 0, bn = 0; // MFMA blocks per wave
  int nks = 0;        // MFMA k-steps per depth
  int es = 2;         // bytes per A/B element
  int row = 0;        // LDS row stride in elements (depth + pad)
  int row_bytes = 0;  // row * es
  int lds_b_base = 0; // byte offset of B's tile in a stage
  int stage_bytes = 0, lds_bytes = 0;
  OperandPlan a, b;
  int vgprs = 0; // arch VGPRs the kernel allocates (the generator allocates exactly this layout)
};

// The parameters for a target and signature (value lists), in Cartesian order.
std::vector<Parameter> parameters(const std::string& isa, const GemmSig& sig);
GemmConfig decode(const std::string& isa, const GemmSig& sig, const Params& p);
Plan make_plan(const GemmSig& sig, const GemmConfig& c);
// Empty when the point is valid, else the first broken rule.
std::string why_invalid(const std::string& isa, const GemmSig& sig, const GemmConfig& c);

constexpr int kMaxVgprs = 256;   // accumulators live in arch VGPRs
constexpr int kMaxLds = 65536;   // 64 KiB on every target (DS offsets are 16-bit)

} // namespace isatune::gen::gemm

#pragma once
// CDNA code emission of one GEMM variant (gfx90a, gfx942, gfx950): MFMA tiles fed from LDS, buffer loads with
// num_records and per-element masking for ragged edges, optional split-K through a workspace.
#include <cstdint>
#include <string>

#include "gemm_params.h"
#include "isatune/cdna/kernel.h"

namespace isatune::gen::gemm {

// Kernel argument byte offsets (the generator's launches() packs the same layout).
struct KernargLayout {
  static constexpr uint32_t a = 0, b = 8, c = 16, d = 24, w = 32;
  static constexpr uint32_t m = 40, n = 44, k = 48, lda = 52, ldb = 56, ldc = 60, ldd = 64;
  static constexpr uint32_t alpha = 68, beta = 72;
  static constexpr uint32_t nrec_a = 76, nrec_b = 80, nrec_c = 84, nrec_d = 88, nrec_w = 92;
  static constexpr uint32_t fast_a = 96, fast_b = 100, tiles_m = 104, tiles_n = 108;
  static constexpr uint32_t kchunk = 112, mode = 116;
  static constexpr uint32_t size = 120;
};

// The symbol: from the signature and the parameters only (launches() has no target).
std::string kernel_name(const GemmSig& sig, const Params& params);
// The finished kernel with waits inserted.
cdna::Kernel emit_kernel(const std::string& isa, const GemmSig& sig, const GemmConfig& c, const Params& params);

} // namespace isatune::gen::gemm

#pragma once
// The NVIDIA half of the GEMM generator. Schemas, buffers (A, B, C, D, workspace), scalars (alpha, beta), the
// float64 reference and the work are the same for every target (gemm_generator.cpp, BLAS column-major:
// gemm_params.h); what differs per PTX kernel family is here: the space, the emitted PTX and the launches.
// One backend per family, each serving its targets: mma.sync (sm_80, and sm_90 as the portable path) and
// wgmma + TMA (sm_90a).
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gemm_params.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::gemm {

// A problem's sizes, leading dimensions resolved (0 in the problem: tight) and checked.
struct GemmDims {
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0; // stored shapes (column-major: rows contiguous)
};

class GemmPtxBackend {
public:
  virtual ~GemmPtxBackend() = default;
  virtual std::vector<std::string> targets() const = 0; // "sm_90a"
  // InputError for a signature this family cannot generate (fp8 on sm_80, say), naming what is allowed.
  virtual void check_signature(const std::string& isa, const GemmSig& sig) const = 0;
  virtual Space space(const std::string& isa, const GemmSig& sig) const = 0;
  virtual std::vector<std::string> constraint_descriptions(const std::string& isa, const GemmSig& sig) const = 0;
  // Throws InputError naming the parameter or the rule when the point is outside the space.
  virtual Generated generate(const std::string& isa, const GemmSig& sig, const Params& params) const = 0;
  // addresses: A, B, C, D, workspace (gemm_generator.cpp's buffers()).
  virtual std::vector<Launch> launches(const std::string& isa, const GemmSig& sig, const Params& params,
                                       const GemmDims& d, std::span<const uint64_t> addresses, float alpha,
                                       float beta) const = 0;
};

// mma.sync (cp.async, ldmatrix, mma.sync.m16n8k16): sm_80 and sm_90 (gemm_sm80.cpp).
std::unique_ptr<GemmPtxBackend> make_gemm_sm80_backend();

// The backends, in the order their targets are listed; each family adds its factory to gemm_ptx_backends()
// in gemm_generator.cpp.
std::vector<const GemmPtxBackend*> gemm_ptx_backends();
// The factories of the families (one per file).
std::unique_ptr<GemmPtxBackend> make_sm90a_gemm_backend(); // wgmma + TMA: gemm_sm90a.cpp

// The backend serving `isa`, or nullptr.
const GemmPtxBackend* gemm_ptx_backend(const std::string& isa);

} // namespace isatune::gen::gemm

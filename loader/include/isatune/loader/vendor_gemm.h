#pragma once
// The vendor library's GEMM as the baseline a tuned kernel must beat: cuBLAS (cublasGemmEx) on the CUDA backend,
// rocBLAS (rocblas_gemm_ex) on the HIP backend, both opened with dlopen like the drivers (never linked), timed
// with the tuner's protocol (warm-up launches, then events around each repetition until a time budget, a buffer
// larger than the L2 cache written before each one). Emulators and replays have no vendor library: the result
// says so, it is not an error. docs/loader.md.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "isatune/loader/device.h"

namespace isatune::loader {

// D = alpha * op(A) * op(B) + beta * C, BLAS column-major: the gemm generator's convention (docs/gemm.md).
struct VendorGemm {
  std::string a = "f16", b = "f16", cd = "f32"; // the generator's type names (f16, bf16, f32, fp8_e4m3 ...)
  bool a_trans = false, b_trans = false;        // layout "NT": op(A) = A, op(B) = B^T
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;            // 0: tight
};

// The GEMM a tuned problem of the `gemm` generator describes: signature {"a","b","cd","layout"} and problem
// {"M","N","K", optional "lda","ldb","ldc"}. nullopt for any other generator. Throws InputError naming the field
// that is missing or wrong.
std::optional<VendorGemm> vendor_gemm_of(std::string_view generator, std::string_view signature,
                                         std::string_view problem);

// The tuner's timing protocol (tuner/variant_runner.h TimingOptions, the same defaults).
struct VendorTimingOptions {
  int warmup = 2;
  int min_reps = 5;
  int max_reps = 200;
  double budget_ms = 100;
  uint64_t flush_bytes = 512ull << 20; // raised to twice the device's L2 size; 0: no flush
  uint64_t seed = 1;                   // the inputs: random values in [-1, 1]
};

struct VendorTiming {
  std::string library;     // what ran: "cublas 13.1 (libcublas.so.13) cublasGemmEx"
  std::string unavailable; // why nothing was timed; empty when timed
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0;
  int reps = 0;
  std::string method = "events";
  bool timed() const { return unavailable.empty(); }
};

// Times the vendor GEMM on `device`. An absent library, an emulated device, another backend or input types the
// library call does not take (fp8: cublasGemmEx and rocblas_gemm_ex have none) give `unavailable`, never an
// exception; a library call that fails throws Error with its status.
VendorTiming time_vendor_gemm(Device& device, const VendorGemm& gemm, const VendorTimingOptions& options = {});

} // namespace isatune::loader

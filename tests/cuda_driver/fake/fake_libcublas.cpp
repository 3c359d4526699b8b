// A stand-in for libcublas.so with the calls the loader's vendor baseline makes (loader/src/vendor_gemm.cpp):
// a handle, the version and cublasGemmEx, which records its arguments and executes nothing. Declarations follow
// CUDA 13's cublas_api.h; the test reads the record back through fake_cublas_* functions found with dlsym.
#include <cstddef>
#include <string>

namespace {
struct State {
  size_t gemms = 0, creates = 0, destroys = 0;
  int last[14] = {}; // transa transb m n k atype lda btype ldb ctype ldc compute algo handle-ok
  float alpha = 0, beta = 0;
  int fail_next = 0;
  int handle = 0;
} g;
} // namespace

extern "C" {

size_t fake_cublas_gemm_count() { return g.gemms; }
size_t fake_cublas_handles_alive() { return g.creates - g.destroys; }
// The last cublasGemmEx call's integer arguments (14 values, see State::last) and alpha, beta.
void fake_cublas_last_gemm(int* out, float* alpha, float* beta) {
  for (int i = 0; i < 14; ++i) out[i] = g.last[i];
  *alpha = g.alpha;
  *beta = g.beta;
}
void fake_cublas_fail_next(int status) { g.fail_next = status; }

int cublasCreate_v2(void** handle) {
  ++g.creates;
  *handle = &g.handle;
  return 0;
}
int cublasDestroy_v2(void*) {
  ++g.destroys;
  return 0;
}
int cublasGetVersion_v2(void*, int* version) {
  *version = 130100; // 13.1.0
  return 0;
}
int cublasGemmEx(void* handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A,
                 int atype, int lda, const void* B, int btype, int ldb, const void* beta, void* C, int ctype, int ldc,
                 int compute, int algo) {
  ++g.gemms;
  const int v[14] = {transa, transb, m,     n,   k,       atype, lda, btype, ldb, ctype, ldc, compute, algo,
                     handle == &g.handle && A && B && C ? 1 : 0};
  for (int i = 0; i < 14; ++i) g.last[i] = v[i];
  g.alpha = *static_cast<const float*>(alpha);
  g.beta = *static_cast<const float*>(beta);
  const int f = g.fail_next;
  g.fail_next = 0;
  return f;
}

} // extern "C"

// The vendor GEMM baseline (loader/vendor_gemm.h) on the CUDA backend against the stand-in driver and a stand-in
// libcublas (fake/fake_libcublas.cpp, through ISATUNE_CUBLAS_LIBRARY): what cublasGemmEx is asked (operations,
// sizes, types, leading dimensions, compute type), the timing protocol (warm-up, repetitions to the budget, the
// flush buffer), and the cases with no vendor time (no library, fp8, the emulator). Nothing executes: the fake
// driver's events advance 0.25 ms per record, so every repetition reads 0.25 ms.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "isatune/error.h"
#include "isatune/loader/backend.h"
#include "isatune/loader/vendor_gemm.h"

namespace {

namespace loader = isatune::loader;

template <class F> F fake_blas(const char* name) {
  void* h = dlopen(FAKE_CUBLAS_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(h, nullptr) << "the stand-in cuBLAS is not loaded";
  void* p = h ? dlsym(h, name) : nullptr;
  EXPECT_NE(p, nullptr) << name;
  return reinterpret_cast<F>(p);
}

struct UseFakeCublas {
  UseFakeCublas() { setenv("ISATUNE_CUBLAS_LIBRARY", FAKE_CUBLAS_LIBRARY, 1); }
  ~UseFakeCublas() { unsetenv("ISATUNE_CUBLAS_LIBRARY"); }
};

std::shared_ptr<loader::Device> open() {
  setenv("ISATUNE_CUDA_LIBRARY", FAKE_CUDA_LIBRARY, 1);
  return loader::open_device("cuda:0");
}

TEST(VendorGemm, FromTheGemmGeneratorsSignatureAndProblem) {
  auto g = loader::vendor_gemm_of("gemm", R"({"a":"bf16","b":"bf16","cd":"f32","layout":"TN"})",
                                  R"({"K":320,"M":100,"N":72,"lda":384})");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->a, "bf16");
  EXPECT_EQ(g->cd, "f32");
  EXPECT_TRUE(g->a_trans);
  EXPECT_FALSE(g->b_trans);
  EXPECT_EQ(g->m, 100);
  EXPECT_EQ(g->n, 72);
  EXPECT_EQ(g->k, 320);
  EXPECT_EQ(g->lda, 384);
  EXPECT_EQ(g->ldb, 0);
  EXPECT_FALSE(loader::vendor_gemm_of("softmax", "{}", R"({"rows":4})"));
  EXPECT_THROW(loader::vendor_gemm_of("gemm", R"({"layout":"XN"})", R"({"M":1,"N":1,"K":1})"), isatune::InputError);
  EXPECT_THROW(loader::vendor_gemm_of("gemm", "{}", R"({"M":1,"N":1})"), isatune::InputError);
  EXPECT_THROW(loader::vendor_gemm_of("gemm", "{}", R"({"M":1.5,"N":1,"K":1})"), isatune::InputError);
}

TEST(VendorGemm, CublasIsAskedForTheSameGemmAndTimedWithTheTunersProtocol) {
  auto dev = open();
  UseFakeCublas use;
  loader::VendorGemm g;
  g.a = g.b = "f16";
  g.cd = "f16";
  g.a_trans = false;
  g.b_trans = true; // NT
  g.m = 300, g.n = 200, g.k = 72;
  loader::VendorTimingOptions o;
  o.flush_bytes = 0; // the flush is checked below, with few repetitions
  auto t = loader::time_vendor_gemm(*dev, g, o);
  ASSERT_TRUE(t.timed()) << t.unavailable;
  EXPECT_NE(t.library.find("cublas 13.1"), std::string::npos) << t.library;
  EXPECT_NE(t.library.find("cublasGemmEx"), std::string::npos) << t.library;
  EXPECT_EQ(t.method, "events");
  // 0.25 ms a repetition: the 100 ms budget would need 400, max_reps stops at 200.
  EXPECT_EQ(t.reps, 200);
  EXPECT_DOUBLE_EQ(t.median_ms, 0.25);
  EXPECT_DOUBLE_EQ(t.min_ms, 0.25);
  EXPECT_EQ(fake_blas<size_t (*)()>("fake_cublas_gemm_count")(), size_t(2 + 200)); // warm-up + timed
  EXPECT_EQ(fake_blas<size_t (*)()>("fake_cublas_handles_alive")(), 0u);
  int a[14];
  float alpha = 0, beta = 0;
  fake_blas<void (*)(int*, float*, float*)>("fake_cublas_last_gemm")(a, &alpha, &beta);
  EXPECT_EQ(a[0], 0);   // CUBLAS_OP_N
  EXPECT_EQ(a[1], 1);   // CUBLAS_OP_T
  EXPECT_EQ(a[2], 300);
  EXPECT_EQ(a[3], 200);
  EXPECT_EQ(a[4], 72);
  EXPECT_EQ(a[5], 2);   // CUDA_R_16F
  EXPECT_EQ(a[6], 300); // lda: A is M x K, not transposed
  EXPECT_EQ(a[7], 2);
  EXPECT_EQ(a[8], 200); // ldb: B stored N x K (T)
  EXPECT_EQ(a[9], 2);
  EXPECT_EQ(a[10], 300);
  EXPECT_EQ(a[11], 68); // CUBLAS_COMPUTE_32F
  EXPECT_EQ(a[12], -1); // CUBLAS_GEMM_DEFAULT
  EXPECT_EQ(a[13], 1);  // its handle, device buffers
  EXPECT_EQ(alpha, 1.f);
  EXPECT_EQ(beta, 1.f); // C is read, as the tuned kernels read it

  // bf16 in, f32 out; ragged leading dimensions pass through.
  g.a = g.b = "bf16";
  g.cd = "f32";
  g.a_trans = true, g.b_trans = false;
  g.lda = 80, g.ldb = 75, g.ldc = 301;
  o.min_reps = o.max_reps = 5;
  o.warmup = 1;
  o.flush_bytes = 1 << 20; // raised to twice the fake H200's 50 MiB L2
  t = loader::time_vendor_gemm(*dev, g, o);
  ASSERT_TRUE(t.timed()) << t.unavailable;
  EXPECT_EQ(t.reps, 5);
  fake_blas<void (*)(int*, float*, float*)>("fake_cublas_last_gemm")(a, &alpha, &beta);
  EXPECT_EQ(a[0], 1);
  EXPECT_EQ(a[1], 0);
  EXPECT_EQ(a[5], 14); // CUDA_R_16BF
  EXPECT_EQ(a[6], 80);
  EXPECT_EQ(a[8], 75);
  EXPECT_EQ(a[9], 0); // CUDA_R_32F
  EXPECT_EQ(a[10], 301);
  EXPECT_EQ(fake_blas<size_t (*)()>("fake_cublas_gemm_count")(), size_t(202 + 1 + 5));

  // A leading dimension below its minimum is bad input; a failing call names it.
  g.lda = 10;
  EXPECT_THROW(loader::time_vendor_gemm(*dev, g, o), isatune::InputError);
  g.lda = 0;
  fake_blas<void (*)(int)>("fake_cublas_fail_next")(13); // CUBLAS_STATUS_EXECUTION_FAILED
  try {
    loader::time_vendor_gemm(*dev, g, o);
    FAIL() << "a failing cublasGemmEx was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cublasGemmEx failed with status 13"), std::string::npos) << e.what();
  }
}

TEST(VendorGemm, NoVendorTimeWithoutTheLibraryForFp8OrOnAnEmulatedDevice) {
  auto dev = open();
  loader::VendorGemm g;
  g.m = g.n = g.k = 64;
  setenv("ISATUNE_CUBLAS_LIBRARY", "/nonexistent/libcublas.so", 1);
  auto t = loader::time_vendor_gemm(*dev, g);
  unsetenv("ISATUNE_CUBLAS_LIBRARY");
  EXPECT_FALSE(t.timed());
  EXPECT_NE(t.unavailable.find("no vendor library on this machine"), std::string::npos) << t.unavailable;

  UseFakeCublas use;
  g.a = g.b = "fp8_e4m3";
  t = loader::time_vendor_gemm(*dev, g);
  EXPECT_FALSE(t.timed());
  EXPECT_NE(t.unavailable.find("fp8 needs cublasLt"), std::string::npos) << t.unavailable;
}

} // namespace

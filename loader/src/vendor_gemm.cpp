// The vendor GEMM baseline: cuBLAS and rocBLAS through dlopen. Declarations written here from the libraries'
// documentation; the cuBLAS values were compared with CUDA 13's cublas_api.h and library_types.h (CUBLAS_OP_N 0,
// CUBLAS_OP_T 1, CUDA_R_32F 0, CUDA_R_16F 2, CUDA_R_16BF 14, CUBLAS_COMPUTE_32F 68, CUBLAS_GEMM_DEFAULT -1); the
// rocBLAS ones (rocblas_operation_none 111, _transpose 112, f16_r 150, f32_r 151, bf16_r 168,
// rocblas_gemm_algo_standard 0) with rocblas-types.h as published, not with an installed ROCm (none here).
#include "isatune/loader/vendor_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "dl_library.h"
#include "isatune/db/json.h"
#include "isatune/error.h"

namespace isatune::loader {

namespace {

int64_t field(const db::JsonValue& p, const char* name, bool required) {
  const db::JsonValue* v = p.find(name);
  if (!v) {
    if (required) throw InputError(std::string("gemm problem: no field '") + name + "'");
    return 0;
  }
  if (!v->is_number() || v->as_number() < 0 || v->as_number() != std::floor(v->as_number()))
    throw InputError(std::string("gemm problem: '") + name + "' must be a non-negative integer");
  return int64_t(v->as_number());
}

std::string text_field(const db::JsonValue& s, const char* name, const char* fallback) {
  const db::JsonValue* v = s.find(name);
  if (!v) return fallback;
  if (!v->is_string()) throw InputError(std::string("gemm signature: '") + name + "' must be a string");
  return v->as_string();
}

size_t element_bytes(const std::string& t) {
  if (t == "f32") return 4;
  if (t == "f16" || t == "bf16") return 2;
  if (t.rfind("fp8", 0) == 0) return 1;
  throw InputError("gemm: unknown element type '" + t + "'");
}

// Random values in [-1, 1] in the element type (round to nearest even for f16 and bf16 is not needed here: the
// values only have to be ordinary numbers, no NaNs or denormals that could change the library's speed).
std::vector<uint8_t> random_elements(const std::string& type, size_t count, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  const size_t es = element_bytes(type);
  std::vector<uint8_t> out(count * es);
  for (size_t i = 0; i < count; ++i) {
    float f = u(rng);
    if (std::fabs(f) < 1e-3f) f = 0.5f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if (type == "f32") {
      std::memcpy(&out[i * 4], &bits, 4);
    } else if (type == "bf16") {
      const uint16_t h = uint16_t(bits >> 16);
      std::memcpy(&out[i * 2], &h, 2);
    } else { // f16: |f| in [1e-3, 1], a normal half
      const uint32_t sign = (bits >> 16) & 0x8000u;
      const int exp = int((bits >> 23) & 0xff) - 127 + 15;
      const uint16_t h = uint16_t(sign | (uint32_t(exp) << 10) | ((bits >> 13) & 0x3ffu));
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

std::vector<std::string> library_names(const char* env, std::vector<std::string> defaults) {
  const char* e = std::getenv(env);
  if (e && *e) return {e};
  return defaults;
}

// Device buffers freed however the timing ends.
struct Buffers {
  Device& device;
  std::vector<DevicePtr> ptrs;
  explicit Buffers(Device& d) : device(d) {}
  ~Buffers() {
    for (auto p : ptrs) device.free(p);
  }
  DevicePtr alloc(size_t bytes) {
    ptrs.push_back(device.alloc(std::max<size_t>(bytes, 4)));
    return ptrs.back();
  }
};

// One library call: D = alpha op(A) op(B) + beta C (cuBLAS: in place, D is C).
struct GemmCall {
  DevicePtr a = 0, b = 0, c = 0, d = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
};

class VendorLibrary {
public:
  virtual ~VendorLibrary() = default;
  virtual std::string name() const = 0;
  virtual void gemm(const VendorGemm& g, const GemmCall& call) = 0;
};

// ---- cuBLAS ---------------------------------------------------------------------------------------------------
int cuda_type(const std::string& t) {
  if (t == "f16") return 2;   // CUDA_R_16F
  if (t == "bf16") return 14; // CUDA_R_16BF
  if (t == "f32") return 0;   // CUDA_R_32F
  return -1;
}

class Cublas : public VendorLibrary {
public:
  explicit Cublas(const detail::DlLibrary& lib) {
    create_ = lib.symbol<decltype(create_)>("cublasCreate_v2");
    destroy_ = lib.symbol<decltype(destroy_)>("cublasDestroy_v2");
    gemm_ex_ = lib.symbol<decltype(gemm_ex_)>("cublasGemmEx");
    auto version = lib.optional_symbol<int (*)(void*, int*)>("cublasGetVersion_v2");
    check(create_(&handle_), "cublasCreate");
    name_ = "cublas";
    int v = 0;
    if (version && version(handle_, &v) == 0 && v > 0)
      name_ += " " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100);
    name_ += " (" + lib.name() + ") cublasGemmEx";
  }
  ~Cublas() override {
    if (handle_) destroy_(handle_);
  }
  std::string name() const override { return name_; }
  void gemm(const VendorGemm& g, const GemmCall& c) override {
    const float alpha = 1.f, beta = 1.f;
    check(gemm_ex_(handle_, g.a_trans ? 1 : 0, g.b_trans ? 1 : 0, int(g.m), int(g.n), int(g.k), &alpha,
                   reinterpret_cast<const void*>(uintptr_t(c.a)), cuda_type(g.a), int(c.lda),
                   reinterpret_cast<const void*>(uintptr_t(c.b)), cuda_type(g.b), int(c.ldb), &beta,
                   reinterpret_cast<void*>(uintptr_t(c.c)), cuda_type(g.cd), int(c.ldc), 68 /* COMPUTE_32F */,
                   -1 /* GEMM_DEFAULT */),
          "cublasGemmEx");
  }

private:
  static void check(int status, const char* what) {
    if (status != 0) throw Error(std::string("cublas: ") + what + " failed with status " + std::to_string(status));
  }
  int (*create_)(void**) = nullptr;
  int (*destroy_)(void*) = nullptr;
  int (*gemm_ex_)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                  const void*, void*, int, int, int, int) = nullptr;
  void* handle_ = nullptr;
  std::string name_;
};

// ---- rocBLAS --------------------------------------------------------------------------------------------------
int rocblas_type(const std::string& t) {
  if (t == "f16") return 150;  // rocblas_datatype_f16_r
  if (t == "bf16") return 168; // rocblas_datatype_bf16_r
  if (t == "f32") return 151;  // rocblas_datatype_f32_r
  return -1;
}

class Rocblas : public VendorLibrary {
public:
  explicit Rocblas(const detail::DlLibrary& lib) {
    create_ = lib.symbol<decltype(create_)>("rocblas_create_handle");
    destroy_ = lib.symbol<decltype(destroy_)>("rocblas_destroy_handle");
    gemm_ex_ = lib.symbol<decltype(gemm_ex_)>("rocblas_gemm_ex");
    check(create_(&handle_), "rocblas_create_handle");
    name_ = "rocblas (" + lib.name() + ") rocblas_gemm_ex";
  }
  ~Rocblas() override {
    if (handle_) destroy_(handle_);
  }
  std::string name() const override { return name_; }
  void gemm(const VendorGemm& g, const GemmCall& c) override {
    const float alpha = 1.f, beta = 1.f;
    check(gemm_ex_(handle_, g.a_trans ? 112 : 111, g.b_trans ? 112 : 111, int(g.m), int(g.n), int(g.k), &alpha,
                   reinterpret_cast<const void*>(uintptr_t(c.a)), rocblas_type(g.a), int(c.lda),
                   reinterpret_cast<const void*>(uintptr_t(c.b)), rocblas_type(g.b), int(c.ldb), &beta,
                   reinterpret_cast<const void*>(uintptr_t(c.c)), rocblas_type(g.cd), int(c.ldc),
                   reinterpret_cast<void*>(uintptr_t(c.d)), rocblas_type(g.cd), int(c.ldc), 151 /* f32 compute */,
                   0 /* algo standard */, 0, 0u),
          "rocblas_gemm_ex");
  }

private:
  static void check(int status, const char* what) {
    if (status != 0) throw Error(std::string("rocblas: ") + what + " failed with status " + std::to_string(status));
  }
  int (*create_)(void**) = nullptr;
  int (*destroy_)(void*) = nullptr;
  int (*gemm_ex_)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                  const void*, const void*, int, int, void*, int, int, int, int, int32_t, uint32_t) = nullptr;
  void* handle_ = nullptr;
  std::string name_;
};

} // namespace

std::optional<VendorGemm> vendor_gemm_of(std::string_view generator, std::string_view signature,
                                         std::string_view problem) {
  if (generator != "gemm") return std::nullopt;
  const db::JsonValue s = db::JsonValue::parse(signature), p = db::JsonValue::parse(problem);
  VendorGemm g;
  g.a = text_field(s, "a", "f16");
  g.b = text_field(s, "b", g.a.c_str());
  g.cd = text_field(s, "cd", "f32");
  const std::string layout = text_field(s, "layout", "NN");
  if (layout.size() != 2 || (layout[0] != 'N' && layout[0] != 'T') || (layout[1] != 'N' && layout[1] != 'T'))
    throw InputError("gemm signature: layout '" + layout + "' is not NN, NT, TN or TT");
  g.a_trans = layout[0] == 'T';
  g.b_trans = layout[1] == 'T';
  for (const auto* t : {&g.a, &g.b, &g.cd}) element_bytes(*t);
  g.m = field(p, "M", true), g.n = field(p, "N", true), g.k = field(p, "K", true);
  if (g.m < 1 || g.n < 1 || g.k < 1) throw InputError("gemm problem: M, N and K must be >= 1");
  g.lda = field(p, "lda", false), g.ldb = field(p, "ldb", false), g.ldc = field(p, "ldc", false);
  return g;
}

VendorTiming time_vendor_gemm(Device& device, const VendorGemm& g, const VendorTimingOptions& o) {
  VendorTiming t;
  const DeviceProperties& props = device.properties();
  if (props.emulated) {
    t.unavailable = props.name + " is emulated: no vendor library runs there (nothing to compare with)";
    return t;
  }
  const bool cuda = props.backend == "cuda", hip = props.backend == "hip";
  if (!cuda && !hip) {
    t.unavailable = "backend '" + props.backend + "' has no vendor library (cuBLAS on cuda, rocBLAS on hip)";
    return t;
  }
  if ((cuda ? cuda_type(g.a) : rocblas_type(g.a)) < 0 || (cuda ? cuda_type(g.b) : rocblas_type(g.b)) < 0 ||
      (cuda ? cuda_type(g.cd) : rocblas_type(g.cd)) < 0) {
    t.unavailable = std::string(cuda ? "cublasGemmEx" : "rocblas_gemm_ex") + " takes no " + g.a + " x " + g.b +
                    " -> " + g.cd + " GEMM (fp8 needs cublasLt / hipBLASLt: not done)";
    return t;
  }
  const int64_t a_rows = g.a_trans ? g.k : g.m, a_cols = g.a_trans ? g.m : g.k;
  const int64_t b_rows = g.b_trans ? g.n : g.k, b_cols = g.b_trans ? g.k : g.n;
  GemmCall call;
  call.lda = g.lda ? g.lda : a_rows;
  call.ldb = g.ldb ? g.ldb : b_rows;
  call.ldc = g.ldc ? g.ldc : g.m;
  if (call.lda < a_rows || call.ldb < b_rows || call.ldc < g.m)
    throw InputError("gemm: a leading dimension is below its minimum (lda >= " + std::to_string(a_rows) +
                     ", ldb >= " + std::to_string(b_rows) + ", ldc >= " + std::to_string(g.m) + ")");
  const int64_t int_max = 2147483647;
  if (g.m > int_max || g.n > int_max || g.k > int_max || call.lda > int_max || call.ldb > int_max ||
      call.ldc > int_max) {
    t.unavailable = "sizes above 2^31 - 1 need the 64-bit library calls: not done";
    return t;
  }

  detail::DlLibrary lib(cuda ? library_names("ISATUNE_CUBLAS_LIBRARY", {"libcublas.so.13", "libcublas.so.12",
                                                                         "libcublas.so.11", "libcublas.so"})
                             : library_names("ISATUNE_ROCBLAS_LIBRARY",
                                             {"librocblas.so.5", "librocblas.so.4", "librocblas.so"}));
  if (!lib.ok()) {
    t.unavailable = lib.reason() + ": no vendor library on this machine";
    return t;
  }
  Buffers buf(device);
  std::mt19937_64 rng(o.seed);
  auto upload = [&](const std::string& type, int64_t ld, int64_t cols) {
    const size_t count = size_t(ld) * size_t(cols);
    const auto bytes = random_elements(type, count, rng);
    const DevicePtr p = buf.alloc(bytes.size());
    device.copy_to_device(p, bytes.data(), bytes.size());
    return p;
  };
  // The buffers first: the device makes its context current, which the library's handle then takes.
  call.a = upload(g.a, call.lda, a_cols);
  call.b = upload(g.b, call.ldb, b_cols);
  call.c = upload(g.cd, call.ldc, g.n);
  call.d = hip ? upload(g.cd, call.ldc, g.n) : call.c;
  std::unique_ptr<VendorLibrary> library;
  try {
    if (cuda) library = std::make_unique<Cublas>(lib);
    else library = std::make_unique<Rocblas>(lib);
  } catch (const UnavailableError& e) { // a symbol is missing: too old, or not the library
    t.unavailable = e.what();
    return t;
  }
  t.library = library->name();

  for (int i = 0; i < o.warmup; ++i) library->gemm(g, call);
  const uint64_t flush_bytes = o.flush_bytes ? std::max<uint64_t>(o.flush_bytes, 2 * props.l2_bytes) : 0;
  const DevicePtr flush = flush_bytes ? buf.alloc(flush_bytes) : 0;
  auto begin = device.create_event(), end = device.create_event();
  std::vector<double> times;
  double spent = 0;
  while (int(times.size()) < o.max_reps && (int(times.size()) < o.min_reps || spent < o.budget_ms)) {
    if (flush) device.fill(flush, uint8_t(times.size()), flush_bytes);
    device.record(*begin);
    library->gemm(g, call);
    device.record(*end);
    device.synchronize();
    const double ms = device.elapsed_ms(*begin, *end);
    times.push_back(ms);
    spent += ms;
  }
  if (times.empty()) throw InputError("vendor timing: max_reps is 0");
  t.reps = int(times.size());
  t.median_ms = percentile(times, 0.5);
  t.p20_ms = percentile(times, 0.2);
  t.p80_ms = percentile(times, 0.8);
  t.min_ms = *std::min_element(times.begin(), times.end());
  return t;
}

} // namespace isatune::loader

// A stand-in for libcuda.so.1 with the driver calls isatune's CUDA backend makes, so the backend's logic
// (properties, memory, module and library loading, launches, cluster launches, dynamic shared memory opt-in,
// tensor maps, error paths) is tested on a
// machine without an NVIDIA driver. One "NVIDIA H200 (fake)" of compute capability 9.0; device memory is host
// memory; nothing executes. Built a second time with FAKE_CUDA_OLD_DRIVER: a CUDA 11-like driver without the
// optional calls (cuLibrary*, cuKernelGetFunction, cuLaunchKernelEx, cuTensorMapEncodeTiled). Declarations
// follow the CUDA driver API documentation (cuda.h 13.0); every call is logged and the log is read back
// through fake_cuda_* functions the test finds with dlsym.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct LaunchRecord {
  std::string api; // "cuLaunchKernel" or "cuLaunchKernelEx"
  unsigned grid[3], block[3], shared;
  unsigned cluster[3] = {1, 1, 1};
  unsigned num_attrs = 0;
  std::vector<uint8_t> params;
};

struct State {
  std::mutex m;
  std::vector<std::string> calls;
  std::vector<LaunchRecord> launches;
  int fail_next = 0;       // the next call that checks it returns this error
  int func_attr_dynamic = 0;
  unsigned tmap_rank = 0;
  int tmap_type = -1, tmap_swizzle = -1;
} g;

void log(const std::string& c) {
  std::lock_guard l(g.m);
  g.calls.push_back(c);
}
int take_failure() {
  int f = g.fail_next;
  g.fail_next = 0;
  return f;
}

struct LaunchAttr {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
};
struct LaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  void* stream;
  LaunchAttr* attrs;
  unsigned num_attrs;
};

void record_params(LaunchRecord& r, void** extra) {
  // extra = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END}
  if (!extra) return;
  const uint8_t* buf = nullptr;
  size_t size = 0;
  for (int i = 0; extra[i]; i += 2) {
    if (extra[i] == reinterpret_cast<void*>(1)) buf = static_cast<const uint8_t*>(extra[i + 1]);
    if (extra[i] == reinterpret_cast<void*>(2)) size = *static_cast<size_t*>(extra[i + 1]);
  }
  if (buf) r.params.assign(buf, buf + size);
}

} // namespace

extern "C" {

// ---- the test's view ------------------------------------------------------------------------------------
size_t fake_cuda_call_count() { return g.calls.size(); }
const char* fake_cuda_call(size_t i) { return i < g.calls.size() ? g.calls[i].c_str() : ""; }
size_t fake_cuda_launch_count() { return g.launches.size(); }
// The last launch: api name, and grid[3] block[3] cluster[3] shared num_attrs in `out` (11 values).
const char* fake_cuda_last_launch(unsigned* out) {
  if (g.launches.empty()) return "";
  const auto& r = g.launches.back();
  for (int i = 0; i < 3; ++i) {
    out[i] = r.grid[i];
    out[3 + i] = r.block[i];
    out[6 + i] = r.cluster[i];
  }
  out[9] = r.shared;
  out[10] = r.num_attrs;
  return r.api.c_str();
}
size_t fake_cuda_last_params(uint8_t* out, size_t max) {
  if (g.launches.empty()) return 0;
  const auto& p = g.launches.back().params;
  std::memcpy(out, p.data(), std::min(max, p.size()));
  return p.size();
}
void fake_cuda_fail_next(int code) { g.fail_next = code; }
int fake_cuda_dynamic_shared_attribute() { return g.func_attr_dynamic; }
void fake_cuda_last_tensor_map(unsigned* rank, int* type, int* swizzle) {
  *rank = g.tmap_rank;
  *type = g.tmap_type;
  *swizzle = g.tmap_swizzle;
}

// ---- the driver API subset --------------------------------------------------------------------------------
int cuInit(unsigned) { return 0; }
int cuDeviceGetCount(int* n) {
  *n = 1;
  return 0;
}
int cuDeviceGet(int* d, int i) {
  if (i != 0) return 101; // CUDA_ERROR_INVALID_DEVICE
  *d = 0;
  return 0;
}
int cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "NVIDIA H200 (fake)", size_t(len));
  return 0;
}
int cuDeviceTotalMem_v2(size_t* bytes, int) {
  *bytes = size_t(141) << 30;
  return 0;
}
int cuDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
  case 1: *v = 1024; return 0;    // max threads per block
  case 8: *v = 48 * 1024; return 0; // shared per block
  case 10: *v = 32; return 0;     // warp size
  case 13: *v = 1980000; return 0; // SM clock, kHz
  case 16: *v = 132; return 0;    // SMs
  case 36: *v = 3201000; return 0; // memory clock, kHz
  case 37: *v = 6144; return 0;   // memory bus, bits
  case 38: *v = 50 * 1024 * 1024; return 0; // L2 bytes
  case 81: *v = 228 * 1024; return 0; // shared per SM
  case 82: *v = 65536; return 0;  // registers per SM
  case 75: *v = 9; return 0;      // cc major
  case 76: *v = 0; return 0;      // cc minor
  case 97: *v = 227 * 1024; return 0; // shared per block opt-in
  default: *v = 0; return 1;      // CUDA_ERROR_INVALID_VALUE
  }
}
int cuDriverGetVersion(int* v) {
  *v = 13000;
  return 0;
}
int cuGetErrorString(int code, const char** s) {
  *s = code == 700 ? "an illegal memory access was encountered" : "fake error";
  return 0;
}
int cuDevicePrimaryCtxRetain(void** ctx, int) {
  static int c;
  *ctx = &c;
  return 0;
}
int cuCtxSetCurrent(void*) { return 0; }
int cuCtxSynchronize() {
  log("cuCtxSynchronize");
  return take_failure();
}
int cuMemAlloc_v2(unsigned long long* p, size_t bytes) {
  log("cuMemAlloc " + std::to_string(bytes));
  if (int f = take_failure()) return f;
  *p = reinterpret_cast<uintptr_t>(std::calloc(1, bytes ? bytes : 1));
  return 0;
}
int cuMemFree_v2(unsigned long long p) {
  std::free(reinterpret_cast<void*>(uintptr_t(p)));
  return 0;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(uintptr_t(dst)), src, n);
  return 0;
}
int cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) {
  std::memcpy(dst, reinterpret_cast<void*>(uintptr_t(src)), n);
  return 0;
}
int cuMemsetD8_v2(unsigned long long dst, unsigned char v, size_t n) {
  std::memset(reinterpret_cast<void*>(uintptr_t(dst)), v, n);
  return 0;
}
int cuModuleLoadData(void** m, const void* image) {
  log(std::string("cuModuleLoadData ") + (std::memcmp(image, "\x7f" "ELF", 4) == 0 ? "elf" : "ptx"));
  if (int f = take_failure()) return f;
  static int mod;
  *m = &mod;
  return 0;
}
int cuModuleUnload(void*) { return 0; }
int cuModuleGetFunction(void** f, void*, const char* name) {
  log(std::string("cuModuleGetFunction ") + name);
  static int fn;
  *f = &fn;
  return 0;
}
int cuFuncSetAttribute(void*, int attr, int value) {
  log("cuFuncSetAttribute " + std::to_string(attr) + " " + std::to_string(value));
  if (int f = take_failure()) return f;
  if (attr == 8) g.func_attr_dynamic = value;
  return 0;
}
#ifndef FAKE_CUDA_OLD_DRIVER
// The library API (CUDA 12.0+): a library is context-independent; its kernels give per-context functions.
int cuLibraryLoadData(void** lib, const void* code, void*, void**, unsigned, void*, void**, unsigned) {
  log(std::string("cuLibraryLoadData ") + (std::memcmp(code, "\x7f" "ELF", 4) == 0 ? "elf" : "ptx"));
  if (int f = take_failure()) return f;
  static int library;
  *lib = &library;
  return 0;
}
int cuLibraryUnload(void*) {
  log("cuLibraryUnload");
  return 0;
}
int cuLibraryGetKernel(void** kernel, void*, const char* name) {
  log(std::string("cuLibraryGetKernel ") + name);
  if (std::strcmp(name, "missing") == 0) return 500; // CUDA_ERROR_NOT_FOUND
  static int k;
  *kernel = &k;
  return 0;
}
int cuKernelGetFunction(void** f, void*) {
  log("cuKernelGetFunction");
  static int fn;
  *f = &fn;
  return 0;
}
#endif
int cuLaunchKernel(void*, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void*, void**, void** extra) {
  LaunchRecord r{"cuLaunchKernel", {gx, gy, gz}, {bx, by, bz}, shared, {1, 1, 1}, 0, {}};
  record_params(r, extra);
  g.launches.push_back(r);
  log("cuLaunchKernel");
  return take_failure();
}
#ifndef FAKE_CUDA_OLD_DRIVER
int cuLaunchKernelEx(const LaunchConfig* c, void*, void**, void** extra) {
  LaunchRecord r{"cuLaunchKernelEx", {c->grid_x, c->grid_y, c->grid_z}, {c->block_x, c->block_y, c->block_z},
                 c->shared_bytes, {1, 1, 1}, 0, {}};
  r.num_attrs = c->num_attrs;
  for (unsigned i = 0; i < c->num_attrs; ++i)
    if (c->attrs[i].id == 4) { // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
      r.cluster[0] = c->attrs[i].value.cluster_dim.x;
      r.cluster[1] = c->attrs[i].value.cluster_dim.y;
      r.cluster[2] = c->attrs[i].value.cluster_dim.z;
    }
  record_params(r, extra);
  g.launches.push_back(r);
  log("cuLaunchKernelEx");
  return take_failure();
}
int cuTensorMapEncodeTiled(void* map, int type, unsigned rank, void*, const unsigned long long*,
                           const unsigned long long*, const unsigned*, const unsigned*, int, int swizzle, int, int) {
  log("cuTensorMapEncodeTiled");
  if (int f = take_failure()) return f;
  g.tmap_rank = rank;
  g.tmap_type = type;
  g.tmap_swizzle = swizzle;
  std::memset(map, 0xC5, 128); // opaque bytes, recognisable
  return 0;
}
#endif
int cuEventCreate(void** e, unsigned) {
  *e = new double(0);
  return 0;
}
int cuEventDestroy_v2(void* e) {
  delete static_cast<double*>(e);
  return 0;
}
int cuEventRecord(void* e, void*) {
  static double clock_ms = 0;
  clock_ms += 0.25; // each record a quarter millisecond later
  *static_cast<double*>(e) = clock_ms;
  return 0;
}
int cuEventSynchronize(void*) { return 0; }
int cuEventElapsedTime(float* ms, void* a, void* b) {
  *ms = float(*static_cast<double*>(b) - *static_cast<double*>(a));
  return 0;
}

} // extern "C"

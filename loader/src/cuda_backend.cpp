// The CUDA backend: libcuda.so.1 (the driver API) opened with dlopen; declarations written here from the CUDA
// driver API documentation (constants compared by hand with CUDA 13 cuda.h; no automated check yet).
#include <cstdlib>
#include <cstring>

#include "dl_library.h"
#include "isatune/loader/backend.h"

namespace isatune::loader {

namespace {
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUlibrary = void*;
using CUkernel = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;
constexpr int kAttrMaxThreadsPerBlock = 1;      // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
constexpr int kAttrMaxSharedPerBlock = 8;       // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
constexpr int kAttrWarpSize = 10;               // CU_DEVICE_ATTRIBUTE_WARP_SIZE
constexpr int kAttrMultiprocessorCount = 16;    // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrClockRate = 13;              // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (kHz)
constexpr int kAttrMemoryClockRate = 36;        // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
constexpr int kAttrMemoryBusWidth = 37;         // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
constexpr int kAttrL2CacheSize = 38;            // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE (bytes)
constexpr int kAttrMaxSharedPerSm = 81;         // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
constexpr int kAttrMaxRegistersPerSm = 82;      // CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR
constexpr int kAttrCcMajor = 75;                // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;                // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrMaxSharedPerBlockOptin = 97; // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kFuncAttrMaxDynamicShared = 8;    // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
void* const kParamBufferPointer = reinterpret_cast<void*>(0x01); // CU_LAUNCH_PARAM_BUFFER_POINTER
void* const kParamBufferSize = reinterpret_cast<void*>(0x02);    // CU_LAUNCH_PARAM_BUFFER_SIZE
void* const kParamEnd = reinterpret_cast<void*>(0x00);           // CU_LAUNCH_PARAM_END
constexpr int kLaunchAttrClusterDimension = 4;                   // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION

// cuLaunchKernelEx's configuration (cuda.h 13.0 CUlaunchAttribute_st / CUlaunchConfig_st): an attribute is an
// id padded to 8 bytes and a 64-byte value union, of which only clusterDim {x, y, z} is used here.
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
};
struct CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  void* stream;
  CUlaunchAttribute* attrs;
  unsigned num_attrs;
};
static_assert(sizeof(CUlaunchAttribute) == 72, "CUlaunchAttribute layout");

struct CudaApi {
  // ISATUNE_CUDA_LIBRARY: another driver library (a path), e.g. the tests' stand-in for libcuda.
  detail::DlLibrary lib{std::getenv("ISATUNE_CUDA_LIBRARY") && *std::getenv("ISATUNE_CUDA_LIBRARY")
                            ? std::vector<std::string>{std::getenv("ISATUNE_CUDA_LIBRARY")}
                            : std::vector<std::string>{"libcuda.so.1", "libcuda.so"}};
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*DeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DriverGetVersion)(int*) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*PrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  // CUDA 12.0+, optional (resolved at start; without them modules are loaded with cuModuleLoadData): a library
  // is context-independent, its kernels give each context's function with cuKernelGetFunction.
  // The physical GPU's identity (optional: a stand-in driver may lack them).
  CUresult (*DeviceGetUuid)(unsigned char (*uuid)[16], CUdevice) = nullptr;
  CUresult (*DeviceGetPCIBusId)(char*, int, CUdevice) = nullptr;
  CUresult (*LibraryLoadData)(CUlibrary*, const void*, void*, void**, unsigned, void*, void**, unsigned) = nullptr;
  CUresult (*LibraryUnload)(CUlibrary) = nullptr;
  CUresult (*LibraryGetKernel)(CUkernel*, CUlibrary, const char*) = nullptr;
  CUresult (*KernelGetFunction)(CUfunction*, CUkernel) = nullptr;
  CUresult (*FuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                           void**, void**) = nullptr;
  // CUDA 12.0+, for cluster launches (resolved when first needed).
  CUresult (*LaunchKernelEx)(const CUlaunchConfig*, CUfunction, void**, void**) = nullptr;
  CUresult (*EventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*EventDestroy)(CUevent) = nullptr;
  CUresult (*EventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*EventSynchronize)(CUevent) = nullptr;
  CUresult (*EventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // CUDA 12.0+ (resolved when first used, so older drivers still run everything else). The enums are passed
  // as their cuda.h values (isatune/tensor_map_args.h keeps them equal).
  CUresult (*TensorMapEncodeTiled)(void* map, int data_type, unsigned rank, void* global_address,
                                   const unsigned long long* global_dim, const unsigned long long* global_strides,
                                   const unsigned* box_dim, const unsigned* element_strides, int interleave,
                                   int swizzle, int l2_promotion, int oob_fill) = nullptr;
  std::string error;

  CudaApi() {
    if (!lib.ok()) {
      error = lib.reason();
      return;
    }
    try {
      Init = lib.symbol<decltype(Init)>("cuInit");
      DeviceGetCount = lib.symbol<decltype(DeviceGetCount)>("cuDeviceGetCount");
      DeviceGet = lib.symbol<decltype(DeviceGet)>("cuDeviceGet");
      DeviceGetName = lib.symbol<decltype(DeviceGetName)>("cuDeviceGetName");
      DeviceTotalMem = lib.symbol<decltype(DeviceTotalMem)>("cuDeviceTotalMem_v2");
      DeviceGetAttribute = lib.symbol<decltype(DeviceGetAttribute)>("cuDeviceGetAttribute");
      DriverGetVersion = lib.symbol<decltype(DriverGetVersion)>("cuDriverGetVersion");
      GetErrorString = lib.symbol<decltype(GetErrorString)>("cuGetErrorString");
      PrimaryCtxRetain = lib.symbol<decltype(PrimaryCtxRetain)>("cuDevicePrimaryCtxRetain");
      CtxSetCurrent = lib.symbol<decltype(CtxSetCurrent)>("cuCtxSetCurrent");
      CtxSynchronize = lib.symbol<decltype(CtxSynchronize)>("cuCtxSynchronize");
      MemAlloc = lib.symbol<decltype(MemAlloc)>("cuMemAlloc_v2");
      MemFree = lib.symbol<decltype(MemFree)>("cuMemFree_v2");
      MemcpyHtoD = lib.symbol<decltype(MemcpyHtoD)>("cuMemcpyHtoD_v2");
      MemcpyDtoH = lib.symbol<decltype(MemcpyDtoH)>("cuMemcpyDtoH_v2");
      MemsetD8 = lib.symbol<decltype(MemsetD8)>("cuMemsetD8_v2");
      ModuleLoadData = lib.symbol<decltype(ModuleLoadData)>("cuModuleLoadData");
      ModuleUnload = lib.symbol<decltype(ModuleUnload)>("cuModuleUnload");
      ModuleGetFunction = lib.symbol<decltype(ModuleGetFunction)>("cuModuleGetFunction");
      FuncSetAttribute = lib.symbol<decltype(FuncSetAttribute)>("cuFuncSetAttribute");
      LaunchKernel = lib.symbol<decltype(LaunchKernel)>("cuLaunchKernel");
      EventCreate = lib.symbol<decltype(EventCreate)>("cuEventCreate");
      EventDestroy = lib.symbol<decltype(EventDestroy)>("cuEventDestroy_v2");
      EventRecord = lib.symbol<decltype(EventRecord)>("cuEventRecord");
      EventSynchronize = lib.symbol<decltype(EventSynchronize)>("cuEventSynchronize");
      EventElapsedTime = lib.symbol<decltype(EventElapsedTime)>("cuEventElapsedTime");
      DeviceGetUuid = lib.optional_symbol<decltype(DeviceGetUuid)>("cuDeviceGetUuid");
      DeviceGetPCIBusId = lib.optional_symbol<decltype(DeviceGetPCIBusId)>("cuDeviceGetPCIBusId");
      LibraryLoadData = lib.optional_symbol<decltype(LibraryLoadData)>("cuLibraryLoadData");
      LibraryUnload = lib.optional_symbol<decltype(LibraryUnload)>("cuLibraryUnload");
      LibraryGetKernel = lib.optional_symbol<decltype(LibraryGetKernel)>("cuLibraryGetKernel");
      KernelGetFunction = lib.optional_symbol<decltype(KernelGetFunction)>("cuKernelGetFunction");
      if (Init(0) != 0) error = "cuInit failed (no usable NVIDIA GPU or driver)";
    } catch (const Error& e) {
      error = e.what();
    }
  }
  // cuLibrary* when the driver has all four and ISATUNE_CUDA_LOADER is not "module".
  bool use_library() const {
    const char* choice = std::getenv("ISATUNE_CUDA_LOADER");
    if (choice && std::strcmp(choice, "module") == 0) return false;
    return LibraryLoadData && LibraryUnload && LibraryGetKernel && KernelGetFunction;
  }
  void check(CUresult rc, const std::string& what) const {
    if (rc == 0) return;
    const char* s = nullptr;
    if (GetErrorString) GetErrorString(rc, &s);
    throw Error("cuda: " + what + ": " + (s ? s : "error") + " (" + std::to_string(rc) + ")");
  }
};

CudaApi& api() {
  static CudaApi a;
  return a;
}

// Where code for `code_isa` runs. SASS (a cubin): sm_XY on X.Z with Z >= Y (binary compatibility stays within a
// major version). PTX: the driver compiles it for any newer device, sm_XY on every X.Y or later. The
// arch-specific targets (sm_90a, sm_100f ...) only on the one they name, in either form.
bool sm_fits(const std::string& code_isa, bool ptx, int major, int minor) {
  if (code_isa.rfind("sm_", 0) != 0 || code_isa.size() < 5) return false;
  bool arch_specific = code_isa.back() == 'a' || code_isa.back() == 'f';
  std::string digits = code_isa.substr(3, code_isa.size() - 3 - (arch_specific ? 1 : 0));
  int cc = 0;
  try {
    cc = std::stoi(digits);
  } catch (...) {
    return false;
  }
  int cmaj = cc / 10, cmin = cc % 10;
  if (arch_specific) return cmaj == major && cmin == minor;
  if (ptx) return cmaj < major || (cmaj == major && cmin <= minor);
  return cmaj == major && cmin <= minor;
}

struct CudaFunction : Function {
  KernelInfo k;
  CUfunction f = nullptr;
  int dynamic_shared_set = 0; // the MAX_DYNAMIC_SHARED_SIZE_BYTES attribute last set (0: the default)
  const KernelInfo& info() const override { return k; }
};

// A module or a library (cuLibraryLoadData), whichever the driver offers.
struct CudaModule : Module {
  CUmodule m = nullptr;
  CUlibrary library = nullptr;
  CUcontext ctx = nullptr; // cuKernelGetFunction gives the function of the current context
  CodeObject code;
  ~CudaModule() override {
    if (library) api().LibraryUnload(library);
    if (m) api().ModuleUnload(m);
  }
  std::shared_ptr<Function> function(const std::string& name) override {
    const KernelInfo* k = code.find_kernel(name);
    if (!k) throw InputError("code object " + code.sha256 + ": no kernel named '" + name + "'");
    auto f = std::make_shared<CudaFunction>();
    f->k = *k;
    const char* symbol = k->symbol.empty() ? name.c_str() : k->symbol.c_str();
    auto& x = api();
    x.check(x.CtxSetCurrent(ctx), "cuCtxSetCurrent");
    if (library) {
      CUkernel kernel = nullptr;
      x.check(x.LibraryGetKernel(&kernel, library, symbol), "cuLibraryGetKernel " + name);
      x.check(x.KernelGetFunction(&f->f, kernel), "cuKernelGetFunction " + name);
    } else {
      x.check(x.ModuleGetFunction(&f->f, m, symbol), "cuModuleGetFunction " + name);
    }
    return f;
  }
};

struct CudaEvent : Event {
  CUevent e = nullptr;
  ~CudaEvent() override {
    if (e) api().EventDestroy(e);
  }
};

class CudaDevice : public Device {
public:
  CudaDevice(DeviceProperties p, int major, int minor, uint32_t optin)
      : props_(std::move(p)), major_(major), minor_(minor), optin_(optin),
        default_shared_(props_.default_shared_bytes_per_workgroup ? props_.default_shared_bytes_per_workgroup
                                                                  : 48 * 1024) {
    CUdevice dev = 0;
    api().check(api().DeviceGet(&dev, props_.index), "cuDeviceGet");
    api().check(api().PrimaryCtxRetain(&ctx_, dev), "cuDevicePrimaryCtxRetain");
  }
  const DeviceProperties& properties() const override { return props_; }
  DevicePtr alloc(size_t bytes) override {
    current();
    CUdeviceptr p = 0;
    api().check(api().MemAlloc(&p, bytes), "cuMemAlloc");
    return p;
  }
  void free(DevicePtr ptr) override {
    current();
    api().MemFree(ptr);
  }
  void copy_to_device(DevicePtr dst, const void* src, size_t bytes) override {
    current();
    api().check(api().MemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void* dst, DevicePtr src, size_t bytes) override {
    current();
    api().check(api().MemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
  }
  void fill(DevicePtr dst, uint8_t value, size_t bytes) override {
    current();
    api().check(api().MemsetD8(dst, value, bytes), "cuMemsetD8");
  }
  std::shared_ptr<Module> load(const CodeObject& code) override {
    const bool ptx = code.format == CodeFormat::ptx;
    if (code.vendor != Vendor::nvidia || !sm_fits(code.isa, ptx, major_, minor_))
      throw InputError("code object " + code.sha256 + " is for " + code.isa + ", not for " + props_.name + " (" +
                       props_.isa + ")");
    for (const auto& k : code.kernels)
      if (k.lds_bytes > optin_)
        throw InputError("code object " + code.sha256 + ": kernel " + k.name + " needs " + std::to_string(k.lds_bytes) +
                         " bytes of shared memory, " + props_.name + " allows " + std::to_string(optin_));
    current();
    auto m = std::make_shared<CudaModule>();
    m->code = code;
    m->ctx = ctx_;
    if (ptx && (m->code.bytes.empty() || m->code.bytes.back() != 0))
      m->code.bytes.push_back(0); // both loaders read PTX as a NUL-terminated string
    auto& x = api();
    if (x.use_library())
      x.check(x.LibraryLoadData(&m->library, m->code.bytes.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
              "cuLibraryLoadData");
    else
      x.check(x.ModuleLoadData(&m->m, m->code.bytes.data()), "cuModuleLoadData");
    return m;
  }
  void launch(Function& function, const LaunchConfig& c, std::span<const uint8_t> kernargs) override {
    current();
    auto& f = static_cast<CudaFunction&>(function);
    // Above the default (48 KiB, static and dynamic together) a kernel must opt in, up to the device's limit.
    const uint64_t shared = uint64_t(c.dynamic_shared_bytes) + f.k.lds_bytes;
    if (shared > optin_)
      throw InputError("kernel " + f.k.name + ": " + std::to_string(c.dynamic_shared_bytes) +
                       " bytes of dynamic shared memory" +
                       (f.k.lds_bytes ? " + " + std::to_string(f.k.lds_bytes) + " static" : std::string()) +
                       " exceed " + props_.name + "'s opt-in limit of " + std::to_string(optin_) + " bytes per block");
    if (shared > default_shared_ && int(c.dynamic_shared_bytes) > f.dynamic_shared_set) {
      api().check(api().FuncSetAttribute(f.f, kFuncAttrMaxDynamicShared, int(c.dynamic_shared_bytes)),
                  "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) " + f.k.name);
      f.dynamic_shared_set = int(c.dynamic_shared_bytes);
    }
    size_t size = kernargs.size();
    void* buffer = const_cast<uint8_t*>(kernargs.data());
    void* extra[] = {kParamBufferPointer, buffer, kParamBufferSize, &size, kParamEnd};
    const bool clustered = c.cluster.x * c.cluster.y * c.cluster.z > 1;
    if (!clustered) {
      api().check(api().LaunchKernel(f.f, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z,
                                     c.dynamic_shared_bytes, nullptr, nullptr, extra),
                  "cuLaunchKernel " + f.k.name);
      return;
    }
    // A cluster launch: cuLaunchKernelEx with the cluster-dimension attribute (the grid must be a multiple).
    if (major_ < 9)
      throw InputError("kernel " + f.k.name + ": clusters need compute capability 9.0 or newer; " + props_.name +
                       " is " + std::to_string(major_) + "." + std::to_string(minor_));
    if (c.grid.x % c.cluster.x || c.grid.y % c.cluster.y || c.grid.z % c.cluster.z)
      throw InputError("kernel " + f.k.name + ": grid " + std::to_string(c.grid.x) + "," + std::to_string(c.grid.y) +
                       "," + std::to_string(c.grid.z) + " is not a multiple of cluster " +
                       std::to_string(c.cluster.x) + "," + std::to_string(c.cluster.y) + "," +
                       std::to_string(c.cluster.z));
    auto& x = api();
    if (!x.LaunchKernelEx) x.LaunchKernelEx = x.lib.optional_symbol<decltype(x.LaunchKernelEx)>("cuLaunchKernelEx");
    if (!x.LaunchKernelEx)
      throw InputError(props_.name + ": the driver has no cuLaunchKernelEx (CUDA 12.0 or newer) for cluster launches");
    CUlaunchAttribute attr{};
    attr.id = kLaunchAttrClusterDimension;
    attr.value.cluster_dim = {c.cluster.x, c.cluster.y, c.cluster.z};
    CUlaunchConfig cfg{c.grid.x,  c.grid.y,  c.grid.z, c.block.x, c.block.y, c.block.z, c.dynamic_shared_bytes,
                       nullptr, &attr, 1};
    x.check(x.LaunchKernelEx(&cfg, f.f, nullptr, extra), "cuLaunchKernelEx " + f.k.name);
  }
  std::unique_ptr<Event> create_event() override {
    current();
    auto e = std::make_unique<CudaEvent>();
    api().check(api().EventCreate(&e->e, 0), "cuEventCreate");
    return e;
  }
  void record(Event& event) override {
    current();
    api().check(api().EventRecord(static_cast<CudaEvent&>(event).e, nullptr), "cuEventRecord");
  }
  double elapsed_ms(const Event& start, const Event& end) override {
    current();
    float ms = 0;
    api().check(api().EventSynchronize(static_cast<const CudaEvent&>(end).e), "cuEventSynchronize");
    api().check(api().EventElapsedTime(&ms, static_cast<const CudaEvent&>(start).e, static_cast<const CudaEvent&>(end).e),
                "cuEventElapsedTime");
    return ms;
  }
  void synchronize() override {
    current();
    api().check(api().CtxSynchronize(), "cuCtxSynchronize");
  }
  TensorMap encode_tensor_map(const TensorMapTiledArgs& a) override {
    auto& x = api();
    if (!x.TensorMapEncodeTiled)
      x.TensorMapEncodeTiled = x.lib.optional_symbol<decltype(x.TensorMapEncodeTiled)>("cuTensorMapEncodeTiled");
    if (!x.TensorMapEncodeTiled)
      throw InputError(props_.name + ": the driver has no cuTensorMapEncodeTiled (CUDA 12.0 or newer)");
    if (a.rank < 1 || a.rank > 5) throw InputError("tensor map: rank " + std::to_string(a.rank) + " is not 1..5");
    current();
    TensorMap map;
    unsigned long long dims[5], strides[4];
    unsigned box[5], estrides[5];
    for (unsigned i = 0; i < 5; ++i) {
      dims[i] = a.global_dim[i];
      box[i] = a.box_dim[i];
      estrides[i] = a.element_strides[i];
      if (i < 4) strides[i] = a.global_strides[i];
    }
    x.check(x.TensorMapEncodeTiled(map.bytes.data(), int(a.data_type), a.rank,
                                   reinterpret_cast<void*>(uintptr_t(a.global_address)), dims, strides, box, estrides,
                                   int(a.interleave), int(a.swizzle), int(a.l2_promotion), int(a.oob_fill)),
            "cuTensorMapEncodeTiled");
    return map;
  }

private:
  void current() { api().check(api().CtxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  DeviceProperties props_;
  int major_, minor_;
  uint32_t optin_;
  uint32_t default_shared_; // without the opt-in attribute
  CUcontext ctx_ = nullptr;
};

struct Listed {
  DeviceProperties props;
  int major = 0, minor = 0;
  uint32_t optin = 0;
};

std::vector<Listed> enumerate() {
  std::vector<Listed> out;
  auto& a = api();
  if (!a.error.empty()) return out;
  int n = 0, driver = 0;
  if (a.DeviceGetCount(&n) != 0) return out;
  a.DriverGetVersion(&driver);
  for (int i = 0; i < n; ++i) {
    CUdevice dev = 0;
    if (a.DeviceGet(&dev, i) != 0) continue;
    Listed l;
    DeviceProperties& p = l.props;
    p.backend = "cuda";
    p.index = i;
    p.vendor = Vendor::nvidia;
    char name[256] = {};
    a.DeviceGetName(name, sizeof name, dev);
    p.name = name;
    int v = 0;
    a.DeviceGetAttribute(&l.major, kAttrCcMajor, dev);
    a.DeviceGetAttribute(&l.minor, kAttrCcMinor, dev);
    p.isa = "sm_" + std::to_string(l.major) + std::to_string(l.minor);
    if (l.major == 9 && l.minor == 0) p.isa += "a"; // Hopper: the arch-specific features are present
    p.target_id = p.isa;
    if (a.DeviceGetAttribute(&v, kAttrMultiprocessorCount, dev) == 0) p.compute_units = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMaxSharedPerBlock, dev) == 0) p.default_shared_bytes_per_workgroup = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMaxSharedPerBlockOptin, dev) == 0) l.optin = uint32_t(v);
    if (l.optin < p.default_shared_bytes_per_workgroup) l.optin = p.default_shared_bytes_per_workgroup;
    p.shared_bytes_per_workgroup = l.optin;
    if (a.DeviceGetAttribute(&v, kAttrMaxSharedPerSm, dev) == 0) p.shared_bytes_per_cu = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMaxRegistersPerSm, dev) == 0) p.registers_per_cu = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrClockRate, dev) == 0) p.clock_khz = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMemoryClockRate, dev) == 0) p.memory_clock_khz = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMemoryBusWidth, dev) == 0) p.memory_bus_bits = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrL2CacheSize, dev) == 0) p.l2_bytes = uint64_t(v);
    if (a.DeviceGetAttribute(&v, kAttrWarpSize, dev) == 0) p.wave_size = uint32_t(v);
    if (a.DeviceGetAttribute(&v, kAttrMaxThreadsPerBlock, dev) == 0) p.max_workgroup_size = uint32_t(v);
    size_t mem = 0;
    if (a.DeviceTotalMem(&mem, dev) == 0) p.memory_bytes = mem;
    p.driver_version = "cuda driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
    unsigned char uuid[16] = {};
    if (a.DeviceGetUuid && a.DeviceGetUuid(&uuid, dev) == 0) { // as nvidia-smi prints it: GPU-8-4-4-4-12 hex
      static const char* hex = "0123456789abcdef";
      p.uuid = "GPU-";
      for (int b = 0; b < 16; ++b) {
        if (b == 4 || b == 6 || b == 8 || b == 10) p.uuid += '-';
        p.uuid += hex[uuid[b] >> 4];
        p.uuid += hex[uuid[b] & 15];
      }
    }
    char bus[32] = {};
    if (a.DeviceGetPCIBusId && a.DeviceGetPCIBusId(bus, int(sizeof bus), dev) == 0) p.pci_bus_id = bus;
    out.push_back(std::move(l));
  }
  return out;
}

class CudaBackend : public Backend {
public:
  std::string name() const override { return "cuda"; }
  std::string unavailable_reason() override { return api().error; }
  std::vector<DeviceProperties> list_devices() override {
    std::vector<DeviceProperties> out;
    for (auto& l : enumerate()) out.push_back(l.props);
    return out;
  }
  std::shared_ptr<Device> open(const std::string& arg) override {
    if (!api().error.empty()) throw UnavailableError("cuda: " + api().error);
    int index = 0;
    try {
      index = std::stoi(arg);
    } catch (...) {
      throw InputError("cuda:" + arg + ": expected a device number");
    }
    auto devices = enumerate();
    if (index < 0 || index >= int(devices.size()))
      throw InputError("cuda:" + arg + ": no such device (" + std::to_string(devices.size()) + " NVIDIA GPUs found)");
    auto& l = devices[size_t(index)];
    return std::make_shared<CudaDevice>(l.props, l.major, l.minor, l.optin);
  }
};
} // namespace

std::shared_ptr<Backend> make_cuda_backend() { return std::make_shared<CudaBackend>(); }

} // namespace isatune::loader

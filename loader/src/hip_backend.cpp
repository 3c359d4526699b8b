// The HIP backend: libamdhip64 opened with dlopen, declarations written here from the HIP documentation
// (ROCm >= 6: hipDeviceAttribute_t numbering of ROCm 6). Untested on hardware: the team has no AMD GPU.
#include <cstring>
#include <mutex>

#include "dl_library.h"
#include "isatune/loader/backend.h"

namespace isatune::loader {

namespace {
using hipError_t = int;
using hipModule_t = void*;
using hipFunction_t = void*;
using hipEvent_t = void*;
using hipStream_t = void*;
constexpr int kAttrMaxThreadsPerBlock = 56; // hipDeviceAttributeMaxThreadsPerBlock (ROCm 6)
constexpr int kAttrMaxSharedPerBlock = 74;  // hipDeviceAttributeMaxSharedMemoryPerBlock
constexpr int kAttrMultiprocessorCount = 63; // hipDeviceAttributeMultiprocessorCount
constexpr int kAttrWarpSize = 87;           // hipDeviceAttributeWarpSize
void* const kParamBufferPointer = reinterpret_cast<void*>(0x01); // HIP_LAUNCH_PARAM_BUFFER_POINTER
void* const kParamBufferSize = reinterpret_cast<void*>(0x02);    // HIP_LAUNCH_PARAM_BUFFER_SIZE
void* const kParamEnd = reinterpret_cast<void*>(0x03);           // HIP_LAUNCH_PARAM_END

struct HipApi {
  detail::DlLibrary lib{{"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7", "/opt/rocm/lib/libamdhip64.so"}};
  hipError_t (*Init)(unsigned) = nullptr;
  hipError_t (*GetDeviceCount)(int*) = nullptr;
  hipError_t (*SetDevice)(int) = nullptr;
  hipError_t (*DeviceGetName)(char*, int, int) = nullptr;
  hipError_t (*DeviceTotalMem)(size_t*, int) = nullptr;
  hipError_t (*DeviceGetAttribute)(int*, int, int) = nullptr;
  hipError_t (*GetDeviceProperties)(void*, int) = nullptr;
  hipError_t (*DriverGetVersion)(int*) = nullptr;
  // The physical GPU's identity (optional; not checked on an AMD GPU yet).
  hipError_t (*DeviceGetPCIBusId)(char*, int, int) = nullptr;
  hipError_t (*RuntimeGetVersion)(int*) = nullptr;
  const char* (*GetErrorString)(hipError_t) = nullptr;
  hipError_t (*Malloc)(void**, size_t) = nullptr;
  hipError_t (*Free)(void*) = nullptr;
  hipError_t (*Memcpy)(void*, const void*, size_t, int) = nullptr;
  hipError_t (*Memset)(void*, int, size_t) = nullptr;
  hipError_t (*ModuleLoadData)(hipModule_t*, const void*) = nullptr;
  hipError_t (*ModuleUnload)(hipModule_t) = nullptr;
  hipError_t (*ModuleGetFunction)(hipFunction_t*, hipModule_t, const char*) = nullptr;
  hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, hipStream_t, void**, void**) = nullptr;
  hipError_t (*EventCreate)(hipEvent_t*) = nullptr;
  hipError_t (*EventDestroy)(hipEvent_t) = nullptr;
  hipError_t (*EventRecord)(hipEvent_t, hipStream_t) = nullptr;
  hipError_t (*EventSynchronize)(hipEvent_t) = nullptr;
  hipError_t (*EventElapsedTime)(float*, hipEvent_t, hipEvent_t) = nullptr;
  hipError_t (*DeviceSynchronize)() = nullptr;
  std::string error;

  HipApi() {
    if (!lib.ok()) {
      error = lib.reason();
      return;
    }
    try {
      Init = lib.symbol<decltype(Init)>("hipInit");
      GetDeviceCount = lib.symbol<decltype(GetDeviceCount)>("hipGetDeviceCount");
      SetDevice = lib.symbol<decltype(SetDevice)>("hipSetDevice");
      DeviceGetName = lib.symbol<decltype(DeviceGetName)>("hipDeviceGetName");
      DeviceTotalMem = lib.symbol<decltype(DeviceTotalMem)>("hipDeviceTotalMem");
      DeviceGetAttribute = lib.symbol<decltype(DeviceGetAttribute)>("hipDeviceGetAttribute");
      GetDeviceProperties = lib.optional_symbol<decltype(GetDeviceProperties)>("hipGetDevicePropertiesR0600");
      DriverGetVersion = lib.symbol<decltype(DriverGetVersion)>("hipDriverGetVersion");
      DeviceGetPCIBusId = lib.optional_symbol<decltype(DeviceGetPCIBusId)>("hipDeviceGetPCIBusId");
      RuntimeGetVersion = lib.symbol<decltype(RuntimeGetVersion)>("hipRuntimeGetVersion");
      GetErrorString = lib.symbol<decltype(GetErrorString)>("hipGetErrorString");
      Malloc = lib.symbol<decltype(Malloc)>("hipMalloc");
      Free = lib.symbol<decltype(Free)>("hipFree");
      Memcpy = lib.symbol<decltype(Memcpy)>("hipMemcpy");
      Memset = lib.symbol<decltype(Memset)>("hipMemset");
      ModuleLoadData = lib.symbol<decltype(ModuleLoadData)>("hipModuleLoadData");
      ModuleUnload = lib.symbol<decltype(ModuleUnload)>("hipModuleUnload");
      ModuleGetFunction = lib.symbol<decltype(ModuleGetFunction)>("hipModuleGetFunction");
      ModuleLaunchKernel = lib.symbol<decltype(ModuleLaunchKernel)>("hipModuleLaunchKernel");
      EventCreate = lib.symbol<decltype(EventCreate)>("hipEventCreate");
      EventDestroy = lib.symbol<decltype(EventDestroy)>("hipEventDestroy");
      EventRecord = lib.symbol<decltype(EventRecord)>("hipEventRecord");
      EventSynchronize = lib.symbol<decltype(EventSynchronize)>("hipEventSynchronize");
      EventElapsedTime = lib.symbol<decltype(EventElapsedTime)>("hipEventElapsedTime");
      DeviceSynchronize = lib.symbol<decltype(DeviceSynchronize)>("hipDeviceSynchronize");
      if (Init(0) != 0) error = "hipInit failed (no usable AMD GPU or driver)";
    } catch (const Error& e) {
      error = e.what();
    }
  }
  void check(hipError_t rc, const char* what) const {
    if (rc != 0) throw Error(std::string("hip: ") + what + ": " + (GetErrorString ? GetErrorString(rc) : "error ") +
                             " (" + std::to_string(rc) + ")");
  }
};

HipApi& api() {
  static HipApi a;
  return a;
}

// The gcnArchName of hipDeviceProp_tR0600 ("gfx942:sramecc+:xnack-"), found by its "gfx" prefix after the
// 256-byte name so that no struct layout is hard-coded here.
std::string arch_name(int device) {
  auto& a = api();
  if (!a.GetDeviceProperties) return "";
  std::vector<char> props(16384, 0);
  if (a.GetDeviceProperties(props.data(), device) != 0) return "";
  for (size_t i = 256; i + 4 < props.size(); ++i)
    if (std::memcmp(props.data() + i, "gfx", 3) == 0 && props[i + 3] >= '0' && props[i + 3] <= '9')
      return std::string(props.data() + i, strnlen(props.data() + i, 256));
  return "";
}

struct HipFunction : Function {
  KernelInfo k;
  hipFunction_t f = nullptr;
  const KernelInfo& info() const override { return k; }
};

struct HipModule : Module {
  hipModule_t m = nullptr;
  CodeObject code;
  ~HipModule() override {
    if (m) api().ModuleUnload(m);
  }
  std::shared_ptr<Function> function(const std::string& name) override {
    const KernelInfo* k = code.find_kernel(name);
    if (!k) throw InputError("code object " + code.sha256 + ": no kernel named '" + name + "'");
    auto f = std::make_shared<HipFunction>();
    f->k = *k;
    api().check(api().ModuleGetFunction(&f->f, m, name.c_str()), ("hipModuleGetFunction " + name).c_str());
    return f;
  }
};

struct HipEvent : Event {
  hipEvent_t e = nullptr;
  ~HipEvent() override {
    if (e) api().EventDestroy(e);
  }
};

class HipDevice : public Device {
public:
  explicit HipDevice(DeviceProperties p) : props_(std::move(p)) {}
  const DeviceProperties& properties() const override { return props_; }
  DevicePtr alloc(size_t bytes) override {
    select();
    void* p = nullptr;
    api().check(api().Malloc(&p, bytes), "hipMalloc");
    return reinterpret_cast<DevicePtr>(p);
  }
  void free(DevicePtr ptr) override { api().Free(reinterpret_cast<void*>(ptr)); }
  void copy_to_device(DevicePtr dst, const void* src, size_t bytes) override {
    select();
    api().check(api().Memcpy(reinterpret_cast<void*>(dst), src, bytes, 1), "hipMemcpy host to device");
  }
  void copy_to_host(void* dst, DevicePtr src, size_t bytes) override {
    select();
    api().check(api().Memcpy(dst, reinterpret_cast<const void*>(src), bytes, 2), "hipMemcpy device to host");
  }
  void fill(DevicePtr dst, uint8_t value, size_t bytes) override {
    select();
    api().check(api().Memset(reinterpret_cast<void*>(dst), value, bytes), "hipMemset");
  }
  std::shared_ptr<Module> load(const CodeObject& code) override {
    if (code.vendor != Vendor::amd || code.isa != props_.isa)
      throw InputError("code object " + code.sha256 + " is for " + code.target_id + ", not for " + props_.name +
                       " (" + props_.target_id + ")");
    for (const auto& k : code.kernels)
      if (k.lds_bytes > props_.shared_bytes_per_workgroup)
        throw InputError("code object " + code.sha256 + ": kernel " + k.name + " needs " + std::to_string(k.lds_bytes) +
                         " bytes of LDS, " + props_.name + " has " + std::to_string(props_.shared_bytes_per_workgroup));
    select();
    auto m = std::make_shared<HipModule>();
    m->code = code;
    api().check(api().ModuleLoadData(&m->m, m->code.bytes.data()), "hipModuleLoadData");
    return m;
  }
  void launch(Function& function, const LaunchConfig& c, std::span<const uint8_t> kernargs) override {
    select();
    auto& f = static_cast<HipFunction&>(function);
    size_t size = kernargs.size();
    void* buffer = const_cast<uint8_t*>(kernargs.data());
    void* extra[] = {kParamBufferPointer, buffer, kParamBufferSize, &size, kParamEnd};
    api().check(api().ModuleLaunchKernel(f.f, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z,
                                         c.dynamic_shared_bytes, nullptr, nullptr, extra),
                ("hipModuleLaunchKernel " + f.k.name).c_str());
  }
  std::unique_ptr<Event> create_event() override {
    select();
    auto e = std::make_unique<HipEvent>();
    api().check(api().EventCreate(&e->e), "hipEventCreate");
    return e;
  }
  void record(Event& event) override { api().check(api().EventRecord(static_cast<HipEvent&>(event).e, nullptr), "hipEventRecord"); }
  double elapsed_ms(const Event& start, const Event& end) override {
    float ms = 0;
    api().check(api().EventSynchronize(static_cast<const HipEvent&>(end).e), "hipEventSynchronize");
    api().check(api().EventElapsedTime(&ms, static_cast<const HipEvent&>(start).e, static_cast<const HipEvent&>(end).e),
                "hipEventElapsedTime");
    return ms;
  }
  void synchronize() override {
    select();
    api().check(api().DeviceSynchronize(), "hipDeviceSynchronize");
  }

private:
  void select() { api().check(api().SetDevice(props_.index), "hipSetDevice"); }
  DeviceProperties props_;
};

class HipBackend : public Backend {
public:
  std::string name() const override { return "hip"; }
  std::string unavailable_reason() override { return api().error; }
  std::vector<DeviceProperties> list_devices() override {
    std::vector<DeviceProperties> out;
    auto& a = api();
    if (!a.error.empty()) return out;
    int n = 0;
    if (a.GetDeviceCount(&n) != 0) return out;
    int driver = 0, runtime = 0;
    a.DriverGetVersion(&driver);
    a.RuntimeGetVersion(&runtime);
    for (int i = 0; i < n; ++i) {
      DeviceProperties p;
      p.backend = "hip";
      p.index = i;
      p.vendor = Vendor::amd;
      char name[256] = {};
      a.DeviceGetName(name, sizeof name, i);
      p.name = name;
      std::string arch = arch_name(i);
      p.isa = arch.substr(0, arch.find(':'));
      p.target_id = "amdgcn-amd-amdhsa--" + arch;
      int v = 0;
      if (a.DeviceGetAttribute(&v, kAttrMultiprocessorCount, i) == 0) p.compute_units = uint32_t(v);
      if (a.DeviceGetAttribute(&v, kAttrMaxSharedPerBlock, i) == 0) p.shared_bytes_per_workgroup = uint32_t(v);
      if (a.DeviceGetAttribute(&v, kAttrWarpSize, i) == 0) p.wave_size = uint32_t(v);
      if (a.DeviceGetAttribute(&v, kAttrMaxThreadsPerBlock, i) == 0) p.max_workgroup_size = uint32_t(v);
      size_t mem = 0;
      if (a.DeviceTotalMem(&mem, i) == 0) p.memory_bytes = mem;
      p.driver_version = "hip driver " + std::to_string(driver) + ", runtime " + std::to_string(runtime);
      char bus[32] = {};
      if (a.DeviceGetPCIBusId && a.DeviceGetPCIBusId(bus, int(sizeof bus), i) == 0) p.pci_bus_id = bus;
      out.push_back(std::move(p));
    }
    return out;
  }
  std::shared_ptr<Device> open(const std::string& arg) override {
    if (!api().error.empty()) throw UnavailableError("hip: " + api().error);
    int index = 0;
    try {
      index = std::stoi(arg);
    } catch (...) {
      throw InputError("hip:" + arg + ": expected a device number");
    }
    auto devices = list_devices();
    if (index < 0 || index >= int(devices.size()))
      throw InputError("hip:" + arg + ": no such device (" + std::to_string(devices.size()) + " AMD GPUs found)");
    return std::make_shared<HipDevice>(devices[size_t(index)]);
  }
};
} // namespace

std::shared_ptr<Backend> make_hip_backend() { return std::make_shared<HipBackend>(); }

} // namespace isatune::loader

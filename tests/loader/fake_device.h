#pragma once
// A test double for loader::Device: host memory, load() checks target and LDS like a real backend, launch()
// records the packed arguments. Stands in for a GPU (and for the emulator where it is not linked).
#include <cstring>
#include <map>
#include <mutex>

#include "isatune/error.h"
#include "isatune/loader/backend.h"

namespace fake {

using namespace isatune;
using namespace isatune::loader;

struct FakeFunction : Function {
  KernelInfo k;
  const KernelInfo& info() const override { return k; }
};

struct FakeModule : Module {
  CodeObject code;
  std::shared_ptr<Function> function(const std::string& name) override {
    auto* k = code.find_kernel(name);
    if (!k) throw InputError("no kernel " + name);
    auto f = std::make_shared<FakeFunction>();
    f->k = *k;
    return f;
  }
};

class FakeDevice : public Device {
public:
  explicit FakeDevice(DeviceProperties p) : props_(std::move(p)) {}
  const DeviceProperties& properties() const override { return props_; }
  DevicePtr alloc(size_t bytes) override {
    std::lock_guard l(m_);
    DevicePtr p = next_;
    next_ += (bytes + 255) / 256 * 256 + 256;
    mem_[p].resize(bytes);
    return p;
  }
  void free(DevicePtr p) override {
    std::lock_guard l(m_);
    mem_.erase(p);
  }
  void copy_to_device(DevicePtr dst, const void* src, size_t n) override {
    std::lock_guard l(m_);
    std::memcpy(mem_.at(dst).data(), src, n);
  }
  void copy_to_host(void* dst, DevicePtr src, size_t n) override {
    std::lock_guard l(m_);
    std::memcpy(dst, mem_.at(src).data(), n);
  }
  void fill(DevicePtr dst, uint8_t v, size_t n) override {
    std::lock_guard l(m_);
    std::memset(mem_.at(dst).data(), v, n);
  }
  std::shared_ptr<Module> load(const CodeObject& code) override {
    if (code.isa != props_.isa) throw InputError("code object for " + code.isa + ", device is " + props_.isa);
    for (auto& k : code.kernels)
      if (k.lds_bytes > props_.shared_bytes_per_workgroup) throw InputError("LDS does not fit");
    std::lock_guard l(m_);
    ++loads;
    auto m = std::make_shared<FakeModule>();
    m->code = code;
    return m;
  }
  void launch(Function& f, const LaunchConfig& c, std::span<const uint8_t> kernargs) override {
    std::lock_guard l(m_);
    ++launches;
    last_kernel = f.info().name;
    last_config = c;
    last_kernargs.assign(kernargs.begin(), kernargs.end());
  }
  std::unique_ptr<Event> create_event() override { return std::make_unique<Event>(); }
  void record(Event&) override {}
  double elapsed_ms(const Event&, const Event&) override { return 0; }
  void synchronize() override {}

  int loads = 0, launches = 0;
  std::string last_kernel;
  LaunchConfig last_config;
  std::vector<uint8_t> last_kernargs;

private:
  DeviceProperties props_;
  std::mutex m_;
  std::map<DevicePtr, std::vector<uint8_t>> mem_;
  DevicePtr next_ = 0x10000;
};

inline DeviceProperties gfx942(uint32_t cus = 304, bool emulated = false) {
  DeviceProperties p;
  p.backend = "fake";
  p.name = "fake MI300X";
  p.isa = "gfx942";
  p.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  p.compute_units = cus;
  p.memory_bytes = 192ull << 30;
  p.shared_bytes_per_workgroup = 65536;
  p.emulated = emulated;
  return p;
}

class FakeBackend : public Backend {
public:
  std::string name() const override { return "fake"; }
  std::string unavailable_reason() override { return ""; }
  std::vector<DeviceProperties> list_devices() override { return {gfx942(304, true)}; }
  std::shared_ptr<Device> open(const std::string& arg) override {
    if (arg != "0" && arg != "gfx942") throw InputError("fake:" + arg + ": no such device");
    return std::make_shared<FakeDevice>(gfx942(304, true));
  }
};

} // namespace fake

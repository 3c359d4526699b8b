// The emu Device: memory, modules, launches (workgroups across host threads), emulated timing events.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include "decoder.h"
#include "executor.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"

namespace isatune::emu {

namespace {

class EmuFunction : public loader::Function {
public:
  explicit EmuFunction(std::shared_ptr<const KernelImage> image) : image_(std::move(image)) {}
  const KernelInfo& info() const override { return image_->info; }
  const KernelImage& image() const { return *image_; }

private:
  std::shared_ptr<const KernelImage> image_;
};

class EmuModule : public loader::Module {
public:
  EmuModule(CodeObject code, cdna::Gfx gfx) : code_(std::move(code)), gfx_(gfx) {}
  std::shared_ptr<loader::Function> function(const std::string& name) override {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(name); it != cache_.end()) return it->second;
    const KernelInfo* k = code_.find_kernel(name);
    if (!k) {
      std::string names;
      for (const auto& kk : code_.kernels) names += (names.empty() ? "" : ", ") + kk.name;
      throw InputError("no kernel '" + name + "' in the code object (it has: " + names + ")");
    }
    if (!k->descriptor) throw InputError("kernel '" + name + "' has no kernel descriptor");
    auto image = std::make_shared<KernelImage>();
    image->info = *k;
    image->prog = decode_kernel(code_, *k, gfx_);
    auto f = std::make_shared<EmuFunction>(image);
    cache_[name] = f;
    return f;
  }

private:
  CodeObject code_;
  cdna::Gfx gfx_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<EmuFunction>> cache_;
};

class EmuEvent : public loader::Event {
public:
  double ms = -1;
};

} // namespace

struct EmuDevice::Impl {
  const cdna::TargetInfo* target = nullptr;
  loader::DeviceProperties props;
  Memory memory;
  double clock_ms = 0; // emulated time of the device's stream
  mutable std::mutex reports_mutex;
  std::vector<HazardReport> reports;
};

EmuDevice::EmuDevice(EmuOptions options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  auto id = cdna::parse_target_id(options_.target);
  impl_->target = id.info;
  auto& p = impl_->props;
  p.backend = "emu";
  p.index = options_.index;
  p.name = "CDNA emulator (" + std::string(id.info->name) + ")";
  p.vendor = Vendor::amd;
  p.isa = std::string(id.info->name);
  p.target_id = id.str();
  p.compute_units = id.info->compute_units;
  p.memory_bytes = options_.memory_bytes;
  p.shared_bytes_per_workgroup = id.info->lds_bytes_per_cu;
  p.wave_size = 64;
  p.max_workgroup_size = id.info->max_workgroup_size;
  p.driver_version = "isatune-emu 0.1 (LLVM " ISATUNE_LLVM_VERSION_STRING " disassembler)";
  p.emulated = true;
  p.uuid = "emu-" + p.isa + "-" + std::to_string(p.index); // synthetic and stable: no hardware to name
  p.pci_bus_id = "emu:" + std::to_string(p.index);
}

EmuDevice::~EmuDevice() = default;

const loader::DeviceProperties& EmuDevice::properties() const { return impl_->props; }

loader::DevicePtr EmuDevice::alloc(size_t bytes) {
  if (impl_->memory.allocated() + bytes > options_.memory_bytes)
    throw InputError("emu: out of device memory (" + std::to_string(bytes) + " bytes requested)");
  return impl_->memory.alloc(bytes);
}
void EmuDevice::free(loader::DevicePtr ptr) { impl_->memory.free(ptr); }
void EmuDevice::copy_to_device(loader::DevicePtr dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(impl_->memory.checked(dst, bytes, "copy to device"), src, bytes);
}
void EmuDevice::copy_to_host(void* dst, loader::DevicePtr src, size_t bytes) {
  if (bytes) std::memcpy(dst, impl_->memory.checked(src, bytes, "copy to host"), bytes);
}
void EmuDevice::fill(loader::DevicePtr dst, uint8_t value, size_t bytes) {
  if (bytes) std::memset(impl_->memory.checked(dst, bytes, "fill"), value, bytes);
}

std::shared_ptr<loader::Module> EmuDevice::load(const CodeObject& code) {
  if (code.vendor != Vendor::amd) throw InputError("emu: the emulator runs AMD code objects only");
  const cdna::TargetInfo* t = cdna::find_target(code.isa);
  if (!t) throw InputError("emu: code object target '" + code.isa + "' is not one the emulator runs (gfx90a, gfx942, gfx950)");
  if (t != impl_->target)
    throw InputError("emu: code object is for " + code.isa + ", this emu device emulates " + impl_->props.isa);
  for (const auto& k : code.kernels)
    if (k.lds_bytes > t->lds_bytes_per_cu)
      throw InputError("emu: kernel '" + k.name + "' needs " + std::to_string(k.lds_bytes) + " bytes of LDS; " +
                       code.isa + " has " + std::to_string(t->lds_bytes_per_cu));
  return std::make_shared<EmuModule>(code, t->gfx);
}

void EmuDevice::launch(loader::Function& function, const loader::LaunchConfig& config,
                       std::span<const uint8_t> kernargs) {
  auto* f = dynamic_cast<EmuFunction*>(&function);
  if (!f) throw InputError("emu: the function was not loaded by this emu device");
  const KernelImage& k = f->image();
  const KernelInfo& info = k.info;
  const auto& d = *info.descriptor;
  const loader::Dim3 g = config.grid, b = config.block;
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z) throw InputError("emu: grid and block sizes must be at least 1");
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  const uint32_t max_wg = info.max_workgroup_size ? info.max_workgroup_size : impl_->target->max_workgroup_size;
  if (threads > std::min<uint32_t>(max_wg, impl_->target->max_workgroup_size))
    throw InputError("emu: " + std::to_string(threads) + " threads per workgroup; kernel '" + info.name +
                     "' allows at most " + std::to_string(std::min<uint32_t>(max_wg, impl_->target->max_workgroup_size)));
  if ((b.y > 1 && d.workitem_id_vgprs < 1) || (b.z > 1 && d.workitem_id_vgprs < 2))
    throw InputError("emu: block has a y or z extent but kernel '" + info.name + "' does not take those workitem ids");
  if ((g.y > 1 && !d.workgroup_id_y) || (g.z > 1 && !d.workgroup_id_z))
    throw InputError("emu: grid has a y or z extent but kernel '" + info.name + "' does not take those workgroup ids");
  const uint64_t lds = uint64_t(info.lds_bytes) + config.dynamic_shared_bytes;
  if (lds > impl_->target->lds_bytes_per_cu)
    throw InputError("emu: workgroup needs " + std::to_string(lds) + " bytes of LDS; " + impl_->props.isa + " allows " +
                     std::to_string(impl_->target->lds_bytes_per_cu));
  const uint32_t need = std::max(info.kernarg_size, d.kernarg_size);
  if (kernargs.size() < need)
    throw InputError("emu: kernel '" + info.name + "' takes " + std::to_string(need) + " bytes of arguments, got " +
                     std::to_string(kernargs.size()));

  // Kernel arguments and an AQL dispatch packet in device memory, for the kernel to read.
  LaunchSetup setup;
  setup.grid = g, setup.block = b;
  setup.lds_bytes = uint32_t(lds);
  setup.kernarg_addr = impl_->memory.alloc(std::max<size_t>(kernargs.size(), 1) + 256);
  std::memcpy(impl_->memory.find(setup.kernarg_addr, kernargs.size() ? kernargs.size() : 1), kernargs.data(),
              kernargs.size());
  setup.dispatch_addr = impl_->memory.alloc(64);
  {
    uint8_t pkt[64] = {};
    uint16_t wg[3] = {uint16_t(b.x), uint16_t(b.y), uint16_t(b.z)};
    uint32_t grid[3] = {g.x * b.x, g.y * b.y, g.z * b.z};
    std::memcpy(pkt + 4, wg, 6);
    std::memcpy(pkt + 12, grid, 12);
    std::memcpy(pkt + 24, &info.scratch_bytes, 4);
    std::memcpy(pkt + 28, &setup.lds_bytes, 4);
    std::memcpy(pkt + 40, &setup.kernarg_addr, 8);
    std::memcpy(impl_->memory.find(setup.dispatch_addr, 64), pkt, 64);
  }
  for (uint32_t i = 0; i < d.kernarg_preload_length; ++i) {
    uint32_t v = 0;
    size_t off = size_t(d.kernarg_preload_offset) * 4 + i * 4;
    if (off + 4 <= kernargs.size()) std::memcpy(&v, kernargs.data() + off, 4);
    setup.preload.push_back(v);
  }

  LaunchContext ctx;
  ctx.gfx = impl_->target->gfx;
  ctx.memory = &impl_->memory;
  ctx.kernel = info.name;
  ctx.strict = options_.strict;
  ctx.max_instructions = options_.max_instructions_per_wave;

  const uint64_t total = uint64_t(g.x) * g.y * g.z;
  unsigned nthreads = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
  nthreads = unsigned(std::min<uint64_t>(nthreads, total));
  std::atomic<uint64_t> next{0};
  std::mutex merge;
  std::exception_ptr error;
  uint64_t err_index = ~0ull;
  WorkgroupCost sum;
  uint64_t max_wg_cycles = 0;
  auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    WorkgroupRunner runner;
    WorkgroupCost local;
    uint64_t local_max = 0;
    for (;;) {
      uint64_t i = next.fetch_add(1);
      if (i >= total || ctx.stop.load()) break;
      uint32_t id[3] = {uint32_t(i % g.x), uint32_t((i / g.x) % g.y), uint32_t(i / (uint64_t(g.x) * g.y))};
      try {
        WorkgroupCost c = runner.run(ctx, k, setup, id);
        local.wave_cycles += c.wave_cycles;
        local.instructions += c.instructions;
        local.lane_instructions += c.lane_instructions;
        local_max = std::max(local_max, c.cycles);
      } catch (...) {
        std::lock_guard lock(merge);
        if (i < err_index) error = std::current_exception(), err_index = i;
        ctx.stop = true;
        break;
      }
    }
    std::lock_guard lock(merge);
    sum.wave_cycles += local.wave_cycles;
    sum.instructions += local.instructions;
    sum.lane_instructions += local.lane_instructions;
    max_wg_cycles = std::max(max_wg_cycles, local_max);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < nthreads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  impl_->memory.free(setup.kernarg_addr);
  impl_->memory.free(setup.dispatch_addr);

  auto reports = ctx.take_reports();
  {
    std::lock_guard lock(impl_->reports_mutex);
    for (auto& r : reports) {
      auto it = std::find_if(impl_->reports.begin(), impl_->reports.end(), [&](const HazardReport& o) {
        return o.kernel == r.kernel && o.kind == r.kind && o.address == r.address;
      });
      if (it != impl_->reports.end()) it->count += r.count;
      else impl_->reports.push_back(r);
    }
  }
  if (error) std::rethrow_exception(error);

  last_ = {};
  last_.workgroups = total;
  last_.waves = total * ((threads + 63) / 64);
  last_.instructions = sum.instructions;
  last_.lane_instructions = sum.lane_instructions;
  const uint64_t simds = uint64_t(impl_->target->compute_units) * impl_->target->simds_per_cu;
  last_.estimated_cycles = std::max(max_wg_cycles, (sum.wave_cycles + simds - 1) / simds) + 4000;
  last_.estimated_ms = double(last_.estimated_cycles) / (impl_->target->peak_clock_ghz * 1e6);
  last_.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  impl_->clock_ms += last_.estimated_ms;
}

std::unique_ptr<loader::Event> EmuDevice::create_event() { return std::make_unique<EmuEvent>(); }
void EmuDevice::record(loader::Event& event) {
  auto* e = dynamic_cast<EmuEvent*>(&event);
  if (!e) throw InputError("emu: event not created by this emu device");
  e->ms = impl_->clock_ms;
}
double EmuDevice::elapsed_ms(const loader::Event& start, const loader::Event& end) {
  auto* a = dynamic_cast<const EmuEvent*>(&start);
  auto* b = dynamic_cast<const EmuEvent*>(&end);
  if (!a || !b || a->ms < 0 || b->ms < 0) throw InputError("emu: elapsed_ms needs two recorded events of this device");
  return b->ms - a->ms;
}
void EmuDevice::synchronize() {}

std::vector<HazardReport> EmuDevice::reports() const {
  std::lock_guard lock(impl_->reports_mutex);
  return impl_->reports;
}
void EmuDevice::clear_reports() {
  std::lock_guard lock(impl_->reports_mutex);
  impl_->reports.clear();
}

std::vector<std::string> EmuDevice::take_diagnostics() {
  std::lock_guard lock(impl_->reports_mutex);
  std::vector<std::string> lines;
  for (const HazardReport& r : impl_->reports) lines.push_back(r.kernel + ": " + r.str());
  impl_->reports.clear();
  return lines;
}

std::unique_ptr<EmuDevice> make_emu_device(EmuOptions options) { return std::make_unique<EmuDevice>(std::move(options)); }

} // namespace isatune::emu

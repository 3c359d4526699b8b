// The emu Device: memory, modules, launches (workgroups across host threads), emulated timing events.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <thread>

#include "decoder.h"
#include "executor.h"
#include "isatune/emu/emulator.h"
#include "isatune/codeobj/occupancy.h"
#include "isatune/error.h"

namespace isatune::emu {

namespace {

class EmuFunction : public loader::Function {
public:
  explicit EmuFunction(std::shared_ptr<const KernelImage> image) : image_(std::move(image)) {}
  const KernelInfo& info() const override { return image_->info; }
  const KernelImage& image() const { return *image_; }
  std::shared_ptr<const KernelImage> image_ptr() const { return image_; }

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
    image->lds_dma = has_lds_dma(image->prog);
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
  std::shared_ptr<const KernelImage> last_image; // the last launch's kernel and profile
  std::vector<InstProfile> last_profile;
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
  if (!kernargs.empty()) // an empty span's data() may be null, which memcpy may not take (UBSan, fuzz_emu_cdna)
    std::memcpy(impl_->memory.find(setup.kernarg_addr, kernargs.size()), kernargs.data(), kernargs.size());
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
  ctx.wave_order = options_.wave_order;

  const uint64_t total = uint64_t(g.x) * g.y * g.z;
  const TimingParams& tp = timing_params(impl_->target->gfx);
  const uint32_t cus = impl_->target->compute_units;
  // CU subset: the workgroups dealt to `subset` CUs evenly spread over the chip (CU 0, the busiest of the round
  // robin, first); `order` lists them CU by CU in dispatch order. Empty: every workgroup.
  std::vector<uint64_t> order;
  uint32_t subset = cus;
  if (options_.cu_subset && options_.cu_subset < cus && total > options_.cu_subset) {
    subset = options_.cu_subset;
    for (uint32_t j = 0; j < subset; ++j)
      for (uint64_t i = uint64_t(j) * cus / subset; i < total; i += cus) order.push_back(i);
    std::sort(order.begin(), order.end());
  }
  const uint64_t simulated = order.empty() ? total : order.size();
  unsigned nthreads = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
  nthreads = unsigned(std::min<uint64_t>(nthreads, simulated));
  std::atomic<uint64_t> next{0};
  std::mutex merge;
  std::exception_ptr error;
  uint64_t err_index = ~0ull;
  WorkgroupCost sum;
  std::vector<CuLoad> loads(cus);
  std::vector<uint64_t> read_lines, write_lines;
  std::vector<InstProfile> profile(k.prog.insts.size());
  auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    WorkgroupRunner runner;
    runner.begin_launch(tp);
    WorkgroupCost local;
    std::vector<CuLoad> local_loads(cus);
    for (;;) {
      uint64_t i = next.fetch_add(1);
      if (i >= simulated || ctx.stop.load()) break;
      if (!order.empty()) i = order[i];
      uint32_t id[3] = {uint32_t(i % g.x), uint32_t((i / g.x) % g.y), uint32_t(i / (uint64_t(g.x) * g.y))};
      try {
        WorkgroupCost c = runner.run(ctx, k, setup, id);
        local.wave_cycles += c.wave_cycles;
        local.instructions += c.instructions;
        local.lane_instructions += c.lane_instructions;
        local.valu_busy += c.valu_busy, local.mfma_busy += c.mfma_busy;
        local.lds_busy += c.lds_busy, local.vmem_busy += c.vmem_busy;
        local.l1_miss_lines += c.l1_miss_lines, local.flops += c.flops, local.bytes += c.bytes;
        local_loads[i % cus].add(c);
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
    sum.valu_busy += local.valu_busy, sum.mfma_busy += local.mfma_busy;
    sum.lds_busy += local.lds_busy, sum.vmem_busy += local.vmem_busy;
    sum.l1_miss_lines += local.l1_miss_lines, sum.flops += local.flops, sum.bytes += local.bytes;
    for (uint32_t c = 0; c < cus; ++c) loads[c].merge(local_loads[c]);
    read_lines.insert(read_lines.end(), runner.read_lines().begin(), runner.read_lines().end());
    write_lines.insert(write_lines.end(), runner.write_lines().begin(), runner.write_lines().end());
    const auto& p = runner.profile();
    for (size_t n = 0; n < std::min(p.size(), profile.size()); ++n) {
      profile[n].issued += p[n].issued;
      profile[n].issue_cycles += p[n].issue_cycles;
      for (int st = 0; st < kStalls; ++st) profile[n].stall[st] += p[n].stall[st];
    }
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
  // The chip: the busiest CU against the shared bandwidths, each a lower limit of the kernel's time.
  const auto occ = codeobj::amd_occupancy(*impl_->target, std::max<uint32_t>(d.vgprs_allocated, 1),
                                          d.sgprs_allocated, setup.lds_bytes, uint32_t(threads));
  // Occupancy's workgroups_per_cu counts the size and LDS limits; the registers limit waves per SIMD.
  const uint64_t waves_per_wg = (threads + 63) / 64;
  const uint64_t by_waves = uint64_t(occ.waves_per_simd) * impl_->target->simds_per_cu / waves_per_wg;
  last_.workgroups_per_cu = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(occ.workgroups_per_cu, by_waves)));
  last_.compute_units = cus;
  for (const CuLoad& c : loads) last_.cu_cycles = std::max(last_.cu_cycles, c.cycles(last_.workgroups_per_cu));
  auto distinct = [](std::vector<uint64_t>& v) {
    std::sort(v.begin(), v.end());
    return double(std::unique(v.begin(), v.end()) - v.begin());
  };
  // Subset: per-launch sums scale with the workgroups; the distinct lines (HBM traffic) do not (workgroups share
  // their inputs), so the whole chip's are modelled as the subset's scaled up, capped by the full size of every
  // allocation the subset touched (a GEMM reads all of A and B and writes all of C), and never below the
  // subset's own.
  const double scale = double(total) / double(simulated);
  auto chip_lines = [&](std::vector<uint64_t>& v) {
    const double own = distinct(v);
    if (order.empty()) return own;
    std::map<uint64_t, uint64_t> touched; // allocation start -> size
    for (uint64_t line : v) {
      uint64_t start = 0, size = 0;
      uint8_t* data = nullptr;
      if (impl_->memory.block(line * tp.line_bytes, start, size, data)) touched.emplace(start, size);
    }
    double full = 0;
    for (const auto& [start, size] : touched)
      full += double((start + size + tp.line_bytes - 1) / tp.line_bytes - start / tp.line_bytes);
    return std::max(own, std::min(own * scale, full));
  };
  last_.dram_bytes = (chip_lines(read_lines) + chip_lines(write_lines)) * tp.line_bytes;
  last_.l2_bytes = double(sum.l1_miss_lines) * tp.line_bytes * scale;
  last_.requested_bytes = double(sum.bytes) * scale;
  last_.flops = double(sum.flops) * scale;
  last_.simulated_cus = subset;
  last_.simulated_workgroups = simulated;
  last_.dram_cycles = uint64_t(std::ceil(last_.dram_bytes / (tp.hbm_bytes_per_clk * tp.hbm_efficiency)));
  last_.l2_cycles = uint64_t(std::ceil(last_.l2_bytes / tp.l2_bytes_per_clk));
  last_.launch_cycles = tp.launch_cycles;
  last_.limiter = last_.cu_cycles >= std::max(last_.dram_cycles, last_.l2_cycles) ? "cu"
                  : last_.dram_cycles >= last_.l2_cycles                          ? "dram"
                                                                                  : "l2";
  last_.valu_busy = double(sum.valu_busy) * scale, last_.mfma_busy = double(sum.mfma_busy) * scale;
  last_.lds_busy = double(sum.lds_busy) * scale, last_.vmem_busy = double(sum.vmem_busy) * scale;
  last_.estimated_cycles = std::max({last_.cu_cycles, last_.dram_cycles, last_.l2_cycles}) + tp.launch_cycles;
  last_.estimated_ms = double(last_.estimated_cycles) / (impl_->target->peak_clock_ghz * 1e6);
  last_.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  impl_->last_image = f->image_ptr();
  impl_->last_profile = std::move(profile);
  impl_->clock_ms += last_.estimated_ms;
}

std::vector<std::string> EmuDevice::stall_causes() {
  std::vector<std::string> v;
  for (int s = 0; s < kStalls; ++s) v.push_back(stall_name(Stall(s)));
  return v;
}

std::vector<InstructionProfile> EmuDevice::profile() const {
  std::vector<InstructionProfile> out;
  if (!impl_->last_image) return out;
  const auto& insts = impl_->last_image->prog.insts;
  for (size_t i = 0; i < insts.size() && i < impl_->last_profile.size(); ++i) {
    const InstProfile& p = impl_->last_profile[i];
    InstructionProfile r;
    r.address = insts[i].addr;
    r.text = insts[i].text;
    r.issued = p.issued;
    r.issue_cycles = p.issue_cycles;
    for (int s = 0; s < kStalls; ++s)
      if (p.stall[s]) r.stalls.emplace_back(stall_name(Stall(s)), p.stall[s]);
    if (insts[i].cat == Cat::branch) r.branch_target = insts[i].target;
    out.push_back(std::move(r));
  }
  return out;
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

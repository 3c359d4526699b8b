// The PTX emulator Device: memory, modules (parsed and prepared at load), launches (CTAs across host
// threads), emulated timing events and the reports.
#include "isatune/emu/ptx/device.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "isatune/error.h"
#include "isatune/loader/sha256.h"
#include "isatune/ptx/parser.h"
#include "isatune/ptx/tensor_map.h"
#include "memory.h"
#include "program.h"
#include "warp.h"

namespace isatune::emu::ptx {

namespace {

struct TargetSpec {
  const char* name;
  int sm;
  uint32_t sms;
  uint32_t shared_per_block; // opt-in maximum per CTA
  double clock_ghz;
};
// H100/H200 SXM: 132 SMs, 227 KB per block (232448 B), 1.98 GHz; A100: 108 SMs, 163 KB (166912 B), 1.41 GHz.
constexpr TargetSpec kTargets[] = {{"sm_90a", 90, 132, 232448, 1.98}, {"sm_80", 80, 108, 166912, 1.41}};

const TargetSpec* find_target(std::string_view name) {
  for (const auto& t : kTargets)
    if (name == t.name)
      return &t;
  return nullptr;
}

bool is_ptx_bytes(const CodeObject& code) {
  if (code.format == CodeFormat::ptx)
    return true;
  return code.vendor == Vendor::nvidia &&
         !(code.bytes.size() >= 4 && code.bytes[0] == 0x7f && code.bytes[1] == 'E' && code.bytes[2] == 'L' &&
           code.bytes[3] == 'F');
}

int module_sm(const std::string& target) {
  // "sm_90a" -> 90; "sm_80" -> 80
  if (target.rfind("sm_", 0) != 0)
    return 0;
  return std::atoi(target.c_str() + 3);
}

class PtxFunction : public loader::Function {
public:
  explicit PtxFunction(std::shared_ptr<const Program> p) : prog(std::move(p)), info_(prog->info) {}
  const KernelInfo& info() const override { return info_; }
  std::shared_ptr<const Program> prog;
  KernelInfo info_; // the program's, with the cubin's registers when the code object has them
};

class PtxModule : public loader::Module {
public:
  std::shared_ptr<loader::Function> function(const std::string& name) override {
    auto it = functions.find(name);
    if (it == functions.end()) {
      std::string names;
      for (auto& [n, f] : functions)
        names += (names.empty() ? "" : ", ") + n;
      throw InputError("no kernel '" + name + "' in the PTX module (it has: " + names + ")");
    }
    return it->second;
  }
  std::map<std::string, std::shared_ptr<PtxFunction>> functions;
  std::vector<uint64_t> allocations; // module variables in device memory
  Memory* memory = nullptr;
  ~PtxModule() override {
    for (uint64_t a : allocations)
      memory->free(a);
  }
};

class PtxEvent : public loader::Event {
public:
  double ms = -1;
};

uint64_t round_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

} // namespace

struct PtxEmuDevice::Impl {
  const TargetSpec* target = nullptr;
  loader::DeviceProperties props;
  Memory memory;
  double clock_ms = 0;
  mutable std::mutex reports_mutex;
  std::vector<HazardReport> reports;
  std::vector<std::shared_ptr<PtxModule>> modules; // keep module memory alive as long as the device
};

PtxEmuDevice::PtxEmuDevice(PtxEmuOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  impl_->target = find_target(options_.target);
  if (!impl_->target)
    throw InputError("emu: '" + options_.target + "' is not a target the PTX emulator runs (sm_80, sm_90a)");
  auto& p = impl_->props;
  p.backend = "emu";
  p.index = options_.index;
  p.name = "PTX emulator (" + std::string(impl_->target->name) + ")";
  p.vendor = Vendor::nvidia;
  p.isa = impl_->target->name;
  p.target_id = impl_->target->name;
  p.compute_units = impl_->target->sms;
  p.memory_bytes = options_.memory_bytes;
  p.shared_bytes_per_workgroup = impl_->target->shared_per_block;
  p.wave_size = 32;
  p.max_workgroup_size = 1024;
  p.driver_version = "isatune-emu-ptx 0.1";
  p.emulated = true;
  p.uuid = "emu-" + p.isa + "-" + std::to_string(p.index); // synthetic and stable: no hardware to name
  p.pci_bus_id = "emu:" + std::to_string(p.index);
}

PtxEmuDevice::~PtxEmuDevice() = default;

const loader::DeviceProperties& PtxEmuDevice::properties() const {
  return impl_->props;
}

loader::DevicePtr PtxEmuDevice::alloc(size_t bytes) {
  if (impl_->memory.allocated() + bytes > options_.memory_bytes)
    throw InputError("emu: out of device memory (" + std::to_string(bytes) + " bytes requested)");
  return impl_->memory.alloc(bytes);
}
void PtxEmuDevice::free(loader::DevicePtr ptr) {
  impl_->memory.free(ptr);
}
void PtxEmuDevice::copy_to_device(loader::DevicePtr dst, const void* src, size_t bytes) {
  if (bytes)
    std::memcpy(impl_->memory.checked(dst, bytes, "copy to device"), src, bytes);
}
void PtxEmuDevice::copy_to_host(void* dst, loader::DevicePtr src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, impl_->memory.checked(src, bytes, "copy to host"), bytes);
}
void PtxEmuDevice::fill(loader::DevicePtr dst, uint8_t value, size_t bytes) {
  if (bytes)
    std::memset(impl_->memory.checked(dst, bytes, "fill"), value, bytes);
}

std::shared_ptr<loader::Module> PtxEmuDevice::load(const CodeObject& code) {
  if (code.vendor != Vendor::nvidia || !is_ptx_bytes(code))
    throw InputError("emu: the PTX emulator (" + impl_->props.isa +
                     ") runs NVIDIA code objects holding PTX text");
  std::string_view text(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size());
  while (!text.empty() && text.back() == '\0')
    text.remove_suffix(1);
  ast::Module m =
      isatune::ptx::parse(text, code.sha256.empty() ? "<module>.ptx" : code.sha256.substr(0, 12) + ".ptx");
  const int want = module_sm(m.target.empty() ? code.isa : m.target);
  const bool arch_specific =
      !m.target.empty() ? m.target.back() == 'a' : (!code.isa.empty() && code.isa.back() == 'a');
  // sm_80 PTX runs on sm_90a; arch-specific sm_90a PTX only on sm_90a (shared/notes/ptx.md section 1).
  if (want == 0 || want > impl_->target->sm || (arch_specific && want != impl_->target->sm))
    throw InputError("emu: PTX module for ." + (m.target.empty() ? code.isa : m.target) +
                     " does not run on " + impl_->props.isa);
  for (const auto& k : code.kernels)
    if (k.lds_bytes > impl_->target->shared_per_block)
      throw InputError("emu: kernel '" + k.name + "' needs " + std::to_string(k.lds_bytes) +
                       " bytes of shared memory; " + impl_->props.isa + " allows " +
                       std::to_string(impl_->target->shared_per_block));
  auto mod = std::make_shared<PtxModule>();
  mod->memory = &impl_->memory;
  ModuleData data;
  for (const auto& v : m.globals) {
    if (v.space != ast::StateSpace::global && v.space != ast::StateSpace::const_)
      continue;
    if (v.external)
      throw InputError("emu: .extern ." +
                       std::string(v.space == ast::StateSpace::global ? "global" : "const") + " variable '" +
                       v.name + "' has no definition in the module");
    uint64_t bytes = v.bytes();
    uint64_t a = impl_->memory.alloc(std::max<uint64_t>(bytes, 1));
    mod->allocations.push_back(a);
    if (!v.init.empty())
      std::memcpy(impl_->memory.find(a, 1), v.init.data(), std::min<uint64_t>(v.init.size(), bytes));
    data.globals.emplace_back(v.name, a);
  }
  for (const auto& f : m.functions) {
    if (!f.entry)
      continue;
    // The decoders see the module's own target (an sm_80 module on sm_90a keeps sm_80's instruction set).
    auto prog = build_program(m, f, data, want);
    if (prog->shared.static_bytes > impl_->target->shared_per_block)
      throw InputError("emu: kernel '" + f.name + "' declares " + std::to_string(prog->shared.static_bytes) +
                       " bytes of shared memory; " + impl_->props.isa + " allows " +
                       std::to_string(impl_->target->shared_per_block));
    auto fn = std::make_shared<PtxFunction>(prog);
    if (const KernelInfo* k = code.find_kernel(f.name); k && k->vgprs) { // ptxas's count (read_cubin_resources)
      fn->info_.vgprs = k->vgprs;
      fn->info_.scratch_bytes = std::max(fn->info_.scratch_bytes, k->scratch_bytes);
    }
    mod->functions[f.name] = fn;
  }
  impl_->modules.push_back(mod);
  return mod;
}

void PtxEmuDevice::launch(loader::Function& function, const loader::LaunchConfig& config,
                          std::span<const uint8_t> kernargs) {
  auto* f = dynamic_cast<PtxFunction*>(&function);
  if (!f)
    throw InputError("emu: the function was not loaded by this PTX emulator device");
  const Program& prog = *f->prog;
  const auto g = config.grid, b = config.block;
  auto cl = config.cluster;
  // A launch without a cluster runs a kernel compiled with .reqnctapercluster in clusters of that shape (as
  // the CUDA driver does for __cluster_dims__).
  if (cl.x * cl.y * cl.z == 1 && prog.reqnctapercluster[0])
    cl = {prog.reqnctapercluster[0], std::max(1u, prog.reqnctapercluster[1]),
          std::max(1u, prog.reqnctapercluster[2])};
  const std::string k = "emu: kernel '" + prog.name + "': ";
  if (!g.x || !g.y || !g.z || !b.x || !b.y || !b.z || !cl.x || !cl.y || !cl.z)
    throw InputError(k + "grid, block and cluster sizes must be at least 1");
  const uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (threads > 1024 || b.z > 64)
    throw InputError(k + "block (" + std::to_string(b.x) + "," + std::to_string(b.y) + "," +
                     std::to_string(b.z) + ") has " + std::to_string(threads) +
                     " threads; at most 1024 (z at most 64)");
  if (g.y > 65535 || g.z > 65535)
    throw InputError(k + "grid y and z must be at most 65535");
  if (prog.reqntid[0] && (b.x != prog.reqntid[0] || b.y != std::max(1u, prog.reqntid[1]) ||
                          b.z != std::max(1u, prog.reqntid[2])))
    throw InputError(k + ".reqntid " + std::to_string(prog.reqntid[0]) + "," +
                     std::to_string(prog.reqntid[1]) + "," + std::to_string(prog.reqntid[2]) +
                     " does not match the block");
  if (threads > prog.info.max_workgroup_size)
    throw InputError(k + std::to_string(threads) + " threads per block; the kernel allows at most " +
                     std::to_string(prog.info.max_workgroup_size) + " (.maxntid)");
  const uint64_t cluster_size = uint64_t(cl.x) * cl.y * cl.z;
  if (cluster_size > 1 && impl_->target->sm < 90)
    throw InputError(k + "clusters need sm_90");
  if (cluster_size > 16)
    throw InputError(k + "cluster of " + std::to_string(cluster_size) + " CTAs; at most 16");
  if (g.x % cl.x || g.y % cl.y || g.z % cl.z)
    throw InputError(k + "the cluster does not divide the grid");
  if (prog.reqnctapercluster[0] && cluster_size > 1 &&
      (cl.x != prog.reqnctapercluster[0] || cl.y != std::max(1u, prog.reqnctapercluster[1]) ||
       cl.z != std::max(1u, prog.reqnctapercluster[2])))
    throw InputError(k + "the launch's cluster does not match .reqnctapercluster");
  const uint64_t shared = uint64_t(prog.shared.dynamic_offset) + config.dynamic_shared_bytes;
  if (shared > impl_->target->shared_per_block)
    throw InputError(k + "needs " + std::to_string(shared) + " bytes of shared memory (" +
                     std::to_string(prog.shared.static_bytes) + " static + " +
                     std::to_string(config.dynamic_shared_bytes) + " dynamic); " + impl_->props.isa +
                     " allows " + std::to_string(impl_->target->shared_per_block));
  const size_t need = prog.param_bytes;
  const size_t pad = round_up(need, std::max<uint32_t>(8, prog.info.kernarg_align));
  if (kernargs.size() < need || kernargs.size() > pad)
    throw InputError(k + "takes " + std::to_string(need) + " bytes of parameters, got " +
                     std::to_string(kernargs.size()));

  Launch L;
  L.prog = &prog;
  L.memory = &impl_->memory;
  std::vector<uint8_t> params(kernargs.begin(), kernargs.end());
  params.resize(std::max<size_t>(need, 1));
  L.params = params.data();
  L.grid[0] = g.x, L.grid[1] = g.y, L.grid[2] = g.z;
  L.block[0] = b.x, L.block[1] = b.y, L.block[2] = b.z;
  L.cluster[0] = cl.x, L.cluster[1] = cl.y, L.cluster[2] = cl.z;
  L.dynamic_shared = config.dynamic_shared_bytes;
  L.shared_bytes = uint32_t(shared);
  L.sm_count = impl_->target->sms;
  L.schedule = options_.scheduler == Scheduler::adversarial ? Schedule::adversarial : Schedule::lockstep;
  L.strict = options_.strict;
  L.check_races = options_.check_races;
  L.check_uninitialized = options_.check_uninitialized;
  L.max_instructions = options_.max_instructions_per_cta;

  const uint64_t total = uint64_t(g.x) * g.y * g.z;
  const uint32_t nwarps = uint32_t((threads + 31) / 32);
  // The CTAs of one cluster run together on one host thread (they may wait on each other); clusters run in
  // parallel. Without a cluster launch every CTA is a cluster of one.
  const uint32_t csize = uint32_t(cluster_size);
  const uint32_t ncl[3] = {g.x / cl.x, g.y / cl.y, g.z / cl.z};
  const uint64_t nclusters = total / csize;
  unsigned nthreads = options_.threads ? options_.threads : std::max(1u, std::thread::hardware_concurrency());
  nthreads = unsigned(std::min<uint64_t>(nthreads, nclusters));
  std::atomic<uint64_t> next{0};
  std::mutex merge;
  std::exception_ptr error;
  uint64_t err_index = ~0ull;
  std::map<std::pair<uint32_t, int>, HazardReport> all;
  std::map<std::pair<uint32_t, int>, uint64_t> first_cta; // the report kept is the lowest cluster's
  uint64_t instr = 0, tinstr = 0, sum_cycles = 0, max_cycles = 0;
  auto start = std::chrono::steady_clock::now();
  // Registers per thread: ptxas's count when the code object has it, else the most the block could have.
  uint32_t regs0 = initial_registers(uint32_t(threads));
  // ptxas allocates at most .maxnreg: a warp-specialised kernel starts its setmaxnreg from there.
  if (prog.maxnreg)
    regs0 = std::min(regs0, prog.maxnreg / 8 * 8);
  if (const uint32_t r = f->info().vgprs) {
    // The GPU allocates registers per warp in units of 256 (8 per thread): a block whose warps need more than
    // the SM's 64K is not launched (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
    const uint64_t per_warp = (uint64_t(r) + 7) / 8 * 8 * 32, warps = (threads + 31) / 32;
    if (per_warp * warps > 65536)
      throw InputError("emu: kernel '" + prog.name + "': " + std::to_string(r) + " registers per thread (ptxas) x " +
                       std::to_string(threads) + " threads need " + std::to_string(per_warp * warps) +
                       " registers, more than the SM's 65536 (too many resources requested for launch)");
    regs0 = (r + 7) / 8 * 8;
  }

  auto worker = [&] {
    ReportSink sink;
    std::map<std::pair<uint32_t, int>, HazardReport> mine;
    std::map<std::pair<uint32_t, int>, uint64_t> mine_first;
    std::vector<Cta> ctas(csize);
    Cluster cluster;
    cluster.launch = &L;
    cluster.wpc = nwarps;
    for (uint32_t r = 0; r < csize; ++r) {
      Cta& c = ctas[r];
      c.launch = &L;
      c.sink = &sink;
      c.cluster = &cluster;
      c.rank = r;
      c.threads = uint32_t(threads);
      c.regs.assign(size_t(prog.slots) * 32 * nwarps, 0);
      c.local.assign(size_t(prog.local_bytes) * 32 * nwarps, 0);
      c.shared.assign(shared, 0);
      if (L.check_races || L.check_uninitialized)
        c.shadow.assign(shared, ShadowByte{});
      c.warps.resize(nwarps);
      c.warp_sync.assign(size_t(nwarps) * nwarps, 0);
      c.lane_sync.assign(size_t(nwarps) * 32 * 32, 0);
      cluster.ctas.push_back(&c);
    }
    uint64_t my_instr = 0, my_tinstr = 0, my_sum = 0, my_max = 0;
    for (;;) {
      uint64_t i = next.fetch_add(1);
      if (i >= nclusters || L.stop.load())
        break;
      const uint32_t cid[3] = {uint32_t(i % ncl[0]), uint32_t((i / ncl[0]) % ncl[1]),
                               uint32_t(i / (uint64_t(ncl[0]) * ncl[1]))};
      cluster.time = 1;
      cluster.version = 0;
      cluster.forced = ~0ull;
      cluster.bar_phase = 0;
      cluster.xsync.assign(size_t(cluster.nwarps()) * cluster.nwarps(), 0);
      cluster.bar_release.assign(cluster.nwarps(), 0);
      uint64_t first_linear = ~0ull;
      for (uint32_t r = 0; r < csize; ++r) {
        Cta& c = ctas[r];
        // rank = x + cx * (y + cy * z), as %cluster_ctarank (special_registers.cpp)
        const uint32_t rx = r % cl.x, ry = (r / cl.x) % cl.y, rz = r / (cl.x * cl.y);
        c.id[0] = cid[0] * cl.x + rx, c.id[1] = cid[1] * cl.y + ry, c.id[2] = cid[2] * cl.z + rz;
        c.linear = uint32_t(c.id[0] + uint64_t(g.x) * (c.id[1] + uint64_t(g.y) * c.id[2]));
        first_linear = std::min<uint64_t>(first_linear, c.linear);
        // Fresh state: registers and memory are zero (PTX leaves them undefined; zero keeps runs
        // deterministic), shared memory is poisoned for the initialisation check through its shadow, not its
        // bytes.
        std::fill(c.regs.begin(), c.regs.end(), 0);
        std::fill(c.local.begin(), c.local.end(), 0);
        std::fill(c.shared.begin(), c.shared.end(), 0);
        if (!c.shadow.empty())
          std::fill(c.shadow.begin(), c.shadow.end(), ShadowByte{});
        std::fill(c.warp_sync.begin(), c.warp_sync.end(), 0);
        std::fill(c.lane_sync.begin(), c.lane_sync.end(), 0);
        c.bars = {};
        c.mbars.clear();
        c.async_ranges.clear();
        c.async.reset();
        c.async_proxy = {};
        c.time = 1;
        c.cycles = 0;
        c.g_lo = 1, c.g_hi = 0;
        for (uint32_t wi = 0; wi < nwarps; ++wi) {
          Warp& w = c.warps[wi];
          w = Warp{};
          w.cta = &c;
          w.index = wi;
          w.lanes = uint32_t(std::min<uint64_t>(32, threads - uint64_t(wi) * 32));
          w.r = c.regs.data() + size_t(wi) * prog.slots * 32;
          w.local = c.local.data() + size_t(wi) * prog.local_bytes * 32;
          w.live = w.runm = uint32_t(width_mask(w.lanes));
          w.nreg = regs0;
          for (unsigned l = 0; l < 32; ++l) {
            uint32_t t = wi * 32 + l;
            w.tid[l][0] = t % b.x, w.tid[l][1] = (t / b.x) % b.y, w.tid[l][2] = t / (b.x * b.y);
            w.pc[l] = 0;
          }
        }
      }
      try {
        run_cluster(cluster);
        if (!L.stop.load()) {
          mbarrier_exit_checks(cluster);
          bulk_exit_checks(cluster);
        }
      } catch (...) {
        std::lock_guard lock(merge);
        if (i < err_index)
          error = std::current_exception(), err_index = i;
        L.stop = true;
      }
      for (Cta& c : ctas) {
        for (Warp& w : c.warps)
          my_instr += w.instructions, my_tinstr += w.thread_instructions;
        my_sum += c.cycles;
        my_max = std::max(my_max, c.cycles);
      }
      for (auto& [key, r] : sink.reports) {
        auto it = mine.find(key);
        if (it == mine.end()) {
          mine.emplace(key, r);
          mine_first[key] = first_linear;
        } else {
          it->second.count += r.count;
        }
      }
      sink.reports.clear();
      if (err_index != ~0ull)
        break;
    }
    std::lock_guard lock(merge);
    instr += my_instr, tinstr += my_tinstr, sum_cycles += my_sum, max_cycles = std::max(max_cycles, my_max);
    for (auto& [key, r] : mine) {
      auto it = all.find(key);
      if (it == all.end()) {
        all.emplace(key, r);
        first_cta[key] = mine_first[key];
      } else {
        uint64_t count = it->second.count + r.count;
        if (mine_first[key] < first_cta[key])
          it->second = r, first_cta[key] = mine_first[key];
        it->second.count = count;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < nthreads; ++t)
    pool.emplace_back(worker);
  worker();
  for (auto& t : pool)
    t.join();

  {
    std::lock_guard lock(impl_->reports_mutex);
    for (auto& [key, r] : all) {
      auto it = std::find_if(impl_->reports.begin(), impl_->reports.end(), [&](const HazardReport& o) {
        return o.kernel == r.kernel && o.kind == r.kind && o.line == r.line;
      });
      if (it != impl_->reports.end())
        it->count += r.count;
      else
        impl_->reports.push_back(r);
    }
  }
  if (error)
    std::rethrow_exception(error);

  last_ = {};
  last_.ctas = total;
  last_.warps = total * nwarps;
  last_.instructions = instr;
  last_.thread_instructions = tinstr;
  // CTAs spread over the SMs (4 resident per SM, each SM issuing one warp instruction per cycle per
  // scheduler): a coarse estimate, labelled emulated.
  const uint64_t slots = uint64_t(impl_->target->sms) * 4;
  last_.estimated_cycles = std::max(max_cycles, (sum_cycles + slots - 1) / slots) + 3000;
  last_.estimated_ms = double(last_.estimated_cycles) / (impl_->target->clock_ghz * 1e6);
  last_.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  impl_->clock_ms += last_.estimated_ms;
}

std::unique_ptr<loader::Event> PtxEmuDevice::create_event() {
  return std::make_unique<PtxEvent>();
}
void PtxEmuDevice::record(loader::Event& event) {
  auto* e = dynamic_cast<PtxEvent*>(&event);
  if (!e)
    throw InputError("emu: event not created by this PTX emulator device");
  e->ms = impl_->clock_ms;
}
double PtxEmuDevice::elapsed_ms(const loader::Event& start, const loader::Event& end) {
  auto* a = dynamic_cast<const PtxEvent*>(&start);
  auto* b = dynamic_cast<const PtxEvent*>(&end);
  if (!a || !b || a->ms < 0 || b->ms < 0)
    throw InputError("emu: elapsed_ms needs two recorded events of this device");
  return b->ms - a->ms;
}
void PtxEmuDevice::synchronize() {}

std::vector<HazardReport> PtxEmuDevice::reports() const {
  std::lock_guard lock(impl_->reports_mutex);
  return impl_->reports;
}
void PtxEmuDevice::clear_reports() {
  std::lock_guard lock(impl_->reports_mutex);
  impl_->reports.clear();
}
std::vector<std::string> PtxEmuDevice::take_diagnostics() {
  std::lock_guard lock(impl_->reports_mutex);
  std::vector<std::string> lines;
  for (const HazardReport& r : impl_->reports)
    lines.push_back(r.str());
  impl_->reports.clear();
  return lines;
}

TensorMap PtxEmuDevice::encode_tensor_map(const TensorMapTiledArgs& args) {
  isatune::ptx::validate_tensor_map_tiled(args);
  const uint64_t end = isatune::ptx::tensor_map_span_bytes(args); // the furthest byte the map can address
  if (!impl_->memory.find(args.global_address, end)) {
    char where[96];
    std::snprintf(where, sizeof where, "[0x%llx, +%llu bytes)", (unsigned long long)args.global_address,
                  (unsigned long long)end);
    throw InputError(std::string("tensor map: the global tensor ") + where +
                     " is not inside one allocation of " + impl_->props.name);
  }
  return isatune::ptx::encode_tensor_map_tiled(args);
}

std::unique_ptr<PtxEmuDevice> make_ptx_emu_device(PtxEmuOptions options) {
  return std::make_unique<PtxEmuDevice>(std::move(options));
}

CodeObject ptx_code_object(std::string_view text, const std::string& target, const std::string& file) {
  ast::Module m = isatune::ptx::parse(text, file.empty() ? "<module>.ptx" : file);
  CodeObject code;
  code.vendor = Vendor::nvidia;
  code.format = CodeFormat::ptx;
  code.isa = target.empty() ? m.target : target;
  code.target_id = code.isa;
  code.bytes.assign(text.begin(), text.end());
  code.bytes.push_back(0); // the CUDA driver's JIT (cuModuleLoadData) takes PTX as a C string
  code.sha256 = loader::sha256_hex(code.bytes);
  ModuleData none;
  for (const auto& v : m.globals)
    if (v.space == ast::StateSpace::global || v.space == ast::StateSpace::const_)
      none.globals.emplace_back(v.name, 0);
  for (const auto& f : m.functions)
    if (f.entry)
      code.kernels.push_back(build_program(m, f, none, module_sm(code.isa))->info);
  return code;
}

} // namespace isatune::emu::ptx

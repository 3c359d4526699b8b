#pragma once
// The CDNA emulator as a loader Device ("emu"): runs AMD code objects (gfx90a, gfx942, gfx950) on the CPU,
// wave64, with workgroups in parallel on the CPU's cores. Every launch checks wait counts, wait states and
// memory accesses (report.h). Timings come from the timing model (docs/emulator.md "Timing model"): an estimate,
// labelled emulated in DeviceProperties::emulated, never a measurement.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "isatune/emu/report.h"
#include "isatune/loader/device.h"

namespace isatune::emu {

// The order in which a workgroup's waves take turns on the host thread. timed: by the timing model's clocks (each
// wave until it is ahead of the slowest by a few issue cycles), the default. index / reverse: each wave runs to
// its next barrier (or its end) in wave-index order, or the reverse: a schedule check, since a kernel whose LDS
// use is ordered by waits and barriers computes the same in every order (docs/emulator.md "LDS-DMA"); the
// emulated times are then not meaningful.
enum class WaveOrder : uint8_t { timed, index, reverse };

struct EmuOptions {
  std::string target = "gfx942"; // the emulated chip: gfx90a, gfx942 or gfx950 (target id accepted)
  bool strict = false;           // stop the launch (HazardError) at the first report
  unsigned threads = 0;          // worker threads for workgroups; 0: all hardware threads
  uint64_t max_instructions_per_wave = 200'000'000; // a wave running longer stops the launch (endless loop)
  uint64_t memory_bytes = 64ull << 30;              // what properties() reports and alloc() allows in total
  int index = 0;                 // DeviceProperties::index (the backend's numbering, backend.h)
  WaveOrder wave_order = WaveOrder::timed; // see WaveOrder
  // Big launches: simulate only the workgroups the round robin deals to this many CUs (evenly spread over the
  // chip, CU 0 included) and take the others' by symmetry; the chip's HBM and L2 traffic is then modelled
  // analytically for the whole launch (docs/emulator.md "CU subset"). 0 or at least the chip's CUs: every
  // workgroup is simulated. The workgroups not simulated compute nothing (their outputs stay as they were), and
  // a kernel whose workgroups wait on each other (split-K semaphores) must not use it.
  uint32_t cu_subset = 0;
};

// Statistics of the last launch.
struct LaunchStats {
  uint64_t workgroups = 0;
  uint64_t waves = 0;
  uint64_t instructions = 0;       // wave instructions issued
  uint64_t lane_instructions = 0;  // sum over vector instructions of active lanes (scalar ones count 1)
  uint64_t estimated_cycles = 0;   // kernel duration from the cost model, in shader clocks
  double estimated_ms = 0;         // estimated_cycles at the target's peak clock: emulated, not measured
  double host_seconds = 0;         // wall time the emulation took on this machine
  // The timing model's view (docs/emulator.md "Timing model"): the kernel is the largest of these, plus the
  // launch overhead. cu: the busiest CU's workgroups, each simulated on its CU (SIMD issue, dependencies, LDS,
  // vector memory), co-resident ones combined; dram / l2: the chip's shared bandwidths, analytic.
  uint64_t cu_cycles = 0, dram_cycles = 0, l2_cycles = 0, launch_cycles = 0;
  std::string limiter;             // "cu", "dram" or "l2"
  uint32_t workgroups_per_cu = 0;  // resident at once (occupancy from registers, LDS, workgroup size)
  uint32_t compute_units = 0;      // the chip's, which the workgroups are dealt over (round robin)
  double dram_bytes = 0;           // distinct 128 B (gfx90a 64 B) lines read + lines written
  double l2_bytes = 0;             // vector L1 misses
  double requested_bytes = 0;      // global bytes the lanes asked for
  double flops = 0;                // MFMA and VALU floating-point operations issued
  // Busy cycles summed over the whole launch, for busy fractions (divide by cycles x units).
  double valu_busy = 0, mfma_busy = 0, lds_busy = 0, vmem_busy = 0;
  // CU subset (EmuOptions::cu_subset): simulated_cus < compute_units when only part of the launch was simulated;
  // instructions, lane_instructions and the profile count what was simulated, the other figures the whole launch.
  uint32_t simulated_cus = 0;
  uint64_t simulated_workgroups = 0;
};

// Per-instruction profile of the last launch (EmuDevice::profile): cycles summed over every wave.
struct InstructionProfile {
  uint32_t address = 0;            // byte offset in the kernel
  std::string text;                // disassembly
  uint64_t issued = 0;             // wave executions
  uint64_t issue_cycles = 0;
  std::vector<std::pair<std::string, uint64_t>> stalls; // cause -> cycles, causes with cycles only
  int32_t branch_target = -1;      // index of the destination for a branch (loops: a backward one)
};

class EmuDevice : public loader::Device {
public:
  explicit EmuDevice(EmuOptions options = {});
  ~EmuDevice() override;

  const loader::DeviceProperties& properties() const override;
  loader::DevicePtr alloc(size_t bytes) override;
  void free(loader::DevicePtr ptr) override;
  void copy_to_device(loader::DevicePtr dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, loader::DevicePtr src, size_t bytes) override;
  void fill(loader::DevicePtr dst, uint8_t value, size_t bytes) override;
  std::shared_ptr<loader::Module> load(const CodeObject& code) override;
  void launch(loader::Function& function, const loader::LaunchConfig& config,
              std::span<const uint8_t> kernargs) override;
  std::unique_ptr<loader::Event> create_event() override;
  void record(loader::Event& event) override;
  double elapsed_ms(const loader::Event& start, const loader::Event& end) override;
  void synchronize() override;
  // The reports (deduplicated) as lines, then clears them.
  std::vector<std::string> take_diagnostics() override;

  // Reports of every launch since the last clear, deduplicated per (kernel, kind, address).
  std::vector<HazardReport> reports() const;
  void clear_reports();
  const LaunchStats& last_launch() const { return last_; }
  // Per-instruction issue and stall cycles of the last launch (timing model), in program order.
  std::vector<InstructionProfile> profile() const;
  // The stall causes, in the order the model knows them.
  static std::vector<std::string> stall_causes();
  const EmuOptions& options() const { return options_; }
  void set_strict(bool strict) { options_.strict = strict; }
  void set_threads(unsigned threads) { options_.threads = threads; }
  void set_max_instructions_per_wave(uint64_t n) { options_.max_instructions_per_wave = n; }
  void set_cu_subset(uint32_t cus) { options_.cu_subset = cus; }

  struct Impl;

private:
  EmuOptions options_;
  std::unique_ptr<Impl> impl_;
  LaunchStats last_;
};

// "emu" device for a target, e.g. make_emu_device({.target = "gfx950"}).
std::unique_ptr<EmuDevice> make_emu_device(EmuOptions options = {});

} // namespace isatune::emu

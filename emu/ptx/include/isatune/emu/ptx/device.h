#pragma once
// The PTX emulator as a loader Device ("emu:sm_80", "emu:sm_90a"): runs PTX text on the CPU, warps of 32
// threads with a program counter each (independent thread scheduling), CTAs in parallel on the host's cores,
// and checks what compute-sanitizer would: out-of-bounds and misaligned accesses, barrier deadlocks and
// divergence, shuffles from lanes outside their membermask, uninitialised shared memory reads and
// shared-memory races (HazardKind in isatune/emu/report.h). Timings are a deterministic instruction-cost
// estimate, labelled emulated (DeviceProperties::emulated).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/emu/report.h"
#include "isatune/loader/device.h"

namespace isatune::emu::ptx {

enum class Scheduler : uint8_t {
  lockstep,    // lanes at equal PCs run together, lowest PC first (the default)
  adversarial, // one lane at a time, highest lane and last warp first, each as far as it may go: a missing
               // bar.warp.sync or bar.sync shows as wrong data as well as a report
};

struct PtxEmuOptions {
  std::string target = "sm_90a"; // sm_80 or sm_90a
  bool strict = false;           // throw HazardError at the first report
  Scheduler scheduler = Scheduler::lockstep;
  unsigned threads = 0;                              // host threads for CTAs; 0: all hardware threads
  uint64_t max_instructions_per_cta = 2'000'000'000; // warp instructions; past it the launch stops (0: none)
  uint64_t memory_bytes = 64ull << 30;
  bool check_races = true;         // shared-memory race detector
  bool check_uninitialized = true; // reads of shared memory nobody wrote
  int index = 0;                   // DeviceProperties::index
};

struct PtxLaunchStats {
  uint64_t ctas = 0;
  uint64_t warps = 0;
  uint64_t instructions = 0;        // warp instructions issued
  uint64_t thread_instructions = 0; // sum of active lanes over them
  uint64_t estimated_cycles = 0;    // from the cost model: emulated, not measured
  double estimated_ms = 0;
  double host_seconds = 0;
};

class PtxEmuDevice : public loader::Device {
public:
  explicit PtxEmuDevice(PtxEmuOptions options = {});
  ~PtxEmuDevice() override;

  const loader::DeviceProperties& properties() const override;
  loader::DevicePtr alloc(size_t bytes) override;
  void free(loader::DevicePtr ptr) override;
  void copy_to_device(loader::DevicePtr dst, const void* src, size_t bytes) override;
  void copy_to_host(void* dst, loader::DevicePtr src, size_t bytes) override;
  void fill(loader::DevicePtr dst, uint8_t value, size_t bytes) override;
  // Takes a CodeObject whose bytes are PTX text (format ptx, or any NVIDIA object not starting with the ELF
  // magic). Parses it and prepares every entry, so a kernel the emulator cannot run is rejected here
  // (EmulationError naming the line and instruction; the parser's ParseError for bad syntax).
  std::shared_ptr<loader::Module> load(const CodeObject& code) override;
  void launch(loader::Function& function, const loader::LaunchConfig& config,
              std::span<const uint8_t> kernargs) override;
  std::unique_ptr<loader::Event> create_event() override;
  void record(loader::Event& event) override;
  double elapsed_ms(const loader::Event& start, const loader::Event& end) override;
  void synchronize() override;
  std::vector<std::string> take_diagnostics() override;
  // The emulator's own encoding (isatune/ptx/tensor_map.h), with cuTensorMapEncodeTiled's checks, and one the
  // driver does not make: the whole tensor must lie inside one allocation of this device.
  TensorMap encode_tensor_map(const TensorMapTiledArgs& args) override;

  // Reports of the launches since the last clear, deduplicated per (kernel, kind, line), with counts.
  std::vector<HazardReport> reports() const;
  void clear_reports();
  const PtxLaunchStats& last_launch() const { return last_; }
  const PtxEmuOptions& options() const { return options_; }
  void set_strict(bool strict) { options_.strict = strict; }
  void set_scheduler(Scheduler s) { options_.scheduler = s; }
  void set_threads(unsigned threads) { options_.threads = threads; }

  struct Impl;

private:
  PtxEmuOptions options_;
  std::unique_ptr<Impl> impl_;
  PtxLaunchStats last_;
};

std::unique_ptr<PtxEmuDevice> make_ptx_emu_device(PtxEmuOptions options = {});

// A CodeObject holding PTX text for `target`, its kernels' KernelInfo filled from the parsed parameters.
CodeObject ptx_code_object(std::string_view text, const std::string& target = "",
                           const std::string& file = "");

// Launches use KernelInfo::vgprs (registers per thread; 0 = unknown) of the code object's kernels when set: the
// CLI fills it from ptxas (tools/ptx_resources.h), so that a launch the GPU would refuse for its register file is
// refused and setmaxnreg starts from the real count.

} // namespace isatune::emu::ptx

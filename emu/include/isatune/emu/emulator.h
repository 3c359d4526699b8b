#pragma once
// The CDNA emulator as a loader Device ("emu"): runs AMD code objects (gfx90a, gfx942, gfx950) on the CPU,
// wave64, with workgroups in parallel on the CPU's cores. Every launch checks wait counts, wait states and
// memory accesses (report.h). Timings are a deterministic instruction-cost estimate (cost_model.h), labelled
// emulated in DeviceProperties::emulated.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "isatune/emu/report.h"
#include "isatune/loader/device.h"

namespace isatune::emu {

struct EmuOptions {
  std::string target = "gfx942"; // the emulated chip: gfx90a, gfx942 or gfx950 (target id accepted)
  bool strict = false;           // stop the launch (HazardError) at the first report
  unsigned threads = 0;          // worker threads for workgroups; 0: all hardware threads
  uint64_t max_instructions_per_wave = 200'000'000; // a wave running longer stops the launch (endless loop)
  uint64_t memory_bytes = 64ull << 30;              // what properties() reports and alloc() allows in total
  int index = 0;                 // DeviceProperties::index (the backend's numbering, backend.h)
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
  const EmuOptions& options() const { return options_; }
  void set_strict(bool strict) { options_.strict = strict; }
  void set_threads(unsigned threads) { options_.threads = threads; }
  void set_max_instructions_per_wave(uint64_t n) { options_.max_instructions_per_wave = n; }

  struct Impl;

private:
  EmuOptions options_;
  std::unique_ptr<Impl> impl_;
  LaunchStats last_;
};

// "emu" device for a target, e.g. make_emu_device({.target = "gfx950"}).
std::unique_ptr<EmuDevice> make_emu_device(EmuOptions options = {});

} // namespace isatune::emu

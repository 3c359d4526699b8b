#pragma once
// What every wave of a launch shares: the target's rules, memory, options and the report sink.
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "isatune/cdna/target.h"
#include "isatune/emu/emulator.h"
#include "isatune/emu/report.h"
#include "memory.h"
#include "wave.h"

namespace isatune::emu {

class LaunchContext {
public:
  cdna::Gfx gfx = cdna::Gfx::gfx942;
  const Memory* memory = nullptr;
  std::string kernel;
  bool strict = false;
  uint64_t max_instructions = 0;
  WaveOrder wave_order = WaveOrder::timed;
  std::atomic<bool> stop{false};

  // Records a report (deduplicated by kind and address); throws HazardError when strict.
  void report(const Wave& w, HazardKind kind, const std::string& message);
  std::vector<HazardReport> take_reports();

private:
  std::mutex mutex_;
  std::map<std::pair<uint64_t, int>, HazardReport> reports_;
};

// Thrown through the executor for an instruction the emulator cannot run.
[[noreturn]] void unsupported(const Wave& w, const std::string& why);
std::string hex_addr(uint64_t addr);

} // namespace isatune::emu

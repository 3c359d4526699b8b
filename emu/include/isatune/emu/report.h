#pragma once
// What the emulator's checks find: one record per kind and instruction address, with a count.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/error.h"

namespace isatune::emu {

enum class HazardKind : uint8_t {
  pending_read,     // an instruction reads a register whose memory result has not been waited for
  pending_write,    // an instruction overwrites a register a memory load has not yet written (WAW)
  wait_states,      // a wait-state rule of shared/notes/cdna.md section 6 is broken
  out_of_bounds,    // a global/flat/buffer access outside every allocation, or LDS past the workgroup's size
  unaligned,        // a memory access whose address is not aligned to its element size
  register_bounds,  // an operand outside the registers the kernel descriptor allocates
};

std::string_view to_string(HazardKind kind);

struct HazardReport {
  HazardKind kind = HazardKind::pending_read;
  std::string kernel;
  uint64_t address = 0;     // byte offset of the instruction from the kernel entry
  std::string disassembly;  // the instruction as LLVM prints it
  std::string message;      // what was wrong, with the registers and wait states involved
  uint32_t workgroup[3] = {0, 0, 0}; // of the first occurrence
  uint32_t wave = 0;                 // wave index inside the workgroup, first occurrence
  uint64_t count = 1;                // occurrences (same kind and address) in the launch

  // "0x0024 s_waitcnt vmcnt(1): pending_read: ... (x12, first in workgroup (0,0,0) wave 1)"
  std::string str() const;
};

// Thrown by a strict run at the first report, and by an instruction the emulator cannot execute.
class EmulationError : public Error {
public:
  using Error::Error;
};

class HazardError : public EmulationError {
public:
  explicit HazardError(HazardReport report) : EmulationError(report.str()), report_(std::move(report)) {}
  const HazardReport& report() const { return report_; }

private:
  HazardReport report_;
};

} // namespace isatune::emu

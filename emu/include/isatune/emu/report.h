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
  // PTX emulator (emu/ptx):
  race,             // a shared-memory write and a conflicting access by another thread with no barrier between
  uninitialized,    // a read of shared memory no thread of the CTA has written
  divergence,       // an .aligned / .sync collective reached by the lanes of a warp at different instructions
  membermask,       // a shfl/vote/bar.warp.sync whose membermask names lanes that are exited or not executing it
  deadlock,         // threads waiting at a barrier that can never complete
  async_pending,    // data of an asynchronous copy or wgmma used (or its registers touched) before the wait
                    // that completes it
  proxy_fence,      // shared memory written through the generic proxy, read by the async proxy (TMA, bulk
                    // copy, wgmma) with no fence.proxy.async between
  mbarrier,         // mbarrier misuse: arrive-count or transaction-count overflow, use before init
  register_budget,  // setmaxnreg asking for more registers than the CTA has, or a count the ISA forbids
  // CDNA emulator:
  barrier_count,    // a barrier released while a wave of the workgroup has ended after fewer s_barrier: the
                    // hardware releases it without that wave, so the waves' barriers no longer pair up
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
  // PTX emulator: address is 0; the source line, and thread (tid) of the first occurrence.
  uint32_t line = 0;
  uint32_t thread[3] = {0, 0, 0};

  // "0x0024 s_waitcnt vmcnt(1): pending_read: ... (x12, first in workgroup (0,0,0) wave 1)"; PTX reports:
  // "k: line 12 'st.shared.u32 [%r2], %r3': race: ... (x4, first in CTA (0,0,0) warp 1 thread (33,0,0))"
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

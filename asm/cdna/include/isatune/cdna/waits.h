#pragma once
// The wait pass: inserts the s_waitcnt and s_nop instructions a kernel needs, so generators never place them
// by hand. Memory counters (shared/notes/cdna.md section 5): no instruction reads or overwrites a register
// whose memory result is pending, and LDS traffic is complete before s_barrier. Wait states (section 6):
// every rule for the kernel's target is met, counting the instructions already between producer and consumer.
// Works over the control flow (labels, branches, loops) with a fixed point; existing s_waitcnt and s_nop
// count. Idempotent: a second run inserts nothing.
#include <cstdint>

#include "isatune/cdna/kernel.h"

namespace isatune::cdna {

struct WaitStats {
  uint32_t waitcnts_inserted = 0;
  uint32_t nops_inserted = 0;
  uint32_t nop_states = 0; // wait states the inserted s_nops provide (s_nop N = N + 1)
};

WaitStats insert_waits(Kernel& kernel);

} // namespace isatune::cdna

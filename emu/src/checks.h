#pragma once
// The checks of a launch: the scoreboard (memory results pending until s_waitcnt, notes section 5) and the
// wait-state rules (notes section 6), per target.
#include "wave.h"

namespace isatune::emu {

// Scoreboard: reading or overwriting a register whose memory result is pending.
void check_pending(Wave& w, const Inst& in);
// Registers a memory operation at issue; dst.count 0 for stores. counters: 1 vmcnt, 2 lgkmcnt, 3 both.
void push_pending(Wave& w, RegRange dst, uint8_t counters, bool smem, uint64_t latency);
// s_waitcnt: retires what the counter values guarantee complete.
void wait_counters(Wave& w, unsigned vmcnt, unsigned lgkmcnt);
inline bool has_pending(const Wave& w) { return !w.vm_queue.empty() || !w.lgkm_queue.empty(); }

// Wait states between this instruction and the ones issued before it.
void check_wait_states(Wave& w, const Inst& in);
void record_issue(Wave& w, const Inst& in);

} // namespace isatune::emu

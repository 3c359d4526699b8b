#pragma once
// What mbarrier.cpp offers the copies of bulk_copy.cpp: completing transactions and phases.
#include "warp.h"

namespace isatune::emu::ptx {

// The mbarrier at `addr` in space `sp` (shared, shared_cluster or generic) for lane l: its CTA and offset,
// and its state; nullptr after a report (bounds, alignment, use before init). kind: 0 init, 1 inval, 2 other.
Mbar* mbarrier_at(Warp& w, unsigned l, Space sp, uint64_t addr, int kind, Cta*& t, uint32_t& off);
// complete_tx(bytes) on an mbarrier (completes the phase when nothing is pending).
void mbarrier_complete_tx(Warp& w, unsigned l, Cta& t, uint32_t off, Mbar& m, int64_t bytes);
// After pending or tx changed: marks the phase ready to complete (and wakes waiters) when both are 0.
void mbarrier_check_ready(Cta& t, Mbar& m);
// The phase completes: landings are written, waiters wake.
void mbarrier_complete_phase(Warp& w, Cta& t, uint32_t off, Mbar& m);

} // namespace isatune::emu::ptx

// The emulator's timing: a deterministic instruction-cost estimate, not a measurement. A wave issues one
// instruction at a time; VALU takes 4 clocks (wave64 on a 16-lane SIMD), transcendental 8, MFMA 4 per pass,
// scalar and branch 1, s_nop N+1; memory results arrive after a fixed latency and s_waitcnt stalls the wave
// until the retired ones have arrived. The kernel estimate (device.cpp) spreads the waves over the target's
// SIMDs (4 per CU): max(slowest workgroup, sum of wave clocks / SIMDs) plus a launch overhead.
#include "executor.h"

namespace isatune::emu {

uint64_t issue_cycles(const Inst& in) {
  switch (in.cat) {
  case Cat::valu: return 4;
  case Cat::trans: return 8;
  case Cat::mfma: return uint64_t(in.passes ? in.passes : 4) * 4;
  case Cat::nop: return uint64_t(in.imm[0] & 0xf) + 1;
  case Cat::vmem_load:
  case Cat::vmem_store:
  case Cat::flat_load:
  case Cat::flat_store:
  case Cat::ds: return 4;
  default: return 1;
  }
}

uint64_t memory_latency(Cat cat) {
  switch (cat) {
  case Cat::smem: return 200;
  case Cat::ds: return 64;
  case Cat::vmem_load:
  case Cat::flat_load: return 600;
  case Cat::vmem_store:
  case Cat::flat_store: return 300;
  default: return 0;
  }
}

} // namespace isatune::emu

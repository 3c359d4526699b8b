// The launch as waves of workgroups over the chip (timing.h CuLoad): workgroup i goes to CU i mod CUs (the
// dispatcher's round robin), each CU's time combines its workgroups' simulated costs, and the kernel takes the
// busiest CU or the chip's shared bandwidths (HBM, L2), whichever is longer (device.cpp adds the launch
// overhead). The shared bandwidths are analytic: bytes over the peak rate of the whole chip, not simulated.
#include <algorithm>

#include "executor.h"
#include "timing.h"

namespace isatune::emu {

void CuLoad::add(const WorkgroupCost& c) {
  ++workgroups;
  latency_sum += c.cycles;
  latency_max = std::max(latency_max, c.cycles);
  simd_sum += c.simd_busy_sum;
  simd_max = std::max(simd_max, c.simd_busy_max);
  lds += c.lds_busy;
  vmem += c.vmem_busy;
}

void CuLoad::merge(const CuLoad& o) {
  workgroups += o.workgroups;
  latency_sum += o.latency_sum;
  latency_max = std::max(latency_max, o.latency_max);
  simd_sum += o.simd_sum;
  simd_max = std::max(simd_max, o.simd_max);
  lds += o.lds;
  vmem += o.vmem;
}

uint64_t CuLoad::cycles(uint32_t resident) const {
  if (workgroups == 0) return 0;
  const uint64_t at_once = std::max<uint64_t>(1, std::min<uint64_t>(resident, workgroups));
  const uint64_t latency = std::max(latency_max, (latency_sum + at_once - 1) / at_once);
  const uint64_t simd = std::max(simd_max, (simd_sum + 3) / 4);
  return std::max({latency, simd, lds, vmem});
}

} // namespace isatune::emu

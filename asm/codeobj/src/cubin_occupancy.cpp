// NVIDIA occupancy, following cuda_occupancy.h (CUDA 13.0) for compute capability 8.x / 9.x:
// cudaOccMaxBlocksPerSMRegsLimit, cudaOccMaxBlocksPerSMSmemLimit, cudaOccMaxBlocksPerSMWarpsLimit.
#include <algorithm>
#include <climits>

#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/error.h"

namespace isatune::codeobj {

namespace {
uint32_t round_up(uint32_t v, uint32_t unit) { return (v + unit - 1) / unit * unit; }
uint32_t div_up(uint32_t v, uint32_t d) { return (v + d - 1) / d; }
} // namespace

NvidiaSmLimits nvidia_sm_limits(std::string_view isa) {
  NvidiaSmLimits s;
  if (isa == "sm_80") {
    s.name = "sm_80";
    s.shared_per_sm = 164 * 1024;          // A100: carve-out up to 164 KB
    s.shared_per_block_optin = 163 * 1024; // 166912
  } else if (isa == "sm_90" || isa == "sm_90a") {
    s.name = "sm_90";
    s.shared_per_sm = 228 * 1024;          // H100/H200: 233472
    s.shared_per_block_optin = 227 * 1024; // 232448
  } else {
    throw InputError("occupancy: no limits known for NVIDIA target '" + std::string(isa) + "'");
  }
  return s;
}

NvidiaOccupancy nvidia_occupancy(const NvidiaSmLimits& sm, uint32_t registers, uint32_t shared_bytes,
                                 uint32_t threads) {
  NvidiaOccupancy o;
  if (threads == 0 || threads > sm.max_threads_per_block) {
    o.limiter = "threads";
    return o;
  }
  const uint32_t warps = div_up(threads, 32);

  // Warps and blocks.
  o.by_threads = std::min(sm.max_blocks_per_sm, sm.max_warps_per_sm / warps);

  // Registers: allocated per warp in units of register_unit, per sub-partition; the hardware check rounds the
  // block's warps up to the number of sub-partitions.
  if (registers == 0) {
    o.by_registers = sm.max_blocks_per_sm;
  } else {
    const uint32_t per_warp = round_up(std::max(registers, 1u) * 32, sm.register_unit);
    const uint32_t assumed = per_warp * round_up(warps, sm.sub_partitions);
    if (registers > sm.max_registers_per_thread || assumed > sm.registers_per_block ||
        per_warp * warps > sm.registers_per_block)
      o.by_registers = 0;
    else
      o.by_registers = (sm.registers_per_sm / sm.sub_partitions / per_warp) * sm.sub_partitions / warps;
  }

  // Shared memory: the block's bytes plus the reserved kilobyte, in 128-byte units, against the largest carve-out.
  const uint32_t need = round_up(shared_bytes + sm.shared_reserved_per_block, sm.shared_unit);
  if (shared_bytes > sm.shared_per_block_optin)
    o.by_shared = 0;
  else
    o.by_shared = shared_bytes == 0 ? sm.max_blocks_per_sm : sm.shared_per_sm / need;

  o.blocks_per_sm = std::min({o.by_threads, o.by_registers, o.by_shared});
  o.warps_per_sm = o.blocks_per_sm * warps;
  o.occupancy = double(o.warps_per_sm) / sm.max_warps_per_sm;
  if (o.blocks_per_sm == o.by_registers && o.by_registers < o.by_threads) o.limiter = "registers";
  else if (o.blocks_per_sm == o.by_shared && o.by_shared < o.by_threads) o.limiter = "shared";
  else o.limiter = "threads";
  return o;
}

NvidiaOccupancy nvidia_occupancy(const CodeObject& code, const KernelInfo& kernel, uint32_t threads,
                                 uint32_t dynamic_shared) {
  if (code.vendor != Vendor::nvidia) throw InputError("occupancy: '" + kernel.name + "' is not an NVIDIA kernel");
  const NvidiaSmLimits sm = nvidia_sm_limits(code.isa);
  if (threads == 0) threads = kernel.max_workgroup_size ? kernel.max_workgroup_size : sm.max_threads_per_block;
  return nvidia_occupancy(sm, kernel.vgprs, kernel.lds_bytes + dynamic_shared, threads);
}

} // namespace isatune::codeobj

#pragma once
// Resident blocks and warps per SM for sm_80 / sm_90, as the CUDA occupancy calculator computes them
// (cuda_occupancy.h of CUDA 13.0: registers allocated per warp in units of 256, per sub-partition;
// shared memory in units of 128 bytes plus 1 KB reserved per block; thread and block limits).
#include <cstdint>
#include <string>
#include <string_view>

#include "isatune/code_object.h"

namespace isatune::codeobj {

struct NvidiaSmLimits {
  std::string name;                    // sm_80, sm_90
  uint32_t max_threads_per_sm = 2048;
  uint32_t max_blocks_per_sm = 32;
  uint32_t max_warps_per_sm = 64;
  uint32_t registers_per_sm = 65536;
  uint32_t registers_per_block = 65536;
  uint32_t max_registers_per_thread = 255;
  uint32_t register_unit = 256;        // per warp
  uint32_t sub_partitions = 4;
  uint32_t shared_per_sm = 0;          // largest carve-out
  uint32_t shared_per_block_optin = 0;
  uint32_t shared_reserved_per_block = 1024;
  uint32_t shared_unit = 128;
  uint32_t max_threads_per_block = 1024;
};

// sm_80 / sm_90 / sm_90a (a suffix ignored); InputError for others.
NvidiaSmLimits nvidia_sm_limits(std::string_view isa);

struct NvidiaOccupancy {
  uint32_t blocks_per_sm = 0; // the result: min of the limits below
  uint32_t warps_per_sm = 0;
  uint32_t by_registers = 0;
  uint32_t by_shared = 0;
  uint32_t by_threads = 0;    // warps and the block-count limit
  std::string limiter;        // "registers", "shared", "threads" or "none" when the block fits nowhere ("" ok)
  double occupancy = 0;       // warps_per_sm / max_warps_per_sm
};

// registers: per thread; shared_bytes: static + dynamic per block.
NvidiaOccupancy nvidia_occupancy(const NvidiaSmLimits& sm, uint32_t registers, uint32_t shared_bytes,
                                 uint32_t threads_per_block);
// From a cubin's kernel; threads 0 = the kernel's max_workgroup_size (1024 when not stated).
NvidiaOccupancy nvidia_occupancy(const CodeObject& code, const KernelInfo& kernel, uint32_t threads_per_block = 0,
                                 uint32_t dynamic_shared_bytes = 0);

} // namespace isatune::codeobj

#pragma once
// Runs the waves of one workgroup cooperatively on one host thread: each wave runs until s_barrier or
// s_endpgm, then the next; a barrier releases once every wave still running has reached it.
#include <cstdint>
#include <vector>

#include "context.h"
#include "isatune/code_object.h"
#include "isatune/loader/device.h"

namespace isatune::emu {

struct KernelImage {
  KernelInfo info;
  Program prog;
};

struct LaunchSetup {
  loader::Dim3 grid, block;
  uint64_t kernarg_addr = 0;
  uint64_t dispatch_addr = 0;
  uint32_t lds_bytes = 0;
  std::vector<uint32_t> preload; // kernarg dwords for preloaded SGPRs
};

struct WorkgroupCost {
  uint64_t cycles = 0;           // the slowest wave
  uint64_t wave_cycles = 0;      // sum over waves
  uint64_t instructions = 0, lane_instructions = 0;
};

class WorkgroupRunner {
public:
  WorkgroupCost run(LaunchContext& ctx, const KernelImage& kernel, const LaunchSetup& setup, const uint32_t id[3]);

private:
  std::vector<Wave> waves_;
  Workgroup wg_;
};

// Per-instruction issue cost in shader clocks and memory latencies (cost_model.cpp).
uint64_t issue_cycles(const Inst& in);
uint64_t memory_latency(Cat cat);

} // namespace isatune::emu

#pragma once
// Runs the waves of one workgroup cooperatively on one host thread, taking turns by the timing model's clocks
// (or, EmuOptions::wave_order, each to its next barrier in index or reverse order); a barrier releases once every
// wave still running has reached it, and retired LDS-DMA data lands then (lds_dma.h).
#include <cstdint>
#include <vector>

#include "context.h"
#include "timing.h"
#include "isatune/code_object.h"
#include "isatune/loader/device.h"

namespace isatune::emu {

struct KernelImage {
  KernelInfo info;
  Program prog;
  bool lds_dma = false; // the program has LDS-DMA instructions (lds_dma.h)
};

struct LaunchSetup {
  loader::Dim3 grid, block;
  uint64_t kernarg_addr = 0;
  uint64_t dispatch_addr = 0;
  uint32_t lds_bytes = 0;
  std::vector<uint32_t> preload; // kernarg dwords for preloaded SGPRs
};

struct WorkgroupCost {
  uint64_t cycles = 0;           // the slowest wave: the workgroup's latency alone on a CU
  uint64_t wave_cycles = 0;      // sum over waves
  uint64_t instructions = 0, lane_instructions = 0;
  // Busy cycles of the CU's units (timing.h): per SIMD max(VALU, MFMA), summed and the busiest; the units.
  uint64_t simd_busy_sum = 0, simd_busy_max = 0, valu_busy = 0, mfma_busy = 0, lds_busy = 0, vmem_busy = 0;
  uint64_t l1_miss_lines = 0, flops = 0, bytes = 0;
};

class WorkgroupRunner {
public:
  // Clears the footprint and profile this runner gathers over the workgroups of one launch.
  void begin_launch(const TimingParams& params);
  WorkgroupCost run(LaunchContext& ctx, const KernelImage& kernel, const LaunchSetup& setup, const uint32_t id[3]);
  std::vector<uint64_t>& read_lines() { return read_lines_; }   // first fetches, per workgroup
  std::vector<uint64_t>& write_lines() { return write_lines_; }
  const std::vector<InstProfile>& profile() const { return profile_; }

private:
  std::vector<Wave> waves_;
  Workgroup wg_;
  CuState cu_;
  const TimingParams* params_ = nullptr;
  std::vector<uint64_t> read_lines_, write_lines_;
  std::vector<InstProfile> profile_;
};

// The latency a memory handler gives its queued operation before the timing model refines it (cost_model.cpp).
uint64_t memory_latency(Cat cat);

} // namespace isatune::emu

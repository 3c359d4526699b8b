#pragma once
// The emulator's timing model (cost_model.cpp, launch_model.cpp): an estimate, never a measurement. Per CU four
// SIMDs; each wave is bound to SIMD (wave index mod 4) and issues at most one instruction per 4-clock issue
// cycle; VALU and MFMA are per-SIMD pipes (MFMA passes x 4 clocks, f32/f64 MFMA blocking the VALU), LDS and the
// vector-memory path are per-CU, HBM is shared by the chip and modelled analytically at the launch level.
// Every number carries its source in cost_model.cpp; docs/emulator.md "Timing model" describes the whole.
#include <array>
#include <cstdint>
#include <vector>

#include "inst.h"
#include "isatune/cdna/target.h"

namespace isatune::emu {

struct Wave;

// Why a wave did not issue at the cycle it was ready for its next instruction.
enum class Stall : uint8_t { dependency, waitcnt, lds_conflict, memory, barrier, mfma_busy, valu_busy, count };
constexpr int kStalls = int(Stall::count);
const char* stall_name(Stall s);

// Per-target constants, in shader clocks at the peak clock.
struct TimingParams {
  uint32_t issue = 4;            // one instruction per wave per issue cycle
  uint32_t valu = 4;             // wave64 over a 16-lane SIMD
  uint32_t trans = 16;           // quarter rate
  uint32_t salu = 4, branch = 32, smem_latency = 20;
  uint32_t lds_latency = 64, lds_banks = 32;
  uint32_t l1_latency = 120, l2_latency = 320, hbm_latency = 800;
  uint32_t l1_lines = 256, line_bytes = 128;
  uint32_t l1_bytes_per_clk = 64;    // per CU
  double l2_bytes_per_clk = 0;       // whole chip
  double hbm_bytes_per_clk = 0;      // whole chip
  // Calibrated (docs/performance.md "Timing model against AITER"): the only two constants fitted, on the gfx950
  // asm rows of AITER's aiter/configs/bf16_tuned_gemm.csv and nothing else. Both only lengthen the time, so the
  // emulator stays above estimate's bound.
  double hbm_efficiency = 0.6;   // achievable fraction of the peak HBM bandwidth
  uint32_t launch_cycles = 16000; // fixed cost of a launch
};
const TimingParams& timing_params(cdna::Gfx gfx);

// Per-instruction profile of a launch, indexed like Program::insts.
struct InstProfile {
  uint64_t issued = 0;           // wave-level executions
  uint64_t issue_cycles = 0;     // cycles the wave spent issuing it
  std::array<uint64_t, kStalls> stall{};
};

// One CU's shared units while one workgroup runs (a workgroup is simulated alone on its CU; co-resident
// workgroups are combined by launch_model.cpp).
struct CuState {
  struct Simd {
    uint64_t valu_free = 0, mfma_free = 0;
    uint64_t valu_busy = 0, mfma_busy = 0;
  };
  std::array<Simd, 4> simd{};
  uint64_t lds_free = 0, lds_busy = 0;
  uint64_t vmem_free = 0, vmem_busy = 0;
  std::vector<uint64_t> l1_tags;            // direct-mapped vector L1 (line address + 1; 0 empty)
  std::vector<uint64_t> wg_lines;           // lines this workgroup has fetched (open addressing, 0 empty)
  size_t wg_lines_used = 0;
  uint64_t l1_miss_lines = 0;               // lines sent to L2 by this workgroup
  std::vector<uint64_t>* read_lines = nullptr, *write_lines = nullptr; // the host thread's footprint
  std::vector<InstProfile>* profile = nullptr;
  const TimingParams* p = nullptr;
  uint64_t flops = 0;                       // matrix + vector FLOPs issued
  uint64_t bytes = 0;                       // global bytes requested

  void reset(const TimingParams& params, size_t insts);
  bool first_fetch(uint64_t line);          // true once per line per workgroup
};

// Executor hooks (executor.cpp): before the handler returns the issue cycle and charges the stalls; after it
// completes the timing of what the handler did (memory latencies, register ready times).
// `index` is the instruction's position in the program (the profile's row).
uint64_t timing_issue(Wave& w, const Inst& in, uint32_t index);
void timing_complete(Wave& w, const Inst& in, uint32_t index, uint64_t start, size_t vm_before, size_t lgkm_before);
// Memory hooks (ops_memory.cpp): one lane's access.
void note_global(Wave& w, uint64_t addr, uint32_t bytes, bool store);
void note_lds(Wave& w, uint64_t addr, uint32_t bytes);

} // namespace isatune::emu

namespace isatune::emu {

struct WorkgroupCost;

// The workgroups dealt to one CU (launch_model.cpp): each was simulated alone on its CU; `resident` of them
// run at once. The CU's time is the largest of: their latencies overlapped `resident` at a time (never less
// than the longest), the SIMD pipes' busy cycles over four SIMDs, the LDS's and the vector-memory path's.
struct CuLoad {
  uint64_t workgroups = 0, latency_sum = 0, latency_max = 0;
  uint64_t simd_sum = 0, simd_max = 0, lds = 0, vmem = 0;
  void add(const WorkgroupCost& c);
  void merge(const CuLoad& o);
  uint64_t cycles(uint32_t resident) const;
};

} // namespace isatune::emu

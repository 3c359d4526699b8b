#pragma once
// The state of one wave64 and of the workgroup it belongs to.
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

#include "inst.h"
#include "lds_dma.h"

namespace isatune::emu {

class Memory;
class LaunchContext;

// One outstanding memory operation, from issue to the s_waitcnt that retires it.
struct PendingOp {
  uint64_t id = 0;
  uint8_t counters = 0;   // bit 0 vmcnt, bit 1 lgkmcnt (flat: both)
  bool smem = false;      // lgkm: completes out of order
  RegRange dst;           // registers the result lands in (count 0: a store)
  uint64_t ready_cycle = 0;
  uint32_t addr = 0;      // instruction address, for messages
  bool lds_dma = false;   // an LDS-DMA load: its LDS write lands when it retires (lds_dma.h)
};

// One issued instruction, remembered for wait-state checks.
struct IssueRecord {
  const Inst* inst = nullptr;
  uint64_t stamp = 0;     // wait-state clock at issue
};

struct CuState;

struct Workgroup {
  uint32_t id[3] = {0, 0, 0};
  CuState* cu = nullptr;          // timing model: the CU's shared units (timing.h)
  std::vector<uint8_t> lds;
  uint32_t lds_size = 0;
  LdsDmaShadow dma;               // LDS-DMA writes in flight and the orderings they need (lds_dma.h)
};

struct Wave {
  // Scalar file: scalar operand encodings 0..127; SCC apart.
  std::array<uint32_t, 128> s{};
  uint32_t scc = 0;
  // Vector file: v0..v255 then a0..a255, 64 lanes each.
  std::vector<std::array<uint32_t, 64>> v;
  std::array<uint32_t, 64> tmp{}; // DPP source staging
  uint64_t dpp_lanes = ~0ull;     // lanes a DPP instruction writes

  // VGPR indexing (s_set_gpr_idx_on): while on, VALU operands named by M0[15:12] are offset by M0[7:0].
  bool gpr_idx = false;
  Inst indexed;                   // the current instruction with its indexed operands (gpr_index.cpp)

  // s_setvskip: while set, vector instructions are not issued (executor.cpp).
  bool vskip = false;

  uint32_t pc = 0;                // instruction index
  bool done = false, at_barrier = false;
  uint32_t index = 0;             // wave inside the workgroup
  Workgroup* wg = nullptr;
  LaunchContext* ctx = nullptr;
  const Program* prog = nullptr;
  const Inst* cur = nullptr;

  // Scoreboard.
  std::deque<PendingOp> vm_queue, lgkm_queue;
  std::deque<LdsDmaOp> dma_ops;   // LDS-DMA loads in flight, in issue order
  std::array<uint64_t, kNumRegs> pending{};  // id of the op the register waits for (0: none)
  uint64_t next_op_id = 1;
  // Wait states.
  std::array<IssueRecord, 32> history{};
  uint32_t history_pos = 0;
  uint64_t ws_clock = 0;
  // Timing model (timing.h, cost_model.cpp).
  uint64_t cycle = 0;
  uint64_t instructions = 0, lane_instructions = 0;
  uint8_t simd = 0, prio = 0;             // SIMD of the CU (index mod 4), s_setprio level
  uint64_t barrier_arrival = 0;           // cycle it reached the current s_barrier
  uint32_t barriers = 0;                  // s_barrier executed
  std::array<uint64_t, kNumRegs> ready{}; // cycle each register's ALU result is ready
  // The current memory instruction's accesses (note_global / note_lds).
  uint64_t acc_last_line = ~0ull;
  uint32_t acc_lines = 0, acc_l1_miss = 0, acc_first = 0, acc_lds = 0;
  std::array<uint32_t, 512> acc_lds_dw{};

  uint64_t exec() const { return uint64_t(s[kExec]) | uint64_t(s[kExec + 1]) << 32; }
  void set_exec(uint64_t e) { s[kExec] = uint32_t(e); s[kExec + 1] = uint32_t(e >> 32); }
  uint64_t vcc() const { return uint64_t(s[kVcc]) | uint64_t(s[kVcc + 1]) << 32; }
  uint64_t s64(uint16_t r) const { return uint64_t(s[r]) | uint64_t(s[r + 1]) << 32; }
  void set_s64(uint16_t r, uint64_t x) { s[r] = uint32_t(x); s[r + 1] = uint32_t(x >> 32); }
  uint32_t* vreg(uint16_t r) { return v[r].data(); }
};

} // namespace isatune::emu

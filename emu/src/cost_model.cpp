// The emulator's timing model, per instruction (timing.h): an estimate, not a measurement. The executor calls
// timing_issue before an instruction's handler and timing_complete after it; the memory handlers report each
// lane's access through note_global / note_lds.
//
// Sources of the numbers (shader clocks at the peak clock):
//  [S] llvm/lib/Target/AMDGPU/SISchedule.td (read at llvm-project 03a5b92): "The latency values are
//      1 / (operations / cycle) / 4", i.e. in 4-clock issue cycles: Write32Bit 1 (4 clk), WriteTrans32 4
//      ("quarter rate", 16 clk), WriteSALU 1 (4 clk), WriteBranch 8 (32 clk), WriteSMEM 5 (20 clk), WriteLDS 5
//      ("can be between 2 and 64"), WriteVMEM 80 (320 clk); MFMA HWXDL ResourceCycles = passes.
//  [N] shared/notes/cdna.md section 4: MFMA cycles = 4 x passes per target (SISchedule.td per-target models);
//      CDNA3 bf16/f16/fp8/i8/xf32 MFMAs co-execute with VALU, f32 and f64 ones do not. Section 7: peaks.
//  [T] cdna::TargetInfo (asm/cdna target.h): CUs, SIMDs per CU, peak clock, peak HBM TB/s, LDS per CU.
//  [A] model assumptions, not from a document: LDS base latency 64 clk (inside [S]'s 2..64 issue cycles), vector
//      L1 hit 120 clk, HBM miss 800 clk, L1 64 B/clk per CU, a direct-mapped vector L1 of 256 x 128 B lines
//      (CDNA3 white paper: 32 KiB vector L1 with 128 B lines per CU, as recalled, not re-read this session),
//      32 LDS banks of 4 bytes (64 on gfx950, whose CDNA4 LDS doubles the read bandwidth, as recalled), L2
//      2 KiB/clk per XCD (16 channels x 128 B). Each is one constant below.
//  [C] calibrated on AITER's gfx950 asm bf16 GEMM measurements (timing.h): HBM efficiency 0.6, launch 16000 clk.
#include <algorithm>
#include <bit>

#include "context.h"
#include "executor.h"
#include "timing.h"

namespace isatune::emu {

uint64_t memory_latency(Cat cat) {
  switch (cat) { // [S] WriteSMEM 5, WriteLDS 5, WriteVMEM 80 issue cycles; refined by timing_complete
  case Cat::smem: return 20;
  case Cat::ds: return 64;
  case Cat::vmem_load:
  case Cat::flat_load:
  case Cat::vmem_store:
  case Cat::flat_store: return 320;
  default: return 0;
  }
}

const char* stall_name(Stall s) {
  switch (s) {
  case Stall::dependency: return "dependency";
  case Stall::waitcnt: return "waitcnt";
  case Stall::lds_conflict: return "lds_bank_conflict";
  case Stall::memory: return "memory_bandwidth";
  case Stall::barrier: return "barrier";
  case Stall::mfma_busy: return "mfma_busy";
  case Stall::valu_busy: return "valu_busy";
  default: return "?";
  }
}

const TimingParams& timing_params(cdna::Gfx gfx) {
  static const std::array<TimingParams, 3> params = [] {
    std::array<TimingParams, 3> t{};
    const char* names[3] = {"gfx90a", "gfx942", "gfx950"};
    for (int g = 0; g < 3; ++g) {
      const cdna::TargetInfo* info = cdna::find_target(names[g]);
      t[g].hbm_bytes_per_clk = info->peak_hbm_tbps * 1e12 / (info->peak_clock_ghz * 1e9); // [T]
      // [A] L2: 16 channels x 128 B/clk per XCD, 8 XCDs (gfx942, gfx950); gfx90a: 32 channels per GCD.
      t[g].l2_bytes_per_clk = g == 0 ? 32 * 128 : 8 * 16 * 128;
    }
    t[0].l1_lines = 256, t[0].line_bytes = 64; // [A] gfx90a: 16 KiB vector L1, 64 B lines
    t[2].lds_banks = 64;                       // [A] gfx950: doubled LDS read bandwidth
    return t;
  }();
  return params[size_t(gfx)];
}

void CuState::reset(const TimingParams& params, size_t insts) {
  p = &params;
  simd = {};
  lds_free = lds_busy = vmem_free = vmem_busy = 0;
  l1_tags.assign(params.l1_lines, 0);
  if (wg_lines.size() < 4096) wg_lines.assign(4096, 0);
  else std::fill(wg_lines.begin(), wg_lines.end(), 0);
  wg_lines_used = 0;
  l1_miss_lines = 0;
  flops = bytes = 0;
  if (profile && profile->size() < insts) profile->resize(insts);
}

bool CuState::first_fetch(uint64_t key) {
  const uint64_t k = key + 1;
  if (2 * (wg_lines_used + 1) > wg_lines.size()) {
    std::vector<uint64_t> old(wg_lines.size() * 2, 0);
    old.swap(wg_lines);
    wg_lines_used = 0;
    for (uint64_t o : old)
      if (o) first_fetch(o - 1);
  }
  const size_t mask = wg_lines.size() - 1;
  for (size_t i = (k * 0x9e3779b97f4a7c15ull) >> 20 & mask;; i = (i + 1) & mask) {
    if (wg_lines[i] == k) return false;
    if (!wg_lines[i]) {
      wg_lines[i] = k;
      ++wg_lines_used;
      return true;
    }
  }
}

namespace {

bool is_vmem(Cat c) {
  return c == Cat::vmem_load || c == Cat::vmem_store || c == Cat::flat_load || c == Cat::flat_store;
}

void charge(Wave& w, uint32_t index, Stall why, uint64_t cycles) {
  if (!cycles) return;
  CuState& cu = *w.wg->cu;
  if (cu.profile) (*cu.profile)[index].stall[int(why)] += cycles;
}

// LDS cycles of the current DS instruction: the dword accesses in lane order, taken `banks` at a time (one
// pass of the bank array per clock), each pass costing its most-used bank's count of distinct dwords (a
// broadcast of one dword is free).
uint64_t lds_cycles(const Wave& w, uint32_t banks, uint64_t& conflict_free) {
  const uint32_t n = w.acc_lds;
  conflict_free = std::max<uint64_t>(1, (n + banks - 1) / banks);
  if (n == 0) return 2; // ds_swizzle / permute: no LDS data, one pass per half wave
  uint64_t total = 0;
  uint32_t first[64], count[64];
  for (uint32_t c = 0; c < n; c += banks) {
    std::fill(count, count + banks, 0u);
    uint32_t worst = 1;
    for (uint32_t i = c; i < std::min(n, c + banks); ++i) {
      const uint32_t dw = w.acc_lds_dw[i], b = dw % banks;
      if (count[b] == 0) first[b] = dw, count[b] = 1;
      else if (dw != first[b]) worst = std::max(worst, ++count[b]);
    }
    total += worst;
  }
  return total;
}

} // namespace

uint64_t timing_issue(Wave& w, const Inst& in, uint32_t index) {
  CuState& cu = *w.wg->cu;
  uint64_t start = w.cycle;
  // Register dependencies on ALU results (memory results are waited for with s_waitcnt).
  for (const RegRange& r : in.reads)
    for (uint16_t i = r.first; i < r.first + r.count; ++i) start = std::max(start, w.ready[i]);
  charge(w, index, Stall::dependency, start - w.cycle);
  CuState::Simd& s = cu.simd[w.simd];
  uint64_t unit = start;
  Stall why = Stall::valu_busy;
  switch (in.cat) {
  case Cat::valu:
  case Cat::trans: unit = std::max(start, s.valu_free); break;
  case Cat::mfma:
    unit = std::max(start, in.mfma_blocks_valu ? std::max(s.mfma_free, s.valu_free) : s.mfma_free);
    why = Stall::mfma_busy;
    break;
  case Cat::ds: unit = std::max(start, cu.lds_free), why = Stall::lds_conflict; break;
  default:
    if (is_vmem(in.cat)) unit = std::max(start, cu.vmem_free), why = Stall::memory;
  }
  charge(w, index, why, unit - start);
  if (is_vmem(in.cat) || in.cat == Cat::ds) {
    w.acc_last_line = ~0ull;
    w.acc_lines = w.acc_l1_miss = w.acc_first = w.acc_lds = 0;
  }
  return unit;
}

void timing_complete(Wave& w, const Inst& in, uint32_t index, uint64_t start, size_t vm_before, size_t lgkm_before) {
  CuState& cu = *w.wg->cu;
  const TimingParams& p = *cu.p;
  CuState::Simd& s = cu.simd[w.simd];
  uint64_t next = start + p.issue; // the wave's next issue cycle
  uint64_t result = start + p.issue;
  uint64_t latency = 0;            // of a memory operation the handler queued
  uint64_t waited = 0;             // s_waitcnt: cycles until the awaited results arrived
  switch (in.cat) {
  case Cat::valu:
  case Cat::trans: {
    const uint64_t busy = in.cat == Cat::trans ? p.trans : p.valu;
    s.valu_free = start + busy, s.valu_busy += busy;
    result = start + busy;
    cu.flops += uint64_t(in.flops) * uint64_t(std::popcount(w.exec()));
    break;
  }
  case Cat::mfma: {
    const uint64_t busy = uint64_t(in.passes ? in.passes : 4) * 4; // [N]
    s.mfma_free = start + busy, s.mfma_busy += busy;
    if (in.mfma_blocks_valu) s.valu_free = start + busy;
    result = start + busy; // a dependent MFMA (same srcC) issues back to back at the pipe's rate
    cu.flops += in.flops;
    break;
  }
  case Cat::nop: next = start + p.issue * (uint64_t(in.imm[0] & 0xf) + 1); break;
  case Cat::branch: next = start + p.branch; break;
  case Cat::smem: latency = p.smem_latency; break;
  case Cat::ds: {
    uint64_t free_cycles = 0;
    const uint64_t c = lds_cycles(w, p.lds_banks, free_cycles);
    cu.lds_free = start + c, cu.lds_busy += c;
    charge(w, index, Stall::lds_conflict, c - std::min(c, free_cycles));
    latency = p.lds_latency + c;
    break;
  }
  case Cat::waitcnt:
    waited = w.cycle - std::min(w.cycle, start);
    charge(w, index, Stall::waitcnt, waited);
    next = std::max(w.cycle, start) + p.issue;
    break;
  default:
    if (is_vmem(in.cat)) {
      const uint64_t lines = std::max<uint32_t>(1, w.acc_lines);
      const uint64_t busy = std::max<uint64_t>(p.issue, lines * p.line_bytes / p.l1_bytes_per_clk);
      cu.vmem_free = start + busy, cu.vmem_busy += busy;
      const uint32_t base = w.acc_first ? p.hbm_latency : w.acc_l1_miss ? p.l2_latency : p.l1_latency;
      latency = busy + base;
    } else if (in.cat == Cat::barrier) {
      w.barrier_arrival = start;
    } else if (in.cat == Cat::salu && in.setprio) {
      w.prio = uint8_t(in.imm[0] & 3);
    }
  }
  // s_sleep and the like move the wave's clock in the handler.
  if (in.cat != Cat::waitcnt && w.cycle > start) next = std::max(next, w.cycle);
  for (const RegRange& r : in.writes)
    for (uint16_t i = r.first; i < r.first + r.count; ++i) w.ready[i] = result;
  if (latency) {
    if (w.vm_queue.size() > vm_before) w.vm_queue.back().ready_cycle = start + latency;
    if (w.lgkm_queue.size() > lgkm_before) w.lgkm_queue.back().ready_cycle = start + latency;
  }
  if (cu.profile) {
    InstProfile& ip = (*cu.profile)[index];
    ++ip.issued;
    ip.issue_cycles += next - start - waited;
  }
  w.cycle = next;
}

void note_global(Wave& w, uint64_t addr, uint32_t bytes, bool store) {
  CuState& cu = *w.wg->cu;
  cu.bytes += bytes;
  const uint64_t line = addr / cu.p->line_bytes;
  if (line == w.acc_last_line) return;
  w.acc_last_line = line;
  ++w.acc_lines;
  uint64_t& tag = cu.l1_tags[line % cu.l1_tags.size()];
  if (!store && tag == line + 1) return; // vector L1 hit
  if (!store) tag = line + 1, ++w.acc_l1_miss;
  ++cu.l1_miss_lines;
  if (cu.first_fetch(line << 1 | uint64_t(store))) {
    w.acc_first += !store;
    (store ? cu.write_lines : cu.read_lines)->push_back(line);
  }
}

void note_lds(Wave& w, uint64_t addr, uint32_t bytes) {
  for (uint32_t k = 0; k < (bytes + 3) / 4 && w.acc_lds < w.acc_lds_dw.size(); ++k)
    w.acc_lds_dw[w.acc_lds++] = uint32_t(addr / 4 + k);
}

} // namespace isatune::emu

#include "executor.h"

#include <algorithm>
#include <bit>

#include "checks.h"
#include "gpr_index.h"
#include "isatune/error.h"

namespace isatune::emu {

namespace {

void init_wave(Wave& w, const KernelImage& k, const LaunchSetup& setup, Workgroup& wg, uint32_t index,
               uint32_t threads) {
  const KernelDescriptor& d = *k.info.descriptor;
  w.s.fill(0);
  w.scc = 0;
  w.pc = 0;
  w.done = w.at_barrier = false;
  w.gpr_idx = false;
  w.vskip = false;
  w.index = index;
  w.wg = &wg;
  w.prog = &k.prog;
  w.cur = nullptr;
  w.vm_queue.clear();
  w.lgkm_queue.clear();
  w.dma_ops.clear();
  w.pending.fill(0);
  w.history.fill({});
  w.history_pos = 0;
  w.ws_clock = 0;
  w.cycle = 0;
  w.simd = uint8_t(index % 4); // a workgroup's waves are spread over the CU's four SIMDs
  w.prio = 0;
  w.barrier_arrival = 0;
  w.barriers = 0;
  w.ready.fill(0);
  w.instructions = w.lane_instructions = 0;
  if (w.v.size() != 512) w.v.resize(512);
  // Registers start at zero (hardware leaves them undefined); only the allocated ones are cleared.
  const uint32_t n = std::min<uint32_t>(d.vgprs_allocated ? d.vgprs_allocated : 512, 256);
  for (uint32_t r = 0; r < n; ++r) w.v[r].fill(0), w.v[256 + r].fill(0);

  // User SGPRs, dense from s0 in the descriptor's order (shared/notes/cdna.md section 2).
  uint32_t s = 0;
  if (d.user_sgpr_private_segment_buffer) s += 4;
  if (d.user_sgpr_dispatch_ptr) w.set_s64(uint16_t(s), setup.dispatch_addr), s += 2;
  if (d.user_sgpr_queue_ptr) s += 2;
  if (d.user_sgpr_kernarg_segment_ptr) w.set_s64(uint16_t(s), setup.kernarg_addr), s += 2;
  if (d.user_sgpr_dispatch_id) s += 2;
  if (d.user_sgpr_flat_scratch_init) s += 2;
  for (uint32_t i = 0; i < d.kernarg_preload_length && i < setup.preload.size(); ++i) w.s[s++] = setup.preload[i];
  if (d.user_sgpr_private_segment_size) s += 1;
  s = std::max(s, d.user_sgpr_count);
  if (d.workgroup_id_x) w.s[s++] = wg.id[0];
  if (d.workgroup_id_y) w.s[s++] = wg.id[1];
  if (d.workgroup_id_z) w.s[s++] = wg.id[2];
  if (d.workgroup_info) w.s[s++] = 0;

  // v0: packed workitem ids x | y << 10 | z << 20.
  const uint32_t bx = setup.block.x, by = setup.block.y;
  uint64_t exec = 0;
  for (uint32_t l = 0; l < 64; ++l) {
    uint32_t t = index * 64 + l;
    if (t >= threads) break;
    exec |= 1ull << l;
    uint32_t x = t % bx, y = (t / bx) % by, z = t / (bx * by);
    if (d.workitem_id_vgprs < 1) y = 0;
    if (d.workitem_id_vgprs < 2) z = 0;
    w.v[0][l] = x | (y << 10) | (z << 20);
  }
  w.set_exec(exec);
  if (d.kernarg_preload_length > 0) {
    int32_t i = k.prog.at(256);
    if (i < 0) throw InputError("kernel '" + k.info.name + "' preloads kernel arguments but has no entry at +256");
    w.pc = uint32_t(i);
  }
}

bool skipped_by_vskip(Cat c) {
  switch (c) {
  case Cat::valu: case Cat::trans: case Cat::mfma: case Cat::vmem_load: case Cat::vmem_store:
  case Cat::flat_load: case Cat::flat_store: case Cat::ds: return true;
  default: return false;
  }
}

// Runs a wave until it ends, reaches a barrier or its clock passes `until` (another wave's turn).
void run_wave(Wave& w, uint64_t until) {
  const auto& insts = w.prog->insts;
  const uint64_t limit = w.ctx->max_instructions;
  while (!w.done && !w.at_barrier && w.cycle <= until) {
    if (w.pc >= insts.size()) {
      w.cur = insts.empty() ? nullptr : &insts.back();
      unsupported(w, "ran past the end of the kernel after");
    }
    const Inst& in = insts[w.pc];
    w.cur = &in;
    if (!in.fn) {
      if (in.sdwa) unsupported(w, "this SDWA form is not supported by the emulator");
      unsupported(w, "instruction not supported by the emulator");
    }
    // VSKIP (s_setvskip): vector instructions (VOP*, MUBUF, DS, FLAT) are not issued; the wave goes on.
    if (w.vskip && skipped_by_vskip(in.cat)) {
      ++w.pc;
      ++w.instructions;
      w.cycle += 4; // one issue cycle
      continue;
    }
    // With VGPR indexing on, VALU instructions run (and are checked) with their indexed operands; the
    // wait-state history keeps the instruction as decoded.
    const bool indexed = w.gpr_idx && (in.cat == Cat::valu || in.cat == Cat::trans);
    const Inst& run = indexed ? apply_gpr_index(w, in) : in;
    if (has_pending(w)) check_pending(w, run);
    check_wait_states(w, run);
    const uint32_t index = w.pc;
    const uint64_t start = timing_issue(w, in, index);
    w.cycle = start;
    const size_t vm = w.vm_queue.size(), lgkm = w.lgkm_queue.size();
    ++w.pc;
    run.fn(w, run);
    record_issue(w, in);
    timing_complete(w, in, index, start, vm, lgkm);
    ++w.instructions;
    if (in.cat == Cat::valu || in.cat == Cat::trans || in.cat == Cat::mfma)
      w.lane_instructions += uint64_t(std::popcount(w.exec()));
    else
      ++w.lane_instructions;
    if (w.instructions > limit) unsupported(w, "instruction limit reached (endless loop?)");
    if (w.ctx->stop.load(std::memory_order_relaxed)) return;
  }
}

} // namespace

void WorkgroupRunner::begin_launch(const TimingParams& params) {
  params_ = &params;
  read_lines_.clear();
  write_lines_.clear();
  profile_.clear();
  cu_.read_lines = &read_lines_;
  cu_.write_lines = &write_lines_;
  cu_.profile = &profile_;
}

WorkgroupCost WorkgroupRunner::run(LaunchContext& ctx, const KernelImage& k, const LaunchSetup& setup,
                                   const uint32_t id[3]) {
  const uint32_t threads = setup.block.x * setup.block.y * setup.block.z;
  const uint32_t nwaves = (threads + 63) / 64;
  if (waves_.size() < nwaves) waves_.resize(nwaves);
  for (int i = 0; i < 3; ++i) wg_.id[i] = id[i];
  wg_.lds_size = setup.lds_bytes;
  wg_.lds.assign(setup.lds_bytes, 0);
  lds_dma_begin_workgroup(wg_, k.lds_dma);
  cu_.reset(params_ ? *params_ : timing_params(ctx.gfx), k.prog.insts.size());
  wg_.cu = &cu_;
  for (uint32_t i = 0; i < nwaves; ++i) {
    waves_[i].ctx = &ctx;
    init_wave(waves_[i], k, setup, wg_, i, threads);
  }
  // Waves take turns in emulated time: the one with the earliest clock (then the higher s_setprio, then the
  // older) runs until its clock passes the next one's by more than kTurnCycles, so the SIMDs' and the CU's
  // shared units see their requests in time order to within a few issue cycles (a turn per instruction would
  // cost the emulator a third of its speed on VALU code).
  for (;;) {
    Wave* best = nullptr;
    uint64_t next = ~0ull;
    uint32_t running = 0;
    for (uint32_t i = 0; i < nwaves; ++i) {
      Wave& w = waves_[i];
      if (w.done) continue;
      ++running;
      if (w.at_barrier) continue;
      if (!best || w.cycle < best->cycle || (w.cycle == best->cycle && w.prio > best->prio)) {
        if (best) next = std::min(next, best->cycle);
        best = &w;
      } else {
        next = std::min(next, w.cycle);
      }
    }
    if (running == 0) break;
    if (best && ctx.wave_order != WaveOrder::timed) { // a schedule check: the first (last) wave, to its barrier
      for (uint32_t j = 0; j < nwaves; ++j) {
        Wave& w = waves_[ctx.wave_order == WaveOrder::index ? j : nwaves - 1 - j];
        if (!w.done && !w.at_barrier) {
          best = &w;
          break;
        }
      }
      next = ~0ull;
    }
    if (best) {
      constexpr uint64_t kTurnCycles = 16;
      run_wave(*best, next == ~0ull ? next : next + kTurnCycles);
      if (ctx.stop.load(std::memory_order_relaxed)) return {};
      continue;
    }
    // Every wave still running waits at the barrier: release them together (retired LDS-DMA data lands). A
    // wave that ended after fewer barriers than the waiting ones no longer takes part (as on the hardware):
    // once it has taken part in one, the waves' barriers do not pair up, which is reported.
    uint32_t waiting = 0;
    for (uint32_t i = 0; i < nwaves; ++i)
      if (!waves_[i].done) waiting = std::max(waiting, waves_[i].barriers);
    for (uint32_t i = 0; i < nwaves; ++i) {
      const Wave& w = waves_[i];
      if (w.done && w.barriers > 0 && w.barriers < waiting) { // (exiting before any barrier is fine)
        ctx.report(w, HazardKind::barrier_count,
                   "wave " + std::to_string(i) + " ended after " + std::to_string(w.barriers) +
                       " s_barrier while other waves of the workgroup wait at their barrier " +
                       std::to_string(waiting) + " (released without it: the barriers do not pair up)");
        if (ctx.stop.load(std::memory_order_relaxed)) return {};
        break;
      }
    }
    lds_dma_barrier(wg_);
    uint64_t t = 0;
    for (uint32_t i = 0; i < nwaves; ++i)
      if (!waves_[i].done) t = std::max(t, waves_[i].cycle);
    for (uint32_t i = 0; i < nwaves; ++i) {
      Wave& w = waves_[i];
      if (w.done) continue;
      if (w.pc > 0 && w.pc - 1 < profile_.size()) profile_[w.pc - 1].stall[int(Stall::barrier)] += t - w.cycle;
      w.at_barrier = false, w.cycle = t;
    }
  }
  WorkgroupCost cost;
  for (uint32_t i = 0; i < nwaves; ++i) {
    const Wave& w = waves_[i];
    cost.cycles = std::max(cost.cycles, w.cycle);
    cost.wave_cycles += w.cycle;
    cost.instructions += w.instructions;
    cost.lane_instructions += w.lane_instructions;
  }
  for (const auto& s : cu_.simd) {
    const uint64_t busy = std::max(s.valu_busy, s.mfma_busy);
    cost.simd_busy_sum += busy;
    cost.simd_busy_max = std::max(cost.simd_busy_max, busy);
    cost.valu_busy += s.valu_busy;
    cost.mfma_busy += s.mfma_busy;
  }
  cost.lds_busy = cu_.lds_busy;
  cost.vmem_busy = cu_.vmem_busy;
  cost.l1_miss_lines = cu_.l1_miss_lines;
  cost.flops = cu_.flops;
  cost.bytes = cu_.bytes;
  return cost;
}

} // namespace isatune::emu

// Memory results arrive asynchronously: a load's destination stays pending until an s_waitcnt retires it.
// vmcnt events complete in issue order; LDS events in order; SMEM out of order, so with SMEM outstanding only
// lgkmcnt(0) is known to retire it (shared/notes/cdna.md section 5). The value a pending register holds is
// already the loaded one (results are computed at issue): the emulator reports the race and carries on.
#include <algorithm>
#include <string>

#include "checks.h"
#include "context.h"
#include "lds_dma.h"

namespace isatune::emu {

namespace {

std::string reg_name(uint16_t r) {
  if (r >= kAgprBase && r < kScc) return "a" + std::to_string(r - kAgprBase);
  if (r >= kVgprBase && r < kAgprBase) return "v" + std::to_string(r - kVgprBase);
  if (r == kVcc || r == kVcc + 1) return r == kVcc ? "vcc_lo" : "vcc_hi";
  if (r == kExec || r == kExec + 1) return r == kExec ? "exec_lo" : "exec_hi";
  if (r == kM0) return "m0";
  if (r == kScc) return "scc";
  return "s" + std::to_string(r);
}

const PendingOp* find_op(const Wave& w, uint64_t id) {
  for (const auto& q : {&w.vm_queue, &w.lgkm_queue})
    for (const auto& op : *q)
      if (op.id == id) return &op;
  return nullptr;
}

std::string describe(const Wave& w, uint16_t reg, uint64_t id) {
  std::string m = reg_name(reg);
  if (const PendingOp* op = find_op(w, id)) {
    const Inst* src = nullptr;
    if (int32_t i = w.prog->at(op->addr); i >= 0) src = &w.prog->insts[size_t(i)];
    m += " is still pending from " + hex_addr(op->addr) + (src ? " '" + src->text + "'" : std::string());
    m += std::string(" (needs s_waitcnt ") + ((op->counters & 1) ? "vmcnt" : "lgkmcnt") + ")";
  }
  return m;
}

void retire(Wave& w, const PendingOp& op) {
  w.cycle = std::max(w.cycle, op.ready_cycle);
  for (uint16_t r = op.dst.first; r < op.dst.first + op.dst.count; ++r)
    if (w.pending[r] == op.id) w.pending[r] = 0;
  if (op.lds_dma) lds_dma_retire(w, op.id);
}

bool in_queue(const std::deque<PendingOp>& q, uint64_t id) {
  return std::any_of(q.begin(), q.end(), [&](const PendingOp& o) { return o.id == id; });
}

} // namespace

void check_pending(Wave& w, const Inst& in) {
  for (const auto& r : in.reads)
    for (uint16_t i = r.first; i < r.first + r.count; ++i)
      if (w.pending[i]) {
        w.ctx->report(w, HazardKind::pending_read, "reads " + describe(w, i, w.pending[i]));
        break;
      }
  bool load = in.cat == Cat::vmem_load || in.cat == Cat::ds || in.cat == Cat::smem || in.cat == Cat::flat_load;
  if (load) return; // memory results of one counter land in order: a second load may target the same register
  for (const auto& r : in.writes)
    for (uint16_t i = r.first; i < r.first + r.count; ++i)
      if (w.pending[i]) {
        w.ctx->report(w, HazardKind::pending_write, "overwrites " + describe(w, i, w.pending[i]));
        break;
      }
}

void push_pending(Wave& w, RegRange dst, uint8_t counters, bool smem, uint64_t latency) {
  PendingOp op;
  op.id = w.next_op_id++;
  op.counters = counters;
  op.smem = smem;
  op.dst = dst;
  op.ready_cycle = w.cycle + latency;
  op.addr = w.cur ? w.cur->addr : 0;
  if (counters & 1) w.vm_queue.push_back(op);
  if (counters & 2) w.lgkm_queue.push_back(op);
  for (uint16_t r = dst.first; r < dst.first + dst.count; ++r) w.pending[r] = op.id;
}

void wait_counters(Wave& w, unsigned vmcnt, unsigned lgkmcnt) {
  auto done = [&](const PendingOp& op, bool from_vm) {
    // A flat operation counts in both: it is retired once neither queue holds it.
    bool other = from_vm ? in_queue(w.lgkm_queue, op.id) : in_queue(w.vm_queue, op.id);
    if (!other) retire(w, op);
  };
  while (w.vm_queue.size() > vmcnt) {
    PendingOp op = w.vm_queue.front();
    w.vm_queue.pop_front();
    done(op, true);
  }
  size_t total = w.lgkm_queue.size();
  if (total > lgkmcnt) {
    if (lgkmcnt == 0) {
      auto q = std::move(w.lgkm_queue);
      w.lgkm_queue.clear();
      for (const auto& op : q) done(op, false);
    } else {
      // k operations completed: SMEM may be any of them, LDS complete oldest first.
      size_t k = total - lgkmcnt;
      size_t smem = size_t(std::count_if(w.lgkm_queue.begin(), w.lgkm_queue.end(), [](auto& o) { return o.smem; }));
      size_t lds_done = k > smem ? k - smem : 0;
      for (auto it = w.lgkm_queue.begin(); it != w.lgkm_queue.end() && lds_done;) {
        if (it->smem) {
          ++it;
          continue;
        }
        PendingOp op = *it;
        it = w.lgkm_queue.erase(it);
        --lds_done;
        done(op, false);
      }
    }
  }
}

} // namespace isatune::emu

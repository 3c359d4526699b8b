#include "lds_dma.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "context.h"

namespace isatune::emu {

namespace {

constexpr uint8_t kNone = 0, kInFlight = 1, kRetired = 2;

uint32_t wave_bit(uint32_t index) {
  return 1u << (index & 31);
}

std::string dma_text(const Wave& w, uint32_t addr) {
  std::string s = hex_addr(addr);
  if (int32_t i = w.prog->at(addr); i >= 0)
    s += " '" + w.prog->insts[size_t(i)].text + "'";
  return s;
}

// The lowest wave other than `self` in a read mask.
uint32_t other_reader(uint32_t mask, uint32_t self) {
  mask &= ~wave_bit(self);
  return uint32_t(std::countr_zero(mask));
}

} // namespace

bool has_lds_dma(const Program& prog) {
  return std::any_of(prog.insts.begin(), prog.insts.end(), [](const Inst& in) {
    return (in.name.starts_with("BUFFER_LOAD_") && in.name.ends_with("_LDS")) ||
           in.name.starts_with("GLOBAL_LOAD_LDS_");
  });
}

void lds_dma_begin_workgroup(Workgroup& wg, bool active) {
  LdsDmaShadow& s = wg.dma;
  s.active = active;
  s.landing.clear();
  if (!active)
    return;
  const size_t n = (wg.lds_size + 3) / 4;
  s.state.assign(n, kNone);
  s.wave.resize(n);
  s.value.resize(n);
  s.issue.resize(n);
  s.read_gen.resize(n, 0); // generations only grow, so stale entries never match
  s.read_mask.resize(n, 0);
  ++s.gen;
}

LdsDmaOp& lds_dma_begin(Wave& w) {
  w.dma_ops.emplace_back();
  return w.dma_ops.back();
}

void lds_dma_stage(Wave& w, LdsDmaOp& op, uint64_t addr, uint8_t* p, const uint32_t* data, uint32_t bytes) {
  LdsDmaShadow& s = w.wg->dma;
  if (!s.active || addr % 4) { // not dword-aligned: written at issue (reported as unaligned by lds_ptr)
    std::memcpy(p, data, bytes);
    return;
  }
  const uint32_t me = w.index;
  for (uint32_t k = 0; k < bytes / 4; ++k) {
    const uint32_t d = uint32_t(addr / 4) + k;
    if (s.read_gen[d] == s.gen && (s.read_mask[d] & ~wave_bit(me)))
      w.ctx->report(
          w, HazardKind::race,
          "writes LDS " + hex_addr(4ull * d) + " that wave " +
              std::to_string(other_reader(s.read_mask[d], me)) +
              " read with no s_barrier between (write-after-read: right only while the load's memory "
              "latency outlasts that wave; the emulator keeps the old data until the next barrier)");
    if (s.state[d] != kNone && s.wave[d] != me)
      w.ctx->report(w, HazardKind::race,
                    "writes LDS " + hex_addr(4ull * d) + " that wave " + std::to_string(s.wave[d]) +
                        "'s LDS-DMA " + dma_text(w, s.issue[d]) + " also writes with no s_barrier between");
    s.state[d] = kInFlight;
    s.wave[d] = uint8_t(me);
    s.value[d] = data[k];
    s.issue[d] = w.cur ? w.cur->addr : 0;
    op.dwords.push_back(d);
  }
}

void lds_dma_issued(Wave& w) {
  w.dma_ops.back().op_id = w.next_op_id - 1; // push_pending numbered it
  if (!w.vm_queue.empty())
    w.vm_queue.back().lds_dma = true;
}

namespace {

void retire_op(Wave& w, const LdsDmaOp& op) {
  LdsDmaShadow& s = w.wg->dma;
  for (uint32_t d : op.dwords)
    if (s.state[d] == kInFlight && s.wave[d] == w.index) {
      s.state[d] = kRetired;
      s.landing.push_back(d);
    }
}

} // namespace

void lds_dma_retire(Wave& w, uint64_t op_id) {
  // vmcnt retires in issue order, so the op is at the front (older ones retired with it).
  while (!w.dma_ops.empty() && w.dma_ops.front().op_id <= op_id) {
    retire_op(w, w.dma_ops.front());
    w.dma_ops.pop_front();
  }
}

void lds_dma_end_wave(Wave& w) {
  for (const auto& op : w.dma_ops)
    retire_op(w, op);
  w.dma_ops.clear();
}

void lds_dma_barrier(Workgroup& wg) {
  LdsDmaShadow& s = wg.dma;
  if (!s.active)
    return;
  for (uint32_t d : s.landing)
    if (s.state[d] == kRetired) {
      std::memcpy(wg.lds.data() + 4ull * d, &s.value[d], 4);
      s.state[d] = kNone;
    }
  s.landing.clear();
  ++s.gen;
}

void lds_dma_observe_read(Wave& w, uint32_t addr, uint32_t bytes, uint8_t* out) {
  LdsDmaShadow& s = w.wg->dma;
  const uint32_t me = w.index;
  for (uint32_t d = addr / 4; d <= (addr + bytes - 1) / 4; ++d) {
    if (s.read_gen[d] != s.gen)
      s.read_gen[d] = s.gen, s.read_mask[d] = 0;
    s.read_mask[d] |= wave_bit(me);
    if (s.state[d] == kNone)
      continue;
    if (s.wave[d] != me) {
      w.ctx->report(
          w, HazardKind::race,
          "reads LDS " + hex_addr(4ull * d) + " that wave " + std::to_string(s.wave[d]) + "'s LDS-DMA " +
              dma_text(w, s.issue[d]) +
              " writes, with no s_barrier after that wave's s_waitcnt vmcnt (the emulator gives the old "
              "data)");
    } else if (s.state[d] == kInFlight) {
      w.ctx->report(w, HazardKind::pending_read,
                    "reads LDS " + hex_addr(4ull * d) + " that this wave's LDS-DMA " +
                        dma_text(w, s.issue[d]) +
                        " has not written yet (needs s_waitcnt vmcnt; the emulator gives the old data)");
    } else { // retired: this wave sees its own data
      const uint32_t lo = std::max(addr, 4 * d), hi = std::min(addr + bytes, 4 * d + 4);
      std::memcpy(out + (lo - addr), reinterpret_cast<const uint8_t*>(&s.value[d]) + (lo - 4 * d), hi - lo);
    }
  }
}

void lds_dma_observe_write(Wave& w, uint32_t addr, uint32_t bytes) {
  LdsDmaShadow& s = w.wg->dma;
  const uint32_t me = w.index;
  for (uint32_t d = addr / 4; d <= (addr + bytes - 1) / 4; ++d) {
    if (s.state[d] == kNone)
      continue;
    if (s.wave[d] != me) {
      w.ctx->report(w, HazardKind::race,
                    "writes LDS " + hex_addr(4ull * d) + " that wave " + std::to_string(s.wave[d]) +
                        "'s LDS-DMA " + dma_text(w, s.issue[d]) + " also writes with no s_barrier between");
    } else if (s.state[d] == kRetired) { // program order: this write comes after the wave's own data
      std::memcpy(w.wg->lds.data() + 4ull * d, &s.value[d], 4);
      s.state[d] = kNone;
    }
  }
}

} // namespace isatune::emu

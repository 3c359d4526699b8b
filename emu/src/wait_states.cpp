// Wait-state rules (shared/notes/cdna.md section 6): for each instruction, the producers issued in the last
// 20 wait states are checked against it. s_nop N counts N+1 wait states, every other instruction one.
#include <string>

#include "checks.h"
#include "context.h"

namespace isatune::emu {

namespace {

using cdna::Gfx;

bool overlaps_any(const std::vector<RegRange>& v, const RegRange& r) {
  for (const auto& x : v)
    if (x.overlaps(r)) return true;
  return false;
}
bool overlaps_any(const std::vector<RegRange>& a, const std::vector<RegRange>& b) {
  for (const auto& x : b)
    if (overlaps_any(a, x)) return true;
  return false;
}
bool is_valu(const Inst& i) { return i.cat == Cat::valu || i.cat == Cat::trans; }
bool is_mem(const Inst& i) {
  return i.cat == Cat::vmem_load || i.cat == Cat::vmem_store || i.cat == Cat::flat_load ||
         i.cat == Cat::flat_store || i.cat == Cat::ds;
}
bool is_vmem(const Inst& i) {
  return i.cat == Cat::vmem_load || i.cat == Cat::vmem_store || i.cat == Cat::flat_load || i.cat == Cat::flat_store;
}
// XDL D -> SrcA/B, VALU read, WAW, memory read.
int xdl_read_ws(Gfx g, int n) {
  if (g == Gfx::gfx950) return n == 2 ? n + 3 : n + 4;
  return n + 3;
}

struct Need {
  int ws = 0;
  const char* rule = "";
};

Need required(Gfx g, const Inst& p, const Inst& c) {
  Need need;
  auto want = [&](int ws, const char* rule) {
    if (ws > need.ws) need = {ws, rule};
  };
  const bool post90a = g != Gfx::gfx90a;
  if (p.cat == Cat::mfma && p.passes) {
    const int n = p.passes;
    auto d = p.writes.empty() ? RegRange{} : p.writes[0];
    if (p.xdl) {
      if (c.cat == Cat::mfma) {
        if (d.overlaps(c.mfma_a) || d.overlaps(c.mfma_b)) want(xdl_read_ws(g, n), "XDL MFMA result read as SrcA/B");
        if (d.overlaps(c.mfma_c)) {
          if (d.same(c.mfma_c)) {
            if (post90a && n == 2) want(2, "2-pass XDL MFMA result read as SrcC");
          } else if (!c.xdl) {
            want(g == Gfx::gfx950 && n != 2 ? n + 2 : n + 1, "XDL MFMA result read as overlapping SrcC");
          } else {
            want(g == Gfx::gfx90a ? n : g == Gfx::gfx942 ? n + 1 : n + 2, "XDL MFMA result read as overlapping SrcC");
          }
        }
      } else if (is_valu(c) || is_mem(c)) {
        if (overlaps_any(c.reads, d)) want(xdl_read_ws(g, n), "XDL MFMA result read by VALU/memory");
        if (overlaps_any(c.writes, d)) want(xdl_read_ws(g, n), "XDL MFMA result overwritten (WAW)");
        if (p.mfma_c.count && overlaps_any(c.writes, p.mfma_c) && !overlaps_any(c.writes, d))
          want(n - 1, "register read as XDL MFMA SrcC overwritten (WAR)");
      }
    } else { // SMFMA (f32 inputs) on gfx942/gfx950
      if (c.cat == Cat::mfma) {
        if (d.overlaps(c.mfma_a) || d.overlaps(c.mfma_b)) want(n + 2, "SMFMA result read as SrcA/B");
        if (d.overlaps(c.mfma_c) && !c.xdl && !d.same(c.mfma_c)) want(n, "SMFMA result read as overlapping SrcC");
      } else if (is_valu(c) || is_mem(c)) {
        if (overlaps_any(c.reads, d)) want(n + 2, "SMFMA result read by VALU/memory");
        if (overlaps_any(c.writes, d)) want(n + 2, "SMFMA result overwritten (WAW)");
      }
    }
    return need;
  }
  if (is_valu(p)) {
    const auto& vw = p.vwrites;
    const auto& sw = p.swrites;
    if (c.cat == Cat::mfma && !p.dot) {
      std::vector<RegRange> mr{c.mfma_a, c.mfma_b, c.mfma_c};
      if (overlaps_any(mr, vw)) want(2, "VALU write of a VGPR read by MFMA");
    }
    if (c.cat == Cat::mfma && p.writes_exec_valu) want(4, "VALU write of EXEC before MFMA");
    if (p.dot && (is_valu(c) || c.cat == Cat::mfma) && (overlaps_any(c.reads, vw) || overlaps_any(c.writes, vw)))
      want(3, "v_dot result used");
    if (c.dpp && c.nsrc > 0 && c.src[0].kind == OpKind::vgpr) {
      RegRange s0{uint16_t(kVgprBase + c.src[0].reg), c.src[0].width};
      if (overlaps_any(vw, s0)) want(2, "VGPR written then read by DPP");
    }
    if (c.dpp && p.writes_exec_valu) want(5, "VALU write of EXEC before DPP");
    if (c.lane_op && post90a) {
      if (c.nsrc > 0 && c.src[0].kind == OpKind::vgpr && c.name != "V_WRITELANE_B32") {
        RegRange s0{uint16_t(kVgprBase + c.src[0].reg), 1};
        if (overlaps_any(vw, s0)) want(1, "VALU write of a VGPR read by v_readlane/v_readfirstlane");
      }
      if (p.writes_exec_valu) want(4, "VALU write of EXEC before a lane access");
    }
    if (c.lane_op && c.nsrc > 1 && c.src[1].kind == OpKind::sgpr) {
      RegRange sel{c.src[1].reg, 1};
      if (overlaps_any(sw, sel)) want(4, "VALU write of the SGPR used as lane select");
    }
    if (is_vmem(c) && !sw.empty()) {
      for (int i = 0; i < c.nsrc; ++i)
        if (c.src[i].kind == OpKind::sgpr && overlaps_any(sw, RegRange{c.src[i].reg, c.src[i].width}))
          want(5, "VALU write of an SGPR used by a VMEM instruction");
    }
    if (post90a && is_valu(c) && !sw.empty() && overlaps_any(sw, c.reads))
      want(2, "VALU write of an SGPR/VCC read by VALU");
    // gfx940+: a VALU result written into part of a VGPR (the fp8 packs with op_sel dst-hi, SDWA dst_sel not
    // DWORD; LLVM's getDstSelForwardingOperand) read by the next VALU needs 1 wait state
    // (GCNHazardRecognizer, Shift16DefWaitstates; shared/notes/cdna.md section 6).
    const bool fp8_hi = (p.name == "V_CVT_PK_FP8_F32" || p.name == "V_CVT_PK_BF8_F32" ||
                         p.name == "V_CVT_SCALEF32_PK_FP4_F32") &&
                        (p.src[0].mods & 8);
    const bool sdwa_part = p.sdwa && p.nimm >= 5 && p.imm[p.nsrc >= 2 ? 1 : 2] != 6; // dst_sel != DWORD
    if (post90a && is_valu(c) && (fp8_hi || sdwa_part) && overlaps_any(c.reads, vw))
      want(1, "VALU write of part of a VGPR (op_sel / SDWA dst_sel) read by VALU");
    if (post90a && p.cat == Cat::trans && is_valu(c) && c.cat != Cat::trans && overlaps_any(c.reads, vw))
      want(1, "transcendental result read by a non-transcendental VALU");
    return need;
  }
  if ((p.cat == Cat::vmem_store || p.cat == Cat::flat_store) && p.store_data.count > 2 && is_valu(c)) {
    bool mubuf_sgpr_offset = p.name.starts_with("BUFFER_") && p.nsrc > 3 && p.src[3].kind == OpKind::sgpr;
    if (!mubuf_sgpr_offset && overlaps_any(c.writes, p.store_data))
      want(post90a ? 2 : 1, "store data (more than 8 bytes) overwritten by VALU");
  }
  return need;
}

} // namespace

void check_wait_states(Wave& w, const Inst& in) {
  const uint64_t now = w.ws_clock;
  for (uint32_t k = 1; k <= w.history.size(); ++k) {
    const IssueRecord& r = w.history[(w.history_pos - k) & (w.history.size() - 1)];
    if (!r.inst) break;
    uint64_t distance = now - r.stamp - 1; // instructions (wait states) between producer and consumer
    if (distance >= 20) break;
    Need need = required(w.ctx->gfx, *r.inst, in);
    if (need.ws > 0 && distance < uint64_t(need.ws)) {
      w.ctx->report(w, HazardKind::wait_states,
                    std::string(need.rule) + ": needs " + std::to_string(need.ws) + " wait states after " +
                        hex_addr(r.inst->addr) + " '" + r.inst->text + "', has " + std::to_string(distance));
      return;
    }
  }
}

void record_issue(Wave& w, const Inst& in) {
  uint64_t slots = 1;
  if (in.cat == Cat::nop) slots = uint64_t(in.imm[0] & 0xf) + 1;
  // Instructions that no rule names as producer need not be remembered, but they count as wait states.
  bool producer = in.cat == Cat::mfma || in.cat == Cat::valu || in.cat == Cat::trans ||
                  in.cat == Cat::vmem_store || in.cat == Cat::flat_store;
  if (producer) {
    w.history[w.history_pos & (w.history.size() - 1)] = {&in, w.ws_clock};
    ++w.history_pos;
  }
  w.ws_clock += slots;
}

} // namespace isatune::emu

// Wait-state rules of shared/notes/cdna.md section 6, one producer against one consumer. Where the notes and
// the emulator (emu/src/wait_states.cpp) differ, the larger count wins: the hardware needs what the notes say
// and the emulator must find nothing to report.
#include "wait_state_rules.h"
#include "lds_dma_form.h"

#include <algorithm>
#include <stdexcept>

namespace isatune::cdna::detail {

Units units_of(const Reg& r) {
  switch (r.file) {
  case RegFile::sgpr:
    return {r.index, r.count};
  case RegFile::vgpr:
    return {static_cast<uint16_t>(128 + r.index), r.count};
  case RegFile::agpr:
    return {static_cast<uint16_t>(384 + r.index), r.count};
  case RegFile::special:
    break;
  }
  // vcc_lo, vcc_hi, exec_lo, exec_hi, m0, scc; vcc and exec are 2-dword ranges starting at their low half.
  static const uint16_t first[] = {106, 107, 126, 127, 124, 640};
  return {first[r.index < 6 ? r.index : 5], r.count};
}

bool is_valu_like(const Instruction& i) {
  switch (i.category()) {
  case Category::valu:
  case Category::trans:
  case Category::dot:
  case Category::dpp:
  case Category::lane:
  case Category::accvgpr:
    return true;
  default:
    return false;
  }
}

void UnitList::add(const Reg& r) {
  if (n_ == items_.size())
    throw std::logic_error("wait_state_rules: more register operands than any form has");
  items_[n_++] = units_of(r);
}

bool UnitList::overlaps(const Units& u) const {
  for (const Units& x : *this)
    if (x.overlaps(u))
      return true;
  return false;
}

bool UnitList::overlaps(const UnitList& o) const {
  for (const Units& x : o)
    if (overlaps(x))
      return true;
  return false;
}

View view_of(const Instruction& i) {
  View v;
  v.inst = &i;
  for (const auto& r : i.uses()) {
    v.uses.add(r);
    if (!r.overlaps(exec()))
      v.reads.add(r);
  }
  for (const auto& r : i.defs()) {
    v.writes.add(r);
    v.has_defs = true;
    if (r.file == RegFile::vgpr || r.file == RegFile::agpr)
      v.vwrites.add(r);
    else if (r.overlaps(exec()))
      v.writes_exec = true;
    else if (r != scc())
      v.swrites.add(r);
  }
  return v;
}

namespace {

bool is_mem(const Instruction& i) {
  auto c = i.category();
  return c == Category::vmem_load || c == Category::vmem_store || c == Category::ds;
}
bool is_vmem(const Instruction& i) {
  return i.category() == Category::vmem_load || i.category() == Category::vmem_store;
}

const Reg* reg_operand(const Instruction& i, size_t n) {
  return n < i.operands().size() && i.operands()[n].is_reg() ? &i.operands()[n].reg : nullptr;
}

// XDL result read (SrcA/B, VALU, memory) and WAW: gfx90a/gfx942 N+3; gfx950 N+3 for 2 passes, else N+4.
int xdl_read(Gfx g, int n) {
  return g == Gfx::gfx950 && n != 2 ? n + 4 : n + 3;
}

int mfma_rules(Gfx g, const Instruction& p, const Instruction& c, const View& cv) {
  int need = 0;
  auto want = [&](int ws) { need = std::max(need, ws); };
  const int n = static_cast<int>(p.mfma_passes());
  const bool f64 = p.form().mfma_class == MfmaClass::f64;
  // The emulator counts f64 MFMAs as XDL on every target; the notes give them their own (DGEMM) rows.
  const bool xdl = p.is_xdl() || f64;
  const Reg d = p.operands()[0].reg;
  const Reg* srcc = reg_operand(p, 3);
  const Units du = units_of(d);
  if (c.category() == Category::mfma) {
    const Reg* a = reg_operand(c, 1);
    const Reg* b = reg_operand(c, 2);
    const Reg* cc = reg_operand(c, 3);
    bool ab = (a && units_of(*a).overlaps(du)) || (b && units_of(*b).overlaps(du));
    const bool c_xdl = c.is_xdl() || c.form().mfma_class == MfmaClass::f64;
    if (xdl) {
      if (ab)
        want(xdl_read(g, n));
      if (cc && units_of(*cc).overlaps(du)) {
        if (*cc == d) {
          if (g != Gfx::gfx90a && n == 2)
            want(2);
        } else {
          if (!c.is_xdl()) // DGEMM/SMFMA SrcC (notes), and the emulator's non-XDL row
            want(g == Gfx::gfx950 && n != 2 ? n + 2 : n + 1);
          if (c_xdl)
            want(g == Gfx::gfx90a ? n : g == Gfx::gfx942 ? n + 1 : n + 2);
          if (f64) // DGEMM 16x16x4 D -> overlapping SrcC
            want(g == Gfx::gfx950 ? 17 : 9);
        }
      }
    } else { // SMFMA (f32 inputs) on gfx942/gfx950
      if (ab)
        want(n + 2);
      if (cc && units_of(*cc).overlaps(du)) {
        if (*cc == d) {
          if (n == 2)
            want(2);
        } else if (!c.is_xdl()) {
          want(n);
        }
      }
    }
    return need;
  }
  if (is_valu_like(c) || is_mem(c)) {
    const int read = xdl ? xdl_read(g, n) : n + 2;
    if (cv.reads.overlaps(du))
      want(read);
    if (f64 && is_mem(c) && cv.reads.overlaps(du))
      want(18); // DGEMM 16x16x4 D -> VMEM/DS read
    if (cv.writes.overlaps(du))
      want(read); // WAW
    if (srcc && cv.writes.overlaps(units_of(*srcc)))
      want(n - 1); // WAR: the MFMA reads SrcC over its passes
  }
  return need;
}

int valu_rules(Gfx g, const Instruction& p, const Instruction& c, const View& pv, const View& cv) {
  int need = 0;
  auto want = [&](int ws) { need = std::max(need, ws); };
  const bool post90a = g != Gfx::gfx90a;
  const bool dot = p.category() == Category::dot;
  if (c.category() == Category::mfma) {
    UnitList srcs;
    for (size_t i = 1; i <= 3; ++i)
      if (const Reg* r = reg_operand(c, i))
        srcs.add(*r);
    if (!dot && pv.vwrites.overlaps(srcs))
      want(2);
    if (pv.writes_exec)
      want(4);
  }
  if (dot && (is_valu_like(c) || c.category() == Category::mfma) &&
      (pv.vwrites.overlaps(cv.reads) || pv.vwrites.overlaps(cv.writes)))
    want(3);
  if (c.category() == Category::dpp && pv.writes_exec)
    want(5);
  if (c.category() == Category::lane) {
    const bool writelane = c.form().name == "v_writelane_b32";
    if (post90a) {
      const Reg* src0 = reg_operand(c, 1);
      if (!writelane && src0 && pv.vwrites.overlaps(units_of(*src0)))
        want(1);
      if (pv.writes_exec)
        want(4);
    }
    const Reg* sel = c.form().name == "v_readfirstlane_b32" ? nullptr : reg_operand(c, 2);
    if (sel && pv.swrites.overlaps(units_of(*sel)))
      want(4);
  }
  if (is_vmem(c) && pv.swrites.overlaps(cv.reads))
    want(5); // saddr, V#, soffset
  if (post90a && is_valu_like(c) && pv.swrites.overlaps(cv.reads))
    want(2);
  if (post90a && p.category() == Category::trans && is_valu_like(c) && c.category() != Category::trans &&
      pv.vwrites.overlaps(cv.reads))
    want(1);
  // fp8 conversions write a byte/word select of vdst (dst-sel hazard).
  if (post90a && (p.form().name == "v_cvt_pk_fp8_f32" || p.form().name == "v_cvt_pk_bf8_f32") &&
      is_valu_like(c) && (pv.vwrites.overlaps(cv.reads) || pv.vwrites.overlaps(cv.writes)))
    want(1);
  return need;
}

// Stores of more than 8 bytes read their data late: a VALU must not overwrite it at once. MUBUF is exempt
// when soffset is an SGPR; the emulator only exempts it when vaddr is not `off` as well, so we do the same.
int store_rules(Gfx g, const Instruction& p, const Instruction& c, const View& cv) {
  if (!is_valu_like(c))
    return 0;
  const bool buffer = p.form().encoding == Encoding::mubuf;
  const Reg* data = reg_operand(p, buffer ? 0 : 1);
  if (!data || data->count <= 2)
    return 0;
  if (buffer) {
    const Reg* soffset = reg_operand(p, 3);
    const bool vaddr_off = p.operands()[1].kind == Operand::Kind::off;
    if (soffset && soffset->file == RegFile::sgpr && !vaddr_off)
      return 0;
  }
  return cv.writes.overlaps(units_of(*data)) ? (g == Gfx::gfx90a ? 1 : 2) : 0;
}

} // namespace

int wait_states_needed(const View& pv, const View& cv) {
  const Instruction& p = *pv.inst;
  const Instruction& c = *cv.inst;
  const Gfx g = p.target();
  int need = 0;
  if (p.category() == Category::mfma && p.mfma_passes())
    return mfma_rules(g, p, c, cv);
  // Any write of a VGPR, then a DPP instruction reading it: 2 (VALU results and memory loads alike).
  if (c.category() == Category::dpp && pv.vwrites.overlaps(cv.reads))
    need = 2;
  if (is_valu_like(p))
    need = std::max(need, valu_rules(g, p, c, pv, cv));
  if (p.category() == Category::vmem_store)
    need = std::max(need, store_rules(g, p, c, cv));
  // SALU writes M0, then an LDS-DMA load (which reads it for the LDS address): 1 (notes section 6).
  if (is_lds_dma(c.form()) && pv.swrites.overlaps(units_of(m0())))
    need = std::max(need, 1);
  return need;
}

} // namespace isatune::cdna::detail

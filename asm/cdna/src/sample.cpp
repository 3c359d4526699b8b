#include "isatune/cdna/sample.h"

#include <algorithm>

#include "isatune/error.h"
#include "lds_dma_form.h"

namespace isatune::cdna {

std::vector<Instruction> sample_instructions(const Form& form, Gfx gfx, Label target) {
  // Registers: sources and destinations get distinct, aligned ranges.
  uint16_t next[3] = {4, 2, 0}; // sgpr (s0..s3 hold entry values), vgpr (v0, v1 left alone), agpr
  auto take = [&](RegFile f, uint8_t w) {
    uint16_t& n = next[static_cast<int>(f)];
    uint16_t al = required_alignment(f, w);
    n = static_cast<uint16_t>((n + al - 1) / al * al);
    Reg r{f, n, w};
    n = static_cast<uint16_t>(n + w);
    return r;
  };
  const bool mubuf = form.encoding == Encoding::mubuf;
  std::vector<Operand> base;
  for (const auto& slot : form.slots) {
    uint8_t w = slot.width;
    if ((slot.kinds & k_simm) && form.category == Category::lane)
      base.push_back(3); // a constant lane keeps the SGPR budget for the data
    else if (slot.kinds & k_vgpr)
      base.push_back(take(RegFile::vgpr, w));
    else if (slot.kinds & k_agpr)
      base.push_back(take(RegFile::agpr, w));
    else if (slot.kinds & k_sgpr)
      base.push_back(take(RegFile::sgpr, w));
    else if (slot.kinds & k_vcc)
      base.push_back(vcc());
    else if (slot.kinds & k_label)
      base.push_back(target);
    else if (slot.kinds & k_simm)
      base.push_back(static_cast<int>(std::min<int64_t>(form.simm_max, 3)));
    else if (slot.kinds & k_inline)
      base.push_back(1);
    else
      base.push_back(off);
  }
  std::vector<Instruction> out;
  Modifiers plain;
  if (form.modifiers & m_dpp)
    plain.dpp = DppControl::quad_perm(1, 0, 3, 2);
  if (mubuf)
    plain.offen = true;
  out.emplace_back(gfx, form, base, plain); // must be valid
  // Variants that break a rule of the form (constant bus: an SGPR or literal next to vcc) are left out.
  auto add = [&](std::vector<Operand> ops, Modifiers m) {
    try {
      out.emplace_back(gfx, form, std::move(ops), std::move(m));
    } catch (const InputError&) {
    }
  };

  // Operand kinds: a constant in the first source that takes one; an SGPR where a register-first slot takes
  // one.
  for (size_t i = 0; i < form.slots.size(); ++i) {
    const Slot& s = form.slots[i];
    if (s.role == Role::def || !base[i].is_reg())
      continue;
    auto ops = base;
    if (s.kinds & k_literal) {
      ops[i] = 0x12345;
      add(ops, plain);
      ops[i] = 1.0;
      add(ops, plain);
      ops[i] = -7;
      add(ops, plain);
    } else if (s.kinds & k_simm) {
      ops[i] = form.encoding == Encoding::smem ? 0x10 : static_cast<int>(std::min<int64_t>(form.simm_max, 5));
      add(ops, plain);
    } else if (s.kinds & k_inline) {
      ops[i] = s.width == 1 ? Operand(0.5) : Operand(2);
      add(ops, plain);
      if (form.encoding == Encoding::mfma) {
        ops[i] = 0;
        add(ops, plain);
      }
    }
    if ((s.kinds & k_sgpr) && base[i].reg.file != RegFile::sgpr && form.encoding != Encoding::mfma) {
      ops = base;
      ops[i] = Reg{RegFile::sgpr, static_cast<uint16_t>(40), s.width};
      add(ops, plain);
      break; // one SGPR source at a time (constant bus)
    }
  }
  // AGPR data / results where allowed.
  {
    auto ops = base;
    bool changed = false;
    for (size_t i = 0; i < form.slots.size(); ++i)
      if ((form.slots[i].kinds & k_agpr) && ops[i].is_reg() && ops[i].reg.file == RegFile::vgpr) {
        ops[i].reg.file = RegFile::agpr;
        changed = true;
      }
    if (changed)
      add(ops, plain);
  }

  // Modifiers.
  if (form.modifiers & m_offset) {
    Modifiers m = plain;
    m.offset = static_cast<int32_t>(form.simm_max);
    add(base, m);
    if (form.simm_min < 0) {
      m.offset = -16;
      add(base, m);
    }
  }
  if (form.modifiers & m_cache) {
    Modifiers m = plain;
    if (gfx == Gfx::gfx90a)
      m.glc = m.slc = true;
    else
      m.sc0 = m.sc1 = m.nt = true;
    add(base, m);
    Modifiers m1 = plain;
    (gfx == Gfx::gfx90a ? m1.glc : m1.sc1) = true;
    add(base, m1);
  }
  if (form.encoding == Encoding::global) {
    auto ops = base;
    size_t va = form.category == Category::vmem_store ? 0 : 1;
    ops[va] = take(RegFile::vgpr, 2);
    ops.back() = off;
    Modifiers m;
    m.offset = -16;
    add(ops, m);
  }
  if (mubuf) {
    const size_t va = detail::is_lds_dma(form) ? 0 : 1; // LDS-DMA loads have no vdata
    Modifiers m;
    m.idxen = true;
    add(base, m);
    auto ops = base;
    ops[va] = off;
    ops[va + 2] = 0;
    Modifiers none;
    none.offset = 12;
    add(ops, none);
    ops = base;
    ops[va] = take(RegFile::vgpr, 2);
    Modifiers both;
    both.idxen = both.offen = true;
    add(ops, both);
  }
  if (form.modifiers & m_offset01) {
    Modifiers m;
    m.offset0 = 1;
    m.offset1 = 255;
    add(base, m);
    m.offset0 = 0;
    m.offset1 = 2;
    add(base, m);
  }
  if (form.modifiers & m_swizzle)
    for (uint16_t sw :
         {0x401f, 0x041f, 0x801b, 0x7c1f /*reverse 32*/, 0x0018 /*broadcast 8,0*/, 0x0030, 0x1234}) {
      Modifiers m;
      m.swizzle = sw;
      add(base, m);
    }
  if (form.modifiers & m_op_sel) {
    size_t n = 0;
    for (const auto& s : form.slots)
      n += s.role == Role::use;
    Modifiers m;
    m.op_sel.assign(n, 0);
    m.op_sel_hi.assign(n, 1);
    m.op_sel[1] = 1;
    m.op_sel_hi[1] = 0;
    add(base, m);
    Modifiers h;
    h.op_sel.assign(n, 1);
    add(base, h);
  }
  if (form.modifiers & m_dpp) {
    using D = DppControl;
    struct V {
      DppControl c;
      uint8_t rm, bm;
      bool bc;
    };
    const V vs[] = {{D::row_shr(1), 0xf, 0xf, true},     {D::row_shl(15), 0xf, 0x5, false},
                    {D::row_ror(4), 0x3, 0xf, false},    {D::row_bcast15(), 0xa, 0xf, false},
                    {D::row_bcast31(), 0xc, 0xf, false}, {D::row_newbcast(1), 0xf, 0xf, false},
                    {D::row_mirror(), 0xf, 0xf, false},  {D::row_half_mirror(), 0xf, 0xf, false},
                    {D::wave_shr(), 0xf, 0xf, false},    {D::wave_rol(), 0xf, 0xf, false},
                    {D::wave_shl(), 0xf, 0xf, false},    {D::wave_ror(), 0xf, 0xf, false}};
    for (const auto& v : vs) {
      Modifiers m;
      m.dpp = v.c;
      m.row_mask = v.rm;
      m.bank_mask = v.bm;
      m.bound_ctrl = v.bc;
      add(base, m);
    }
  }
  if (form.modifiers & m_mfma) {
    Modifiers m;
    m.cbsz = 1;
    m.abid = 1;
    m.blgp = 2;
    add(base, m);
    Modifiers b;
    b.blgp = 7;
    add(base, b);
  }
  if (form.modifiers & m_waitcnt) {
    auto w = [&](std::optional<uint8_t> vm, std::optional<uint8_t> e, std::optional<uint8_t> l) {
      Modifiers m;
      m.vmcnt = vm;
      m.expcnt = e;
      m.lgkmcnt = l;
      add(base, m);
    };
    w(0, std::nullopt, 0);
    w(3, std::nullopt, std::nullopt);
    w(std::nullopt, std::nullopt, 0);
    w(62, std::nullopt, 14);
    w(0, 0, 0);
    w(std::nullopt, std::nullopt, std::nullopt);
  }
  return out;
}

} // namespace isatune::cdna

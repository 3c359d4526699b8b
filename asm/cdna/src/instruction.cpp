#include "isatune/cdna/instruction.h"

#include <cmath>
#include <cstring>
#include <set>

#include "isatune/error.h"

namespace isatune::cdna {

bool is_inline_int(int64_t v) {
  return v >= -16 && v <= 64;
}

bool is_inline_float(double v) {
  static const double ok[] = {0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0};
  for (double o : ok)
    if (v == o)
      return true;
  return std::fabs(v - 0.15915494309189535) < 1e-9;
}

static std::string target_names(const Form& f) {
  std::string s;
  for (const auto& t : all_targets())
    if (f.available_on(t.gfx))
      s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

static std::string gfx_name(Gfx g) {
  return std::string(all_targets()[static_cast<int>(g)].name);
}

static std::string kinds_text(uint16_t k) {
  std::string s;
  auto add = [&](uint16_t bit, const char* n) {
    if (k & bit)
      s += (s.empty() ? "" : "|") + std::string(n);
  };
  add(k_sgpr, "sgpr");
  add(k_vgpr, "vgpr");
  add(k_agpr, "agpr");
  add(k_vcc, "vcc");
  add(k_inline, "inline constant");
  add(k_literal, "literal");
  add(k_label, "label");
  add(k_off, "off");
  add(k_simm, "immediate");
  return s;
}

static uint8_t slot_width(const Form& f, size_t i, const std::vector<Operand>& ops, const Modifiers& m) {
  const Slot& s = f.slots[i];
  if (f.encoding == Encoding::global && s.name == "vaddr" && ops.size() == f.slots.size() &&
      ops.back().kind == Operand::Kind::off)
    return 2;
  if (f.encoding == Encoding::mubuf && s.name == "vaddr" && m.offen && m.idxen)
    return 2;
  return s.width;
}

Instruction::Instruction(Gfx target, const Form& form, std::vector<Operand> operands, Modifiers modifiers)
    : target_(target), form_(&form), operands_(std::move(operands)), modifiers_(std::move(modifiers)) {
  const std::string what = std::string(form.name) + " on " + gfx_name(target);
  if (!form.available_on(target))
    throw InputError(std::string(form.name) + " is not available on " + gfx_name(target) + " (it is on " +
                     target_names(form) + ")");
  if (operands_.size() != form.slots.size())
    throw InputError(what + " takes " + std::to_string(form.slots.size()) + " operands, got " +
                     std::to_string(operands_.size()));
  const Modifiers& m = modifiers_;
  const bool vop3_like = form.encoding == Encoding::vop3 || form.encoding == Encoding::vop3p ||
                         form.encoding == Encoding::vopc_e64 || form.encoding == Encoding::mfma;
  std::set<int64_t> literals;
  for (size_t i = 0; i < operands_.size(); ++i) {
    const Operand& op = operands_[i];
    const Slot& slot = form.slots[i];
    const std::string where = what + ", operand " + std::to_string(i) + " (" + std::string(slot.name) + ")";
    const std::string expected = " (expected " + kinds_text(slot.kinds) + ")";
    switch (op.kind) {
    case Operand::Kind::reg: {
      const Reg& r = op.reg;
      bool ok = false;
      if (r.file == RegFile::sgpr)
        ok = slot.kinds & k_sgpr;
      if (r.file == RegFile::vgpr)
        ok = slot.kinds & k_vgpr;
      if (r.file == RegFile::agpr)
        ok = slot.kinds & k_agpr;
      if (r.file == RegFile::special) {
        bool is_vcc = r == vcc();
        ok = (slot.kinds & k_vcc) ? is_vcc : ((slot.kinds & k_sgpr) && r != scc());
      }
      if (!ok)
        throw InputError(where + ": " + to_string(r) + " is not allowed" + expected);
      check_alignment(r);
      uint8_t w = slot_width(form, i, operands_, m);
      if (r.count != w)
        throw InputError(where + ": " + to_string(r) + " has " + std::to_string(r.count) +
                         " dwords, expected " + std::to_string(w));
      break;
    }
    case Operand::Kind::imm:
      if (slot.kinds & k_simm) {
        if (op.imm < form.simm_min || op.imm > form.simm_max)
          throw InputError(where + ": " + std::to_string(op.imm) + " is out of range " +
                           std::to_string(form.simm_min) + ".." + std::to_string(form.simm_max));
      } else if ((slot.kinds & k_inline) && is_inline_int(op.imm)) {
      } else if (slot.kinds & k_literal) {
        if (op.imm < INT32_MIN || op.imm > UINT32_MAX)
          throw InputError(where + ": " + std::to_string(op.imm) + " does not fit in 32 bits");
        literals.insert(op.imm & 0xffffffff);
      } else if (slot.kinds & k_inline) {
        throw InputError(where + ": " + std::to_string(op.imm) + " is not an inline constant (-16..64) and " +
                         (vop3_like ? "VOP3/VOP3P/MFMA instructions take no 32-bit literal on CDNA"
                                    : "this operand takes no literal") +
                         "; put it in a register");
      } else {
        throw InputError(where + ": an immediate is not allowed" + expected);
      }
      break;
    case Operand::Kind::fimm:
      if ((slot.kinds & k_inline) && is_inline_float(op.fimm)) {
      } else if (slot.kinds & k_literal) {
        float f = static_cast<float>(op.fimm);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        literals.insert(bits);
      } else {
        throw InputError(
            where + ": float " + std::to_string(op.fimm) + " is not an inline constant" +
            (vop3_like ? " and VOP3/VOP3P/MFMA instructions take no 32-bit literal on CDNA" : "") + expected);
      }
      break;
    case Operand::Kind::label:
      if (!(slot.kinds & k_label))
        throw InputError(where + ": a label is not allowed" + expected);
      if (!op.label.valid())
        throw InputError(where + ": label was not created by the builder");
      break;
    case Operand::Kind::off:
      if (!(slot.kinds & k_off))
        throw InputError(where + ": `off` is not allowed" + expected);
      break;
    }
  }
  if (literals.size() > 1)
    throw InputError(what + ": at most one distinct 32-bit literal per instruction");

  // Constant bus: GFX9 VALU instructions read at most one SGPR (or literal) per instruction.
  const bool valu = form.encoding == Encoding::vop1 || form.encoding == Encoding::vop2 ||
                    form.encoding == Encoding::vop3 || form.encoding == Encoding::vop3p ||
                    form.encoding == Encoding::vopc || form.encoding == Encoding::vopc_e64;
  if (valu) {
    std::vector<Reg> scalars;
    for (size_t i = 0; i < operands_.size(); ++i) {
      if (form.slots[i].role == Role::def || !operands_[i].is_reg() || !operands_[i].reg.is_scalar())
        continue;
      bool seen = false;
      for (const auto& r : scalars)
        seen = seen || r == operands_[i].reg;
      if (!seen)
        scalars.push_back(operands_[i].reg);
    }
    if (scalars.size() + literals.size() > 1)
      throw InputError(what + ": reads " + std::to_string(scalars.size()) + " SGPRs and " +
                       std::to_string(literals.size()) +
                       " literals; CDNA VALU instructions read at most one (constant bus limit)");
  }

  // Modifiers
  auto need = [&](uint32_t bit, bool used, const char* name) {
    if (used && !(form.modifiers & bit))
      throw InputError(what + ": does not take the " + std::string(name) + " modifier");
  };
  need(m_offset, m.offset.has_value(), "offset");
  need(m_offset01, m.offset0.has_value() || m.offset1.has_value(), "offset0/offset1");
  need(m_swizzle, m.swizzle.has_value(), "swizzle");
  need(m_cache, m.glc || m.slc || m.sc0 || m.sc1 || m.nt, "cache policy");
  need(m_offen_idxen, m.offen || m.idxen, "offen/idxen");
  need(m_op_sel, !m.op_sel.empty() || !m.op_sel_hi.empty(), "op_sel");
  need(m_dpp, m.dpp.has_value() || m.row_mask != 0xf || m.bank_mask != 0xf || m.bound_ctrl, "DPP");
  need(m_mfma, m.cbsz || m.abid || m.blgp, "cbsz/abid/blgp");
  need(m_waitcnt, m.vmcnt || m.expcnt || m.lgkmcnt, "waitcnt");
  if (m.offset && (*m.offset < form.simm_min || *m.offset > form.simm_max))
    throw InputError(what + ": offset " + std::to_string(*m.offset) + " is out of range " +
                     std::to_string(form.simm_min) + ".." + std::to_string(form.simm_max) +
                     (form.encoding == Encoding::mubuf ? " (LLVM would silently truncate it)" : ""));
  if (target == Gfx::gfx90a && (m.sc0 || m.sc1 || m.nt))
    throw InputError(what + ": sc0/sc1/nt are gfx942/gfx950 cache bits; gfx90a uses glc/slc");
  if (target != Gfx::gfx90a && (m.glc || m.slc))
    throw InputError(what + ": glc/slc are gfx90a cache bits; gfx942/gfx950 use sc0/sc1/nt");
  if (form.encoding == Encoding::mubuf) {
    bool vaddr_off = operands_[1].kind == Operand::Kind::off;
    if (vaddr_off != !(m.offen || m.idxen))
      throw InputError(what + ": vaddr must be `off` exactly when neither offen nor idxen is set");
  }
  if (form.modifiers & m_op_sel) {
    size_t nsrc = 0;
    for (const auto& s : form.slots)
      nsrc += s.role == Role::use;
    for (const auto* v : {&m.op_sel, &m.op_sel_hi}) {
      if (!v->empty() && v->size() != nsrc)
        throw InputError(what + ": op_sel/op_sel_hi need " + std::to_string(nsrc) + " entries");
      for (auto b : *v)
        if (b > 1)
          throw InputError(what + ": op_sel entries are 0 or 1");
    }
  }
  if (form.modifiers & m_dpp) {
    if (!m.dpp)
      throw InputError(what + ": a DPP form needs a DPP control");
    if (m.row_mask > 15 || m.bank_mask > 15)
      throw InputError(what + ": row_mask/bank_mask are 4-bit");
    using K = DppControl::Kind;
    auto k = m.dpp->kind;
    if ((k == K::row_shl || k == K::row_shr || k == K::row_ror || k == K::row_newbcast) &&
        (m.dpp->amount < 1 || m.dpp->amount > 15))
      throw InputError(what + ": DPP row shift/rotate/broadcast amount must be 1..15");
    if (k == K::quad_perm)
      for (auto q : m.dpp->quad)
        if (q > 3)
          throw InputError(what + ": quad_perm lanes are 0..3");
  }
  if (m.cbsz > 7 || m.abid > 15 || m.blgp > 7)
    throw InputError(what + ": cbsz 0..7, abid 0..15, blgp 0..7");
  if ((m.vmcnt && *m.vmcnt > 63) || (m.expcnt && *m.expcnt > 7) || (m.lgkmcnt && *m.lgkmcnt > 15))
    throw InputError(what + ": vmcnt 0..63, expcnt 0..7, lgkmcnt 0..15");
  if (form.encoding == Encoding::mfma && operands_[3].is_reg() &&
      operands_[3].reg.file != operands_[0].reg.file)
    throw InputError(what + ": vdst and src2 (C) must be both VGPRs or both AGPRs");
}

std::vector<Reg> Instruction::defs() const {
  std::vector<Reg> out;
  for (size_t i = 0; i < operands_.size(); ++i)
    if (form_->slots[i].role != Role::use && operands_[i].is_reg())
      out.push_back(operands_[i].reg);
  for (const auto& r : form_->implicit_defs)
    out.push_back(r);
  return out;
}

std::vector<Reg> Instruction::uses() const {
  std::vector<Reg> out;
  for (size_t i = 0; i < operands_.size(); ++i)
    if (form_->slots[i].role != Role::def && operands_[i].is_reg())
      out.push_back(operands_[i].reg);
  for (const auto& r : form_->implicit_uses)
    out.push_back(r);
  if (form_->is_vector()) {
    bool has = false;
    for (const auto& r : out)
      has = has || r.contains(exec());
    if (!has)
      out.push_back(exec());
  }
  return out;
}

uint32_t Instruction::mfma_passes() const {
  return form_->passes[static_cast<int>(target_)];
}

bool Instruction::is_xdl() const {
  switch (form_->mfma_class) {
  case MfmaClass::xdl:
    return true;
  case MfmaClass::f32:
    return target_ == Gfx::gfx90a;
  default:
    return false;
  }
}

Label Instruction::branch_target() const {
  for (const auto& op : operands_)
    if (op.kind == Operand::Kind::label)
      return op.label;
  return {};
}

Instruction make_instruction(Gfx target, std::string_view name, std::vector<Operand> operands,
                             Modifiers modifiers) {
  const Form* f = find_form(name);
  if (!f)
    throw InputError("unknown instruction form '" + std::string(name) + "'");
  return Instruction(target, *f, std::move(operands), std::move(modifiers));
}

} // namespace isatune::cdna

#include "isatune/cdna/printer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "isatune/error.h"
#include "lds_dma_form.h"

namespace isatune::cdna {
namespace {

std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

bool pow2(uint32_t v) {
  return v && !(v & (v - 1));
}

std::string float_text(double v) {
  if (v == 0.0)
    return "0";
  if (std::fabs(v - 0.15915494309189535) < 1e-9)
    return "0.15915494";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string operand_text(const Instruction& inst, size_t i, const std::vector<std::string>& labels) {
  const Operand& op = inst.operands()[i];
  const Slot& slot = inst.form().slots[i];
  switch (op.kind) {
  case Operand::Kind::reg:
    return to_string(op.reg);
  case Operand::Kind::off:
    return "off";
  case Operand::Kind::label:
    return ".L" + (op.label.id < labels.size() ? labels[op.label.id] : std::to_string(op.label.id));
  case Operand::Kind::fimm:
    if (is_inline_float(op.fimm) && (slot.kinds & k_inline))
      return float_text(op.fimm);
    {
      float f = static_cast<float>(op.fimm);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return hex(bits);
    }
  case Operand::Kind::imm:
    if (inst.form().encoding == Encoding::smem || inst.form().encoding == Encoding::sopk)
      return op.imm < 0 ? std::to_string(op.imm) : hex(static_cast<uint64_t>(op.imm));
    if ((slot.kinds & k_simm) || is_inline_int(op.imm))
      return std::to_string(op.imm);
    return hex(static_cast<uint32_t>(op.imm));
  }
  return "?";
}

std::string dpp_text(const DppControl& d) {
  using K = DppControl::Kind;
  switch (d.kind) {
  case K::quad_perm:
    return "quad_perm:[" + std::to_string(d.quad[0]) + "," + std::to_string(d.quad[1]) + "," +
           std::to_string(d.quad[2]) + "," + std::to_string(d.quad[3]) + "]";
  case K::row_shl:
    return "row_shl:" + std::to_string(d.amount);
  case K::row_shr:
    return "row_shr:" + std::to_string(d.amount);
  case K::row_ror:
    return "row_ror:" + std::to_string(d.amount);
  case K::wave_shl:
    return "wave_shl:1";
  case K::wave_rol:
    return "wave_rol:1";
  case K::wave_shr:
    return "wave_shr:1";
  case K::wave_ror:
    return "wave_ror:1";
  case K::row_mirror:
    return "row_mirror";
  case K::row_half_mirror:
    return "row_half_mirror";
  case K::row_bcast15:
    return "row_bcast:15";
  case K::row_bcast31:
    return "row_bcast:31";
  case K::row_newbcast:
    return "row_newbcast:" + std::to_string(d.amount);
  }
  return "";
}

std::string bits_list(const std::vector<uint8_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// A metadata string as a YAML scalar that LLVM keeps a string: `!str "text"`. Throws InputError on a quote,
// backslash or control character, which the metadata has no use for.
std::string yaml_string(const std::string& text, const char* what) {
  for (char c : text)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      throw InputError(std::string(what) + " '" + text + "' has a quote, backslash or control character");
  return "!str \"" + text + "\"";
}

} // namespace

std::string swizzle_text(uint16_t imm) {
  if (imm & 0x8000) {
    std::string s = "swizzle(QUAD_PERM";
    for (int i = 0; i < 4; ++i)
      s += "," + std::to_string((imm >> (2 * i)) & 3);
    return s + ")";
  }
  uint16_t and_mask = imm & 0x1f, or_mask = (imm >> 5) & 0x1f, xor_mask = (imm >> 10) & 0x1f;
  if (and_mask == 0x1f && or_mask == 0 && pow2(xor_mask))
    return "swizzle(SWAP," + std::to_string(xor_mask) + ")";
  if (and_mask == 0x1f && or_mask == 0 && xor_mask > 0 && pow2(xor_mask + 1u))
    return "swizzle(REVERSE," + std::to_string(xor_mask + 1) + ")";
  uint16_t group = 0x1f - and_mask + 1;
  if (group > 1 && pow2(group) && or_mask < group && xor_mask == 0)
    return "swizzle(BROADCAST," + std::to_string(group) + "," + std::to_string(or_mask) + ")";
  std::string s = "swizzle(BITMASK_PERM,\"";
  uint16_t p0 = ((0 & and_mask) | or_mask) ^ xor_mask, p1 = ((0x1f & and_mask) | or_mask) ^ xor_mask;
  for (uint16_t m = 0x10; m; m >>= 1) {
    bool a = p0 & m, b = p1 & m;
    s += a && b ? '1' : (!a && !b ? '0' : (!a && b ? 'p' : 'i'));
  }
  return s + "\")";
}

std::string print_instruction(const Instruction& inst, const std::vector<std::string>& labels) {
  std::string s(inst.mnemonic());
  const auto& ops = inst.operands();
  for (size_t i = 0; i < ops.size(); ++i)
    s += (i ? ", " : " ") + operand_text(inst, i, labels);
  const Modifiers& m = inst.modifiers();
  const Form& f = inst.form();
  if (f.modifiers & m_offen_idxen) {
    if (m.idxen)
      s += " idxen";
    if (m.offen)
      s += " offen";
  }
  if ((f.modifiers & m_offset) && m.offset && *m.offset != 0)
    s += " offset:" + std::to_string(*m.offset);
  if (m.offset0 && *m.offset0)
    s += " offset0:" + std::to_string(*m.offset0);
  if (m.offset1 && *m.offset1)
    s += " offset1:" + std::to_string(*m.offset1);
  if (m.swizzle && *m.swizzle)
    s += " offset:" + swizzle_text(*m.swizzle);
  if (inst.target() == Gfx::gfx90a) {
    if (m.glc)
      s += " glc";
    if (m.slc)
      s += " slc";
  } else {
    if (m.sc0)
      s += " sc0";
    if (m.nt)
      s += " nt";
    if (m.sc1)
      s += " sc1";
  }
  if (detail::is_lds_dma(f))
    s += " lds";
  if (f.modifiers & m_op_sel) {
    bool any = false, all = true;
    for (auto b : m.op_sel)
      any = any || b;
    for (auto b : m.op_sel_hi)
      all = all && b;
    if (any)
      s += " op_sel:" + bits_list(m.op_sel);
    if (!all)
      s += " op_sel_hi:" + bits_list(m.op_sel_hi);
  }
  if (m.dpp) {
    s += " " + dpp_text(*m.dpp) + " row_mask:" + hex(m.row_mask) + " bank_mask:" + hex(m.bank_mask);
    if (m.bound_ctrl)
      s += " bound_ctrl:1";
  }
  if (m.cbsz)
    s += " cbsz:" + std::to_string(m.cbsz);
  if (m.abid)
    s += " abid:" + std::to_string(m.abid);
  if (m.blgp)
    s += " blgp:" + std::to_string(m.blgp);
  if (f.category == Category::waitcnt) {
    std::string w;
    if (m.vmcnt && *m.vmcnt < 63)
      w += " vmcnt(" + std::to_string(*m.vmcnt) + ")";
    if (m.expcnt && *m.expcnt < 7)
      w += " expcnt(" + std::to_string(*m.expcnt) + ")";
    if (m.lgkmcnt && *m.lgkmcnt < 15)
      w += " lgkmcnt(" + std::to_string(*m.lgkmcnt) + ")";
    s += w.empty() ? " vmcnt(63) expcnt(7) lgkmcnt(15)" : w;
  }
  return s;
}

std::string print(const Kernel& input) {
  Kernel k = input;
  k.update_register_counts();
  k.validate();
  const TargetInfo& t = *k.target.info;
  std::ostringstream o;
  const std::string& n = k.name;
  o << ".amdgcn_target \"" << k.target.str() << "\"\n";
  o << ".amdhsa_code_object_version 5\n";
  o << ".text\n.globl " << n << "\n.p2align 8\n.type " << n << ",@function\n" << n << ":\n";
  for (const auto& st : k.body) {
    if (const auto* l = std::get_if<LabelDef>(&st))
      o << ".L" << k.label_names[l->label.id] << ":\n";
    else
      o << "  " << print_instruction(std::get<Instruction>(st), k.label_names) << "\n";
  }
  o << ".L" << n << "_end:\n";
  o << ".size " << n << ", .L" << n << "_end-" << n << "\n";
  o << ".p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n";
  o << ".rodata\n.p2align 6\n.amdhsa_kernel " << n << "\n";
  auto d = [&](const char* name, uint64_t v) { o << "  .amdhsa_" << name << " " << v << "\n"; };
  d("user_sgpr_count", k.user_sgpr_count());
  d("user_sgpr_kernarg_segment_ptr", k.kernarg_ptr);
  d("kernarg_size", k.kernarg_size);
  d("group_segment_fixed_size", k.lds_bytes);
  d("private_segment_fixed_size", 0);
  d("system_sgpr_workgroup_id_x", k.workgroup_id[0]);
  d("system_sgpr_workgroup_id_y", k.workgroup_id[1]);
  d("system_sgpr_workgroup_id_z", k.workgroup_id[2]);
  d("system_vgpr_workitem_id", k.workitem_id_dims - 1);
  d("next_free_vgpr", k.vgpr_total());
  d("next_free_sgpr", k.next_free_sgpr);
  d("accum_offset", k.accum_offset());
  // gfx90a reserves FLAT_SCRATCH by default; our kernels use no scratch, so extra_sgprs() counts without it.
  if (!t.architected_flat_scratch)
    d("reserve_flat_scratch", 0);
  d("float_round_mode_32", k.float_modes.round_32);
  d("float_round_mode_16_64", k.float_modes.round_16_64);
  d("float_denorm_mode_32", k.float_modes.denorm_32);
  d("float_denorm_mode_16_64", k.float_modes.denorm_16_64);
  d("dx10_clamp", k.float_modes.dx10_clamp);
  d("ieee_mode", k.float_modes.ieee_mode);
  o << ".end_amdhsa_kernel\n";
  // Metadata: every free-text string is written `!str "..."`. Quoting alone is not enough: LLVM reads the YAML
  // into a MsgPack document by trying each scalar as int, bool, float first whatever its quotes, so "y", "on"
  // (LLVM 19, YAML 1.1 booleans), "true", "12", "1e3" (every LLVM) fail with "invalid HSA metadata". The local
  // tag !str makes LLVM 19 and 22 alike keep the scalar a string (tests/cdna/printer_test.cpp round-trips them).
  o << ".amdgpu_metadata\n---\namdhsa.version:\n  - 1\n  - 2\n";
  o << "amdhsa.target: " << yaml_string(k.target.str(), "target id") << "\n";
  o << "amdhsa.kernels:\n";
  o << "  - .name: " << yaml_string(n, "kernel name") << "\n";
  o << "    .symbol: " << yaml_string(n + ".kd", "kernel symbol") << "\n";
  o << "    .kernarg_segment_size: " << k.kernarg_size << "\n";
  o << "    .kernarg_segment_align: " << k.kernarg_align << "\n";
  o << "    .group_segment_fixed_size: " << k.lds_bytes << "\n";
  o << "    .private_segment_fixed_size: 0\n";
  o << "    .wavefront_size: " << k.wave_size << "\n";
  o << "    .sgpr_count: " << k.sgpr_count() << "\n";
  o << "    .vgpr_count: " << k.vgpr_total() << "\n";
  o << "    .agpr_count: " << k.agprs << "\n";
  o << "    .max_flat_workgroup_size: " << k.workgroup_size << "\n";
  if (!k.args.empty()) {
    o << "    .args:\n";
    for (const auto& a : k.args) {
      o << "      - .name: " << yaml_string(a.name, "kernel argument name") << "\n";
      o << "        .offset: " << a.offset << "\n";
      o << "        .size: " << a.size << "\n";
      o << "        .value_kind: " << a.value_kind << "\n";
      if (!a.address_space.empty())
        o << "        .address_space: " << a.address_space << "\n";
      if (!a.access.empty())
        o << "        .actual_access: " << a.access << "\n";
    }
  }
  o << "...\n.end_amdgpu_metadata\n";
  return o.str();
}

} // namespace isatune::cdna

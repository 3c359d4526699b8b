#include "isatune/cdna/builder.h"

#include <algorithm>
#include <cctype>

#include "isatune/error.h"

namespace isatune::cdna {

Builder::Builder(TargetId target, std::string name, EntryOptions entry)
    : sgprs_(RegFile::sgpr, static_cast<uint16_t>(target.info->max_sgprs)),
      vgprs_(RegFile::vgpr, static_cast<uint16_t>(target.info->max_arch_vgprs)),
      agprs_(RegFile::agpr, static_cast<uint16_t>(target.info->max_agprs)) {
  kernel_.name = std::move(name);
  kernel_.target = target;
  kernel_.kernarg_ptr = entry.kernarg_ptr;
  kernel_.workgroup_id = {entry.workgroup_id_x, entry.workgroup_id_y, entry.workgroup_id_z};
  if (entry.workitem_id_dims < 1 || entry.workitem_id_dims > 3)
    throw InputError("workitem_id_dims must be 1..3");
  kernel_.workitem_id_dims = entry.workitem_id_dims;
  uint16_t n = static_cast<uint16_t>(kernel_.user_sgpr_count() + kernel_.system_sgpr_count());
  for (uint16_t i = 0; i < n; ++i)
    sgprs_.reserve(s(i));
  vgprs_.reserve(v(0));
}

Reg Builder::kernarg_ptr() const {
  if (!kernel_.kernarg_ptr)
    throw InputError("the kernarg segment pointer is not enabled");
  return s(0, 2);
}

Reg Builder::workgroup_id(int dim) const {
  if (dim < 0 || dim > 2 || !kernel_.workgroup_id[dim])
    throw InputError("workgroup id " + std::to_string(dim) + " is not enabled in EntryOptions");
  uint16_t idx = static_cast<uint16_t>(kernel_.user_sgpr_count());
  for (int d = 0; d < dim; ++d)
    idx += kernel_.workgroup_id[d];
  return s(idx);
}

Reg Builder::workitem_ids() const {
  return v(0);
}

uint32_t Builder::add_arg(std::string name, uint32_t size, uint32_t align, ArgKind kind, std::string access) {
  if (size == 0 || align == 0 || (align & (align - 1)))
    throw InputError("kernel argument '" + name + "': size must be > 0 and align a power of two");
  if (kind == ArgKind::global_buffer && size != 8)
    throw InputError("kernel argument '" + name + "': a global buffer is an 8-byte pointer");
  if (!access.empty() && access != "read_only" && access != "write_only" && access != "read_write")
    throw InputError("kernel argument '" + name + "': access is read_only, write_only or read_write");
  uint32_t off = (kernel_.kernarg_size + align - 1) / align * align;
  KernelArg a;
  a.name = std::move(name);
  a.offset = off;
  a.size = size;
  a.value_kind = kind == ArgKind::global_buffer ? "global_buffer" : "by_value";
  if (kind == ArgKind::global_buffer)
    a.address_space = "global";
  a.access = std::move(access);
  kernel_.args.push_back(std::move(a));
  kernel_.kernarg_size = off + size;
  kernel_.kernarg_align = std::max(kernel_.kernarg_align, align);
  return off;
}

void Builder::set_lds_bytes(uint32_t bytes) {
  if (bytes > info().lds_bytes_per_cu)
    throw InputError("LDS " + std::to_string(bytes) + " bytes exceeds " + std::string(info().name) + "'s " +
                     std::to_string(info().lds_bytes_per_cu));
  kernel_.lds_bytes = bytes;
}

void Builder::set_workgroup_size(uint32_t threads) {
  if (threads == 0 || threads > info().max_workgroup_size)
    throw InputError("workgroup size " + std::to_string(threads) + " is not in 1.." +
                     std::to_string(info().max_workgroup_size));
  kernel_.workgroup_size = threads;
}

RegisterAllocator& Builder::allocator(RegFile f) {
  switch (f) {
  case RegFile::sgpr:
    return sgprs_;
  case RegFile::vgpr:
    return vgprs_;
  case RegFile::agpr:
    return agprs_;
  default:
    throw InputError("special registers are not allocated");
  }
}

Label Builder::label(const std::string& name) {
  std::string n = name;
  for (int i = 1;; ++i) {
    bool taken = false;
    for (const auto& e : kernel_.label_names)
      taken = taken || e == n;
    if (!taken)
      break;
    n = name + "_" + std::to_string(i);
  }
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw InputError("label name '" + name + "' may hold letters, digits and '_' only");
  kernel_.label_names.push_back(n);
  bound_.push_back(false);
  return Label{static_cast<uint32_t>(kernel_.label_names.size() - 1)};
}

void Builder::bind(Label l) {
  if (!l.valid() || l.id >= bound_.size())
    throw InputError("bind: label not created by this builder");
  if (bound_[l.id])
    throw InputError("label '" + kernel_.label_names[l.id] + "' is bound twice");
  bound_[l.id] = true;
  kernel_.body.push_back(LabelDef{l});
}

const Instruction& Builder::emit(std::string_view form, std::vector<Operand> operands, Modifiers modifiers) {
  for (const auto& op : operands)
    if (op.kind == Operand::Kind::label && (!op.label.valid() || op.label.id >= bound_.size()))
      throw InputError(std::string(form) + ": label not created by this builder");
  kernel_.body.push_back(make_instruction(gfx(), form, std::move(operands), std::move(modifiers)));
  return std::get<Instruction>(kernel_.body.back());
}

const Instruction& Builder::s_load(Reg dst, Reg base, Operand offset) {
  const char* n = nullptr;
  switch (dst.count) {
  case 1:
    n = "s_load_dword";
    break;
  case 2:
    n = "s_load_dwordx2";
    break;
  case 4:
    n = "s_load_dwordx4";
    break;
  case 8:
    n = "s_load_dwordx8";
    break;
  case 16:
    n = "s_load_dwordx16";
    break;
  default:
    throw InputError("s_load: destination " + to_string(dst) + " must be 1, 2, 4, 8 or 16 SGPRs");
  }
  return emit(n, {dst, base, offset});
}

const Instruction& Builder::s_waitcnt(std::optional<uint8_t> vmcnt, std::optional<uint8_t> lgkmcnt,
                                      std::optional<uint8_t> expcnt) {
  Modifiers m;
  m.vmcnt = vmcnt;
  m.lgkmcnt = lgkmcnt;
  m.expcnt = expcnt;
  return emit("s_waitcnt", {}, m);
}

const Instruction& Builder::s_cbranch(std::string_view cond, Label l) {
  return emit("s_cbranch_" + std::string(cond), {l});
}

static const char* global_suffix(uint8_t w) {
  switch (w) {
  case 1:
    return "dword";
  case 2:
    return "dwordx2";
  case 3:
    return "dwordx3";
  case 4:
    return "dwordx4";
  default:
    throw InputError("global/buffer access of " + std::to_string(w) + " dwords: use 1..4");
  }
}

const Instruction& Builder::global_load(Reg dst, Reg vaddr, Operand saddr, int32_t offset, Modifiers m) {
  if (offset)
    m.offset = offset;
  return emit(std::string("global_load_") + global_suffix(dst.count), {dst, vaddr, saddr}, m);
}

const Instruction& Builder::global_store(Reg vaddr, Reg data, Operand saddr, int32_t offset, Modifiers m) {
  if (offset)
    m.offset = offset;
  return emit(std::string("global_store_") + global_suffix(data.count), {vaddr, data, saddr}, m);
}

const Instruction& Builder::buffer_load(Reg dst, Operand vaddr, Reg srsrc, Operand soffset, Modifiers m) {
  return emit(std::string("buffer_load_") + global_suffix(dst.count), {dst, vaddr, srsrc, soffset}, m);
}

const Instruction& Builder::buffer_store(Reg data, Operand vaddr, Reg srsrc, Operand soffset, Modifiers m) {
  return emit(std::string("buffer_store_") + global_suffix(data.count), {data, vaddr, srsrc, soffset}, m);
}

static const char* ds_suffix(uint8_t w) {
  switch (w) {
  case 1:
    return "b32";
  case 2:
    return "b64";
  case 3:
    return "b96";
  case 4:
    return "b128";
  default:
    throw InputError("LDS access of " + std::to_string(w) + " dwords: use 1..4");
  }
}

const Instruction& Builder::ds_read(Reg dst, Reg vaddr, uint16_t offset) {
  Modifiers m;
  if (offset)
    m.offset = offset;
  return emit(std::string("ds_read_") + ds_suffix(dst.count), {dst, vaddr}, m);
}

const Instruction& Builder::ds_write(Reg vaddr, Reg data, uint16_t offset) {
  Modifiers m;
  if (offset)
    m.offset = offset;
  return emit(std::string("ds_write_") + ds_suffix(data.count), {vaddr, data}, m);
}

const Instruction& Builder::mfma(std::string_view form, Reg d, Reg a, Reg b, Operand c, uint8_t cbsz,
                                 uint8_t abid, uint8_t blgp) {
  Modifiers m;
  m.cbsz = cbsz;
  m.abid = abid;
  m.blgp = blgp;
  return emit(form, {d, a, b, c}, m);
}

const Instruction& Builder::dpp(std::string_view form, std::vector<Operand> operands, DppControl ctrl,
                                uint8_t row_mask, uint8_t bank_mask, bool bound_ctrl) {
  Modifiers m;
  m.dpp = ctrl;
  m.row_mask = row_mask;
  m.bank_mask = bank_mask;
  m.bound_ctrl = bound_ctrl;
  return emit(form, std::move(operands), m);
}

Kernel Builder::finish() {
  for (size_t i = 0; i < bound_.size(); ++i)
    if (!bound_[i]) {
      bool used = false;
      for (const auto& st : kernel_.body)
        if (const auto* in = std::get_if<Instruction>(&st))
          used = used || in->branch_target().id == i;
      if (used)
        throw InputError("label '" + kernel_.label_names[i] + "' is used by a branch but never bound");
    }
  kernel_.arch_vgprs = std::max<uint32_t>(kernel_.arch_vgprs, vgprs_.high_water());
  kernel_.agprs = std::max<uint32_t>(kernel_.agprs, agprs_.high_water());
  kernel_.next_free_sgpr = std::max<uint32_t>(kernel_.next_free_sgpr, sgprs_.high_water());
  kernel_.update_register_counts();
  kernel_.validate();
  return kernel_;
}

} // namespace isatune::cdna

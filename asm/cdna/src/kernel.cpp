#include "isatune/cdna/kernel.h"

#include <algorithm>
#include <cctype>

#include "isatune/error.h"

namespace isatune::cdna {

static uint32_t align_to(uint32_t v, uint32_t a) {
  return (v + a - 1) / a * a;
}

uint32_t Kernel::accum_offset() const {
  return std::max<uint32_t>(4, align_to(arch_vgprs, 4));
}

uint32_t Kernel::vgpr_total() const {
  return agprs == 0 ? arch_vgprs : accum_offset() + agprs;
}

void Kernel::update_register_counts() {
  arch_vgprs = std::max<uint32_t>(arch_vgprs, 1); // v0 holds the workitem ids
  next_free_sgpr = std::max(next_free_sgpr, user_sgpr_count() + system_sgpr_count());
  for (const auto& st : body) {
    const auto* inst = std::get_if<Instruction>(&st);
    if (!inst)
      continue;
    for (const auto& list : {inst->defs(), inst->uses()})
      for (const auto& r : list) {
        uint32_t end = r.last() + 1u;
        if (r.file == RegFile::vgpr)
          arch_vgprs = std::max(arch_vgprs, end);
        if (r.file == RegFile::agpr)
          agprs = std::max(agprs, end);
        if (r.file == RegFile::sgpr)
          next_free_sgpr = std::max(next_free_sgpr, end);
      }
  }
}

void Kernel::validate() const {
  const TargetInfo& t = *target.info;
  const std::string k = "kernel '" + name + "' (" + std::string(t.name) + "): ";
  if (name.empty())
    throw InputError("kernel without a name");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
      throw InputError(k + "name may hold letters, digits, '_' and '.' only");
  if (lds_bytes > t.lds_bytes_per_cu)
    throw InputError(k + "LDS " + std::to_string(lds_bytes) + " bytes exceeds the target's " +
                     std::to_string(t.lds_bytes_per_cu));
  if (next_free_sgpr > t.max_sgprs)
    throw InputError(k + std::to_string(next_free_sgpr) + " SGPRs used; the limit is " +
                     std::to_string(t.max_sgprs));
  if (arch_vgprs > t.max_arch_vgprs)
    throw InputError(k + std::to_string(arch_vgprs) + " VGPRs used; the limit is " +
                     std::to_string(t.max_arch_vgprs));
  if (agprs > t.max_agprs)
    throw InputError(k + std::to_string(agprs) + " AGPRs used; the limit is " + std::to_string(t.max_agprs));
  if (vgpr_total() > t.max_vgprs_unified)
    throw InputError(k + "unified VGPR total " + std::to_string(vgpr_total()) + " (accum_offset " +
                     std::to_string(accum_offset()) + " + " + std::to_string(agprs) + " AGPRs) exceeds " +
                     std::to_string(t.max_vgprs_unified));
  if (workgroup_size == 0 || workgroup_size > t.max_workgroup_size)
    throw InputError(k + "workgroup size " + std::to_string(workgroup_size) + " is not in 1.." +
                     std::to_string(t.max_workgroup_size));
  if (wave_size != 64)
    throw InputError(k + "CDNA runs wave64 only");
  if (workitem_id_dims < 1 || workitem_id_dims > 3)
    throw InputError(k + "workitem_id_dims must be 1..3");
  if (float_modes.denorm_32 > 3 || float_modes.denorm_16_64 > 3 || float_modes.round_32 > 3 ||
      float_modes.round_16_64 > 3)
    throw InputError(k + "float modes are 0..3");
  for (const auto& a : args)
    if (a.offset + a.size > kernarg_size)
      throw InputError(k + "argument '" + a.name + "' lies beyond kernarg_size");
  std::vector<bool> bound(label_names.size(), false);
  for (const auto& st : body)
    if (const auto* l = std::get_if<LabelDef>(&st)) {
      if (l->label.id >= bound.size())
        throw InputError(k + "unknown label");
      if (bound[l->label.id])
        throw InputError(k + "label '" + label_names[l->label.id] + "' is bound twice");
      bound[l->label.id] = true;
    }
  for (const auto& st : body)
    if (const auto* i = std::get_if<Instruction>(&st)) {
      if (i->target() != t.gfx)
        throw InputError(k + "instruction built for another target");
      Label l = i->branch_target();
      if (l.valid() && (l.id >= bound.size() || !bound[l.id]))
        throw InputError(k + "branch to label '" + (l.id < label_names.size() ? label_names[l.id] : "?") +
                         "' that is never bound");
    }
}

} // namespace isatune::cdna

#include "kernel_json.h"

#include "isatune/error.h"

namespace isatune::db::detail {

namespace {
double num(const JsonValue& j, const char* key) {
  const JsonValue* v = j.find(key);
  return v && v->is_number() ? v->as_number() : 0;
}
std::string str(const JsonValue& j, const char* key) {
  const JsonValue* v = j.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}
bool flag(const JsonValue& j, const char* key) {
  const JsonValue* v = j.find(key);
  return v && v->type() == JsonValue::Type::boolean && v->as_bool();
}
} // namespace

JsonValue args_to_json(const std::vector<KernelArg>& args) {
  JsonValue a = JsonValue::array();
  for (const auto& x : args) {
    JsonValue o = JsonValue::object();
    o.set("name", JsonValue::str(x.name));
    o.set("offset", JsonValue::number(x.offset));
    o.set("size", JsonValue::number(x.size));
    o.set("value_kind", JsonValue::str(x.value_kind));
    o.set("address_space", JsonValue::str(x.address_space));
    o.set("access", JsonValue::str(x.access));
    a.push(std::move(o));
  }
  return a;
}

std::vector<KernelArg> args_from_json(const JsonValue& j) {
  if (!j.is_array()) throw InputError("kernel arguments: expected a JSON array");
  std::vector<KernelArg> out;
  for (const auto& o : j.items()) {
    KernelArg a;
    a.name = str(o, "name");
    a.offset = static_cast<uint32_t>(num(o, "offset"));
    a.size = static_cast<uint32_t>(num(o, "size"));
    a.value_kind = str(o, "value_kind");
    a.address_space = str(o, "address_space");
    a.access = str(o, "access");
    out.push_back(std::move(a));
  }
  return out;
}

#define ISATUNE_DESCRIPTOR_NUMBERS(X)                                                                        \
  X(group_segment_fixed_size) X(private_segment_fixed_size) X(kernarg_size) X(kernel_code_entry_byte_offset)  \
  X(compute_pgm_rsrc1) X(compute_pgm_rsrc2) X(compute_pgm_rsrc3) X(kernel_code_properties) X(kernarg_preload) \
  X(vgpr_blocks) X(sgpr_blocks) X(vgprs_allocated) X(sgprs_allocated) X(accum_offset) X(user_sgpr_count)       \
  X(workitem_id_vgprs) X(float_round_mode_32) X(float_round_mode_16_64) X(float_denorm_mode_32)               \
  X(float_denorm_mode_16_64) X(kernarg_preload_length) X(kernarg_preload_offset)
#define ISATUNE_DESCRIPTOR_FLAGS(X)                                                                          \
  X(wave32) X(enable_private_segment) X(workgroup_id_x) X(workgroup_id_y) X(workgroup_id_z) X(workgroup_info) \
  X(ieee_mode) X(dx10_clamp) X(tg_split) X(user_sgpr_kernarg_segment_ptr) X(user_sgpr_dispatch_ptr)           \
  X(user_sgpr_queue_ptr) X(user_sgpr_dispatch_id) X(user_sgpr_private_segment_size)                           \
  X(user_sgpr_private_segment_buffer) X(user_sgpr_flat_scratch_init)

JsonValue descriptor_to_json(const KernelDescriptor& d) {
  JsonValue o = JsonValue::object();
#define PUT_NUM(f) o.set(#f, JsonValue::number(static_cast<double>(d.f)));
#define PUT_FLAG(f) o.set(#f, JsonValue::boolean(d.f));
  ISATUNE_DESCRIPTOR_NUMBERS(PUT_NUM)
  ISATUNE_DESCRIPTOR_FLAGS(PUT_FLAG)
#undef PUT_NUM
#undef PUT_FLAG
  return o;
}

KernelDescriptor descriptor_from_json(const JsonValue& j) {
  KernelDescriptor d;
#define GET_NUM(f) d.f = static_cast<decltype(d.f)>(num(j, #f));
#define GET_FLAG(f) d.f = flag(j, #f);
  ISATUNE_DESCRIPTOR_NUMBERS(GET_NUM)
  ISATUNE_DESCRIPTOR_FLAGS(GET_FLAG)
#undef GET_NUM
#undef GET_FLAG
  return d;
}

JsonValue kernel_to_json(const KernelInfo& k) {
  JsonValue o = JsonValue::object();
  o.set("name", JsonValue::str(k.name));
  o.set("symbol", JsonValue::str(k.symbol));
  o.set("kernarg_size", JsonValue::number(k.kernarg_size));
  o.set("kernarg_align", JsonValue::number(k.kernarg_align));
  o.set("lds_bytes", JsonValue::number(k.lds_bytes));
  o.set("scratch_bytes", JsonValue::number(k.scratch_bytes));
  o.set("vgprs", JsonValue::number(k.vgprs));
  o.set("agprs", JsonValue::number(k.agprs));
  o.set("sgprs", JsonValue::number(k.sgprs));
  o.set("max_workgroup_size", JsonValue::number(k.max_workgroup_size));
  o.set("wave_size", JsonValue::number(k.wave_size));
  o.set("code_offset", JsonValue::number(static_cast<double>(k.code_offset)));
  o.set("code_size", JsonValue::number(static_cast<double>(k.code_size)));
  o.set("args", args_to_json(k.args));
  if (k.descriptor) o.set("descriptor", descriptor_to_json(*k.descriptor));
  return o;
}

KernelInfo kernel_from_json(const JsonValue& j) {
  KernelInfo k;
  k.name = str(j, "name");
  k.symbol = str(j, "symbol");
  k.kernarg_size = static_cast<uint32_t>(num(j, "kernarg_size"));
  k.kernarg_align = static_cast<uint32_t>(num(j, "kernarg_align"));
  k.lds_bytes = static_cast<uint32_t>(num(j, "lds_bytes"));
  k.scratch_bytes = static_cast<uint32_t>(num(j, "scratch_bytes"));
  k.vgprs = static_cast<uint32_t>(num(j, "vgprs"));
  k.agprs = static_cast<uint32_t>(num(j, "agprs"));
  k.sgprs = static_cast<uint32_t>(num(j, "sgprs"));
  k.max_workgroup_size = static_cast<uint32_t>(num(j, "max_workgroup_size"));
  k.wave_size = static_cast<uint32_t>(num(j, "wave_size"));
  k.code_offset = static_cast<uint64_t>(num(j, "code_offset"));
  k.code_size = static_cast<uint64_t>(num(j, "code_size"));
  if (const JsonValue* a = j.find("args")) k.args = args_from_json(*a);
  if (const JsonValue* d = j.find("descriptor"); d && d->is_object()) k.descriptor = descriptor_from_json(*d);
  return k;
}

} // namespace isatune::db::detail

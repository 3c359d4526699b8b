// Kernel builder: declarations, directives, control flow, moves, arithmetic, conversion, comparison, barriers,
// warp shuffles. Memory forms are in kernel_memory.cpp, Hopper forms in kernel_hopper.cpp.
#include "isatune/ptx/kernel.h"

#include <algorithm>

namespace isatune::ptx {

namespace {

const char* sreg_name(SpecialReg s) {
  switch (s) {
  case SpecialReg::tid_x: return "%tid.x";
  case SpecialReg::tid_y: return "%tid.y";
  case SpecialReg::tid_z: return "%tid.z";
  case SpecialReg::ntid_x: return "%ntid.x";
  case SpecialReg::ntid_y: return "%ntid.y";
  case SpecialReg::ntid_z: return "%ntid.z";
  case SpecialReg::ctaid_x: return "%ctaid.x";
  case SpecialReg::ctaid_y: return "%ctaid.y";
  case SpecialReg::ctaid_z: return "%ctaid.z";
  case SpecialReg::nctaid_x: return "%nctaid.x";
  case SpecialReg::nctaid_y: return "%nctaid.y";
  case SpecialReg::nctaid_z: return "%nctaid.z";
  case SpecialReg::laneid: return "%laneid";
  case SpecialReg::warpid: return "%warpid";
  case SpecialReg::cluster_ctarank: return "%cluster_ctarank";
  case SpecialReg::cluster_nctarank: return "%cluster_nctarank";
  case SpecialReg::clusterid_x: return "%clusterid.x";
  case SpecialReg::clusterid_y: return "%clusterid.y";
  case SpecialReg::clusterid_z: return "%clusterid.z";
  case SpecialReg::cluster_ctaid_x: return "%cluster_ctaid.x";
  case SpecialReg::cluster_ctaid_y: return "%cluster_ctaid.y";
  case SpecialReg::cluster_ctaid_z: return "%cluster_ctaid.z";
  case SpecialReg::cluster_nctaid_x: return "%cluster_nctaid.x";
  }
  return "%tid.x";
}

bool is_cluster_sreg(SpecialReg s) { return s >= SpecialReg::cluster_ctarank; }

const char* cmp_name(Cmp c) {
  static const char* names[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"};
  return names[static_cast<int>(c)];
}

const char* rounding_name(Rounding r) {
  static const char* names[] = {"", ".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi"};
  return names[static_cast<int>(r)];
}

const char* shfl_name(ShflMode m) {
  static const char* names[] = {"up", "down", "bfly", "idx"};
  return names[static_cast<int>(m)];
}

std::string dims(const std::array<uint32_t, 3>& d) {
  return std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]);
}

} // namespace

std::string Param::decl() const {
  if (array_bytes) // .param .align 64 .b8 tm[128]
    return ".param .align " + std::to_string(align ? align : 1) + " ." + type_name(type) + " " + name + "[" +
           std::to_string(array_bytes) + "]";
  std::string s = ".param .";
  s += type_name(type);
  if (pointer) s += " .ptr .global"; // .param .u64 .ptr .global .align 16 pC
  if (align) s += " .align " + std::to_string(align);
  return s + " " + name;
}

Kernel::Kernel(std::string name, Target target) : name_(std::move(name)), target_(std::move(target)) {}

void Kernel::require(const Requirement& req, const std::string& what) {
  if (target_.sm < req.sm || (req.arch_specific && !target_.arch_specific)) {
    std::string need = "sm_" + std::to_string(req.sm) + (req.arch_specific ? "a" : "");
    throw BuilderError("kernel '" + name_ + "': " + what + (req.feature[0] ? std::string(" (") + req.feature + ")" : "") +
                       " needs target " + need + ", the module targets " + target_.name);
  }
}

Instruction& Kernel::emit(std::string opcode, std::vector<std::string> operands, Requirement req) {
  require(req, "'" + opcode + "'");
  Instruction in;
  in.opcode = std::move(opcode);
  in.operands = std::move(operands);
  in.requirement = req;
  body_.push_back(std::move(in));
  return body_.back();
}

int Kernel::required_ptx_version() const {
  int v = std::max(target_.min_ptx_version, directive_version_);
  for (const Instruction& in : body_) v = std::max(v, in.requirement.ptx_version);
  return v;
}

// ---- Parameters and shared memory

Param Kernel::param(std::string name, Type type) {
  params_.push_back(Param{std::move(name), type, 0, 0, false});
  return params_.back();
}

Param Kernel::param_ptr(std::string name, uint32_t align) {
  params_.push_back(Param{std::move(name), Type::u64, align, 0, true});
  return params_.back();
}

Param Kernel::param_tensor_map(std::string name) {
  params_.push_back(Param{std::move(name), Type::b8, 64, 128, false});
  return params_.back();
}

SharedVar Kernel::shared(std::string name, uint32_t bytes, uint32_t align) {
  if (bytes == 0) throw BuilderError("kernel '" + name_ + "': static shared '" + name + "' of 0 bytes");
  if (align == 0 || (align & (align - 1)))
    throw BuilderError("kernel '" + name_ + "': shared alignment " + std::to_string(align) + " is not a power of 2");
  shared_.push_back(SharedVar{std::move(name), bytes, align, false});
  return shared_.back();
}

SharedVar Kernel::dynamic_shared(std::string name, uint32_t align) {
  for (const SharedVar& s : shared_)
    if (s.dynamic) throw BuilderError("kernel '" + name_ + "': a second dynamic shared declaration");
  if (align == 0 || (align & (align - 1)))
    throw BuilderError("kernel '" + name_ + "': shared alignment " + std::to_string(align) + " is not a power of 2");
  shared_.push_back(SharedVar{std::move(name), 0, align, true});
  return shared_.back();
}

// ---- Directives

void Kernel::maxntid(uint32_t x, uint32_t y, uint32_t z) {
  if (reqntid_) throw BuilderError("kernel '" + name_ + "': .maxntid together with .reqntid");
  maxntid_ = {x, y, z};
}

void Kernel::reqntid(uint32_t x, uint32_t y, uint32_t z) {
  if (maxntid_) throw BuilderError("kernel '" + name_ + "': .reqntid together with .maxntid");
  reqntid_ = {x, y, z};
}

void Kernel::reqnctapercluster(uint32_t x, uint32_t y, uint32_t z) {
  require({78, 90, false, "thread block clusters"}, ".reqnctapercluster");
  cluster_ = {x, y, z};
  directive_version_ = std::max(directive_version_, 78);
}

void Kernel::maxnreg(uint32_t n) {
  if (n < 16 || n > 255) throw BuilderError("kernel '" + name_ + "': .maxnreg " + std::to_string(n) + " outside 16..255");
  maxnreg_ = n;
}

void Kernel::minnctapersm(uint32_t n) { minnctapersm_ = n; }

std::vector<std::string> Kernel::directives() const {
  if (minnctapersm_ && !maxntid_ && !reqntid_)
    throw BuilderError("kernel '" + name_ + "': .minnctapersm needs .maxntid or .reqntid");
  std::vector<std::string> out;
  if (maxntid_) out.push_back(".maxntid " + dims(*maxntid_));
  if (reqntid_) out.push_back(".reqntid " + dims(*reqntid_));
  if (minnctapersm_) out.push_back(".minnctapersm " + std::to_string(*minnctapersm_));
  if (maxnreg_) out.push_back(".maxnreg " + std::to_string(*maxnreg_));
  if (cluster_) out.push_back(".reqnctapercluster " + dims(*cluster_));
  return out;
}

// ---- Labels and control flow

Label Kernel::new_label(std::string hint) { return Label{"$" + hint + "_" + std::to_string(label_counter_++)}; }

void Kernel::place(const Label& l) {
  Instruction in;
  in.label = l.name;
  body_.push_back(std::move(in));
}

Instruction& Kernel::bra(const Label& l, bool uniform) { return emit(uniform ? "bra.uni" : "bra", {l.name}, {}); }
Instruction& Kernel::ret() { return emit("ret", {}, {}); }
Instruction& Kernel::exit() { return emit("exit", {}, {}); }

// ---- Moves

Instruction& Kernel::mov(Type t, Reg d, Operand a) {
  return emit(std::string("mov.") + type_name(t), {d.name(), a.text}, {});
}

Instruction& Kernel::mov_sreg(Reg d, SpecialReg s) {
  Requirement req;
  if (is_cluster_sreg(s)) req = {78, 90, false, "cluster special registers"};
  return emit("mov.u32", {d.name(), sreg_name(s)}, req);
}

Instruction& Kernel::mov_addr(Reg d, const std::string& symbol) {
  return emit(d.cls == RegClass::b64 ? "mov.u64" : "mov.u32", {d.name(), symbol}, {});
}

Instruction& Kernel::cvta_to_global(Reg d, Reg a) { return emit("cvta.to.global.u64", {d.name(), a.name()}, {}); }

Instruction& Kernel::cvta_param(Reg d, const Param& p) {
  emit("mov.b64", {d.name(), p.name}, {});
  return emit("cvta.param.u64", {d.name(), d.name()}, {77, 80, false, "cvta.param"});
}

Instruction& Kernel::pack(Type t, Reg d, const std::vector<Reg>& parts) {
  return emit(std::string("mov.") + type_name(t), {d.name(), Operand::vec(parts).text}, {});
}

Instruction& Kernel::unpack(Type t, const std::vector<Reg>& parts, Reg a) {
  return emit(std::string("mov.") + type_name(t), {Operand::vec(parts).text, a.name()}, {});
}

// ---- Arithmetic

Instruction& Kernel::unary(const std::string& op, Type t, Reg d, Operand a) {
  return emit(op + "." + type_name(t), {d.name(), a.text}, {});
}

Instruction& Kernel::binary(const std::string& op, Type t, Reg d, Operand a, Operand b) {
  return emit(op + "." + type_name(t), {d.name(), a.text, b.text}, {});
}

Instruction& Kernel::ternary(const std::string& op, Type t, Reg d, Operand a, Operand b, Operand c) {
  return emit(op + "." + type_name(t), {d.name(), a.text, b.text, c.text}, {});
}

// ---- Conversion

Instruction& Kernel::cvt(Rounding r, Type dst, Type src, Reg d, Reg a) {
  if (reg_class_for(dst) != d.cls || reg_class_for(src) != a.cls)
    throw BuilderError("kernel '" + name_ + "': cvt register classes do not match ." + type_name(dst) + "/." +
                       type_name(src));
  // ptxas 13.0: "Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1 or later".
  Requirement req;
  if (src == Type::bf16) req.ptx_version = 71;
  return emit(std::string("cvt") + rounding_name(r) + "." + type_name(dst) + "." + type_name(src),
              {d.name(), a.name()}, req);
}

Instruction& Kernel::cvt_pack(Type dst_x2, Reg d, Reg hi, Reg lo) {
  if (dst_x2 != Type::bf16x2 && dst_x2 != Type::f16x2)
    throw BuilderError("kernel '" + name_ + "': cvt_pack packs to .bf16x2 or .f16x2");
  return emit(std::string("cvt.rn.") + type_name(dst_x2) + ".f32", {d.name(), hi.name(), lo.name()}, {});
}

// ---- Comparison

Instruction& Kernel::setp(Cmp c, Type t, Reg p, Operand a, Operand b) {
  if (p.cls != RegClass::pred) throw BuilderError("kernel '" + name_ + "': setp writes a predicate");
  return emit(std::string("setp.") + cmp_name(c) + "." + type_name(t), {p.name(), a.text, b.text}, {});
}

Instruction& Kernel::selp(Type t, Reg d, Operand a, Operand b, Reg p) {
  return emit(std::string("selp.") + type_name(t), {d.name(), a.text, b.text, p.name()}, {});
}

// ---- Barriers and warp operations

namespace {
void check_barrier(const std::string& kernel, uint32_t id, std::optional<uint32_t> threads) {
  if (id > 15) throw BuilderError("kernel '" + kernel + "': barrier id " + std::to_string(id) + " outside 0..15");
  if (threads && (*threads == 0 || *threads % 32))
    throw BuilderError("kernel '" + kernel + "': barrier thread count " + std::to_string(*threads) +
                       " is not a positive multiple of 32");
}
} // namespace

Instruction& Kernel::bar_sync(uint32_t id, std::optional<uint32_t> threads) {
  check_barrier(name_, id, threads);
  std::vector<std::string> ops{std::to_string(id)};
  if (threads) ops.push_back(std::to_string(*threads));
  return emit("bar.sync", ops, {});
}

Instruction& Kernel::bar_arrive(uint32_t id, uint32_t threads) {
  check_barrier(name_, id, threads);
  return emit("bar.arrive", {std::to_string(id), std::to_string(threads)}, {});
}

Instruction& Kernel::barrier_sync(uint32_t id, std::optional<uint32_t> threads) {
  check_barrier(name_, id, threads);
  std::vector<std::string> ops{std::to_string(id)};
  if (threads) ops.push_back(std::to_string(*threads));
  return emit("barrier.sync.aligned", ops, {});
}

Instruction& Kernel::shfl_sync(ShflMode m, Reg d, Reg a, Operand b, uint32_t c, uint32_t mask) {
  return emit(std::string("shfl.sync.") + shfl_name(m) + ".b32",
              {d.name(), a.name(), b.text, std::to_string(c), std::to_string(mask)}, {});
}

Instruction& Kernel::raw(std::string opcode, std::vector<Operand> operands, Requirement req) {
  std::vector<std::string> ops;
  for (auto& o : operands) ops.push_back(o.text);
  return emit(std::move(opcode), std::move(ops), req);
}

} // namespace isatune::ptx

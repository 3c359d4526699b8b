// Kernel builder: ld/st, atomics, cp.async, ldmatrix/stmatrix and mma.sync (shared/notes/ptx.md section 2).
#include "isatune/ptx/kernel.h"

namespace isatune::ptx {

namespace {

const char* cache_name(CacheOp c) {
  static const char* names[] = {"", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt"};
  return names[static_cast<int>(c)];
}

std::string vec_suffix(size_t n) { return n == 1 ? "" : ".v" + std::to_string(n); }

std::string reg_list(const std::vector<Reg>& regs) {
  return regs.size() == 1 ? regs[0].name() : Operand::vec(regs).text;
}

void check_regs(const std::string& kernel, const char* what, const std::vector<Reg>& regs, size_t count,
                RegClass cls) {
  if (regs.size() != count)
    throw BuilderError("kernel '" + kernel + "': " + what + " takes " + std::to_string(count) + " registers, got " +
                       std::to_string(regs.size()));
  for (const Reg& r : regs)
    if (r.cls != cls)
      throw BuilderError("kernel '" + kernel + "': " + what + " register " + r.name() + " should be " +
                         reg_decl_type(cls));
}

void check_vector(const std::string& kernel, Type t, const std::vector<Reg>& regs) {
  const size_t n = regs.size();
  if (n != 1 && n != 2 && n != 4)
    throw BuilderError("kernel '" + kernel + "': vector width " + std::to_string(n) + " (1, 2 or 4)");
  if (n * type_bits(t) > 128)
    throw BuilderError("kernel '" + kernel + "': access of " + std::to_string(n * type_bits(t)) +
                       " bits exceeds 128 (.v8 needs sm_100)");
  for (const Reg& r : regs)
    if (r.cls != reg_class_for(t))
      throw BuilderError("kernel '" + kernel + "': register " + r.name() + " cannot hold ." + type_name(t));
}

} // namespace

Instruction& Kernel::ld(Space s, Type t, const std::vector<Reg>& d, const Address& a, CacheOp c, bool nc) {
  check_vector(name_, t, d);
  if (nc && s != Space::global) throw BuilderError("kernel '" + name_ + "': .nc applies to global loads only");
  if (c == CacheOp::wb || c == CacheOp::wt) throw BuilderError("kernel '" + name_ + "': store cache operator on a load");
  std::string op = std::string("ld.") + space_name(s) + cache_name(c) + (nc ? ".nc" : "") + vec_suffix(d.size()) +
                   "." + type_name(t);
  return emit(op, {reg_list(d), a.str()}, {});
}

Instruction& Kernel::st(Space s, Type t, const Address& a, const std::vector<Reg>& v, CacheOp c) {
  check_vector(name_, t, v);
  if (s == Space::param) throw BuilderError("kernel '" + name_ + "': a kernel cannot store to its parameters");
  if (c == CacheOp::ca || c == CacheOp::lu || c == CacheOp::cv)
    throw BuilderError("kernel '" + name_ + "': load cache operator on a store");
  std::string op = std::string("st.") + space_name(s) + cache_name(c) + vec_suffix(v.size()) + "." + type_name(t);
  return emit(op, {a.str(), reg_list(v)}, {});
}

Instruction& Kernel::ld_param(Type t, Reg d, const Param& p, int64_t offset) {
  return ld(Space::param, t, {d}, Address(Operand::sym(p.name), offset));
}

Instruction& Kernel::red(Space s, const std::string& op, Type t, const Address& a, Operand b) {
  Requirement req;
  if (b.text.starts_with("{")) req = {81, 90, false, "vector red"};
  std::string vec;
  if (req.ptx_version == 81) {
    size_t n = 1;
    for (char ch : b.text) n += ch == ',';
    vec = ".v" + std::to_string(n);
  }
  return emit(std::string("red.") + space_name(s) + "." + op + vec + "." + type_name(t), {a.str(), b.text}, req);
}

Instruction& Kernel::atom(Space s, const std::string& op, Type t, Reg d, const Address& a, Operand b,
                          std::optional<Operand> c) {
  std::vector<std::string> ops{d.name(), a.str(), b.text};
  if (c) ops.push_back(c->text);
  if ((op == "cas") != c.has_value())
    throw BuilderError("kernel '" + name_ + "': atom." + op + (c ? " takes two operands" : " needs a third operand"));
  return emit(std::string("atom.") + space_name(s) + "." + op + "." + type_name(t), ops, {});
}

Instruction& Kernel::cp_async(CacheOp c, const Address& dst, const Address& src, uint32_t bytes,
                              std::optional<Operand> src_bytes) {
  if (c != CacheOp::ca && c != CacheOp::cg)
    throw BuilderError("kernel '" + name_ + "': cp.async takes .ca or .cg");
  if (c == CacheOp::cg && bytes != 16) throw BuilderError("kernel '" + name_ + "': cp.async.cg copies 16 bytes only");
  if (bytes != 4 && bytes != 8 && bytes != 16)
    throw BuilderError("kernel '" + name_ + "': cp.async size " + std::to_string(bytes) + " (4, 8 or 16)");
  std::vector<std::string> ops{dst.str(), src.str(), std::to_string(bytes)};
  if (src_bytes) ops.push_back(src_bytes->text);
  return emit(std::string("cp.async") + cache_name(c) + ".shared.global", ops, {70, 80, false, "cp.async"});
}

Instruction& Kernel::cp_async_commit_group() { return emit("cp.async.commit_group", {}, {70, 80, false, "cp.async"}); }

Instruction& Kernel::cp_async_wait_group(uint32_t n) {
  return emit("cp.async.wait_group", {std::to_string(n)}, {70, 80, false, "cp.async"});
}

Instruction& Kernel::cp_async_wait_all() { return emit("cp.async.wait_all", {}, {70, 80, false, "cp.async"}); }

Instruction& Kernel::ldmatrix(uint32_t num, bool trans, const std::vector<Reg>& d, const Address& a) {
  if (num != 1 && num != 2 && num != 4) throw BuilderError("kernel '" + name_ + "': ldmatrix .x1, .x2 or .x4");
  check_regs(name_, "ldmatrix", d, num, RegClass::b32);
  return emit("ldmatrix.sync.aligned.m8n8.x" + std::to_string(num) + (trans ? ".trans" : "") + ".shared.b16",
              {Operand::vec(d).text, a.str()}, {70, 80, false, "ldmatrix"});
}

Instruction& Kernel::stmatrix(uint32_t num, bool trans, const Address& a, const std::vector<Reg>& v) {
  if (num != 1 && num != 2 && num != 4) throw BuilderError("kernel '" + name_ + "': stmatrix .x1, .x2 or .x4");
  check_regs(name_, "stmatrix", v, num, RegClass::b32);
  return emit("stmatrix.sync.aligned.m8n8.x" + std::to_string(num) + (trans ? ".trans" : "") + ".shared.b16",
              {a.str(), Operand::vec(v).text}, {78, 90, false, "stmatrix"});
}

Instruction& Kernel::mma_m16n8k16(MmaType t, const std::vector<Reg>& d, const std::vector<Reg>& a,
                                  const std::vector<Reg>& b, const std::vector<Reg>& c) {
  check_regs(name_, "mma d", d, 4, RegClass::f32);
  check_regs(name_, "mma a", a, 4, RegClass::b32);
  check_regs(name_, "mma b", b, 2, RegClass::b32);
  check_regs(name_, "mma c", c, 4, RegClass::f32);
  const std::string ab = t == MmaType::bf16 ? "bf16" : "f16";
  return emit("mma.sync.aligned.m16n8k16.row.col.f32." + ab + "." + ab + ".f32",
              {Operand::vec(d).text, Operand::vec(a).text, Operand::vec(b).text, Operand::vec(c).text},
              {70, 80, false, "mma.sync m16n8k16"});
}

} // namespace isatune::ptx

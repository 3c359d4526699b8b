// build_program: lays out registers, shared, local and parameter memory, resolves every operand and decodes
// every instruction through the mnemonic table. Anything unsupported is rejected here, before a launch.
#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>

#include "isatune/ptx/kernel_info.h"
#include "ops.h"

namespace isatune::emu::ptx {

namespace {

// Instructions the PTX ISA has and this emulator will run later: named so the error says "not supported yet".
const char* const kLater[] = {"wmma",
                              "tensormap",
                              "griddepcontrol",
                              "tcgen05",
                              "movmatrix",
                              "multimem",
                              "cvt.pack",
                              "discard",
                              "applypriority",
                              "createpolicy",
                              "istypep",
                              "tex",
                              "tld4",
                              "suld",
                              "sust",
                              "sured",
                              "suq",
                              "txq",
                              "alloca",
                              "stacksave",
                              "stackrestore",
                              "clusterlaunchcontrol",
                              "prefetchu"};

const std::unordered_map<std::string, DecodeFn>& table() {
  static const std::unordered_map<std::string, DecodeFn> t = {
      {"add", decode_int},         {"sub", decode_int},         {"mul", decode_int},
      {"mad", decode_int},         {"mul24", decode_int},       {"mad24", decode_int},
      {"sad", decode_int},         {"div", decode_int},         {"rem", decode_int},
      {"abs", decode_int},         {"neg", decode_int},         {"min", decode_int},
      {"max", decode_int},         {"popc", decode_int},        {"clz", decode_int},
      {"bfind", decode_int},       {"brev", decode_int},        {"addc", decode_carry},
      {"subc", decode_carry},      {"madc", decode_carry},      {"fma", decode_float},
      {"rcp", decode_float},       {"sqrt", decode_float},      {"rsqrt", decode_float},
      {"ex2", decode_float},       {"lg2", decode_float},       {"sin", decode_float},
      {"cos", decode_float},       {"tanh", decode_float},      {"copysign", decode_float},
      {"testp", decode_float},     {"and", decode_bits},        {"or", decode_bits},
      {"xor", decode_bits},        {"not", decode_bits},        {"cnot", decode_bits},
      {"shl", decode_bits},        {"shr", decode_bits},        {"bfe", decode_bits},
      {"bfi", decode_bits},        {"prmt", decode_bits},       {"lop3", decode_bits},
      {"shf", decode_bits},        {"cvt", decode_cvt},         {"cvta", decode_cvt},
      {"setp", decode_compare},    {"selp", decode_compare},    {"slct", decode_compare},
      {"set", decode_compare},     {"mov", decode_mov},         {"ld", decode_memory},
      {"ldu", decode_memory},      {"st", decode_memory},       {"atom", decode_memory},
      {"red", decode_memory},      {"prefetch", decode_memory}, {"shfl", decode_warp},
      {"vote", decode_warp},       {"match", decode_warp},      {"redux", decode_warp},
      {"activemask", decode_warp}, {"elect", decode_warp},      {"bra", decode_control},
      {"call", decode_control},    {"ret", decode_control},     {"exit", decode_control},
      {"trap", decode_control},    {"bar", decode_control},     {"barrier", decode_control},
      {"membar", decode_control},  {"fence", decode_control},   {"nanosleep", decode_control},
      {"brkpt", decode_control},   {"pmevent", decode_control}, {"wgmma", decode_wgmma},
      {"mma", decode_mma},         {"ldmatrix", decode_matrix}, {"stmatrix", decode_matrix},
      {"cp", decode_cp},           {"mapa", decode_sm90},       {"getctarank", decode_sm90},
      {"mbarrier", decode_sm90},   {"setmaxnreg", decode_sm90},
  };
  return t;
}

struct Symbol {
  Space space;
  uint64_t addr;
  uint32_t bytes;
};

uint64_t var_bytes(const ast::Variable& v) {
  uint64_t n = uint64_t(v.element_bytes) * std::max<uint32_t>(v.vector, 1);
  for (uint64_t d : v.dims)
    n *= d;
  return n;
}
bool is_dynamic(const ast::Variable& v) {
  return std::find(v.dims.begin(), v.dims.end(), 0ull) != v.dims.end();
}
uint32_t align_of(uint32_t align, uint32_t elem) {
  return std::max<uint32_t>(1, align ? align : elem);
}
uint64_t round_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

std::string reg_name(const ast::Function& f, const ast::Operand& o) {
  if (o.reg < 0 || size_t(o.reg) >= f.regs.size())
    return "%?";
  std::string n = f.regs[o.reg].name;
  if (o.element >= 0)
    n += std::string(".") + "xyzw"[o.element & 3];
  return n;
}

std::string render_operand(const ast::Function& f, const ast::Operand& o) {
  using K = ast::Operand::Kind;
  static const char* const specials[] = {"%tid",
                                         "%ntid",
                                         "%ctaid",
                                         "%nctaid",
                                         "%laneid",
                                         "%warpid",
                                         "%nwarpid",
                                         "%smid",
                                         "%nsmid",
                                         "%gridid",
                                         "%lanemask_eq",
                                         "%lanemask_le",
                                         "%lanemask_lt",
                                         "%lanemask_ge",
                                         "%lanemask_gt",
                                         "%clock",
                                         "%clock64",
                                         "%globaltimer",
                                         "%cluster_ctarank",
                                         "%cluster_nctarank",
                                         "%clusterid",
                                         "%nclusterid",
                                         "%cluster_ctaid",
                                         "%cluster_nctaid",
                                         "%is_explicit_cluster",
                                         "%dynamic_smem_size",
                                         "%total_smem_size",
                                         "%envreg",
                                         "%clock_hi",
                                         "%globaltimer_lo",
                                         "%globaltimer_hi",
                                         "%aggr_smem_size",
                                         "%pm",
                                         "%pm",
                                         "%current_graph_exec",
                                         "%reserved_smem_offset_begin",
                                         "%reserved_smem_offset_end",
                                         "%reserved_smem_offset_cap",
                                         "%reserved_smem_offset_0",
                                         "%reserved_smem_offset_1"};
  std::string s = o.negate ? "!" : "";
  switch (o.kind) {
  case K::reg:
    return s + reg_name(f, o);
  case K::special: {
    std::string n = size_t(o.special) < std::size(specials) ? specials[int(o.special)] : "%special";
    bool has_comp = o.special == ast::Special::tid || o.special == ast::Special::ntid ||
                    o.special == ast::Special::ctaid || o.special == ast::Special::nctaid ||
                    o.special == ast::Special::clusterid || o.special == ast::Special::nclusterid ||
                    o.special == ast::Special::cluster_ctaid || o.special == ast::Special::cluster_nctaid;
    if (has_comp)
      n += std::string(".") + "xyz"[o.component % 3];
    else if (o.special == ast::Special::envreg || o.special == ast::Special::pm)
      n += std::to_string(o.component);
    else if (o.special == ast::Special::pm64)
      n += std::to_string(o.component) + "_64";
    return n;
  }
  case K::imm_int:
    return std::to_string(o.i);
  case K::imm_float: {
    char buf[32];
    if (o.f32)
      std::snprintf(buf, sizeof buf, "0f%08X", unsigned(o.bits));
    else
      std::snprintf(buf, sizeof buf, "0d%016llX", (unsigned long long)o.bits);
    return buf;
  }
  case K::symbol:
    return o.name;
  case K::address: {
    std::string b = o.name.empty() ? (o.reg >= 0 ? reg_name(f, o) : std::string()) : o.name;
    if (o.offset)
      b += (b.empty() ? "" : (o.offset < 0 ? "" : "+")) + std::to_string(o.offset);
    return "[" + b + "]";
  }
  case K::vector:
  case K::pair: {
    std::string v = o.kind == K::vector ? "{" : "";
    for (size_t i = 0; i < o.elems.size(); ++i)
      v += (i ? (o.kind == K::vector ? ", " : "|") : "") + render_operand(f, o.elems[i]);
    return v + (o.kind == K::vector ? "}" : "");
  }
  case K::label:
    return "$L" + std::to_string(o.target);
  case K::sink:
    return "_";
  }
  return "?";
}

std::string render(const ast::Function& f, const ast::Instruction& ai) {
  std::string s;
  if (ai.guard)
    s = "@" + render_operand(f, *ai.guard) + " ";
  s += ai.opcode;
  for (size_t i = 0; i < ai.operands.size(); ++i)
    s += (i ? ", " : " ") + render_operand(f, ai.operands[i]);
  return s;
}

class Builder {
public:
  Builder(const ast::Module& m, const ModuleData& data, int sm) : m_(m), data_(data), sm_(sm) {}

  std::shared_ptr<const Program> build(const ast::Function& entry) {
    auto prog = std::make_shared<Program>();
    p_ = prog.get();
    p_->name = entry.name;
    for (int i = 0; i < 3; ++i) {
      p_->reqntid[i] = entry.reqntid[i];
      p_->maxntid[i] = entry.maxntid[i];
      p_->reqnctapercluster[i] = entry.reqnctapercluster[i];
    }
    p_->maxnreg = entry.maxnreg;
    // Functions reachable from the entry, in order of discovery.
    order_.push_back(&entry);
    for (size_t i = 0; i < order_.size(); ++i)
      for (const auto& st : order_[i]->body)
        if (st.inst.mnemonic == "call") {
          const ast::Function* callee = nullptr;
          for (const auto& o : st.inst.operands)
            if (o.kind == ast::Operand::Kind::symbol)
              if (const ast::Function* f = find_function(o.name))
                callee = f;
          if (!callee)
            error(*order_[i], st.inst, "call of a function this module does not define");
          if (is_builtin(*callee))
            continue;
          if (callee->external || callee->body.empty())
            error(*order_[i], st.inst, "call of external function '" + callee->name + "' (no body to run)");
          if (std::find(order_.begin(), order_.end(), callee) == order_.end())
            order_.push_back(callee);
        }
    check_recursion(entry);
    layout_memory(entry);
    // Register slots and entry pcs.
    for (const ast::Function* f : order_) {
      std::vector<uint32_t>& slot_of = reg_slot_[f];
      slot_of.reserve(f->regs.size());
      for (const auto& r : f->regs) {
        slot_of.push_back(p_->slots);
        for (uint32_t e = 0; e < std::max<uint32_t>(r.vector, 1); ++e)
          p_->slot_mask.push_back(width_mask(r.bits));
        p_->slots += std::max<uint32_t>(r.vector, 1);
      }
    }
    uint32_t pc = 0;
    for (const ast::Function* f : order_) {
      entry_pc_[f] = pc;
      auto& pcs = body_pc_[f];
      pcs.resize(f->body.size() + 1);
      for (size_t i = 0; i < f->body.size(); ++i) {
        pcs[i] = pc;
        if (!f->body[i].inst.mnemonic.empty())
          ++pc;
      }
      pcs[f->body.size()] = pc;
      ++pc; // an implicit ret/exit at the end of every body
    }
    p_->code.reserve(pc);
    for (const ast::Function* f : order_) {
      for (const auto& st : f->body)
        if (!st.inst.mnemonic.empty())
          decode(*f, st.inst);
      Inst end; // falling off the end of a body returns (an entry exits)
      end.sync = f == &entry ? Sync::exit : Sync::ret;
      end.fn = nullptr;
      end.index = uint32_t(p_->code.size());
      end.line = f->body.empty() ? f->loc.line : f->body.back().inst.loc.line;
      end.text = "(end of " + f->name + ")";
      p_->code.push_back(std::move(end));
    }
    mark_wgmma_register_users(*p_);
    fill_info(entry);
    return prog;
  }

private:
  const ast::Module& m_;
  const ModuleData& data_;
  int sm_;
  Program* p_ = nullptr;
  std::vector<const ast::Function*> order_;
  std::map<const ast::Function*, uint32_t> entry_pc_;
  // Per function: the first slot of each of its registers (Function::regs order), looked up per operand.
  std::map<const ast::Function*, std::vector<uint32_t>> reg_slot_;
  std::map<const ast::Function*, std::vector<uint32_t>> body_pc_;
  std::map<const ast::Function*, std::map<std::string, Symbol>> symbols_;
  std::map<std::string, Symbol> module_symbols_;

  const ast::Function* find_function(const std::string& name) const {
    for (const auto& f : m_.functions)
      if (f.name == name && !f.external && !f.body.empty())
        return &f;
    for (const auto& f : m_.functions)
      if (f.name == name)
        return &f;
    return nullptr;
  }

  static bool is_builtin(const ast::Function& f) {
    return (f.external || f.body.empty()) && (f.name == "__assertfail" || f.name == "vprintf");
  }

  [[noreturn]] void error(const ast::Function& f, const ast::Instruction& ai, const std::string& why) const {
    throw EmulationError((m_.file.empty() ? std::string("ptx") : m_.file) + ":" +
                         std::to_string(ai.loc.line) + ": " + why + ": '" + render(f, ai) + "'");
  }

  void check_recursion(const ast::Function& f) {
    std::vector<const ast::Function*> path;
    std::function<void(const ast::Function&)> walk = [&](const ast::Function& g) {
      if (std::find(path.begin(), path.end(), &g) != path.end())
        throw EmulationError(m_.file + ": function '" + g.name +
                             "' is recursive; the PTX emulator runs "
                             "non-recursive call graphs only");
      path.push_back(&g);
      for (const auto& st : g.body)
        if (st.inst.mnemonic == "call")
          for (const auto& o : st.inst.operands)
            if (o.kind == ast::Operand::Kind::symbol)
              if (const ast::Function* c = find_function(o.name); c && !c->body.empty())
                walk(*c);
      path.pop_back();
    };
    walk(f);
  }

  void layout_memory(const ast::Function& entry) {
    uint64_t shared = 0, local = 0;
    uint32_t dyn_align = 16;
    std::vector<std::string> dynamic_names;
    auto place_shared = [&](const ast::Variable& v, std::map<std::string, Symbol>& into) {
      if (v.external || is_dynamic(v)) {
        dyn_align = std::max(dyn_align, align_of(v.align, v.element_bytes));
        into[v.name] = {Space::shared, ~0ull, 0}; // patched below
        dynamic_names.push_back(v.name);
        return;
      }
      shared = round_up(shared, align_of(v.align, v.element_bytes));
      into[v.name] = {Space::shared, shared, uint32_t(var_bytes(v))};
      shared += var_bytes(v);
    };
    for (const auto& v : m_.globals) {
      switch (v.space) {
      case ast::StateSpace::shared:
      case ast::StateSpace::shared_cta:
        place_shared(v, module_symbols_);
        break;
      case ast::StateSpace::global:
      case ast::StateSpace::const_:
        module_symbols_[v.name] = {v.space == ast::StateSpace::global ? Space::global : Space::const_,
                                   data_.find(v.name), uint32_t(var_bytes(v))};
        break;
      default:
        break;
      }
    }
    for (const ast::Function* f : order_) {
      auto& syms = symbols_[*&f];
      for (const auto& v : f->locals) {
        if (v.space == ast::StateSpace::shared || v.space == ast::StateSpace::shared_cta)
          place_shared(v, syms);
        else if (v.space == ast::StateSpace::local || v.space == ast::StateSpace::param) {
          local = round_up(local, align_of(v.align, v.element_bytes));
          syms[v.name] = {Space::local, local, uint32_t(var_bytes(v))};
          local += var_bytes(v);
        } else {
          throw EmulationError(m_.file + ":" + std::to_string(v.loc.line) + ": variable '" + v.name +
                               "' in a state space the PTX emulator does not model");
        }
      }
      if (f == &entry) {
        uint32_t end = 0;
        for (const auto& pa : f->params) {
          syms[pa.name] = {Space::param, pa.offset, pa.bytes()};
          end = std::max<uint32_t>(end, pa.offset + pa.bytes());
        }
        p_->param_bytes = end;
      } else {
        for (const auto* list : {&f->params, &f->returns})
          for (const auto& pa : *list) {
            local = round_up(local, align_of(pa.align, pa.element_bytes));
            syms[pa.name] = {Space::local, local, pa.bytes()};
            local += pa.bytes();
          }
      }
    }
    shared = round_up(shared, dyn_align);
    p_->shared.static_bytes = uint32_t(shared);
    p_->shared.dynamic_offset = uint32_t(shared);
    p_->shared.dynamic_align = dyn_align;
    auto patch = [&](std::map<std::string, Symbol>& syms) {
      for (auto& [n, s] : syms)
        if (s.space == Space::shared && s.addr == ~0ull)
          s.addr = shared;
    };
    patch(module_symbols_);
    for (auto& [f, syms] : symbols_)
      patch(syms);
    p_->local_bytes = uint32_t(round_up(local, 16));
  }

  const Symbol* symbol(const ast::Function& f, const std::string& name) const {
    auto fi = symbols_.find(&f);
    if (fi != symbols_.end())
      if (auto it = fi->second.find(name); it != fi->second.end())
        return &it->second;
    if (auto it = module_symbols_.find(name); it != module_symbols_.end())
      return &it->second;
    return nullptr;
  }

  Opnd convert(const ast::Function& f, const ast::Instruction& ai, const ast::Operand& o) {
    using K = ast::Operand::Kind;
    Opnd r;
    r.negate = o.negate;
    switch (o.kind) {
    case K::reg: {
      if (o.reg < 0 || size_t(o.reg) >= f.regs.size())
        error(f, ai, "register operand not resolved");
      const ast::RegDecl& d = f.regs[o.reg];
      const uint32_t base = reg_slot_.at(&f)[size_t(o.reg)];
      if (d.vector > 1 && o.element < 0) { // a whole vector register: its elements
        r.kind = Opnd::Kind::vec;
        for (uint32_t e = 0; e < d.vector; ++e) {
          Opnd x;
          x.kind = Opnd::Kind::reg;
          x.slot = base + e;
          x.rbits = uint8_t(d.bits);
          r.elems.push_back(x);
        }
        return r;
      }
      r.kind = Opnd::Kind::reg;
      r.slot = base + uint32_t(std::max<int>(o.element, 0));
      r.rbits = uint8_t(d.bits);
      return r;
    }
    case K::special:
      r.kind = Opnd::Kind::special;
      r.special = o.special;
      r.component = o.component;
      return r;
    case K::imm_int:
      r.kind = Opnd::Kind::imm;
      r.imm = uint64_t(o.i);
      return r;
    case K::imm_float:
      r.kind = Opnd::Kind::imm;
      r.imm = o.bits;
      r.fimm = o.f32 ? 1 : 2;
      return r;
    case K::symbol: {
      const Symbol* s = symbol(f, o.name);
      if (!s) {
        if (find_function(o.name)) { // a function name (call target): the call decoder reads it from ai
          r.kind = Opnd::Kind::none;
          return r;
        }
        error(f, ai, "unknown symbol '" + o.name + "'");
      }
      r.kind = Opnd::Kind::imm;
      r.imm = s->addr;
      r.sym_space = s->space;
      return r;
    }
    case K::address: {
      r.kind = Opnd::Kind::addr;
      r.imm = uint64_t(o.offset);
      if (!o.name.empty()) {
        const Symbol* s = symbol(f, o.name);
        if (!s)
          error(f, ai, "unknown symbol '" + o.name + "' in an address");
        r.imm += s->addr;
        r.sym_space = s->space;
      } else if (o.reg >= 0) {
        ast::Operand base;
        base.kind = K::reg;
        base.reg = o.reg;
        Opnd b = convert(f, ai, base);
        r.has_base = true;
        r.slot = b.slot;
        r.rbits = b.rbits;
      }
      for (const auto& e : o.elems) // tensor addresses [map, {coordinates}]
        r.elems.push_back(convert(f, ai, e));
      return r;
    }
    case K::vector:
    case K::pair:
      r.kind = Opnd::Kind::vec;
      for (const auto& e : o.elems)
        r.elems.push_back(convert(f, ai, e));
      return r;
    case K::label: {
      r.kind = Opnd::Kind::imm;
      const auto& pcs = body_pc_.at(&f);
      if (o.target >= pcs.size())
        error(f, ai, "label not resolved");
      r.imm = pcs[o.target];
      return r;
    }
    case K::sink:
      r.kind = Opnd::Kind::sink;
      return r;
    }
    return r;
  }

  void decode(const ast::Function& f, const ast::Instruction& ai) {
    Inst in;
    in.index = uint32_t(p_->code.size());
    in.line = ai.loc.line;
    in.text = render(f, ai);
    if (ai.guard) {
      Opnd g = convert(f, ai, *ai.guard);
      if (g.kind != Opnd::Kind::reg)
        error(f, ai, "guard is not a predicate register");
      in.has_guard = true;
      in.guard_slot = g.slot;
      in.guard_negate = ai.guard->negate;
    }
    for (const auto& o : ai.operands)
      in.ops.push_back(convert(f, ai, o));
    auto it = table().find(ai.mnemonic);
    Decoder d(ai, in, m_.file, sm_);
    if (it == table().end()) {
      for (const char* l : kLater)
        if (ai.mnemonic == l || ai.opcode.rfind(std::string(l) + ".", 0) == 0)
          d.not_yet();
      d.error("unknown instruction '" + ai.mnemonic + "'");
    }
    it->second(d);
    if (in.sync == Sync::call) {
      const ast::Function* callee = nullptr;
      std::vector<const ast::Operand*> lists;
      for (const auto& o : ai.operands) {
        if (o.kind == ast::Operand::Kind::symbol && find_function(o.name))
          callee = find_function(o.name);
        else if (o.kind == ast::Operand::Kind::vector)
          lists.push_back(&o);
        else if (o.kind == ast::Operand::Kind::symbol)
          lists.push_back(&o);
      }
      if (!callee)
        error(f, ai, "call without a function");
      if (is_builtin(*callee)) { // the CUDA runtime's device functions nvcc calls: assert and printf
        in.sync = Sync::none;
        in.fn = callee->name == "__assertfail" ? &builtin_assertfail : &builtin_vprintf;
        bool after = false;
        for (const auto& o : ai.operands) {
          if (o.kind == ast::Operand::Kind::symbol && find_function(o.name)) {
            after = true;
            continue;
          }
          const ast::Operand* first =
              o.kind == ast::Operand::Kind::vector && !o.elems.empty() ? &o.elems[0] : &o;
          if (first->kind != ast::Operand::Kind::symbol)
            continue;
          if (const Symbol* s = symbol(f, first->name)) {
            if (after && in.args.empty())
              in.args.push_back({s->space, s->space, s->addr, 0, s->bytes});
            else if (!after && in.rets.empty())
              in.rets.push_back({s->space, s->space, 0, s->addr, s->bytes});
          }
        }
        in.ops.clear();
        in.cost = instruction_cost(in);
        p_->code.push_back(std::move(in));
        return;
      }
      in.target = entry_pc_.at(callee);
      // (ret...), f, (args...): lists before the function name are results, after it arguments.
      bool after = false;
      for (const auto& o : ai.operands) {
        if (o.kind == ast::Operand::Kind::symbol && find_function(o.name)) {
          after = true;
          continue;
        }
        std::vector<const ast::Operand*> items;
        if (o.kind == ast::Operand::Kind::vector)
          for (const auto& e : o.elems)
            items.push_back(&e);
        else
          items.push_back(&o);
        const auto& formals = after ? callee->params : callee->returns;
        size_t k = 0;
        for (const ast::Operand* e : items) {
          if (e->kind != ast::Operand::Kind::symbol)
            error(f, ai, "call arguments must be .param variables (register arguments are not supported)");
          if (k >= formals.size())
            error(f, ai, "more call arguments than '" + callee->name + "' declares");
          const Symbol* actual = symbol(f, e->name);
          const Symbol* formal = symbol(*callee, formals[k].name);
          if (!actual || !formal)
            error(f, ai, "call argument not a .param variable");
          uint32_t bytes = std::min(actual->bytes, formal->bytes);
          if (after)
            in.args.push_back({actual->space, formal->space, actual->addr, formal->addr, bytes});
          else
            in.rets.push_back({formal->space, actual->space, formal->addr, actual->addr, bytes});
          ++k;
        }
      }
      in.ops.clear();
    }
    in.cost = instruction_cost(in);
    p_->code.push_back(std::move(in));
  }

  void fill_info(const ast::Function& entry) {
    KernelInfo& k = p_->info;
    k = isatune::ptx::entry_kernel_info(entry);
    k.kernarg_size = p_->param_bytes;
    k.lds_bytes = p_->shared.static_bytes;
    k.scratch_bytes = p_->local_bytes;
    k.vgprs = 0; // registers per thread: unknown until ptxas compiles it (read_cubin_resources)
  }
};

} // namespace

std::shared_ptr<const Program> build_program(const ast::Module& module, const ast::Function& entry,
                                             const ModuleData& data, int sm) {
  return Builder(module, data, sm).build(entry);
}

} // namespace isatune::emu::ptx

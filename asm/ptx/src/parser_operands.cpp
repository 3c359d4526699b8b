// Operands: registers (scoped), vector elements, special registers, immediates, addresses, vectors, sinks,
// dual outputs, negated predicates, symbols, labels, and the operand lists of call.
#include <cstring>

#include "parser_impl.h"

namespace isatune::ptx::detail {

namespace {

using ast::Special;

struct SpecialName {
  std::string_view name; // without the '%'
  Special special;
  bool vector; // takes a .x/.y/.z/.w component
};

constexpr SpecialName kSpecials[] = {
    {"tid", Special::tid, true},
    {"ntid", Special::ntid, true},
    {"ctaid", Special::ctaid, true},
    {"nctaid", Special::nctaid, true},
    {"clusterid", Special::clusterid, true},
    {"nclusterid", Special::nclusterid, true},
    {"cluster_ctaid", Special::cluster_ctaid, true},
    {"cluster_nctaid", Special::cluster_nctaid, true},
    {"laneid", Special::laneid, false},
    {"warpid", Special::warpid, false},
    {"nwarpid", Special::nwarpid, false},
    {"smid", Special::smid, false},
    {"nsmid", Special::nsmid, false},
    {"gridid", Special::gridid, false},
    {"lanemask_eq", Special::lanemask_eq, false},
    {"lanemask_le", Special::lanemask_le, false},
    {"lanemask_lt", Special::lanemask_lt, false},
    {"lanemask_ge", Special::lanemask_ge, false},
    {"lanemask_gt", Special::lanemask_gt, false},
    {"clock", Special::clock, false},
    {"clock_hi", Special::clock_hi, false},
    {"clock64", Special::clock64, false},
    {"globaltimer", Special::globaltimer, false},
    {"globaltimer_lo", Special::globaltimer_lo, false},
    {"globaltimer_hi", Special::globaltimer_hi, false},
    {"cluster_ctarank", Special::cluster_ctarank, false},
    {"cluster_nctarank", Special::cluster_nctarank, false},
    {"is_explicit_cluster", Special::is_explicit_cluster, false},
    {"dynamic_smem_size", Special::dynamic_smem_size, false},
    {"total_smem_size", Special::total_smem_size, false},
    {"aggr_smem_size", Special::aggr_smem_size, false},
    {"current_graph_exec", Special::current_graph_exec, false},
    {"reserved_smem_offset_begin", Special::reserved_smem_offset_begin, false},
    {"reserved_smem_offset_end", Special::reserved_smem_offset_end, false},
    {"reserved_smem_offset_cap", Special::reserved_smem_offset_cap, false},
    {"reserved_smem_offset_0", Special::reserved_smem_offset_0, false},
    {"reserved_smem_offset_1", Special::reserved_smem_offset_1, false},
};

int component_of(std::string_view c) {
  if (c.size() != 1)
    return -1;
  switch (c[0]) {
  case 'x':
  case 'r':
    return 0;
  case 'y':
  case 'g':
    return 1;
  case 'z':
  case 'b':
    return 2;
  case 'w':
  case 'a':
    return 3;
  default:
    return -1;
  }
}

// "%envreg3" -> 3 for prefix "envreg"; -1 when `name` is not prefix + a number below `limit`.
int numbered(std::string_view name, std::string_view prefix, int limit) {
  if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size())
    return -1;
  int n = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9')
      return -1;
    n = n * 10 + (c - '0');
    if (n >= limit)
      return -1;
  }
  return n;
}

} // namespace

bool Parser::starts_expression(const Token& t) {
  if (t.kind == Token::Kind::integer || t.kind == Token::Kind::float_dec)
    return true;
  if (t.is("(") || t.is("-") || t.is("+") || t.is("~"))
    return true;
  return t.is("!") && peek(1).kind != Token::Kind::word;
}

ast::Operand Parser::immediate(const Value& v) const {
  ast::Operand o;
  if (!v.is_float) {
    o.kind = ast::Operand::Kind::imm_int;
    o.i = int64_t(v.u);
    return o;
  }
  o.kind = ast::Operand::Kind::imm_float;
  const float f = float(v.d);
  if (double(f) == v.d) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    o.bits = b;
    o.f32 = true;
  } else {
    std::memcpy(&o.bits, &v.d, 8);
  }
  return o;
}

bool Parser::resolve_symbol(const std::string_view name, ast::Operand& op) {
  op.name = std::string(name);
  if (const NameEntry* e = lookup(name)) {
    if (e->kind == NameEntry::Kind::reg)
      return false;
    op.ref = e->kind == NameEntry::Kind::var     ? ast::Operand::Ref::local
             : e->kind == NameEntry::Kind::param ? ast::Operand::Ref::param
                                                 : ast::Operand::Ref::ret;
    op.index = e->index;
    return true;
  }
  if (auto it = global_index_.find(name); it != global_index_.end()) {
    op.ref = ast::Operand::Ref::global;
    op.index = it->second;
    return true;
  }
  if (auto it = function_index_.find(name); it != function_index_.end()) {
    op.ref = ast::Operand::Ref::function;
    op.index = it->second;
    return true;
  }
  return false;
}

ast::Operand Parser::parse_word_operand(ast::Function& f, const Token& w, bool branch) {
  const std::string_view name = w.text;
  ast::Operand o;
  if (branch) {
    if (name[0] == '%' || name.find('.') != std::string_view::npos)
      fail(w, "expected a label as the branch target, found " + describe(w));
    o.kind = ast::Operand::Kind::label;
    o.name = std::string(name);
    return o;
  }
  const size_t dot = name.find('.');
  const std::string_view base = name.substr(0, dot);
  const std::string_view comp = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  // A declared name first: ptxas lets a kernel declare a register named like a special one.
  if (const NameEntry* e = lookup(name); e && e->kind == NameEntry::Kind::reg) {
    o.kind = ast::Operand::Kind::reg;
    o.reg = e->index;
    return o;
  }
  if (name[0] == '%') {
    const std::string_view sname = base.substr(1);
    for (const SpecialName& s : kSpecials) {
      if (s.name != sname)
        continue;
      o.kind = ast::Operand::Kind::special;
      o.special = s.special;
      if (s.vector) {
        const int c = component_of(comp);
        if (c < 0)
          fail(w, "special register '%" + std::string(s.name) + "' needs a component (.x, .y, .z), found " +
                      describe(w));
        o.component = uint8_t(c);
      } else if (dot != std::string_view::npos) {
        fail(w, "special register '%" + std::string(s.name) + "' has no components: " + describe(w));
      }
      return o;
    }
    int n;
    if (dot == std::string_view::npos && (n = numbered(sname, "envreg", 32)) >= 0) {
      o.kind = ast::Operand::Kind::special;
      o.special = Special::envreg;
      o.component = uint8_t(n);
      return o;
    }
    if (dot == std::string_view::npos && sname.size() > 3 && sname.substr(sname.size() - 3) == "_64" &&
        (n = numbered(sname.substr(0, sname.size() - 3), "pm", 8)) >= 0) {
      o.kind = ast::Operand::Kind::special;
      o.special = Special::pm64;
      o.component = uint8_t(n);
      return o;
    }
    if (dot == std::string_view::npos && (n = numbered(sname, "pm", 8)) >= 0) {
      o.kind = ast::Operand::Kind::special;
      o.special = Special::pm;
      o.component = uint8_t(n);
      return o;
    }
  }
  if (dot != std::string_view::npos) {
    // A vector register's element: %v.x
    const NameEntry* e = lookup(base);
    if (!e || e->kind != NameEntry::Kind::reg)
      fail(w, (base[0] == '%' ? "undeclared register '" : "undefined symbol '") + std::string(base) +
                  "' in " + describe(w));
    const ast::RegDecl& r = f.regs[size_t(e->index)];
    const int c = component_of(comp);
    if (r.vector == 1)
      fail(w, "'" + r.name + "' is not a vector register: " + describe(w));
    if (c < 0 || uint32_t(c) >= r.vector)
      fail(w, "bad vector element " + describe(w) + " of '" + r.name + "'");
    o.kind = ast::Operand::Kind::reg;
    o.reg = e->index;
    o.element = int8_t(c);
    return o;
  }
  o.kind = ast::Operand::Kind::symbol;
  if (resolve_symbol(name, o))
    return o;
  if (name[0] == '%')
    fail(w, "undeclared register '" + std::string(name) + "'");
  fail(w, "undefined symbol '" + std::string(name) + "'");
}

ast::Operand Parser::parse_simple_operand(ast::Function& f, const ast::Instruction& in, bool branch) {
  const Token t = peek();
  if (t.is("{"))
    return parse_vector(f, in, "{");
  if (t.is("["))
    return parse_address(f, in);
  if (t.is("!") && peek(1).kind == Token::Kind::word) {
    advance();
    const Token& w = next();
    ast::Operand o = parse_word_operand(f, w, false);
    if (o.kind != ast::Operand::Kind::reg || f.regs[size_t(o.reg)].bits != 1)
      fail(t, "'!' negates only predicate registers, not " + describe(w));
    o.negate = true;
    return o;
  }
  if (t.kind == Token::Kind::float_hex) {
    advance();
    const Token after = peek();
    if (!(after.is(",") || after.is(";") || after.is("}") || after.is(")") || after.is("]")))
      fail(after, "a hex float literal " + describe(t) + " cannot be part of an expression");
    ast::Operand o;
    o.kind = ast::Operand::Kind::imm_float;
    o.bits = t.u;
    o.f32 = t.f32;
    return o;
  }
  if (starts_expression(t))
    return immediate(parse_expression());
  if (t.kind == Token::Kind::word) {
    advance();
    if (t.text == "_") {
      ast::Operand o;
      o.kind = ast::Operand::Kind::sink;
      return o;
    }
    ast::Operand o = parse_word_operand(f, t, branch);
    if (o.kind == ast::Operand::Kind::symbol && accept("+"))
      o.offset = expect_int_expression("an offset after '+'");
    return o;
  }
  fail(t, "expected an operand of '" + in.opcode + "', found " + describe(t));
}

ast::Operand Parser::parse_operand(ast::Function& f, const ast::Instruction& in, bool branch) {
  ast::Operand a = parse_simple_operand(f, in, branch);
  if (!peek().is("|"))
    return a;
  const Token& bar = next();
  if (a.kind != ast::Operand::Kind::reg && a.kind != ast::Operand::Kind::sink)
    fail(bar, "'|' joins two register outputs (d|p)");
  ast::Operand b = parse_simple_operand(f, in, false);
  if (b.kind != ast::Operand::Kind::reg && b.kind != ast::Operand::Kind::sink)
    fail(bar, "'|' joins two register outputs (d|p)");
  ast::Operand p;
  p.kind = ast::Operand::Kind::pair;
  p.elems.push_back(std::move(a));
  p.elems.push_back(std::move(b));
  return p;
}

ast::Operand Parser::parse_vector(ast::Function& f, const ast::Instruction& in, std::string_view open) {
  const Token& o = next();
  const Nest nest(*this, o);
  const std::string_view close = open == "{" ? "}" : ")";
  ast::Operand v;
  v.kind = ast::Operand::Kind::vector;
  if (!peek().is(close)) {
    do {
      v.elems.push_back(parse_operand(f, in, false));
    } while (accept(","));
  } else if (open == "{") {
    fail(peek(), "empty vector operand '{}'");
  }
  const Token c = peek();
  if (!c.is(close))
    fail(c, "expected ',' or '" + std::string(close) + "' in the list opened at line " +
                std::to_string(o.line) + ", column " + std::to_string(o.column) + ", found " + describe(c));
  advance();
  return v;
}

// [reg], [reg+imm], [sym], [sym+imm], [imm], [tensormap, {coords}]
ast::Operand Parser::parse_address(ast::Function& f, const ast::Instruction& in) {
  const Token& open = next();
  ast::Operand a;
  a.kind = ast::Operand::Kind::address;
  const Token t = peek();
  if (t.kind == Token::Kind::word && t.text != "_") {
    advance();
    ast::Operand base = parse_word_operand(f, t, false);
    if (base.kind == ast::Operand::Kind::reg && base.element < 0) {
      a.reg = base.reg;
    } else if (base.kind == ast::Operand::Kind::symbol && base.ref != ast::Operand::Ref::function) {
      a.name = std::move(base.name);
      a.ref = base.ref;
      a.index = base.index;
    } else {
      fail(t, "an address needs a register or a variable as its base, found " + describe(t));
    }
    if (accept("+")) {
      a.offset = expect_int_expression("an offset after '+'");
    } else if (peek().is(",")) {
      advance();
      if (!peek().is("{"))
        fail(peek(), "expected '{' (tensor coordinates) after ',' in an address, found " + describe(peek()));
      a.elems.push_back(parse_vector(f, in, "{"));
    }
  } else if (starts_expression(t)) {
    a.offset = expect_int_expression("an address");
  } else {
    fail(t, "expected a register, a variable or a constant in '[ ]', found " + describe(t));
  }
  const Token c = peek();
  if (!c.is("]"))
    fail(c, "expected ']' closing the address opened at column " + std::to_string(open.column) + ", found " +
                describe(c));
  advance();
  return a;
}

// call{.uni} [(ret, ...),] func [, (arg, ...)] ;
void Parser::parse_call_operands(ast::Function& f, ast::Instruction& in) {
  if (peek().is("(")) {
    in.operands.push_back(parse_vector(f, in, "("));
    expect(",", "after the return list of 'call'");
  }
  const Token& fn = expect_word("the name of the called function");
  ast::Operand target;
  target.kind = ast::Operand::Kind::symbol;
  if (!resolve_symbol(fn.text, target) || target.ref != ast::Operand::Ref::function) {
    if (const NameEntry* e = lookup(fn.text); e && e->kind == NameEntry::Kind::reg)
      fail(fn, "indirect calls (through a register) are not supported");
    fail(fn, "call to undeclared function '" + std::string(fn.text) + "' (declare it before the call)");
  }
  const ast::Function& callee = mod_.functions[size_t(target.index)];
  const bool has_returns = !in.operands.empty();
  in.operands.push_back(std::move(target));
  ast::Operand args;
  args.kind = ast::Operand::Kind::vector;
  if (accept(",")) {
    if (!peek().is("("))
      fail(peek(), "call prototypes and indirect calls are not supported (found " + describe(peek()) + ")");
    args = parse_vector(f, in, "(");
    if (peek().is(","))
      fail(peek(), "call prototypes and indirect calls are not supported");
  }
  const size_t nret = has_returns ? in.operands.front().elems.size() : 0;
  if (nret != callee.returns.size() || args.elems.size() != callee.params.size())
    fail(fn, "call to '" + callee.name + "' with " + std::to_string(nret) + " return and " +
                 std::to_string(args.elems.size()) + " argument(s); it declares " +
                 std::to_string(callee.returns.size()) + " and " + std::to_string(callee.params.size()));
  in.operands.push_back(std::move(args));
}

} // namespace isatune::ptx::detail

// Declarations: state-space variables (module and function level) with their initialisers, functions with
// their parameter lists and performance directives, and `.reg` declarations.
#include <cmath>
#include <cstring>

#include "parser_impl.h"

namespace isatune::ptx::detail {

namespace {

bool power_of_two(uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

ast::StateSpace space_of(std::string_view d) {
  if (d == ".global")
    return ast::StateSpace::global;
  if (d == ".const")
    return ast::StateSpace::const_;
  if (d == ".shared" || d == ".shared::cta")
    return d == ".shared" ? ast::StateSpace::shared : ast::StateSpace::shared_cta;
  if (d == ".shared::cluster")
    return ast::StateSpace::shared_cluster;
  if (d == ".local")
    return ast::StateSpace::local;
  if (d == ".param")
    return ast::StateSpace::param;
  return ast::StateSpace::none;
}

bool is_float_type(std::string_view t) {
  return t == "f32" || t == "f64";
}

void put_le(std::vector<uint8_t>& out, uint64_t v, uint32_t bytes) {
  for (uint32_t i = 0; i < bytes; ++i)
    out.push_back(uint8_t(v >> (8 * i)));
}

} // namespace

// [.align N] space [.align N] [.vN] .type name[dims] [= init] {, name[dims] [= init]} ;
void Parser::parse_variables(Linkage link, ast::StateSpace space_hint, std::vector<ast::Variable>& out,
                             bool local) {
  const Token first = peek();
  ast::StateSpace space = space_hint;
  uint32_t align = 0, vector = 1;
  std::string type;
  int bytes = -1;
  for (;;) {
    const Token t = peek();
    if (t.kind != Token::Kind::directive)
      break;
    if (t.text == ".align") {
      if (vector != 1 || bytes >= 0)
        fail(t, "'.align' must come before the vector and element type");
      advance();
      const Token n = peek();
      const uint64_t a = expect_uint("an alignment after '.align'");
      if (!power_of_two(a) || a > (1u << 30))
        fail(n, "alignment " + describe(n) + " is not a power of two");
      align = std::max(align, uint32_t(a));
    } else if (space_of(t.text) != ast::StateSpace::none) {
      if (space != ast::StateSpace::none)
        fail(t, "a second state space " + describe(t) + " in a declaration");
      space = space_of(t.text);
      advance();
    } else if (t.text == ".v2" || t.text == ".v4" || t.text == ".v8") {
      if (bytes >= 0 || vector != 1)
        fail(t, "the vector size must come once, before the element type");
      vector = uint32_t(t.text[2] - '0');
      advance();
    } else if (type_bytes(t.text.substr(1)) >= 0) {
      if (bytes >= 0)
        fail(t, "a second element type " + describe(t) + " in a declaration");
      type = std::string(t.text.substr(1));
      bytes = type_bytes(type);
      advance();
    } else {
      break;
    }
  }
  if (space == ast::StateSpace::none)
    fail(first, "a variable declaration needs a state space (.global, .shared, ...)");
  if (bytes < 0)
    fail(peek(), "expected an element type (.b8, .u32, .f32, ...), found " + describe(peek()));
  if (bytes == 0)
    fail(first, "predicate variables must be declared in .reg");
  const bool initialisable = space == ast::StateSpace::global || space == ast::StateSpace::const_;
  for (;;) {
    const Token& name = expect_word("a variable name");
    if (name.text.find('.') != std::string_view::npos)
      fail(name, "malformed variable name " + describe(name));
    ast::Variable v;
    v.name = std::string(name.text);
    v.space = space;
    v.type = type;
    v.element_bytes = uint32_t(bytes);
    v.align = align;
    v.vector = vector;
    v.external = link.external;
    v.loc = {name.line, name.column};
    while (peek().is("[")) {
      const Token& open = next();
      if (v.dims.size() == 16)
        fail(open, "too many array dimensions for '" + v.name + "'");
      if (peek().is("]")) {
        if (!v.dims.empty())
          fail(open, "only the first array dimension may be left empty");
        v.dims.push_back(0);
      } else {
        const int64_t n = expect_int_expression("an array size");
        if (n <= 0)
          fail(open, "array size must be positive");
        v.dims.push_back(uint64_t(n));
      }
      expect("]", "after the array size");
    }
    if (peek().is("=")) {
      const Token& eq = next();
      if (!initialisable)
        fail(eq, "'" + v.name + "': no initialiser is allowed in this state space");
      if (link.external)
        fail(eq, "'" + v.name + "': an .extern variable cannot have an initialiser");
      parse_initialiser(v);
    }
    if (!local && space != ast::StateSpace::none) {
      if (global_index_.count(v.name) || function_index_.count(v.name))
        fail(name, "duplicate definition of '" + v.name + "'");
      global_index_.emplace(v.name, int32_t(out.size()));
    }
    if (local) {
      v.scope = open_scopes_.back();
      declare(name, v.name, NameEntry::Kind::var, int32_t(out.size()));
    }
    out.push_back(std::move(v));
    if (accept(","))
      continue;
    if (!peek().is(";"))
      fail(peek(),
           "expected ';' after the declaration of '" + out.back().name + "', found " + describe(peek()));
    advance();
    return;
  }
}

// Nested braces, one level per array dimension and one for a vector; fewer elements than declared are zeros.
void Parser::parse_initialiser(ast::Variable& v) {
  const uint32_t eb = v.element_bytes;
  const bool fl = is_float_type(v.type);
  const size_t levels = v.dims.size() + (v.vector > 1 ? 1 : 0);
  std::vector<uint64_t> extent(v.dims);
  if (v.vector > 1)
    extent.push_back(v.vector);
  // Bytes one element of level k spans.
  auto span = [&](size_t k) {
    uint64_t n = eb;
    for (size_t j = k + 1; j < levels; ++j)
      n *= extent[j];
    return n;
  };
  std::function<void(size_t)> level = [&](size_t k) {
    if (k == levels) {
      const Token at = peek();
      if (at.kind == Token::Kind::word)
        fail(at, "address initialisers ('" + std::string(at.text) + "') are not supported");
      if (at.is("{"))
        fail(at, "too many levels of braces in the initialiser of '" + v.name + "'");
      if (at.kind == Token::Kind::float_hex) {
        advance();
        if (!fl)
          fail(at, "initial value type mismatch: " + describe(at) + " for ." + v.type);
        uint64_t bits = at.u;
        if (eb == 4 && !at.f32) {
          double d;
          std::memcpy(&d, &at.u, 8);
          const float f = float(d);
          uint32_t b;
          std::memcpy(&b, &f, 4);
          bits = b;
        } else if (eb == 8 && at.f32) {
          float f;
          const uint32_t b = uint32_t(at.u);
          std::memcpy(&f, &b, 4);
          const double d = f;
          std::memcpy(&bits, &d, 8);
        }
        put_le(v.init, bits, eb);
        return;
      }
      const Value val = parse_expression();
      if (val.is_float != fl)
        fail(at, "initial value type mismatch: " + describe(at) + " for ." + v.type);
      uint64_t bits = val.u;
      if (fl && eb == 4) {
        const float f = float(val.d);
        uint32_t b;
        std::memcpy(&b, &f, 4);
        bits = b;
      } else if (fl) {
        std::memcpy(&bits, &val.d, 8);
      }
      put_le(v.init, bits, eb);
      return;
    }
    const Token& open = expect("{", ("in the initialiser of '" + v.name + "'").c_str());
    const size_t begin = v.init.size();
    uint64_t count = 0;
    if (!peek().is("}")) {
      do {
        if (extent[k] != 0 && count == extent[k])
          fail(peek(), "too many elements (" + describe(peek()) + ") in the initialiser of '" + v.name + "'");
        level(k + 1);
        ++count;
      } while (accept(","));
    }
    expect("}", ("closing the initialiser opened at line " + std::to_string(open.line)).c_str());
    if (extent[k] == 0) {
      extent[k] = count;
      if (k < v.dims.size())
        v.dims[k] = count;
    }
    v.init.resize(begin + extent[k] * span(k), 0);
  };
  level(0);
  v.is_const_init = true;
}

ast::Param Parser::parse_param(bool entry) {
  const Token kw = peek();
  if (kw.is_directive(".reg")) {
    if (entry)
      fail(kw, "kernel (.entry) parameters must be in .param, not .reg");
    advance();
    ast::Param p;
    p.reg = true;
    const Token ty = peek();
    if (ty.is_directive(".v2") || ty.is_directive(".v4"))
      fail(ty, "vector register parameters are not supported");
    const int bytes = ty.kind == Token::Kind::directive ? type_bytes(ty.text.substr(1)) : -1;
    if (bytes < 0)
      fail(ty, "expected a parameter type (.b32, .u64, ...), found " + describe(ty));
    if (bytes < 4)
      fail(ty,
           "predicate, 8-bit and 16-bit register parameters are not supported by the ABI: " + describe(ty));
    advance();
    p.type = std::string(ty.text.substr(1));
    p.element_bytes = uint32_t(bytes);
    const Token name = expect_word("a parameter name");
    if (name.text.find('.') != std::string_view::npos)
      fail(name, "malformed parameter name " + describe(name));
    p.name = std::string(name.text);
    p.loc = {name.line, name.column};
    return p;
  }
  if (!kw.is_directive(".param"))
    fail(kw, "expected '.param', found " + describe(kw));
  advance();
  ast::Param p;
  while (peek().is_directive(".align")) {
    advance();
    const Token n = peek();
    const uint64_t a = expect_uint("an alignment after '.align'");
    if (!power_of_two(a) || a > (1u << 30))
      fail(n, "alignment " + describe(n) + " is not a power of two");
    p.align = std::max(p.align, uint32_t(a));
  }
  const Token ty = peek();
  const int bytes = ty.kind == Token::Kind::directive ? type_bytes(ty.text.substr(1)) : -1;
  if (bytes < 0)
    fail(ty, "expected a parameter type (.u64, .b8, ...), found " + describe(ty));
  if (bytes == 0)
    fail(ty, "predicate parameters are not allowed (use .reg inside the body)");
  advance();
  p.type = std::string(ty.text.substr(1));
  p.element_bytes = uint32_t(bytes);
  if (peek().is_directive(".ptr")) {
    const Token& ptr = next();
    if (!entry)
      fail(ptr, "'.ptr' is allowed only on kernel (.entry) parameters");
    p.pointer = true;
    const ast::StateSpace s = space_of(peek().text);
    if (peek().kind == Token::Kind::directive && s != ast::StateSpace::none && s != ast::StateSpace::param) {
      p.pointer_space = std::string(next().text.substr(1));
    }
    if (peek().is_directive(".align")) {
      advance();
      const Token n = peek();
      const uint64_t a = expect_uint("an alignment after '.align'");
      if (!power_of_two(a) || a > (1u << 30))
        fail(n, "alignment " + describe(n) + " is not a power of two");
      p.pointer_align = uint32_t(a);
    }
  }
  const Token& name = expect_word("a parameter name");
  if (name.text.find('.') != std::string_view::npos)
    fail(name, "malformed parameter name " + describe(name));
  p.name = std::string(name.text);
  p.loc = {name.line, name.column};
  if (accept("[")) {
    const Token n = peek();
    const int64_t count = expect_int_expression("an array size");
    if (count <= 0)
      fail(n, "array size must be positive");
    p.array = uint64_t(count);
    expect("]", "after the array size");
  }
  return p;
}

std::vector<ast::Param> Parser::parse_param_list(bool entry) {
  expect("(", "opening the parameter list");
  std::vector<ast::Param> out;
  if (accept(")"))
    return out;
  do {
    out.push_back(parse_param(entry));
    for (size_t i = 0; i + 1 < out.size(); ++i)
      if (out[i].name == out.back().name)
        fail(peek(), "duplicate parameter '" + out.back().name + "'");
  } while (accept(","));
  expect(")", "closing the parameter list");
  lay_out(out);
  return out;
}

// The CUDA ABI's parameter buffer: each parameter at the next multiple of its alignment (natural by default).
void Parser::lay_out(std::vector<ast::Param>& params) {
  uint32_t at = 0;
  for (ast::Param& p : params) {
    if (p.reg)
      continue;
    const uint32_t a = p.align ? p.align : std::max<uint32_t>(p.element_bytes, 1);
    at = (at + a - 1) / a * a;
    p.offset = at;
    at += p.bytes();
  }
}

bool Parser::parse_performance_directive(ast::Function& f) {
  const Token d = peek();
  if (d.kind != Token::Kind::directive)
    return false;
  auto dims = [&](uint32_t(&out)[3]) {
    advance();
    for (int i = 0; i < 3; ++i)
      out[i] = 1;
    for (int i = 0; i < 3; ++i) {
      const Token n = peek();
      const uint64_t v = expect_uint(("a dimension after '" + std::string(d.text) + "'").c_str());
      if (v == 0 || v > UINT32_MAX)
        fail(n, "bad dimension " + describe(n) + " in '" + std::string(d.text) + "'");
      out[i] = uint32_t(v);
      if (i == 2 || !accept(","))
        break;
    }
  };
  auto one = [&](uint32_t& out) {
    advance();
    const Token n = peek();
    const uint64_t v = expect_uint(("a count after '" + std::string(d.text) + "'").c_str());
    if (v > UINT32_MAX)
      fail(n, "bad count " + describe(n));
    out = uint32_t(v);
  };
  const std::string_view t = d.text;
  if (t == ".maxntid")
    dims(f.maxntid);
  else if (t == ".reqntid")
    dims(f.reqntid);
  else if (t == ".reqnctapercluster")
    dims(f.reqnctapercluster);
  else if (t == ".maxnreg")
    one(f.maxnreg);
  else if (t == ".minnctapersm")
    one(f.minnctapersm);
  else if (t == ".maxclusterrank")
    one(f.maxclusterrank);
  else if (t == ".explicitcluster") {
    advance();
    f.explicitcluster = true;
  } else if (t == ".noreturn") {
    if (f.entry)
      fail(d, "'.noreturn' is allowed only on .func");
    advance();
    f.noreturn = true;
  } else if (t == ".pragma") {
    skip_pragma();
  } else {
    return false;
  }
  return true;
}

void Parser::parse_function(Linkage link) {
  const Token& kw = next();
  ast::Function f;
  f.entry = kw.is_directive(".entry");
  f.visible = link.visible;
  f.external = link.external;
  if (!f.entry && peek().is("("))
    f.returns = parse_param_list(false);
  const Token& name = expect_word(f.entry ? "a kernel name after '.entry'" : "a function name after '.func'");
  if (name.text.find('.') != std::string_view::npos || name.text[0] == '%')
    fail(name, "malformed function name " + describe(name));
  f.name = std::string(name.text);
  f.loc = {name.line, name.column};
  if (peek().is("("))
    f.params = parse_param_list(f.entry);
  while (parse_performance_directive(f)) {
  }
  const bool has_body = peek().is("{");
  if (!has_body && !peek().is(";"))
    fail(peek(), "expected '{' or ';' after the declaration of '" + f.name + "', found " + describe(peek()));
  if (has_body && link.external)
    fail(peek(), "an .extern function cannot have a body");
  if (global_index_.count(f.name))
    fail(name, "duplicate definition of '" + f.name + "'");

  int32_t index;
  if (auto it = function_index_.find(f.name); it != function_index_.end()) {
    index = it->second;
    ast::Function& old = mod_.functions[size_t(index)];
    if (old.entry != f.entry)
      fail(name, "'" + f.name + "' declared both as .entry and as .func");
    if (has_body && old.defined())
      fail(name, "duplicate definition of function '" + f.name + "'");
    if (!has_body) {
      advance();
      return; // another prototype
    }
    old = std::move(f);
  } else {
    index = int32_t(mod_.functions.size());
    function_index_.emplace(f.name, index);
    mod_.functions.push_back(std::move(f));
  }
  if (!has_body) {
    advance();
    return;
  }
  parse_body(mod_.functions[size_t(index)]);
}

// .reg [.vN] .type name[<N>] {, name[<N>]} ;
void Parser::parse_reg_declaration(ast::Function& f) {
  const Token& kw = next(); // .reg
  uint32_t vector = 1;
  if (peek().is_directive(".v2") || peek().is_directive(".v4") || peek().is_directive(".v8"))
    vector = uint32_t(next().text[2] - '0');
  const Token ty = peek();
  const int bytes = ty.kind == Token::Kind::directive ? type_bytes(ty.text.substr(1)) : -1;
  if (bytes < 0)
    fail(ty, "expected a register type after '.reg', found " + describe(ty));
  advance();
  const std::string type(ty.text.substr(1));
  const uint32_t bits = bytes == 0 ? 1 : uint32_t(bytes) * 8;
  if (bits == 1 && vector != 1)
    fail(ty, "predicate registers cannot be vectors");
  const uint32_t scope = open_scopes_.back();
  for (;;) {
    const Token& name = expect_word("a register name");
    if (name.text.find('.') != std::string_view::npos || name.text == "_")
      fail(name, "malformed register name " + describe(name));
    auto add = [&](std::string n) {
      ast::RegDecl r;
      r.name = n;
      r.type = type;
      r.bits = bits;
      r.vector = vector;
      r.scope = scope;
      declare(name, std::move(n), NameEntry::Kind::reg, int32_t(f.regs.size()));
      f.regs.push_back(std::move(r));
    };
    if (accept("<")) {
      const Token n = peek();
      const uint64_t count = expect_uint("a register count after '<'");
      if (count > 0xffffffffu) // ptxas: "Constant overflow"
        fail(n, "register count '" + std::string(n.text) + "' is too large (at most 4294967295)");
      expect(">", "after the register count");
      ast::RegDecl proto;
      proto.type = type;
      proto.bits = bits;
      proto.vector = vector;
      proto.scope = scope;
      declare_range(name, std::string(name.text), count, proto);
    } else {
      add(std::string(name.text));
    }
    if (accept(","))
      continue;
    if (!peek().is(";"))
      fail(peek(), "expected ';' after '.reg' declaration (line " + std::to_string(kw.line) + "), found " +
                       describe(peek()));
    advance();
    return;
  }
}

} // namespace isatune::ptx::detail

// Function bodies: `{ }` scopes, the names they declare (registers, variables; parameters live in the
// outermost scope), label definitions and their resolution, and instructions with their guards.
#include <algorithm>
#include <iterator>

#include "parser_impl.h"

namespace isatune::ptx::detail {

void Parser::reset_function_names() {
  name_top_.clear();
  entries_.clear();
  scope_entries_.clear();
  labels_.clear();
  open_scopes_.clear();
  label_uses_.clear();
  range_top_.clear();
  ranges_.clear();
  scope_ranges_.clear();
}

void Parser::declare(const Token& at, std::string name, NameEntry::Kind kind, int32_t index) {
  declare_at(at.line, at.column, std::move(name), kind, index);
}

void Parser::declare_at(uint32_t line, uint32_t column, std::string name, NameEntry::Kind kind,
                        int32_t index) {
  const uint32_t scope = open_scopes_.back();
  int32_t prev = -1;
  auto it = name_top_.find(name);
  if (it != name_top_.end()) {
    prev = it->second;
    if (entries_[size_t(prev)].scope == scope)
      fail_at(line, column, "duplicate definition of '" + name + "'");
  }
  if (labels_[scope].count(name))
    fail_at(line, column, "duplicate definition of '" + name + "' (also a label)");
  if (uint64_t k = 0; const RegRange* r = range_of(name, &k, scope))
    fail_at(line, column, "duplicate definition of '" + name + "' (" + r->base + "<" + std::to_string(r->count) +
                              "> in the same scope declares it)");
  const int32_t e = int32_t(entries_.size());
  if (it != name_top_.end())
    it->second = e;
  else
    name_top_.emplace(name, e);
  entries_.push_back({kind, index, scope, prev, std::move(name), false});
  scope_entries_.back().push_back(e);
}

const Parser::NameEntry* Parser::lookup(std::string_view name) {
  auto it = name_top_.find(name);
  const NameEntry* named = it == name_top_.end() ? nullptr : &entries_[size_t(it->second)];
  // Nothing is declared deeper than the innermost scope: the common case needs no range search.
  if (open_scopes_.empty() || ranges_.empty() || (named && named->scope == open_scopes_.back()))
    return named;
  uint64_t n = 0;
  const RegRange* r = range_of(name, &n);
  if (!r || (named && named->scope >= r->proto.scope)) // scope ids grow inwards along the open chain
    return named;
  // The range's register n, under its plain name (%r01 and %r1 are one register, as in ptxas): found if it
  // was used before, else added to Function::regs and to the names of the range's scope, so that it is
  // unshadowed with that scope.
  std::string plain = r->base + std::to_string(n);
  auto pt = name_top_.find(plain);
  if (pt != name_top_.end() && entries_[size_t(pt->second)].scope == r->proto.scope)
    return &entries_[size_t(pt->second)];
  ast::RegDecl d = r->proto;
  d.name = plain;
  const int32_t index = int32_t(function_->regs.size());
  function_->regs.push_back(std::move(d));
  const uint32_t scope = r->proto.scope;
  const int32_t e = int32_t(entries_.size());
  const int32_t prev = pt == name_top_.end() ? -1 : pt->second;
  entries_.push_back({NameEntry::Kind::reg, index, scope, prev, plain, true});
  const size_t depth = size_t(std::find(open_scopes_.begin(), open_scopes_.end(), scope) - open_scopes_.begin());
  scope_entries_[depth].push_back(e);
  if (pt != name_top_.end())
    pt->second = e;
  else
    name_top_.emplace(std::move(plain), e);
  return &entries_[size_t(e)];
}

bool Parser::split_register_name(std::string_view name, std::string_view* base, uint64_t* n) {
  size_t k = name.size();
  while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9')
    --k;
  if (k == 0 || k == name.size())
    return false;
  uint64_t v = 0;
  for (char c : name.substr(k)) {
    v = v * 10 + uint64_t(c - '0');
    if (v > 0xffffffffu) // past any range's count (leading zeros are fine: %r007 is %r7)
      return false;
  }
  *base = name.substr(0, k);
  *n = v;
  return true;
}

void Parser::declare_range(const Token& at, std::string base, uint64_t count, const ast::RegDecl& proto) {
  // ptxas 13.0 names a range's registers by the base without its trailing digits: a base that ends in a digit
  // (%t1<3>) declares names nothing can refer to. Two ranges of one base in one scope are duplicates whatever
  // their counts; so is a register declared alone with a name the range gives (either order).
  const size_t depth = scope_entries_.size() - 1;
  for (int32_t q : scope_ranges_[depth])
    if (ranges_[size_t(q)].base == base)
      fail(at, "duplicate definition of '" + base + "<...>' (this scope declared '" + base + "<" +
                   std::to_string(ranges_[size_t(q)].count) + ">' already)");
  for (int32_t e : scope_entries_[depth]) {
    const NameEntry& x = entries_[size_t(e)];
    std::string_view b;
    uint64_t n = 0;
    if (!x.from_range && split_register_name(x.name, &b, &n) && b == base && n < count)
      fail(at, "duplicate definition of '" + x.name + "' (declared earlier in this scope, and by " + base + "<" +
                   std::to_string(count) + ">)");
  }
  const int32_t r = int32_t(ranges_.size());
  auto it = range_top_.find(base);
  ranges_.push_back({base, count, proto, it == range_top_.end() ? -1 : it->second});
  if (it != range_top_.end())
    it->second = r;
  else
    range_top_.emplace(std::move(base), r);
  scope_ranges_[depth].push_back(r);
}

const Parser::RegRange* Parser::range_of(std::string_view name, uint64_t* index, int64_t scope_only) const {
  std::string_view base;
  uint64_t n = 0;
  if (!split_register_name(name, &base, &n))
    return nullptr;
  auto it = range_top_.find(base);
  if (it == range_top_.end())
    return nullptr;
  for (int32_t q = it->second; q >= 0; q = ranges_[size_t(q)].prev) { // innermost first
    const RegRange& r = ranges_[size_t(q)];
    if (n < r.count && (scope_only < 0 || r.proto.scope == uint64_t(scope_only))) {
      *index = n;
      return &r;
    }
  }
  return nullptr;
}

bool Parser::declared_alone_in_scope(std::string_view name, uint32_t scope) const {
  if (auto it = name_top_.find(name); it != name_top_.end())
    for (int32_t e = it->second; e >= 0; e = entries_[size_t(e)].prev)
      if (entries_[size_t(e)].scope == scope && !entries_[size_t(e)].from_range)
        return true;
  return false;
}

void Parser::open_scope(ast::Function& f) {
  const uint32_t id = uint32_t(f.scopes.size());
  f.scopes.push_back({open_scopes_.empty() ? -1 : int32_t(open_scopes_.back())});
  open_scopes_.push_back(id);
  scope_entries_.emplace_back();
  scope_ranges_.emplace_back();
  labels_.emplace_back();
}

void Parser::close_scope() {
  // Unshadow what the scope declared, newest first.
  const auto& mine = scope_entries_.back();
  for (auto e = mine.rbegin(); e != mine.rend(); ++e) {
    const NameEntry& n = entries_[size_t(*e)];
    if (n.prev < 0)
      name_top_.erase(n.name);
    else
      name_top_.find(n.name)->second = n.prev;
  }
  scope_entries_.pop_back();
  const auto& ranges = scope_ranges_.back();
  for (auto q = ranges.rbegin(); q != ranges.rend(); ++q) {
    const RegRange& r = ranges_[size_t(*q)];
    if (r.prev < 0)
      range_top_.erase(r.base);
    else
      range_top_.find(r.base)->second = r.prev;
  }
  scope_ranges_.pop_back();
  open_scopes_.pop_back();
}

void Parser::parse_body(ast::Function& f) {
  reset_function_names();
  function_ = &f;
  const Token& open = next(); // {
  open_scope(f);
  // Statements go into body_, reserved once for every statement left in the text (virtual memory until it
  // is touched), so that no body is built by reallocation; see the end for how they reach f.body.
  body_.clear();
  if (body_.capacity() == 0)
    body_.reserve(std::min<size_t>(statements_left_ + 1, size_t(1) << 20));
  // Parameters are names of the outermost scope; .reg ones are registers of the body.
  auto declare_params = [&](std::vector<ast::Param>& ps, NameEntry::Kind kind) {
    for (size_t i = 0; i < ps.size(); ++i) {
      ast::Param& p = ps[i];
      if (!p.reg) {
        declare_at(p.loc.line, p.loc.column, p.name, kind, int32_t(i));
        continue;
      }
      p.reg_index = int32_t(f.regs.size());
      f.regs.push_back({p.name, p.type, p.element_bytes * 8, 1, 0});
      declare_at(p.loc.line, p.loc.column, p.name, NameEntry::Kind::reg, p.reg_index);
    }
  };
  declare_params(f.params, NameEntry::Kind::param);
  declare_params(f.returns, NameEntry::Kind::ret);
  // Scopes opened and not yet closed, for the message about an unbalanced brace.
  std::vector<Token> opened{open};
  for (;;) {
    const Token t = peek();
    if (t.kind == Token::Kind::end)
      fail(opened.back(), "unbalanced '{': the block opened here (in '" + f.name + "') is never closed");
    if (t.is("}")) {
      advance();
      close_scope();
      opened.pop_back();
      if (open_scopes_.empty())
        break;
      continue;
    }
    if (t.is("{")) {
      opened.push_back(next());
      open_scope(f);
      continue;
    }
    parse_statement(f);
  }
  // A '}' too many ends the body early; say so before the labels after it are missed.
  if (peek().kind != Token::Kind::directive && peek().kind != Token::Kind::end && !peek().is("}"))
    fail(peek(), "expected a directive after the body of '" + f.name + "', found " + describe(peek()) +
                     " (does the '}' at line " + std::to_string(last_.line) + ", column " +
                     std::to_string(last_.column) + " close it early?)");
  resolve_labels(f);
  // A body that filled most of the buffer takes it; a smaller one is copied out at its exact size, leaving
  // the (already touched) buffer to the next function.
  if (body_.size() * 2 >= body_.capacity()) {
    f.body = std::move(body_);
    body_ = {};
  } else {
    f.body.assign(std::make_move_iterator(body_.begin()), std::make_move_iterator(body_.end()));
  }
}

void Parser::parse_statement(ast::Function& f) {
  const Token t = peek();
  if (t.kind == Token::Kind::directive) {
    const std::string_view d = t.text;
    if (d == ".reg")
      return parse_reg_declaration(f);
    if (d == ".local" || d == ".shared" || d == ".shared::cta" || d == ".param" || d == ".align" ||
        d == ".global" || d == ".const")
      return parse_variables({}, ast::StateSpace::none, f.locals, true);
    if (d == ".pragma")
      return skip_pragma();
    if (d == ".loc" || d == ".file")
      return skip_line(next().line);
    if (d == ".entry" || d == ".func" || d == ".visible" || d == ".extern")
      fail(t, describe(t) + " inside the body of '" + f.name + "' (a '}' is missing before it?)");
    fail(t, "unknown directive " + describe(t) + " in the body of '" + f.name + "'");
  }
  if (t.is("@")) {
    const Token at = next();
    return parse_instruction(f, &at);
  }
  if (t.kind == Token::Kind::word && peek(1).is(":")) {
    define_label(next());
    advance();
    return;
  }
  if (t.kind == Token::Kind::word)
    return parse_instruction(f, nullptr);
  fail(t, "expected an instruction, found " + describe(t));
}

void Parser::define_label(const Token& name) {
  if (name.text.find('.') != std::string_view::npos || name.text[0] == '%')
    fail(name, "malformed label " + describe(name));
  const uint32_t scope = open_scopes_.back();
  const std::string label(name.text);
  auto& here = labels_[scope];
  if (auto it = here.find(label); it != here.end())
    fail(name, "duplicate label '" + label + "' in one scope (first defined at line " +
                   std::to_string(body_[it->second].inst.loc.line) + ")");
  // ptxas lets a label share the name of a range's register (`.reg .b32 r<10>;` then `r5:`), not of a
  // register declared alone.
  if (declared_alone_in_scope(label, scope))
    fail(name, "duplicate definition of '" + label + "' (a label with the name of a declaration)");
  here.emplace(label, uint32_t(body_.size()));
  ast::Statement s;
  s.label = label;
  s.scope = scope;
  s.inst.loc = {name.line, name.column};
  body_.push_back(std::move(s));
}

void Parser::parse_instruction(ast::Function& f, const Token* guard_at) {
  ast::Instruction in;
  if (guard_at) {
    ast::Operand g;
    g.negate = accept("!");
    const Token p = peek();
    if (p.kind != Token::Kind::word)
      fail(p, "expected a predicate register after '@', found " + describe(p));
    advance();
    const NameEntry* e = lookup(p.text);
    if (!e || e->kind != NameEntry::Kind::reg)
      fail(p, (p.text[0] == '%' ? "undeclared register '" : "undeclared predicate '") + std::string(p.text) +
                  "'");
    if (f.regs[size_t(e->index)].bits != 1)
      fail(p, "the guard " + describe(p) + " is not a .pred register");
    g.kind = ast::Operand::Kind::reg;
    g.reg = e->index;
    in.guard = std::move(g);
  }
  const Token op = peek();
  if (guard_at && op.kind == Token::Kind::word && peek(1).is(":"))
    fail(op, "a label cannot follow a guard: " + describe(op));
  if (op.kind != Token::Kind::word || op.text[0] == '%')
    fail(op, std::string(guard_at ? "expected an instruction after the guard" : "expected an instruction") +
                 ", found " + describe(op));
  advance();
  in.opcode = std::string(op.text);
  in.loc = {op.line, op.column};
  const std::string_view text = op.text;
  size_t dot = text.find('.');
  in.mnemonic = std::string(text.substr(0, dot));
  if (!known_mnemonic(in.mnemonic))
    fail(op, "unknown instruction '" + in.opcode + "'");
  size_t parts = 0;
  for (char c : text)
    parts += c == '.';
  in.qualifiers.reserve(parts);
  while (dot != std::string_view::npos) {
    const size_t next_dot = text.find('.', dot + 1);
    in.qualifiers.emplace_back(
        text.substr(dot + 1, next_dot == std::string_view::npos ? next_dot : next_dot - dot - 1));
    dot = next_dot;
  }

  const uint32_t statement = uint32_t(body_.size());
  const bool branch = in.mnemonic == "bra";
  if (in.mnemonic == "call") {
    parse_call_operands(f, in);
  } else if (!peek().is(";")) {
    // An opcode with nothing after it but the next statement on a later line: the ';' is missing.
    const Token nt = peek();
    const bool next_statement =
        nt.line > op.line &&
        (nt.is("}") || nt.is("@") || nt.kind == Token::Kind::directive || nt.kind == Token::Kind::end ||
         (nt.kind == Token::Kind::word &&
          (peek(1).is(":") || (nt.text.find('.') != std::string_view::npos && nt.text[0] != '%' &&
                               known_mnemonic(nt.text.substr(0, nt.text.find('.')))))));
    if (next_statement)
      fail_at(op.line, op.column + uint32_t(op.text.size()),
              "missing ';' after '" + in.opcode + "' (the next token is " + describe(nt) + ")");
    // Collected in a reused buffer so that each instruction's operand vector is allocated once, exactly.
    operands_.clear();
    for (;;) {
      ast::Operand o = parse_operand(f, in, branch);
      if (o.kind == ast::Operand::Kind::label) {
        const Token& at = last_;
        label_uses_.push_back(
            {statement, uint32_t(operands_.size()), open_scopes_.back(), at.line, at.column, o.name});
      }
      operands_.push_back(std::move(o));
      if (!accept(","))
        break;
    }
    in.operands.assign(std::make_move_iterator(operands_.begin()), std::make_move_iterator(operands_.end()));
  }
  const Token end = peek();
  if (!end.is(";")) {
    const Token& last = last_;
    if (end.line > last.line || end.kind == Token::Kind::end)
      fail_at(last.line, last.column + uint32_t(last.text.size()),
              "missing ';' after '" + in.opcode + "' (the next token is " + describe(end) + ")");
    fail(end, "unexpected " + describe(end) + " in the operands of '" + in.opcode + "'");
  }
  const auto [lo, hi] = operand_count(in.mnemonic);
  if (int(in.operands.size()) < lo || int(in.operands.size()) > hi)
    fail_at(in.loc.line, in.loc.column,
            "'" + in.opcode + "' takes " +
                (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                " operand(s), found " + std::to_string(in.operands.size()));
  advance();
  ast::Statement s;
  s.scope = open_scopes_.back();
  s.inst = std::move(in);
  body_.push_back(std::move(s));
}

// A branch sees the labels of its own scope and of the scopes around it, wherever in them they are defined.
void Parser::resolve_labels(ast::Function& f) {
  for (const LabelUse& u : label_uses_) {
    int32_t s = int32_t(u.scope);
    const uint32_t* found = nullptr;
    while (s >= 0 && !found) {
      auto it = labels_[size_t(s)].find(u.name);
      if (it != labels_[size_t(s)].end())
        found = &it->second;
      s = f.scopes[size_t(s)].parent;
    }
    if (!found)
      fail_at(u.line, u.column, "undefined label '" + u.name + "'");
    body_[u.statement].inst.operands[u.operand].target = *found;
  }
}

} // namespace isatune::ptx::detail

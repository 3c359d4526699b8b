// The PTX parser's entry points and module level: header directives (.version, .target, .address_size),
// skipped debug directives, and the dispatch to variable and function declarations.
#include "isatune/ptx/parser.h"

#include <fstream>
#include <sstream>

#include "parser_impl.h"

namespace isatune::ptx {

ParseError::ParseError(std::string file, uint32_t line, uint32_t column, std::string message)
    : InputError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message),
      file_(std::move(file)), line_(line), column_(column), message_(std::move(message)) {}

ast::Module parse(std::string_view text, const std::string& file) {
  return detail::Parser(text, file).run();
}

ast::Module parse_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError("cannot read PTX file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

namespace detail {

namespace {

// The newest PTX ISA that ptxas 13.0 reads ("Unsupported .version 9.1; current version is '9.0'").
constexpr uint32_t kMaxVersion = 90;

bool valid_target(std::string_view t) {
  // sm_80, sm_90a, sm_100f, compute_90
  std::string_view rest;
  if (t.substr(0, 3) == "sm_")
    rest = t.substr(3);
  else if (t.substr(0, 8) == "compute_")
    rest = t.substr(8);
  else
    return false;
  size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9')
    ++n;
  if (n < 2)
    return false;
  rest = rest.substr(n);
  return rest.empty() || rest == "a" || rest == "f";
}

} // namespace

Parser::Parser(std::string_view text, const std::string& file) : file_(file), lexer_(text, file_) {
  mod_.file = file_;
  for (char c : text)
    statements_left_ += c == ';' || c == ':';
}

std::string Parser::describe(const Token& t) {
  if (t.kind == Token::Kind::end)
    return "end of file";
  return "'" + std::string(t.text) + "'";
}

void Parser::fail(const Token& at, const std::string& message) const {
  fail_at(at.line, at.column, message);
}

void Parser::fail_at(uint32_t line, uint32_t column, const std::string& message) const {
  throw ParseError(file_, line, column, message);
}

bool Parser::accept(std::string_view punct) {
  if (!peek().is(punct))
    return false;
  advance();
  return true;
}

Token Parser::expect(std::string_view punct, const char* what) {
  const Token t = peek();
  if (!t.is(punct))
    fail(t, "expected '" + std::string(punct) + "' " + what + ", found " + describe(t));
  return next();
}

Token Parser::expect_word(const char* what) {
  const Token t = peek();
  if (t.kind != Token::Kind::word)
    fail(t, std::string("expected ") + what + ", found " + describe(t));
  return next();
}

uint64_t Parser::expect_uint(const char* what) {
  const Token t = peek();
  if (t.kind != Token::Kind::integer)
    fail(t, std::string("expected ") + what + ", found " + describe(t));
  return next().u;
}

void Parser::skip_line(uint32_t line) {
  while (peek().kind != Token::Kind::end && peek().line == line)
    advance();
}

void Parser::skip_section() {
  const Token& s = next(); // .section
  while (peek().kind != Token::Kind::end && !peek().is("{"))
    advance();
  if (peek().kind == Token::Kind::end)
    fail(s, "'.section' without a '{ }' body");
  int depth = 0;
  do {
    const Token& t = next();
    if (t.kind == Token::Kind::end)
      fail(s, "unbalanced '{' in '.section'");
    if (t.is("{"))
      ++depth;
    if (t.is("}"))
      --depth;
  } while (depth > 0);
}

void Parser::skip_pragma() {
  const Token& p = next(); // .pragma
  if (peek().kind != Token::Kind::string)
    fail(peek(), "expected a string after '.pragma', found " + describe(peek()));
  while (peek().kind == Token::Kind::string) {
    advance();
    if (!accept(","))
      break;
  }
  if (!peek().is(";"))
    fail(p, "missing ';' after '.pragma'");
  advance();
}

void Parser::parse_header() {
  // Comments and .file may precede .version; nothing else may.
  while (peek().is_directive(".file"))
    skip_line(next().line);
  const Token v = peek();
  if (!v.is_directive(".version"))
    fail(v, "the module must start with '.version', found " + describe(v));
  advance();
  const Token num = peek();
  uint32_t major = 0, minor = 0;
  bool ok = num.kind == Token::Kind::float_dec;
  if (ok) {
    const std::string_view s = num.text;
    const size_t dot = s.find('.');
    ok = dot != std::string_view::npos && dot > 0 && dot + 1 < s.size() &&
         s.find_first_not_of("0123456789.") == std::string_view::npos;
    for (size_t i = 0; ok && i < dot; ++i)
      major = major * 10 + uint32_t(s[i] - '0');
    for (size_t i = dot + 1; ok && i < s.size(); ++i)
      minor = minor * 10 + uint32_t(s[i] - '0');
    ok = ok && major < 100 && minor < 10;
  }
  if (!ok || num.line != v.line)
    fail(num, "malformed '.version' " + describe(num) + " (expected MAJOR.MINOR, e.g. 8.0)");
  advance();
  if (major * 10 + minor > kMaxVersion)
    fail(num, "unsupported '.version " + std::string(num.text) + "' (ptxas 13.0 reads PTX ISA up to 9.0)");
  mod_.version_major = major;
  mod_.version_minor = minor;

  while (peek().is_directive(".file"))
    skip_line(next().line);
  const Token tg = peek();
  if (!tg.is_directive(".target"))
    fail(tg, "expected '.target' after '.version', found " + describe(tg));
  advance();
  const Token name = peek();
  if (name.kind != Token::Kind::word || name.line != tg.line || !valid_target(name.text))
    fail(name, "malformed '.target' " + describe(name) + " (expected a name such as sm_80 or sm_90a)");
  advance();
  mod_.target = std::string(name.text);
  while (accept(",")) {
    const Token& o = expect_word("a .target option");
    static constexpr std::string_view kOptions[] = {"texmode_unified", "texmode_independent", "debug",
                                                    "map_f64_to_f32"};
    bool known = false;
    for (std::string_view k : kOptions)
      known = known || o.text == k;
    if (!known)
      fail(o, "unknown '.target' option " + describe(o));
    mod_.target_options.emplace_back(o.text);
  }

  while (peek().is_directive(".file"))
    skip_line(next().line);
  if (peek().is_directive(".address_size")) {
    const Token& a = next();
    const Token n = peek();
    if (n.kind != Token::Kind::integer || (n.u != 32 && n.u != 64))
      fail(n, "malformed '.address_size' " + describe(n) + " (expected 32 or 64)");
    (void)a;
    mod_.address_size = uint32_t(next().u);
  } else {
    mod_.address_size = 32; // the PTX default
  }
}

void Parser::parse_module_item() {
  const Token t = peek();
  if (t.is("}"))
    fail(t, "unbalanced '}': no block is open");
  if (t.kind != Token::Kind::directive)
    fail(t, "expected a directive at module scope, found " + describe(t));
  const std::string_view d = t.text;
  if (d == ".file" || d == ".loc")
    return skip_line(next().line);
  if (d == ".section")
    return skip_section();
  if (d == ".pragma")
    return skip_pragma();
  if (d == ".version" || d == ".target" || d == ".address_size")
    fail(t, "'" + std::string(d) + "' may appear only once, at the start of the module");

  Linkage link;
  bool linkage = false;
  for (;;) {
    const Token k = peek();
    if (k.is_directive(".visible"))
      link.visible = true;
    else if (k.is_directive(".extern"))
      link.external = true;
    else if (k.is_directive(".weak"))
      link.weak = true;
    else
      break;
    advance();
    linkage = true;
  }
  const Token k = peek();
  if (k.is_directive(".entry") || k.is_directive(".func"))
    return parse_function(link);
  if (k.is_directive(".global") || k.is_directive(".const") || k.is_directive(".shared") ||
      k.is_directive(".align")) {
    parse_variables(link, ast::StateSpace::none, mod_.globals, false);
    return;
  }
  if (k.kind == Token::Kind::directive)
    fail(k, "unknown directive " + describe(k) + " at module scope");
  fail(linkage ? k : t, "expected a declaration, found " + describe(k));
}

ast::Module Parser::run() {
  parse_header();
  while (peek().kind != Token::Kind::end)
    parse_module_item();
  return std::move(mod_);
}

} // namespace detail

} // namespace isatune::ptx

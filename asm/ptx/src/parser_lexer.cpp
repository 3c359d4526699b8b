// PTX text -> tokens, in one pass over the characters (no regular expressions): comments dropped, numbers
// decoded, opcodes kept whole ("cp.async.bulk.tensor.2d.shared::cluster") for the parser to split.
#include <cmath>
#include <cstdlib>
#include <string>

#include "parser_impl.h"

namespace isatune::ptx::detail {

namespace {

bool ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}
bool digit(char c) {
  return c >= '0' && c <= '9';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

Token Lexer::next() {
  skip_space_and_comments();
  Token t;
  t.line = line_;
  t.column = column();
  if (i_ >= s_.size()) {
    t.kind = Token::Kind::end;
    return t;
  }
  const size_t start = i_;
  const char c = s_[i_];
  if (ident_start(c) || (c == '%' && i_ + 1 < s_.size() && ident_char(s_[i_ + 1]))) {
    ++i_;
    dotted_word();
    t.kind = Token::Kind::word;
  } else if (c == '.' && i_ + 1 < s_.size() && ident_start(s_[i_ + 1])) {
    ++i_;
    dotted_word(false);
    t.kind = Token::Kind::directive;
  } else if (digit(c) || (c == '.' && i_ + 1 < s_.size() && digit(s_[i_ + 1]))) {
    number(t);
  } else if (c == '"') {
    string_literal(t);
  } else {
    punct(t);
  }
  t.text = s_.substr(start, i_ - start);
  return t;
}

void Lexer::fail(uint32_t line, uint32_t col, const std::string& m) const {
  throw ParseError(file_, line, col, m);
}

void Lexer::skip_space_and_comments() {
  while (i_ < s_.size()) {
    const char c = s_[i_];
    if (c == '\n') {
      ++i_;
      ++line_;
      line_start_ = i_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i_;
    } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
      while (i_ < s_.size() && s_[i_] != '\n')
        ++i_;
    } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
      const uint32_t line = line_, col = column();
      i_ += 2;
      for (;;) {
        if (i_ + 1 >= s_.size())
          fail(line, col, "unterminated comment '/*'");
        if (s_[i_] == '*' && s_[i_ + 1] == '/') {
          i_ += 2;
          break;
        }
        if (s_[i_] == '\n') {
          ++line_;
          line_start_ = i_ + 1;
        }
        ++i_;
      }
    } else {
      return;
    }
  }
}

// The rest of an identifier with its ".part" and "::part" continuations (qualifiers may start with a digit:
// ".2d", "L2::128B"). Directives take "::" parts only (".shared::cta").
void Lexer::dotted_word(bool dots) {
  while (i_ < s_.size() && ident_char(s_[i_]))
    ++i_;
  for (;;) {
    if (dots && i_ + 1 < s_.size() && s_[i_] == '.' && ident_char(s_[i_ + 1])) {
      i_ += 1;
    } else if (i_ + 2 < s_.size() && s_[i_] == ':' && s_[i_ + 1] == ':' && ident_char(s_[i_ + 2])) {
      i_ += 2;
    } else {
      return;
    }
    while (i_ < s_.size() && ident_char(s_[i_]))
      ++i_;
  }
}

void Lexer::bad_number(const Token& t, size_t start) {
  size_t e = i_;
  while (e < s_.size() && (ident_char(s_[e]) || s_[e] == '.'))
    ++e;
  fail(t.line, t.column, "malformed immediate '" + std::string(s_.substr(start, e - start)) + "'");
}

void Lexer::number(Token& t) {
  const size_t start = i_;
  auto at = [&](size_t k) { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; };
  const char p = at(1);
  if (s_[i_] == '0' && (p == 'f' || p == 'F' || p == 'd' || p == 'D')) {
    const size_t n = (p == 'f' || p == 'F') ? 8 : 16;
    i_ += 2;
    uint64_t bits = 0;
    for (size_t k = 0; k < n; ++k) {
      const int h = hex_value(at(0));
      if (h < 0)
        bad_number(t, start);
      bits = bits << 4 | uint64_t(h);
      ++i_;
    }
    if (ident_char(at(0)))
      bad_number(t, start);
    t.kind = Token::Kind::float_hex;
    t.f32 = n == 8;
    t.u = bits;
    return;
  }
  if (s_[i_] == '0' && (p == 'x' || p == 'X' || p == 'b' || p == 'B')) {
    const bool hex = p == 'x' || p == 'X';
    i_ += 2;
    uint64_t v = 0;
    size_t digits = 0;
    for (;; ++i_, ++digits) {
      const int h = hex_value(at(0));
      if (h < 0 || (!hex && h > 1))
        break;
      v = hex ? v << 4 | uint64_t(h) : v << 1 | uint64_t(h); // wraps past 64 bits, as ptxas does
    }
    if (digits == 0)
      bad_number(t, start);
    finish_integer(t, start, v);
    return;
  }
  // Decimal integer, octal integer (leading 0) or decimal float.
  size_t k = i_;
  while (k < s_.size() && digit(s_[k]))
    ++k;
  bool is_float = false;
  if (k < s_.size() && s_[k] == '.') {
    is_float = true;
    ++k;
    while (k < s_.size() && digit(s_[k]))
      ++k;
  }
  if (k < s_.size() && (s_[k] == 'e' || s_[k] == 'E')) {
    size_t e = k + 1;
    if (e < s_.size() && (s_[e] == '+' || s_[e] == '-'))
      ++e;
    if (e < s_.size() && digit(s_[e])) {
      is_float = true;
      k = e;
      while (k < s_.size() && digit(s_[k]))
        ++k;
    }
  }
  if (is_float) {
    i_ = k;
    if (ident_char(at(0)))
      bad_number(t, start);
    t.kind = Token::Kind::float_dec;
    t.d = std::strtod(std::string(s_.substr(start, k - start)).c_str(), nullptr);
    return;
  }
  const bool octal = s_[i_] == '0' && k - i_ > 1;
  uint64_t v = 0;
  for (; i_ < k; ++i_) {
    const uint64_t dgt = uint64_t(s_[i_] - '0');
    if (octal) {
      if (dgt > 7)
        bad_number(t, start);
      v = v << 3 | dgt;
    } else {
      if (v > (UINT64_MAX - dgt) / 10)
        fail(t.line, t.column,
             "integer constant overflow '" + std::string(s_.substr(start, k - start)) + "'");
      v = v * 10 + dgt;
    }
  }
  finish_integer(t, start, v);
}

void Lexer::finish_integer(Token& t, size_t start, uint64_t v) {
  if (i_ < s_.size() && s_[i_] == 'U') {
    t.is_unsigned = true;
    ++i_;
  }
  if (i_ < s_.size() && ident_char(s_[i_]))
    bad_number(t, start);
  t.kind = Token::Kind::integer;
  t.u = v;
}

void Lexer::string_literal(Token& t) {
  ++i_;
  while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\n')
    i_ += s_[i_] == '\\' ? 2 : 1;
  if (i_ >= s_.size() || s_[i_] != '"')
    fail(t.line, t.column, "unterminated string");
  ++i_;
  t.kind = Token::Kind::string;
}

void Lexer::punct(Token& t) {
  t.kind = Token::Kind::punct;
  const char c = s_[i_];
  const char n = i_ + 1 < s_.size() ? s_[i_ + 1] : '\0';
  static constexpr std::string_view kTwo[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};
  for (std::string_view two : kTwo)
    if (c == two[0] && n == two[1]) {
      i_ += 2;
      return;
    }
  static constexpr std::string_view kOne = "{}[](),;:+-*/%~!&|^?<>=@";
  if (kOne.find(c) == std::string_view::npos) {
    std::string shown = (unsigned char)c < 32 || (unsigned char)c > 126
                            ? "\\x" + std::to_string((unsigned char)c)
                            : std::string(1, c);
    fail(t.line, t.column, "unexpected character '" + shown + "'");
  }
  ++i_;
}

} // namespace isatune::ptx::detail

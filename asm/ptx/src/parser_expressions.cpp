// Constant expressions, folded as ptxas does with C's rules: 64-bit integers (unsigned when either side is),
// doubles when either side is a decimal float; ?: || && | ^ & == != < > <= >= << >> + - * / % and unary + - !
// ~.
#include "parser_impl.h"

namespace isatune::ptx::detail {

namespace {

struct BinaryOp {
  std::string_view text;
  int precedence;
};
constexpr BinaryOp kBinary[] = {
    {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5}, {"==", 6}, {"!=", 6}, {"<", 7},  {">", 7},
    {"<=", 7}, {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9}, {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10},
};

int precedence_of(const Token& t) {
  if (t.kind != Token::Kind::punct)
    return -1;
  for (const BinaryOp& b : kBinary)
    if (t.text == b.text)
      return b.precedence;
  return -1;
}

Value integer(uint64_t u, bool is_unsigned) {
  Value v;
  v.u = u;
  v.is_unsigned = is_unsigned;
  return v;
}

Value boolean(bool b) {
  return integer(b ? 1 : 0, false);
}

double as_double(const Value& v) {
  if (v.is_float)
    return v.d;
  return v.is_unsigned ? double(v.u) : double(int64_t(v.u));
}

bool truth(const Value& v) {
  return v.is_float ? v.d != 0 : v.u != 0;
}

} // namespace

Value Parser::parse_expression() {
  return parse_ternary();
}

Value Parser::parse_ternary() {
  Value c = parse_binary(1);
  if (!peek().is("?"))
    return c;
  advance();
  Value a = parse_ternary();
  expect(":", "in a '?:' expression");
  Value b = parse_ternary();
  return truth(c) ? a : b;
}

Value Parser::parse_binary(int min_precedence) {
  Value lhs = parse_unary();
  for (;;) {
    const Token op = peek();
    const int p = precedence_of(op);
    if (p < min_precedence)
      return lhs;
    advance();
    const Value rhs = parse_binary(p + 1);
    const std::string_view o = op.text;
    if (o == "||") {
      lhs = boolean(truth(lhs) || truth(rhs));
      continue;
    }
    if (o == "&&") {
      lhs = boolean(truth(lhs) && truth(rhs));
      continue;
    }
    if (lhs.is_float || rhs.is_float) {
      const double a = as_double(lhs), b = as_double(rhs);
      Value r;
      r.is_float = true;
      if (o == "+")
        r.d = a + b;
      else if (o == "-")
        r.d = a - b;
      else if (o == "*")
        r.d = a * b;
      else if (o == "/")
        r.d = a / b;
      else if (o == "==")
        r = boolean(a == b);
      else if (o == "!=")
        r = boolean(a != b);
      else if (o == "<")
        r = boolean(a < b);
      else if (o == ">")
        r = boolean(a > b);
      else if (o == "<=")
        r = boolean(a <= b);
      else if (o == ">=")
        r = boolean(a >= b);
      else
        fail(op, "operator '" + std::string(o) + "' needs integer operands");
      lhs = r;
      continue;
    }
    const bool u = lhs.is_unsigned || rhs.is_unsigned;
    const uint64_t a = lhs.u, b = rhs.u;
    const int64_t sa = int64_t(a), sb = int64_t(b);
    if ((o == "/" || o == "%") && b == 0)
      fail(op, "division by zero in a constant expression");
    if (o == "+")
      lhs = integer(a + b, u);
    else if (o == "-")
      lhs = integer(a - b, u);
    else if (o == "*")
      lhs = integer(a * b, u);
    else if (o == "/")
      lhs = integer(u ? a / b : (sb == -1 ? 0 - a : uint64_t(sa / sb)), u);
    else if (o == "%")
      lhs = integer(u ? a % b : (sb == -1 ? 0 : uint64_t(sa % sb)), u);
    else if (o == "<<")
      lhs = integer(b >= 64 ? 0 : a << b, lhs.is_unsigned);
    else if (o == ">>")
      lhs =
          integer(lhs.is_unsigned ? (b >= 64 ? 0 : a >> b) : uint64_t(b >= 64 ? (sa < 0 ? -1 : 0) : sa >> b),
                  lhs.is_unsigned);
    else if (o == "&")
      lhs = integer(a & b, u);
    else if (o == "^")
      lhs = integer(a ^ b, u);
    else if (o == "|")
      lhs = integer(a | b, u);
    else if (o == "==")
      lhs = boolean(a == b);
    else if (o == "!=")
      lhs = boolean(a != b);
    else if (o == "<")
      lhs = boolean(u ? a < b : sa < sb);
    else if (o == ">")
      lhs = boolean(u ? a > b : sa > sb);
    else if (o == "<=")
      lhs = boolean(u ? a <= b : sa <= sb);
    else
      lhs = boolean(u ? a >= b : sa >= sb);
  }
}

Value Parser::parse_unary() {
  const Token t = peek();
  const Nest nest(*this, t);
  if (t.is("-") || t.is("+") || t.is("~") || t.is("!")) {
    advance();
    Value v = parse_unary();
    if (t.is("+"))
      return v;
    if (t.is("!"))
      return boolean(!truth(v));
    if (v.is_float) {
      if (t.is("~"))
        fail(t, "'~' needs an integer operand");
      v.d = -v.d;
      return v;
    }
    v.u = t.is("-") ? 0 - v.u : ~v.u;
    return v;
  }
  return parse_primary();
}

Value Parser::parse_primary() {
  const Token t = peek();
  if (t.kind == Token::Kind::integer) {
    advance();
    return integer(t.u, t.is_unsigned);
  }
  if (t.kind == Token::Kind::float_dec) {
    advance();
    Value v;
    v.is_float = true;
    v.d = t.d;
    return v;
  }
  if (t.kind == Token::Kind::float_hex)
    fail(t, "a hex float literal " + describe(t) + " cannot be part of an expression");
  if (t.is("(")) {
    advance();
    Value v = parse_expression();
    expect(")", "closing the parenthesised expression");
    return v;
  }
  fail(t, "expected a constant, found " + describe(t));
}

int64_t Parser::expect_int_expression(const char* what) {
  const Token t = peek();
  if (!starts_expression(t))
    fail(t, std::string("expected ") + what + ", found " + describe(t));
  const Value v = parse_expression();
  if (v.is_float)
    fail(t, std::string("expected an integer for ") + what + ", found a floating-point constant");
  return int64_t(v.u);
}

} // namespace isatune::ptx::detail

#pragma once
// The PTX parser's insides, shared by parser_*.cpp: tokens, the lexer, and the recursive-descent Parser whose
// methods are split by concept (module, declarations, body, operands, expressions, mnemonics).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "isatune/ptx/ast.h"
#include "isatune/ptx/parser.h"

namespace isatune::ptx::detail {

struct Token {
  enum class Kind : uint8_t {
    word,      // identifier or opcode, dots and "::" included: ld.global.v4.f32, %tid.x, $L__BB0_1, _
    directive, // .reg, .b32, .shared::cta
    integer,   // u: value (mod 2^64), is_unsigned: U suffix
    float_hex, // 0fXXXXXXXX (f32 set) or 0dXXXXXXXXXXXXXXXX: u holds the bits
    float_dec, // 1.5, 1e3: d
    string,    // "..." (text keeps the quotes)
    punct,     // { } [ ] ( ) , ; : + - * / % ~ ! & | ^ ? < > = @ << >> <= >= == != && ||
    end,
  };
  Kind kind = Kind::end;
  bool is_unsigned = false;
  bool f32 = false;
  std::string_view text;
  uint32_t line = 0, column = 0;
  uint64_t u = 0;
  double d = 0;

  bool is(std::string_view p) const { return kind == Kind::punct && text == p; }
  bool is_directive(std::string_view d_) const { return kind == Kind::directive && text == d_; }
};

// Tokens one at a time (the parser looks at most two ahead, so no token array is built), comments dropped;
// Kind::end at the end, for ever. Throws ParseError on a malformed number, an unterminated comment or string,
// or a character PTX has no use for.
class Lexer {
public:
  Lexer(std::string_view text, const std::string& file) : s_(text), file_(file) {}
  Token next();

private:
  uint32_t column() const { return static_cast<uint32_t>(i_ - line_start_ + 1); }
  [[noreturn]] void fail(uint32_t line, uint32_t col, const std::string& m) const;
  void skip_space_and_comments();
  void dotted_word(bool dots = true);
  [[noreturn]] void bad_number(const Token& t, size_t start);
  void number(Token& t);
  void finish_integer(Token& t, size_t start, uint64_t v);
  void string_literal(Token& t);
  void punct(Token& t);

  std::string_view s_;
  const std::string& file_;
  size_t i_ = 0;
  size_t line_start_ = 0;
  uint32_t line_ = 1;
};

// The mnemonics (first dotted component of an opcode) the parser accepts.
bool known_mnemonic(std::string_view m);

// The operand count a mnemonic always takes, {min, max}; {0, 255} where it depends on the qualifiers.
std::pair<int, int> operand_count(std::string_view m);

// Bytes of one element of a PTX fundamental type ("b32" -> 4, "pred" -> 0 as a marker), or -1 when unknown.
int type_bytes(std::string_view type);

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V> using NameMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

// A constant expression's value (C rules: 64-bit integers, signed unless a U suffix; doubles).
struct Value {
  bool is_float = false;
  bool is_unsigned = false;
  uint64_t u = 0;
  double d = 0;
};

class Parser {
public:
  Parser(std::string_view text, const std::string& file);
  ast::Module run();

private:
  // ---- tokens (parser.cpp)
  // A reference from peek() is valid until the next advance().
  const Token& peek(size_t k = 0) {
    while (nlook_ <= k)
      look_[nlook_++] = lexer_.next();
    return look_[k];
  }
  void advance() {
    peek();
    last_ = look_[0];
    if (last_.kind == Token::Kind::punct && (last_.text[0] == ';' || last_.text[0] == ':') &&
        statements_left_)
      --statements_left_;
    look_[0] = look_[1];
    --nlook_;
  }
  Token next() {
    advance();
    return last_;
  }
  bool accept(std::string_view punct);
  Token expect(std::string_view punct, const char* what);
  Token expect_word(const char* what);
  uint64_t expect_uint(const char* what);
  [[noreturn]] void fail(const Token& at, const std::string& message) const;
  [[noreturn]] void fail_at(uint32_t line, uint32_t column, const std::string& message) const;
  static std::string describe(const Token& t);
  void skip_line(uint32_t line); // .loc, .file: the rest of the line
  void skip_section();           // .section name { ... }
  void skip_pragma();            // .pragma "..." ;

  // ---- module (parser.cpp)
  void parse_header();
  void parse_module_item();

  // ---- declarations (parser_declarations.cpp)
  struct Linkage {
    bool visible = false, external = false, weak = false;
  };
  void parse_variables(Linkage link, ast::StateSpace space_hint, std::vector<ast::Variable>& out, bool local);
  void parse_initialiser(ast::Variable& v);
  void parse_function(Linkage link);
  std::vector<ast::Param> parse_param_list(bool entry);
  ast::Param parse_param(bool entry);
  static void lay_out(std::vector<ast::Param>& params);
  bool parse_performance_directive(ast::Function& f);
  void parse_reg_declaration(ast::Function& f);

  // ---- body (parser_body.cpp)
  void parse_body(ast::Function& f);
  void parse_statement(ast::Function& f);
  void parse_instruction(ast::Function& f, const Token* guard_at);
  void define_label(const Token& name);
  void open_scope(ast::Function& f);
  void close_scope();
  void resolve_labels(ast::Function& f);

  // ---- operands (parser_operands.cpp)
  ast::Operand parse_operand(ast::Function& f, const ast::Instruction& in, bool branch);
  ast::Operand parse_simple_operand(ast::Function& f, const ast::Instruction& in, bool branch);
  ast::Operand parse_word_operand(ast::Function& f, const Token& w, bool branch);
  ast::Operand parse_address(ast::Function& f, const ast::Instruction& in);
  ast::Operand parse_vector(ast::Function& f, const ast::Instruction& in, std::string_view open);
  void parse_call_operands(ast::Function& f, ast::Instruction& in);
  bool resolve_symbol(const std::string_view name, ast::Operand& op);
  ast::Operand immediate(const Value& v) const;
  bool starts_expression(const Token& t);

  // ---- constant expressions (parser_expressions.cpp)
  Value parse_expression();
  Value parse_ternary();
  Value parse_binary(int min_precedence);
  Value parse_unary();
  Value parse_primary();
  int64_t expect_int_expression(const char* what);

  // ---- names in function scopes (parser_body.cpp)
  struct NameEntry {
    enum class Kind : uint8_t { reg, var, param, ret } kind;
    int32_t index;  // Function::regs / locals / params / returns
    uint32_t scope; // scopes index; params and returns are in scope 0
    int32_t prev;   // the entry this one shadows, -1 for none
    std::string name;
    bool from_range; // a register of a `<N>` range, added on its first use
  };
  void declare(const Token& at, std::string name, NameEntry::Kind kind, int32_t index);
  void declare_at(uint32_t line, uint32_t column, std::string name, NameEntry::Kind kind, int32_t index);
  // The declaration `name` refers to here, innermost first; a register of a `%r<N>` range enters
  // Function::regs (and the names of the range's scope) on its first use.
  const NameEntry* lookup(std::string_view name);
  void reset_function_names();

  // A parameterized declaration, `.reg .b32 %r<N>;`: the names %r0 .. %r(N-1). They are not expanded (a
  // declaration of millions of registers costs nothing, as in ptxas); lookup() adds each on its first use.
  struct RegRange {
    std::string base;
    uint64_t count;
    ast::RegDecl proto; // all but the name
    int32_t prev;       // the range of the same base this one shadows, -1 for none
  };
  void declare_range(const Token& at, std::string base, uint64_t count, const ast::RegDecl& proto);
  // `name` as a range's register: the base (the name without its trailing digits) and the number those
  // digits make; false when there are none, or only digits, or the number passes 2^32-1.
  static bool split_register_name(std::string_view name, std::string_view* base, uint64_t* n);
  // The innermost visible range that names `name`, with the register's number; scope_only >= 0: only a range
  // of that scope. nullptr for none.
  const RegRange* range_of(std::string_view name, uint64_t* index, int64_t scope_only = -1) const;
  // Whether `name` was declared on its own (not as a range's register) in `scope` itself.
  bool declared_alone_in_scope(std::string_view name, uint32_t scope) const;

  std::string file_;
  Lexer lexer_;
  Token look_[2];
  size_t nlook_ = 0;
  Token last_;                         // the token advance() passed last
  size_t statements_left_ = 0;         // ';' and ':' not yet passed: a bound on the statements still to come
  std::vector<ast::Operand> operands_; // scratch for one instruction's operands
  std::vector<ast::Statement> body_;   // the body being parsed (moved or copied into Function::body)
  uint32_t depth_ = 0; // nesting of expressions and vector operands (bounded: no stack overflow)
  struct Nest {
    Parser& p;
    Nest(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > 200)
        p.fail(at, "expression or operand nested too deeply");
    }
    ~Nest() { --p.depth_; }
  };
  ast::Module mod_;

  // Module scope: globals and functions by name.
  NameMap<int32_t> global_index_;
  NameMap<int32_t> function_index_;

  // Function scope, valid while a body is parsed.
  NameMap<int32_t> name_top_;                       // name -> index into entries_ of the visible declaration
  std::vector<NameEntry> entries_;                  // all declarations of the function, in order
  std::vector<std::vector<int32_t>> scope_entries_; // per open scope: the entries it declared
  std::vector<NameMap<uint32_t>> labels_;           // per scope: label -> statement index
  std::vector<uint32_t> open_scopes_;               // the stack of open scopes (Function::scopes indices)
  NameMap<int32_t> range_top_;                      // range base -> index into ranges_ of the newest visible
  std::vector<RegRange> ranges_;                    // every range of the function (closed scopes' are unlinked)
  std::vector<std::vector<int32_t>> scope_ranges_;  // per open scope: the ranges it declared
  ast::Function* function_ = nullptr;               // the function whose body is parsed
  struct LabelUse {
    uint32_t statement, operand, scope, line, column;
    std::string name;
  };
  std::vector<LabelUse> label_uses_;
};

} // namespace isatune::ptx::detail

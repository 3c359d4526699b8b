// Refuses, before LLVM sees the text, everything LLVM 22's assembly lexer (llvm/lib/MC/MCParser/AsmLexer.cpp)
// turns into an error token. The AMDGPU parser's error recovery loops forever on such a token in some places
// (llvm-mc too), so isatune never hands LLVM one. The fuzzer found four of them (tests/fuzz/regressions/asm_text/:
// an unterminated string, a NUL byte, 0xff bytes, an unterminated /* comment); minimised, `a,"`, `x[2/*`, `a,'`,
// `a,0x `, `a,09 `, `a,` followed by a backquote or by any byte from 0x80 up each hang llvm-mc -mcpu=gfx942: an
// unknown mnemonic or a bad operand, then a lexer error. LLVM refuses every such input anyway, so nothing it would
// assemble is lost; the only difference is the text inside a skipped `.if 0` block, which LLVM lexes without
// reporting errors and which is checked here like the rest.
//
// Why it loops: after a bad operand, AMDGPUAsmParser::parseInstruction skips to the end of the statement with
//   while (!trySkipToken(AsmToken::EndOfStatement)) lex();
// which never ends at the end of the file (lex() there returns Eof again). It gets past the file's last end of
// statement only through MCAsmParser::Error, which consumes the token after an error token ("supercede the
// lexing error", llvm/lib/MC/MCParser/MCAsmParser.cpp): an error token right before the last end of statement
// makes the loop step over both. So what matters is the last statement; check_llvm_final_token
// (llvm_final_token_check.cpp) asks LLVM's own lexer about it, behind this scan.
//
// The scan follows AsmLexer for the AMDGPU target (not MASM, HLASM or Motorola syntax): comments are `;` and `//`
// to the end of the line, `#` as the first token of a statement, and `/* */`; identifiers are
// [a-zA-Z_.][a-zA-Z0-9_.$?@]* (`$`, `@` and `?` alone are tokens of their own); a string constant must close on
// its line (LLVM would let one run on to a later quote; refusing that is stricter than LLVM). The YAML between
// .amdgpu_metadata and .end_amdgpu_metadata is read by its own parser and is not lexed here, when LLVM surely
// reads it so: a block that closes, outside any .if, .macro, .rept, .irp(c), .amdhsa_kernel, .amd_kernel_code_t
// or .amdgpu_pal_metadata, not after a macro named .amdgpu_metadata (LLVM looks macros up first), and not
// `.amdgpu_metadata:` (a label) or `.amdgpu_metadata = ...` (an assignment).
// Elsewhere LLVM may lex those lines as statements (a block under `.if 0` is skipped statement by statement; one
// that never closes is an error), so they are checked here like the rest (found by fuzz_asm_text: a label
// `.amdgpu_metadata:`, then high bytes to the end of the file, hung; regressions/asm_text/metadata-high-bytes-hang.s).
// With one exception, aliases, the YAML is LLVM's business:
// LLVM 22's YAML reader (msgpack::Document::fromYAML over yaml::Input) takes no alias (`*name`). It reports
// "unknown node kind" for one, and in some places (the root of the first document, a value in a flow mapping)
// dereferences null in yaml::Input::getNodeKind first and segfaults (found by fuzz_asm_text, regression
// yaml-root-alias-crash.s; llvm-mc-22 crashes on `.amdgpu_metadata *x` too). So every alias in a block is refused
// here, at its `*`, with its line and column, in every block, skipped or not (a macro's block runs when the macro
// does): LLVM refuses each of them anyway.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "internal.h"
#include "isatune/toolchain/diagnostic.h"

namespace isatune::toolchain::detail {
namespace {

class LexerCheck {
public:
  LexerCheck(std::string_view text, const std::string& file) : t_(text), file_(file) {}

  // Returns where the text that is lexed here to its end begins: the line of the last skipped block's
  // .end_amdgpu_metadata, or 0 (check_llvm_final_token reads from there).
  size_t run() {
    // A NUL byte or two 0xff bytes hang LLVM 22's lexer even inside comments (found by fuzz_asm_text,
    // regressions nul-byte-hang.s, ff-bytes-hang.s); text never holds a NUL, and 0xff is no part of UTF-8 text.
    if (size_t at = t_.find_first_of(std::string_view("\0\xff", 2)); at != std::string_view::npos)
      fail(at, std::string(t_[at] ? "a 0xff" : "a NUL") + " byte in the text (binary data, not assembly)");
    bool statement_start = true; // AsmLexer's IsAtStartOfStatement: a `#` here starts a comment
    bool parse_start = true;     // the parser's: a directive or mnemonic here (after a label too)
    size_t i = metadata_block(0);
    while (i < t_.size()) {
      const char c = t_[i];
      if (c == '\n' || c == '\r') {
        statement_start = parse_start = true;
        ++i;
        if (c == '\n') i = metadata_block(i);
        continue;
      }
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (c == ';' || (c == '#' && statement_start) || (c == '/' && at(i + 1) == '/')) {
        i = line_end(i);
        continue;
      }
      const bool first = parse_start;
      statement_start = parse_start = false;
      const size_t next = token(i);
      if (identifier_start(c) && t_.substr(i, next - i) == kCodeObjectVersion) code_object_version(i, next);
      if (digit(c) && local_label_reference(next)) local_label_number(i, next);
      if (first && (identifier_start(c) || digit(c))) {
        if (identifier_start(c)) {
          const std::string_view word = t_.substr(i, next - i);
          depth_ = std::max(0, depth_ + depth_change(word));
          if (lower(word) == ".macro" && lower(next_word(next)) == ".amdgpu_metadata") shadowed_ = true;
        }
        // `name:` and `1:` define a label; a statement follows on the line (LLVM's parseStatement).
        const size_t colon = t_.find_first_not_of(" \t", next);
        if (colon != std::string_view::npos && t_[colon] == ':') {
          if (digit(c)) local_label_number(i, next);
          parse_start = true;
          i = colon + 1;
          continue;
        }
      }
      i = next;
    }
    return tail_;
  }

private:
  char at(size_t i) const { return i < t_.size() ? t_[i] : '\0'; }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
  static bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
  static bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' || c == '?' || c == '@';
  }
  // LLVM aborts the whole process (report_fatal_error "Unsupported AMDHSA Code Object Version") when the object
  // is written after a .amdhsa_code_object_version it does not implement. Wherever the directive's name appears
  // outside comments and strings (at a statement's start, after a label or a carriage return, in a macro body,
  // as a macro's argument), a plain 4, 5 or 6 and the end of the statement must follow it; anything else (an
  // expression, a macro parameter) is refused (found by fuzz_asm_text: regressions code-object-version-99.s,
  // code-object-version-after-cr.s).
  static constexpr std::string_view kCodeObjectVersion = ".amdhsa_code_object_version";
  void code_object_version(size_t directive, size_t end) const {
    size_t v = end;
    while (at(v) == ' ' || at(v) == '\t') ++v;
    size_t j = v;
    while (digit(at(j))) ++j;
    const std::string_view value = t_.substr(v, j - v);
    while (at(j) == ' ' || at(j) == '\t') ++j;
    const bool ends = j >= t_.size() || at(j) == '\n' || at(j) == '\r' || at(j) == ';' ||
                      (at(j) == '/' && (at(j + 1) == '/' || at(j + 1) == '*'));
    if (ends && (value == "4" || value == "5" || value == "6")) return;
    size_t e = v;
    while (e < t_.size() && t_[e] != '\n' && t_[e] != '\r' && t_[e] != ';' &&
           !(t_[e] == '/' && (at(e + 1) == '/' || at(e + 1) == '*')))
      ++e;
    std::string_view what = t_.substr(v, e - v);
    while (!what.empty() && (what.back() == ' ' || what.back() == '\t')) what.remove_suffix(1);
    fail(directive, "unsupported code object version '" + std::string(what) +
                        "' (LLVM assembles 4, 5 and 6, written as a plain number)");
  }

  // Local labels (`1:`, referred to as `1f` or `1b`): LLVM's MCContext keeps their instances in a
  // DenseMap<unsigned, ...> keyed by the number cut to 32 bits, where 4294967295 is the map's empty key: a
  // definition or reference of it after any other local label crashes LLVM 19 and 22 (found by fuzz_asm_text,
  // regression local-label-empty-key-crash.s; llvm-mc-22 crashes on `.long 1f, 4294967295f`). 4294967294 is the
  // tombstone key, and larger numbers wrap around onto smaller ones, so every number past 4294967293 is refused,
  // in any radix, where an integer is followed by `f` or `b` (after blanks too, and with an `@` variant, as
  // AsmParser::parsePrimaryExpr reads it) or defines a label. A number that a macro argument puts there
  // (`.irp n, 4294967295` around `\n f`) is not seen here.
  static constexpr uint64_t kMaxLocalLabel = 4294967293u;
  // Whether `f` or `b` (alone, or with an `@` variant) follows the token that ends at `next`, after blanks.
  bool local_label_reference(size_t next) const {
    size_t j = next;
    while (at(j) == ' ' || at(j) == '\t') ++j;
    if (at(j) != 'f' && at(j) != 'b') return false; // LLVM compares with "f" and "b" exactly
    return !identifier_char(at(j + 1)) || at(j + 1) == '@';
  }
  // Refuses the integer token [i, end) as a local label number when it is past kMaxLocalLabel (a token that is
  // no integer, such as a float, is left alone).
  void local_label_number(size_t i, size_t end) const {
    std::string_view digits = t_.substr(i, end - i);
    unsigned radix = 10;
    if (digits.size() > 1 && digits[0] == '0') {
      const char k = digits[1];
      if (k == 'x' || k == 'X') radix = 16, digits.remove_prefix(2);
      else if (k == 'b' || k == 'B') radix = 2, digits.remove_prefix(2);
      else radix = 8, digits.remove_prefix(1);
    }
    uint64_t value = 0;
    for (char d : digits) {
      const int v = digit(d) ? d - '0' : hex_digit(d) ? std::tolower(static_cast<unsigned char>(d)) - 'a' + 10 : 99;
      if (v >= int(radix)) return; // a float or another token: no local label
      value = std::min<uint64_t>(value * radix + uint64_t(v), kMaxLocalLabel + 1);
    }
    if (value > kMaxLocalLabel)
      fail(i, "local label number '" + std::string(t_.substr(i, end - i)) +
                  "' is past 4294967293: LLVM keeps local labels by a 32-bit number and crashes on 4294967295 "
                  "(larger numbers wrap around onto smaller ones)");
  }

  size_t line_end(size_t i) const {
    while (i < t_.size() && t_[i] != '\n' && t_[i] != '\r') ++i;
    return i;
  }

  // How a statement that starts with `word` changes the nesting that makes LLVM lex a later .amdgpu_metadata
  // block as statements (or not run it at all). LLVM's own directives are matched in any case, as LLVM does
  // (.IF is .if); the AMDGPU ones exactly, as its parser does, but an opening in any case counts (stricter).
  static std::string lower(std::string_view word) {
    std::string w(word);
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    return w;
  }
  // The identifier after blanks from `i` (empty when none).
  std::string_view next_word(size_t i) const {
    i = std::min(t_.find_first_not_of(" \t", i), t_.size());
    size_t j = i;
    if (j < t_.size() && identifier_start(t_[j]))
      while (identifier_char(at(++j))) {
      }
    return t_.substr(i, j - i);
  }
  static int depth_change(std::string_view word) {
    const std::string w = lower(word);
    static constexpr std::string_view kIfs[] = {".if",   ".ifb",  ".ifc",   ".ifdef", ".ifeq",   ".ifeqs",
                                                ".ifge", ".ifgt", ".ifle",  ".iflt",  ".ifnb",   ".ifnc",
                                                ".ifndef", ".ifne", ".ifnes", ".ifnotdef"};
    static constexpr std::string_view kOpens[] = {".macro", ".rept", ".rep", ".irp", ".irpc", ".amdhsa_kernel",
                                                  ".amd_kernel_code_t", ".amdgpu_pal_metadata"};
    for (std::string_view d : kIfs)
      if (w == d) return 1;
    for (std::string_view d : kOpens)
      if (w == d) return 1;
    if (w == ".endif" || w == ".endm" || w == ".endmacro" || w == ".endr") return -1;
    if (word == ".end_amdhsa_kernel" || word == ".end_amd_kernel_code_t" || word == ".end_amdgpu_pal_metadata")
      return -1;
    return 0;
  }

  // At the start of line `i`: when it opens a .amdgpu_metadata block that LLVM surely reads as YAML (see the top
  // of the file), returns the start of the line that closes it: the YAML in between is read by its own parser,
  // and LLVM reports no lexer error there. Otherwise returns `i`, and the lines are lexed here.
  size_t metadata_block(size_t i) {
    size_t first = t_.find_first_not_of(" \t", i);
    if (first == std::string_view::npos || !starts_word(first, ".amdgpu_metadata")) return i;
    const size_t yaml = first + std::string_view(".amdgpu_metadata").size();
    const size_t after = t_.find_first_not_of(" \t", yaml);
    if (after != std::string_view::npos && (t_[after] == ':' || t_[after] == '=')) return i; // a label, a symbol
    size_t end = std::string_view::npos;
    for (size_t j = line_end(first); j < t_.size(); j = line_end(first)) {
      j += t_[j] == '\r' && at(j + 1) == '\n' ? 2 : 1; // past the line break
      first = t_.find_first_not_of(" \t", j);
      if (first == std::string_view::npos) break;
      if (starts_word(first, ".end_amdgpu_metadata")) {
        end = first;
        break;
      }
    }
    // Each byte once, however many blocks overlap it (unclosed ones run to the end of the text).
    const size_t alias_end = end == std::string_view::npos ? t_.size() : end;
    if (alias_end > aliases_checked_) check_no_yaml_alias(std::max(yaml, aliases_checked_), alias_end);
    aliases_checked_ = std::max(aliases_checked_, alias_end);
    if (end == std::string_view::npos || depth_ > 0 || shadowed_) return i;
    tail_ = end;
    return end;
  }

  // Refuses an alias anywhere in the block's YAML, [i, end) (see the top of the file). A `*` is an alias where a
  // node starts: at the start of a line (after its indentation), after `- `, `? `, `: `, after `[`, `{` and, inside
  // brackets, `,`, after the markers `---` and `...`, and after a tag (`!x`, `!!map`, `!<uri>`) or an anchor (`&a`).
  // Skipped: quoted scalars ('' and "" with their escapes), comments (`#` after a blank; `;` and `//`, which
  // LLVM's lexer drops before YAML sees the text) and the rest of a plain scalar, so `b*c`, `'*x'` and `b, *c`
  // outside brackets are text. A plain scalar continued on a line that starts with `*` is refused too (stricter
  // than YAML; no metadata LLVM writes has one).
  void check_no_yaml_alias(size_t i, size_t end) const {
    auto blank = [&](size_t j) { return j >= end || t_[j] == ' ' || t_[j] == '\t' || t_[j] == '\n' || t_[j] == '\r'; };
    int flow = 0;           // depth of [ ] and { }
    bool node_start = true; // a node may begin at i
    bool after_blank = true;
    while (i < end) {
      const char c = t_[i];
      if (c == '\n' || c == '\r') {
        node_start = after_blank = true;
        ++i;
        continue;
      }
      if (c == ' ' || c == '\t') {
        after_blank = true;
        ++i;
        continue;
      }
      const bool was_blank = after_blank;
      after_blank = false;
      if ((c == '#' && was_blank) || c == ';' || (c == '/' && i + 1 < end && t_[i + 1] == '/')) {
        i = std::min(line_end(i), end);
        continue;
      }
      if (node_start && c == '*')
        fail(i, "an alias ('*') in the YAML of .amdgpu_metadata: LLVM 22's metadata reader takes none, and "
                "crashes on some (the root of the first document, a value in a flow mapping)");
      if (node_start && (c == '\'' || c == '"')) {
        i = quoted_scalar_end(i, end);
        node_start = false;
        continue;
      }
      if ((c == '-' || c == '?' || c == ':') && blank(i + 1)) {
        node_start = true; // a sequence entry, a key or a value follows
        ++i;
        continue;
      }
      if (node_start && (t_.substr(i, 3) == "---" || t_.substr(i, 3) == "...") && blank(i + 3)) {
        i += 3;
        continue;
      }
      if (node_start && (c == '!' || c == '&')) {
        while (!blank(i)) ++i; // the tag or anchor; the node follows it
        continue;
      }
      if (c == '[' || c == '{' || (c == ',' && flow > 0)) {
        if (c != ',') ++flow;
        node_start = true;
        ++i;
        continue;
      }
      if ((c == ']' || c == '}') && flow > 0) --flow;
      node_start = false;
      ++i;
    }
  }

  // The end of the quoted scalar that starts at i: '' doubles a single quote, \ escapes in "".
  size_t quoted_scalar_end(size_t i, size_t end) const {
    const char q = t_[i++];
    while (i < end) {
      if (q == '"' && t_[i] == '\\') {
        i += 2;
      } else if (t_[i] == q) {
        if (q == '\'' && i + 1 < end && t_[i + 1] == '\'') {
          i += 2;
        } else {
          return i + 1;
        }
      } else {
        ++i;
      }
    }
    return end;
  }
  bool starts_word(size_t i, std::string_view word) const {
    return t_.substr(i, word.size()) == word && !identifier_char(at(i + word.size()));
  }

  // Checks the token at `i` (not a blank, line break or line comment) and returns where the next one starts.
  size_t token(size_t i) const {
    const unsigned char c = static_cast<unsigned char>(t_[i]);
    if (c == '"') return string_constant(i);
    if (c == '\'') return character_constant(i);
    if (c == '/' && at(i + 1) == '*') {
      size_t end = t_.find("*/", i + 2);
      if (end == std::string_view::npos) fail(i, "unterminated /* comment (no */ before the end of the text)");
      return end + 2;
    }
    if (digit(char(c))) return number(i);
    if (c == '.' && digit(at(i + 1))) return dot_number(i);
    if (std::isalpha(c) || c == '_' || c == '.') {
      size_t j = i + 1;
      while (identifier_char(at(j))) ++j;
      return j;
    }
    if (c >= 0x80 || c == 0x7f || c == '`' || (c < 0x20 && c != '\t')) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", unsigned(c));
      fail(i, std::string(c == '`' ? "a backquote" : std::string("a ") + hex + " byte") +
                  " outside a comment or string (LLVM's assembler takes no such character there)");
    }
    return i + 1; // punctuation: one or two characters, and none of the second ones starts an error
  }

  size_t string_constant(size_t i) const {
    size_t j = i + 1;
    while (j < t_.size() && t_[j] != '"' && t_[j] != '\n') j += t_[j] == '\\' ? 2 : 1;
    if (j >= t_.size() || t_[j] != '"') fail(i, "unterminated string constant");
    return j + 1;
  }

  // 'c' or '\c' (any one character, a line break too, as LLVM takes it).
  size_t character_constant(size_t i) const {
    size_t j = i + 1;
    if (at(j) == '\\') ++j;
    if (j + 1 >= t_.size() || t_[j + 1] != '\'')
      fail(i, "bad character constant: one character between single quotes ('a' or '\\n') expected");
    return j + 2;
  }

  // A token that starts with a digit, as AsmLexer::LexDigit reads it.
  size_t number(size_t i) const {
    if (t_[i] != '0' || at(i + 1) == '.') {
      size_t j = i + 1;
      while (digit(at(j))) ++j;
      if (at(j) == '.' || at(j) == 'e' || at(j) == 'E') return float_rest(i, at(j) == '.' ? j + 1 : j);
      return j;
    }
    const char k = at(i + 1);
    if (k == 'b' || k == 'B') {
      if (!digit(at(i + 2))) return i + 1; // `0b`: a reference to the label 0 before
      size_t j = i + 2;
      while (at(j) == '0' || at(j) == '1') ++j;
      if (j == i + 2) fail(i, "invalid binary number (0b followed by " + std::string(1, at(j)) + ")");
      return j;
    }
    if (k == 'x' || k == 'X') {
      size_t j = i + 2;
      while (hex_digit(at(j))) ++j;
      if (at(j) == '.' || at(j) == 'p' || at(j) == 'P') return hex_float_rest(i, j, j == i + 2);
      if (j == i + 2) fail(i, "invalid hexadecimal number (no digit after 0x)");
      return j;
    }
    size_t j = i + 1;
    while (digit(at(j))) ++j;
    if (std::any_of(t_.begin() + i, t_.begin() + j, [](char d) { return d == '8' || d == '9'; }))
      fail(i, "invalid octal number '" + std::string(t_.substr(i, j - i)) + "' (a leading 0 means octal)");
    return j;
  }

  // `.5`: a float when the digits end the token or an exponent follows, else an identifier such as `.1foo`.
  size_t dot_number(size_t i) const {
    size_t j = i + 1;
    while (digit(at(j))) ++j;
    if (!identifier_char(at(j)) || at(j) == 'e' || at(j) == 'E') return float_rest(i, j);
    while (identifier_char(at(j))) ++j;
    return j;
  }

  // AsmLexer::LexFloatLiteral from `j` (past the integer digits and the dot).
  size_t float_rest(size_t start, size_t j) const {
    while (digit(at(j))) ++j;
    if (at(j) == '+' || at(j) == '-')
      fail(j, "invalid sign in float literal '" + std::string(t_.substr(start, j + 1 - start)) + "'");
    if (at(j) == 'e' || at(j) == 'E') {
      ++j;
      if (at(j) == '+' || at(j) == '-') ++j;
      while (digit(at(j))) ++j;
    }
    return j;
  }

  // AsmLexer::LexHexFloatLiteral from `j` (at the '.', 'p' or 'P' after 0x and its digits).
  size_t hex_float_rest(size_t start, size_t j, bool no_int_digits) const {
    bool no_frac_digits = true;
    if (at(j) == '.') {
      size_t frac = ++j;
      while (hex_digit(at(j))) ++j;
      no_frac_digits = j == frac;
    }
    if (no_int_digits && no_frac_digits)
      fail(start, "invalid hexadecimal floating-point constant: no digit before the exponent");
    if (at(j) != 'p' && at(j) != 'P') fail(start, "invalid hexadecimal floating-point constant: no exponent part 'p'");
    ++j;
    if (at(j) == '+' || at(j) == '-') ++j;
    size_t exp = j;
    while (digit(at(j))) ++j;
    if (j == exp) fail(start, "invalid hexadecimal floating-point constant: no digit in the exponent");
    return j;
  }

  [[noreturn]] void fail(size_t at, std::string message) const {
    throw AssemblyError({diagnostic_at(t_, at, file_, std::move(message))});
  }

  std::string_view t_;
  const std::string& file_;
  int depth_ = 0;               // open .if, .macro, .rept, ... (depth_change)
  bool shadowed_ = false;       // a macro named .amdgpu_metadata: LLVM runs it instead of the directive
  size_t aliases_checked_ = 0;  // the YAML before this is checked for aliases
  size_t tail_ = 0;             // run()'s result
};

} // namespace

size_t check_llvm_lexer(std::string_view text, const std::string& file) { return LexerCheck(text, file).run(); }

} // namespace isatune::toolchain::detail

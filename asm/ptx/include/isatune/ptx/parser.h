#pragma once
// PTX text -> ast::Module (ast.h): the PTX that nvcc, Triton, our builder and hand-written inline assembly
// produce. Names are resolved as ast.h describes; anything ptxas would reject at the level of syntax, names
// or scopes stops with a ParseError naming the file, line, column and the offending token. Qualifier
// semantics (is `.x3` a legal ldmatrix count?) are left to the consumer, which has the instruction's
// SourceLoc.
#include <cstdint>
#include <string>
#include <string_view>

#include "isatune/error.h"
#include "isatune/ptx/ast.h"

namespace isatune::ptx {

// what() is "file:line:column: message", e.g. "k.ptx:12:5: unknown instruction 'foo.bar'".
class ParseError : public InputError {
public:
  ParseError(std::string file, uint32_t line, uint32_t column, std::string message);
  const std::string& file() const { return file_; }
  uint32_t line() const { return line_; }
  uint32_t column() const { return column_; }
  const std::string& message() const { return message_; } // without the location prefix

private:
  std::string file_;
  uint32_t line_;
  uint32_t column_;
  std::string message_;
};

// `file` names the text in messages and in Module::file. Linear in the size of the text.
ast::Module parse(std::string_view text, const std::string& file = "<input>.ptx");

// Reads and parses a file; InputError when it cannot be read.
ast::Module parse_file(const std::string& path);

} // namespace isatune::ptx

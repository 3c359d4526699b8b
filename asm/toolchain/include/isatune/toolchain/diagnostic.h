#pragma once
// A message from an assembler or linker, with the place in the source it refers to.
#include <string>
#include <vector>

#include "isatune/error.h"

namespace isatune::toolchain {

struct Diagnostic {
  enum class Severity { error, warning, note };
  Severity severity = Severity::error;
  std::string file;        // the name given in AssembleOptions::file_name
  int line = 0;            // 1-based; 0 when the message has no place (e.g. a link error)
  int column = 0;          // 1-based; 0 when unknown
  std::string message;
  std::string source_line; // the offending line of source, when known

  // "file:line:column: error: message", the form compilers print.
  std::string str() const;
};

// Assembling or linking failed; what() is the first error in Diagnostic::str() form.
class AssemblyError : public InputError {
public:
  explicit AssemblyError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

private:
  std::vector<Diagnostic> diagnostics_;
};

} // namespace isatune::toolchain

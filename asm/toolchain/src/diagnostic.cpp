// Diagnostic formatting and the AssemblyError that carries them.
#include "isatune/toolchain/diagnostic.h"

#include <utility>

namespace isatune::toolchain {

std::string Diagnostic::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  switch (severity) {
  case Severity::error: s += ": error: "; break;
  case Severity::warning: s += ": warning: "; break;
  case Severity::note: s += ": note: "; break;
  }
  s += message;
  return s;
}

namespace {
std::string first_error(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics)
    if (d.severity == Diagnostic::Severity::error) return d.str();
  if (!diagnostics.empty()) return diagnostics.front().str();
  return "assembly failed (no diagnostic given)";
}
} // namespace

AssemblyError::AssemblyError(std::vector<Diagnostic> diagnostics)
    : InputError(first_error(diagnostics)), diagnostics_(std::move(diagnostics)) {}

} // namespace isatune::toolchain

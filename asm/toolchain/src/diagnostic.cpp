// Diagnostic formatting and the AssemblyError that carries them.
#include "isatune/toolchain/diagnostic.h"

#include <algorithm>
#include <utility>

#include "internal.h"

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

Diagnostic detail::diagnostic_at(std::string_view text, size_t at, const std::string& file, std::string message) {
  at = std::min(at, text.size());
  Diagnostic d;
  d.file = file;
  d.line = 1 + int(std::count(text.begin(), text.begin() + at, '\n'));
  const size_t nl = at == 0 ? std::string_view::npos : text.rfind('\n', at - 1);
  const size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
  d.column = int(at - line_start) + 1;
  const size_t end = text.find('\n', line_start);
  d.source_line = std::string(text.substr(line_start, end == std::string_view::npos ? end : end - line_start));
  d.message = std::move(message);
  return d;
}

AssemblyError::AssemblyError(std::vector<Diagnostic> diagnostics)
    : InputError(first_error(diagnostics)), diagnostics_(std::move(diagnostics)) {}

} // namespace isatune::toolchain

#include "source_target.h"

namespace isatune::cli {

namespace {
// Calls fn on each line with leading blanks removed until it returns true.
template <typename Fn> void for_each_line(std::string_view source, Fn fn) {
  size_t pos = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    if (end == std::string_view::npos) end = source.size();
    std::string_view line = source.substr(pos, end - pos);
    pos = end + 1;
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) continue;
    if (fn(line.substr(start))) return;
  }
}
} // namespace

std::optional<std::string> declared_ptx_target(std::string_view source) {
  std::optional<std::string> found;
  for_each_line(source, [&](std::string_view line) {
    constexpr std::string_view directive = ".target";
    if (line.substr(0, directive.size()) != directive || line.size() == directive.size()) return false;
    line.remove_prefix(directive.size());
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) return false;
    line.remove_prefix(start);
    size_t end = line.find_first_of(" \t,;/");
    found = std::string(line.substr(0, end));
    return true;
  });
  return found;
}

std::optional<std::string> declared_amdgcn_target(std::string_view source) {
  std::optional<std::string> found;
  for_each_line(source, [&](std::string_view line) {
    constexpr std::string_view directive = ".amdgcn_target";
    if (line.substr(0, directive.size()) != directive) return false;
    size_t open = line.find('"');
    size_t close = open == std::string_view::npos ? open : line.find('"', open + 1);
    if (close != std::string_view::npos) found = std::string(line.substr(open + 1, close - open - 1));
    return true;
  });
  return found;
}

} // namespace isatune::cli

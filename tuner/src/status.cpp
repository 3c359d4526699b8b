#include "isatune/tune/status.h"

namespace isatune::tune {

namespace {
constexpr std::string_view kNames[kStatusCount] = {"ok",      "constraint",   "compile", "resource",
                                                   "runtime", "wrong-answer", "timeout"};
}

std::string_view to_string(Status s) {
  return kNames[static_cast<int>(s)];
}

std::optional<Status> parse_status(std::string_view text) {
  for (int i = 0; i < kStatusCount; ++i)
    if (kNames[i] == text)
      return static_cast<Status>(i);
  return std::nullopt;
}

} // namespace isatune::tune

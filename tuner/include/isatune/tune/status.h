#pragma once
// The one taxonomy of measurement outcomes shared by the tuner, the replay readers and the database.
#include <optional>
#include <string>
#include <string_view>

namespace isatune::tune {

enum class Status { ok, constraint, compile, resource, runtime, wrong_answer, timeout };
inline constexpr int kStatusCount = 7;

// "ok", "constraint", "compile", "resource", "runtime", "wrong-answer", "timeout".
std::string_view to_string(Status s);
std::optional<Status> parse_status(std::string_view text);

} // namespace isatune::tune

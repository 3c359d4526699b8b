// Repair of unclosed JSON written by a crashed run (Kernel Tuner appends one cache entry at a time): keep the
// text up to the last `}` or `]` that completes a member of a top-level member object (depth 2 after it),
// drop anything after it, and close the brackets still open there.
#include <string>
#include <vector>

#include "isatune/tune/replay.h"

namespace isatune::tune {

bool repair_unclosed_json(std::string& text) {
  std::vector<char> stack;
  bool in_string = false, escape = false;
  size_t cut = std::string::npos;
  std::vector<char> stack_at_cut;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escape)
        escape = false;
      else if (c == '\\')
        escape = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      stack.push_back(c);
    } else if (c == '}' || c == ']') {
      if (stack.empty())
        return false;
      stack.pop_back();
      if (!stack.empty() && stack.size() <= 2) {
        cut = i + 1;
        stack_at_cut = stack;
      }
    }
  }
  if (cut == std::string::npos)
    return false;
  text.resize(cut);
  while (!text.empty() && (text.back() == ',' || text.back() == ' ' || text.back() == '\n'))
    text.pop_back();
  for (size_t k = stack_at_cut.size(); k-- > 0;)
    text += stack_at_cut[k] == '{' ? "\n}" : "\n]";
  return true;
}

} // namespace isatune::tune

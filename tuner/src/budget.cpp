#include "isatune/tune/budget.h"

#include <cctype>
#include <cstdlib>

#include "isatune/error.h"

namespace isatune::tune {

Budget Budget::parse(const std::string& text) {
  Budget b;
  if (text.empty())
    throw InputError("empty budget");
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string unit(end);
  if (end == text.c_str() || !(v > 0))
    throw InputError("budget '" + text + "': expected N, Ns, Nm or Nh");
  if (unit.empty()) {
    if (v != static_cast<double>(static_cast<size_t>(v)))
      throw InputError("budget '" + text + "': N must be whole");
    b.evaluations = static_cast<size_t>(v);
  } else if (unit == "s") {
    b.charged_s = v;
  } else if (unit == "m") {
    b.charged_s = v * 60;
  } else if (unit == "h") {
    b.charged_s = v * 3600;
  } else {
    throw InputError("budget '" + text + "': unknown unit '" + unit + "' (s, m, h)");
  }
  return b;
}

} // namespace isatune::tune

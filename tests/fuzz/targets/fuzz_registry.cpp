#include <cstdio>
#include <cstdlib>

#include "fuzz_target.h"

namespace isatune::fuzz {

std::map<std::string, TargetFn>& targets() {
  static std::map<std::string, TargetFn> all;
  return all;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz target failed: %s\n", what.c_str());
  std::abort();
}

} // namespace isatune::fuzz

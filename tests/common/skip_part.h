#pragma once
// Printing why part of a test did not run, while the rest of it does. Not with gtest's "[  SKIPPED ]": the
// tests that gtest_discover_tests registers have SKIP_REGULAR_EXPRESSION "\[  SKIPPED \]", so CTest would report
// the whole test as skipped, and count it as passed, even when the part that ran failed.
#include <iostream>
#include <string_view>

namespace isatune::test {

inline void print_skipped_part(std::string_view part, std::string_view why) {
  std::cout << "[ PART SKIPPED ] " << part << ": " << why << std::endl;
}

} // namespace isatune::test

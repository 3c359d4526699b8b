// libFuzzer entry of a program built from one fuzz target (tests/fuzz/CMakeLists.txt links exactly one).
#include <cstdio>
#include <cstdlib>

#include "last_input.h"
#include "targets/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const isatune::fuzz::TargetFn target = [] {
    auto& all = isatune::fuzz::targets();
    if (all.size() != 1) {
      std::fprintf(stderr, "fuzz_main: %zu targets linked, expected one\n", all.size());
      std::abort();
    }
    return all.begin()->second;
  }();
  isatune::fuzz::keep_last_input(data, size);
  target(data, size);
  return 0;
}

#pragma once
// One fuzz target: a function of arbitrary bytes that returns normally for every input. It catches only the
// errors the code under test documents for bad input (InputError and its kinds); any other exception, a crash,
// a sanitizer report or a hang is a bug. The same function is linked into a libFuzzer program (fuzz_main.cpp,
// built by -DISATUNE_BUILD_FUZZ=ON) and into test_tune, where FuzzReplay runs every seed and saved regression
// input of every target (tests/fuzz/replay_test.cpp), so CI replays them with the ordinary build and under
// ASan+UBSan.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace isatune::fuzz {

using TargetFn = void (*)(const uint8_t* data, size_t size);

// Every target linked into this program, by name.
std::map<std::string, TargetFn>& targets();

struct Registration {
  Registration(const char* name, TargetFn fn) { targets()[name] = fn; }
};

// A bug the fuzzer must report though no sanitizer sees it (a lost database row, a differing result).
[[noreturn]] void fail(const std::string& what);

} // namespace isatune::fuzz

#define ISATUNE_FUZZ_TARGET(name)                                                                              \
  static void isatune_fuzz_##name(const uint8_t* data, size_t size);                                          \
  static const ::isatune::fuzz::Registration isatune_fuzz_registration_##name(#name, isatune_fuzz_##name);     \
  static void isatune_fuzz_##name(const uint8_t* data, size_t size)

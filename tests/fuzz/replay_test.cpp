// Every fuzz target (tests/fuzz/targets) on its checked-in seeds (tests/fuzz/seeds/<target>/) and on every
// input that once made it fail (tests/fuzz/regressions/<target>/), in the ordinary build: CI replays them
// without the clang fuzz build, and under ASan+UBSan in scripts/sanitize.sh --ci (this is part of test_tune).
// A target fails by crashing, by a sanitizer report, by fuzz::fail (abort) or by letting an exception other
// than isatune::Error escape, which this test reports with the input's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "targets/fuzz_target.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const std::string& target) {
  std::vector<fs::path> out;
  for (const char* kind : {"seeds", "regressions"}) {
    fs::path dir = fs::path(ISATUNE_FUZZ_DIR) / kind / target;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class FuzzReplay : public testing::TestWithParam<std::string> {};

TEST_P(FuzzReplay, SeedsAndRegressionsRunClean) {
  const std::string target = GetParam();
  const auto fn = isatune::fuzz::targets().at(target);
  const auto inputs = inputs_of(target);
  ASSERT_FALSE(inputs.empty()) << "no seeds or regressions for " << target << " under " << ISATUNE_FUZZ_DIR;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    SCOPED_TRACE(path.string());
    EXPECT_NO_THROW(fn(bytes.data(), bytes.size()));
  }
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : isatune::fuzz::targets()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzReplay, testing::ValuesIn(target_names()),
                         [](const auto& info) { return info.param; });

} // namespace

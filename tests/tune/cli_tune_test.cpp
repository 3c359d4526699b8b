// End-to-end: `isatune tune --replay` and `isatune score` as a user runs them (skipped when the CLI is not
// built).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "datasets.h"

namespace {
struct CliRun {
  int code;
  std::string out;
};

CliRun run_cli(const std::string& args) {
  std::string cmd = std::string(ISATUNE_CLI_PATH) + " " + args + " 2>/dev/null </dev/null";
  CliRun r{-1, {}};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

#define NEED_CLI()                                                                                           \
  if (!std::filesystem::exists(ISATUNE_CLI_PATH))                                                            \
  GTEST_SKIP() << "isatune not built: " << ISATUNE_CLI_PATH

const std::string kPnpoly = isatune::tune::test::dataset_path("pnpoly-rtx3090/RTX_3090.json.gz");
} // namespace

TEST(TuneCli, ReplayJsonIsReproducibleAndFindsTheOptimumExhaustively) {
  NEED_CLI();
  ISATUNE_NEED_DATASET(kPnpoly);
  CliRun a = run_cli("tune --replay " + kPnpoly + " --strategy hybrid --budget 200 --seed 3 --json");
  CliRun b = run_cli("tune --replay " + kPnpoly + " --strategy hybrid --budget 200 --seed 3 --json");
  ASSERT_EQ(a.code, 0) << a.out;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["evaluations"], 200);
  EXPECT_EQ(ja["best"], jb["best"]);
  CliRun e = run_cli("tune --replay " + kPnpoly + " --strategy exhaustive --budget 100000 --json");
  ASSERT_EQ(e.code, 0);
  auto je = nlohmann::json::parse(e.out);
  EXPECT_EQ(je["evaluations"], 4092);
  EXPECT_EQ(je["by_status"]["runtime"], 330);
  EXPECT_NEAR(je["best"]["time_ms"].get<double>(), 7.224, 0.001);
}

TEST(TuneCli, TextSummaryAndErrors) {
  NEED_CLI();
  ISATUNE_NEED_DATASET(kPnpoly);
  CliRun t = run_cli("tune --replay " + kPnpoly + " --budget 50");
  ASSERT_EQ(t.code, 0);
  EXPECT_NE(t.out.find("best:"), std::string::npos);
  EXPECT_NE(t.out.find("block_size_x"), std::string::npos);
  EXPECT_EQ(run_cli("tune --replay " + kPnpoly + " --strategy nope").code, 1);
  EXPECT_EQ(run_cli("tune --replay /nonexistent.json").code, 1);
  EXPECT_EQ(run_cli("tune").code, 2); // --replay is required in this version
}

TEST(ScoreCli, JsonForOneStrategy) {
  NEED_CLI();
  ISATUNE_NEED_DATASET(kPnpoly);
  CliRun s = run_cli("score --strategy random --repeats 5 --json " + kPnpoly);
  ASSERT_EQ(s.code, 0);
  auto j = nlohmann::json::parse(s.out);
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["strategies"][0]["repeats"], 5);
  EXPECT_GT(j["files"][0]["budget_draws"].get<int>(), 1);
}

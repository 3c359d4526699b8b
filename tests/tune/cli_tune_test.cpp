// End-to-end: `isatune tune --replay` and `isatune score` as a user runs them (skipped when the CLI is not
// built).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include <fstream>

#include "datasets.h"
#include "isatune/tune/score.h"
#include "isatune/tune/trace.h"

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
  EXPECT_EQ(j["files"][0]["budget_fevals"].get<int>(), 250); // the methodology package's figure (fixtures)
  EXPECT_EQ(j["files"][0]["run_evaluations"].get<int>(), 275);
  EXPECT_TRUE(j["files"][0]["strategies"][0]["standard_error"].is_number());
  EXPECT_TRUE(j["files"][0]["strategies"][0]["package_score"].is_number());
}

TEST(TuneCli, ReplayTraceAutoBudgetAndNoSilentDb) {
  NEED_CLI();
  ISATUNE_NEED_DATASET(kPnpoly);
  const std::string trace = ::testing::TempDir() + "/isatune_replay_trace.jsonl";
  CliRun t = run_cli("tune --replay " + kPnpoly + " --strategy random --seed 4 --json --trace " + trace);
  ASSERT_EQ(t.code, 0);
  auto j = nlohmann::json::parse(t.out);
  // --budget auto is the methodology's: 250 expected-rank draws x the median recorded cost per evaluation
  auto setup = isatune::tune::make_score_setup(isatune::tune::read_replay(kPnpoly));
  EXPECT_NEAR(j["budget_charged_s"].get<double>(), setup.budget_s, 1e-9);
  std::ifstream in(trace);
  std::string line;
  size_t n = 0, failed = 0;
  double charged = 0;
  while (std::getline(in, line)) {
    auto e = nlohmann::json::parse(line);
    ++n;
    EXPECT_EQ(e["evaluation"].get<size_t>(), n);
    EXPECT_EQ(e["config"].size(), 4u); // pnpoly's four parameters, by name
    charged += e["cost_s"].get<double>();
    EXPECT_NEAR(e["charged_s"].get<double>(), charged, 1e-9);
    if (e["status"] == "ok") {
      EXPECT_GT(e["time_ms"].get<double>(), 7.2);
    } else {
      EXPECT_TRUE(e["time_ms"].is_null());
      ++failed;
    }
  }
  EXPECT_EQ(n, j["evaluations"].get<size_t>());
  EXPECT_EQ(failed, n - j["by_status"]["ok"].get<size_t>());
  EXPECT_EQ(isatune::tune::read_trace(trace).size(), n);
  std::filesystem::remove(trace);
  // --db with --replay is refused (exit 1), never ignored
  const std::string db = ::testing::TempDir() + "/isatune_replay_refused.db";
  EXPECT_EQ(run_cli("tune --replay " + kPnpoly + " --budget 5 --db " + db).code, 1);
  EXPECT_FALSE(std::filesystem::exists(db));
}

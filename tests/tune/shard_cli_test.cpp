// End-to-end: `isatune tune --shard I/N` on one problem splits its space between the shards, and `isatune db
// merge` of the shard files holds the same evaluations as one process that tuned the whole space.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>

#include "isatune/db/database.h"

namespace {

std::pair<int, std::string> cli(const std::string& args) {
  const std::string cmd = std::string(ISATUNE_CLI_PATH) + " " + args + " 2>/dev/null </dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::multiset<std::string> evaluations(const std::string& path) {
  auto d = isatune::db::Database::open(path, {.read_only = true});
  std::multiset<std::string> out;
  for (auto& r : d.query("SELECT v.parameters || ' ' || m.problem || ' ' || m.status FROM measurements m "
                         "JOIN variants v ON v.id = m.variant_id"))
    out.insert(std::get<std::string>(r[0]));
  return out;
}

} // namespace

TEST(ShardCli, OneProblemSplitsItsSpaceAndTheMergeEqualsOneProcess) {
  if (!std::filesystem::exists(ISATUNE_CLI_PATH)) GTEST_SKIP() << "isatune not built: " << ISATUNE_CLI_PATH;
  std::random_device rd;
  const auto dir = std::filesystem::temp_directory_path() / ("isatune-shard-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  const std::string n = std::to_string(100 + rd() % 900); // a ragged size
  const std::string job = "tune selftest --target gfx942 --device emu --problem N=" + n +
                          " --strategy exhaustive --budget 100 --timeout 1 -j 1 --json";
  size_t evaluated = 0;
  std::string files;
  for (int i = 0; i < 3; ++i) {
    const std::string db = (dir / ("s" + std::to_string(i) + ".sqlite")).string();
    auto [code, out] = cli(job + " --shard " + std::to_string(i) + "/3 --db " + db);
    ASSERT_EQ(code, 0) << out;
    const auto j = nlohmann::json::parse(out);
    EXPECT_EQ(j.at("shard").at("index"), i);
    EXPECT_EQ(j.at("shard").at("space_slices"), 3);
    EXPECT_EQ(j.at("shard").at("space_slice"), i);
    EXPECT_EQ(j.at("space_size"), 7); // 21 configurations, every third
    evaluated += j.at("evaluations").get<size_t>();
    files += " " + db;
  }
  EXPECT_EQ(evaluated, 21u);
  const std::string merged = (dir / "merged.sqlite").string();
  auto [code, out] = cli("db merge " + merged + files + " --json");
  ASSERT_EQ(code, 0) << out;
  const auto m = nlohmann::json::parse(out);
  EXPECT_EQ(m.at("measurements_added"), 21);
  EXPECT_TRUE(m.at("complete").get<bool>());
  EXPECT_EQ(m.at("shards").size(), 3u);

  const std::string ref = (dir / "ref.sqlite").string();
  auto [rcode, rout] = cli(job + " --db " + ref);
  ASSERT_EQ(rcode, 0) << rout;
  const auto all = evaluations(ref);
  EXPECT_EQ(all.size(), 21u);
  EXPECT_EQ(evaluations(merged), all);
  // Every run row of a shard records it and the emulator's synthetic device identity.
  auto d = isatune::db::Database::open(merged, {.read_only = true});
  EXPECT_EQ(std::get<int64_t>(d.query("SELECT count(*) FROM runs WHERE shard LIKE '_/3' AND device_uuid = "
                                      "'emu-gfx942-0' AND device_id IS NOT NULL AND ended_at IS NOT NULL")[0][0]),
            3);
  std::filesystem::remove_all(dir);
}

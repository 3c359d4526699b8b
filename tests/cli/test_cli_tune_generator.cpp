// `isatune tune GENERATOR` end to end on the emulator: the selftest generator's hanging, faulting, wrong and
// oversized variants are recorded with their statuses, the best ok variant wins, the database holds every
// evaluation, and a rerun measures nothing again.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "run_cli.h"

namespace {

int64_t table_rows(const std::string& db, const std::string& table) {
  CliResult r = run_isatune("db ls --db " + db + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& row : nlohmann::json::parse(r.out))
    if (row.at("table") == table) return row.at("rows").get<int64_t>();
  ADD_FAILURE() << "no table " << table << " in " << r.out;
  return -1;
}

} // namespace

TEST(CliTuneGenerator, SelftestOnTheEmulatorRecordsAndResumes) {
  const std::string dir = make_temp_dir();
  const std::string db = dir + "/tuning.db";
  const std::string cmd = "tune selftest --target gfx942 --device emu --problem N=4096 --strategy exhaustive "
                          "--budget 100 --timeout 4 -j 2 --db " + db + " --json";
  CliResult r = run_isatune(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("generator"), "selftest");
  EXPECT_EQ(j.at("device").at("kind"), "emulated");
  EXPECT_EQ(j.at("evaluations"), 21);
  const auto& by = j.at("by_status");
  EXPECT_EQ(by.at("ok"), 6);
  EXPECT_EQ(by.at("timeout"), 3);       // hang: killed by the watchdog
  EXPECT_EQ(by.at("runtime"), 3);       // fault: the emulator's bounds check
  EXPECT_EQ(by.at("wrong-answer"), 3);
  EXPECT_EQ(by.at("resource"), 3);      // lds: pruned on the CPU
  EXPECT_EQ(by.at("compile"), 3);       // asm-error
  EXPECT_EQ(j.at("isolation"), true);
  EXPECT_EQ(j.at("worker").at("timeouts"), 3);
  EXPECT_EQ(j.at("device_requests"), 15);
  ASSERT_TRUE(j.at("best").is_object());
  EXPECT_EQ(j.at("best").at("params").at("behaviour"), "ok");
  EXPECT_GT(j.at("best").at("time_ms").get<double>(), 0);
  EXPECT_EQ(j.at("top").size(), 6u);
  EXPECT_EQ(table_rows(db, "measurements"), 21);
  EXPECT_EQ(table_rows(db, "runs"), 1);
  EXPECT_EQ(table_rows(db, "best"), 1);

  // The same job again: everything comes from the database.
  CliResult again = run_isatune(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto j2 = nlohmann::json::parse(again.out);
  EXPECT_EQ(j2.at("evaluations"), 21);
  EXPECT_EQ(j2.at("from_db"), 21);
  EXPECT_EQ(j2.at("device_requests"), 0);
  EXPECT_EQ(j2.at("best").at("params"), j.at("best").at("params"));
  EXPECT_EQ(table_rows(db, "measurements"), 21);
  EXPECT_EQ(table_rows(db, "runs"), 2);

  // A new problem starts from the database: the best configurations of the nearest tuned problem go first.
  CliResult next = run_isatune("tune selftest --target gfx942 --device emu --problem N=6000 --strategy random "
                               "--budget 3 --timeout 4 -j 2 --db " + db + " --json --history");
  ASSERT_EQ(next.exit_code, 0) << next.err;
  auto j3 = nlohmann::json::parse(next.out);
  EXPECT_EQ(j3.at("transfer").at("seeds"), 5);
  EXPECT_EQ(j3.at("transfer").at("from_problem").at("N"), 4096);
  ASSERT_EQ(j3.at("history").size(), 3u);
  EXPECT_EQ(j3.at("history").at(0).at("params"), j.at("top").at(0).at("params"));
  EXPECT_EQ(j3.at("history").at(1).at("params"), j.at("top").at(1).at("params"));
}

TEST(CliTuneGenerator, ProblemsFileTextSummaryAndNoIsolation) {
  const std::string dir = make_temp_dir();
  write_file(dir + "/problems.txt", "# sizes\nN=1024\n\nN=3000\n");
  CliResult r = run_isatune("tune selftest --device emu:gfx942 --problems " + dir +
                            "/problems.txt --strategy exhaustive --budget 3 --no-isolation -j 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // one by one, nearest first: the second starts from the first's best
  EXPECT_NE(r.out.find("== problem 1 of 2: N=1024"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== problem 2 of 2: N=3000 (nearest tuned: N=1024)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(this run)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("best variants:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("behaviour=ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("emulated"), std::string::npos) << r.out;
  // repeated --problem options stay one job for the sum of their times
  CliResult sum = run_isatune("tune selftest --device emu:gfx942 --problem N=1024 --problem N=3000 "
                              "--strategy exhaustive --budget 3 --no-isolation -j 1");
  ASSERT_EQ(sum.exit_code, 0) << sum.err;
  EXPECT_NE(sum.out.find("2 problem(s)"), std::string::npos) << sum.out;
  EXPECT_NE(sum.out.find("per problem ms"), std::string::npos) << sum.out;
}

TEST(CliTuneGenerator, BadInputIsOneLine) {
  CliResult r = run_isatune("tune nosuchgenerator --problem N=1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown generator"), std::string::npos) << r.err;
  CliResult p = run_isatune("tune selftest --device emu");
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("--problem"), std::string::npos) << p.err;
  CliResult t = run_isatune("tune selftest --device emu:gfx90a --target gfx942 --problem N=64");
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("gfx90a"), std::string::npos) << t.err;
}

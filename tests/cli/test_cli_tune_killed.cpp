// Resume after a kill: `isatune tune` is killed (SIGKILL) midway through a job; every evaluation finished before
// the kill is in the database, the file is intact, and rerunning the job measures only what is missing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cerrno>
#include <csignal>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "run_cli.h"

namespace {

int64_t measurements(const std::string& db) {
  CliResult r = run_isatune("db ls --db " + db + " --json");
  if (r.exit_code != 0) return 0; // not created yet
  for (const auto& row : nlohmann::json::parse(r.out))
    if (row.at("table") == "measurements") return row.at("rows").get<int64_t>();
  return 0;
}

} // namespace

TEST(CliTuneKilled, RerunMeasuresOnlyWhatIsMissing) {
  const std::string dir = make_temp_dir();
  const std::string db = dir + "/tuning.db";
  const std::string args = "tune selftest --target gfx942 --device emu --problem N=4096 --strategy exhaustive "
                           "--budget 100 --timeout 4 -j 2 --db " + db + " --json";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0); // the tuner and its worker in a group of their own, for the check below
    const std::string cmd = "exec " + std::string(ISATUNE_CLI_PATH) + " " + args + " >/dev/null 2>&1 </dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Kill once a few evaluations are committed (the job has 21; its hanging variants take 4 s each).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (measurements(db) < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the job ended before it could be killed";

  // The worker dies with the tuner (PR_SET_PDEATHSIG) rather than running a hanging kernel on as an orphan:
  // nothing is left in the tuner's process group.
  bool worker_gone = false;
  for (int i = 0; i < 50 && !worker_gone; ++i) {
    worker_gone = kill(-pid, 0) != 0 && errno == ESRCH;
    if (!worker_gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(worker_gone) << "an orphaned device worker is still running";
  if (!worker_gone) kill(-pid, SIGKILL);

  CliResult verify = run_isatune("db verify --db " + db);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  const int64_t at_kill = measurements(db);
  ASSERT_GE(at_kill, 4);
  ASSERT_LT(at_kill, 21);

  CliResult again = run_isatune(args);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto j = nlohmann::json::parse(again.out);
  EXPECT_EQ(j.at("evaluations"), 21);
  EXPECT_EQ(j.at("from_db"), at_kill); // nothing recorded is measured again
  EXPECT_EQ(measurements(db), 21);     // and nothing is recorded twice
  ASSERT_TRUE(j.at("best").is_object());
  EXPECT_EQ(j.at("best").at("params").at("behaviour"), "ok");
}

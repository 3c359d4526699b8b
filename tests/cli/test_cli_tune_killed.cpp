// Resume after a kill: `isatune tune` is killed (SIGKILL) midway through a job; every evaluation finished before
// the kill is in the database, the file is intact, and rerunning the job measures only what is missing.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <random>
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

// Starts `isatune ARGS` in a process group of its own; returns its pid.
pid_t start_isatune(const std::string& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const std::string cmd = "exec " + std::string(ISATUNE_CLI_PATH) + " " + args + " >/dev/null 2>&1 </dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

} // namespace

// The tuner killed (SIGKILL, tuner and worker) at 100 seeded random points of short emulator jobs, each rerun
// resuming the same database; a job that completes is followed by the next problem size. After every kill the
// database verifies and holds at least what it held before (no committed evaluation is lost); when every job is
// done, each problem has exactly its 21 configurations and the last rerun of each measured nothing (nothing is
// measured twice). ISATUNE_KILLS and ISATUNE_KILL_SEED change the count and the seed (the long variant outside
// CI: ISATUNE_KILLS=1000).
TEST(CliTuneKilled, SeededRandomKillsLoseNothingAndRepeatNothing) {
  const int kills = env_int("ISATUNE_KILLS", 100);
  std::mt19937 rng(static_cast<uint32_t>(env_int("ISATUNE_KILL_SEED", 20)));
  // Kill points spread from before the database exists to past a job's end (about 1 s with its 3 hanging variants
  // stopped by the 0.3 s watchdog).
  std::uniform_int_distribution<int> delay_ms(0, 1200);
  const std::string dir = make_temp_dir();
  const std::string db = dir + "/tuning.db";
  auto job = [&](int problem) {
    return "tune selftest --target gfx942 --device emu --problem N=" + std::to_string(1024 + 64 * problem) +
           " --strategy exhaustive --budget 100 --timeout 0.3 -j 1 --db " + db + " --json";
  };
  int problem = 0, killed = 0;
  int64_t held = 0;
  for (int i = 0; i < kills; ++i) {
    const pid_t pid = start_isatune(job(problem));
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(-pid, SIGKILL); // the tuner and its worker
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
      ++killed;
    } else {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "kill " << i << ": the job failed";
      ++problem; // it finished: the next kill points go to the next problem
    }
    const int64_t now = measurements(db);
    ASSERT_GE(now, held) << "kill " << i << " lost committed evaluations";
    held = now;
    if (i % 10 == 9 || i == kills - 1) {
      CliResult verify = run_isatune("db verify --db " + db);
      ASSERT_EQ(verify.exit_code, 0) << "after kill " << i << ": " << verify.out << verify.err;
    }
  }
  // Finish every job touched; each rerun measures only what is missing, and the last measures nothing.
  for (int p = 0; p <= problem; ++p) {
    const int64_t before = measurements(db);
    CliResult r = run_isatune(job(p));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j.at("evaluations"), 21);
    const int64_t measured = measurements(db) - before;
    EXPECT_EQ(j.at("from_db").get<int64_t>() + measured, 21) << "problem " << p;
    CliResult again = run_isatune(job(p));
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(nlohmann::json::parse(again.out).at("from_db"), 21) << "problem " << p << " was measured again";
  }
  EXPECT_EQ(measurements(db), 21 * (problem + 1)) << "a configuration was recorded twice";
  EXPECT_GE(killed, kills / 2) << "most kill points fell after the job's end: spread them over the job";
  std::printf("%d kills (%d mid-job), %d problems, %lld measurements\n", kills, killed, problem + 1,
              static_cast<long long>(measurements(db)));
}

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

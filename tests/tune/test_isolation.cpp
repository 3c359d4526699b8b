// Process isolation: the device runs in `isatune internal-device-worker`; a hang is killed by the watchdog
// (timeout), a fault (runtime) and a dying worker are survived, and tuning finishes with the best ok variant.
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>

#include "isatune/tune/worker_runner.h"
#include "selftest_fixture.h"

using namespace isatune;
using namespace isatune::tune;
using isatune::test::selftest_job;

namespace {

WorkerOptions worker_options() {
  WorkerOptions w;
  w.command = {ISATUNE_CLI_PATH, "internal-device-worker", "--device", "emu:gfx942"};
  return w;
}

gen::Config cfg(const gen::Space& space, const std::string& behaviour, int unroll) {
  return gen::config_of(space, {{"behaviour", gen::Value::str(behaviour)}, {"unroll", gen::Value::num(unroll)}});
}

} // namespace

TEST(TuneIsolation, WorkerReportsTheDevice) {
  WorkerRunner w(worker_options());
  EXPECT_EQ(w.properties().isa, "gfx942");
  EXPECT_TRUE(w.properties().emulated);
  EXPECT_GT(w.pid(), 0);
  EXPECT_EQ(w.starts(), 1u);
}

TEST(TuneIsolation, BadDeviceIsAnInputError) {
  WorkerOptions w = worker_options();
  w.command.back() = "emu:gfx1234";
  EXPECT_THROW(WorkerRunner r(w), InputError);
}

TEST(TuneIsolation, HangAndFaultAreRecordedAndTuningFinishes) {
  const std::string path = test::temp_path("isolation.db");
  auto database = db::Database::open(path);
  WorkerRunner runner(worker_options());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 2;
  o.timeout_s = 4; // the emulator would run the endless loop for minutes before its own limit
  o.timeout_factor = 5;
  o.db = &database;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  auto s = make_strategy("exhaustive");
  TuneResult r = tune::tune(ev.space(), ev, *s, {});
  ASSERT_EQ(r.history.size(), ev.space().size());
  for (int u : {1, 2, 4}) {
    EXPECT_EQ(test::status_of(r, ev, "hang", u).status, Status::timeout);
    EXPECT_EQ(test::status_of(r, ev, "fault", u).status, Status::runtime);
    EXPECT_EQ(test::status_of(r, ev, "ok", u).status, Status::ok);
    EXPECT_EQ(test::status_of(r, ev, "wrong", u).status, Status::wrong_answer);
  }
  EXPECT_NE(ev.detail(cfg(ev.space(), "hang", 2))->message.find("killed"), std::string::npos);
  EXPECT_NE(ev.detail(cfg(ev.space(), "fault", 1))->message.find("device checks"), std::string::npos)
      << ev.detail(cfg(ev.space(), "fault", 1))->message;
  EXPECT_EQ(runner.timeouts(), 3u);
  EXPECT_EQ(runner.starts(), 4u); // the first worker and one after each hang
  ASSERT_TRUE(r.best);
  EXPECT_EQ(ev.detail(r.history[*r.best].config)->params.at("behaviour").text, "ok");
  ev.finish();
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE status = 'timeout'"), 3);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 21);
}

TEST(TuneIsolation, WorkerCrashIsSurvived) {
  ::setenv("ISATUNE_WORKER_TEST_CRASH", "2", 1); // the first worker aborts on its second request
  WorkerRunner runner(worker_options());
  ::unsetenv("ISATUNE_WORKER_TEST_CRASH"); // the hook is read by the worker at start: already set there
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  const gen::Space& space = ev.space();
  EXPECT_EQ(ev.evaluate(cfg(space, "ok", 1)).status, Status::ok);
  Evaluation crashed = ev.evaluate(cfg(space, "ok", 2));
  EXPECT_EQ(crashed.status, Status::runtime);
  EXPECT_NE(ev.detail(cfg(space, "ok", 2))->message.find("SIGABRT"), std::string::npos)
      << ev.detail(cfg(space, "ok", 2))->message;
  EXPECT_EQ(runner.deaths(), 1u);
  EXPECT_EQ(ev.evaluate(cfg(space, "ok", 4)).status, Status::ok); // a fresh worker
  EXPECT_EQ(runner.starts(), 2u);
}

TEST(TuneIsolation, WorkerKilledFromOutsideIsSurvived) {
  WorkerRunner runner(worker_options());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  EXPECT_EQ(ev.evaluate(cfg(ev.space(), "ok", 1)).status, Status::ok);
  ASSERT_GT(runner.pid(), 0);
  ::kill(runner.pid(), SIGKILL);
  Evaluation e = ev.evaluate(cfg(ev.space(), "ok", 2));
  EXPECT_EQ(e.status, Status::runtime);
  EXPECT_NE(ev.detail(cfg(ev.space(), "ok", 2))->message.find("SIGKILL"), std::string::npos);
  EXPECT_EQ(ev.evaluate(cfg(ev.space(), "ok", 4)).status, Status::ok);
}

// Resume: a tuning run stopped midway and started again measures nothing that is recorded.
#include "isatune/tune/worker_runner.h"
#include "selftest_fixture.h"

using namespace isatune;
using namespace isatune::tune;
using isatune::test::selftest_job;

namespace {

TuneResult run(GeneratorEvaluator& ev, const std::string& strategy, std::optional<size_t> evaluations,
               uint64_t seed = 1) {
  auto s = make_strategy(strategy);
  TuneOptions o;
  o.seed = seed;
  o.budget.evaluations = evaluations;
  return tune::tune(ev.space(), ev, *s, o);
}

} // namespace

TEST(TuneResume, StoppedRunResumesWithoutMeasuringAgain) {
  const std::string path = test::temp_path("resume.db");
  const auto job = selftest_job();
  size_t first_requests = 0;
  {
    auto database = db::Database::open(path);
    InProcessRunner runner(test::quick_emulator());
    GeneratorEvaluatorOptions o;
    o.compile_threads = 2;
    o.db = &database;
    GeneratorEvaluator ev(job, runner, o);
    TuneResult r = run(ev, "random", 8);
    EXPECT_EQ(r.history.size(), 8u);
    EXPECT_EQ(ev.recorded_configurations(), 0u);
    first_requests = runner.requests();
  } // stopped by its budget; nothing is lost
  auto database = db::Database::open(path);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 8);

  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 2;
  o.db = &database;
  GeneratorEvaluator ev(job, runner, o);
  EXPECT_EQ(ev.recorded_configurations(), 8u);
  TuneResult r = run(ev, "exhaustive", std::nullopt);
  EXPECT_EQ(r.history.size(), 21u);
  EXPECT_EQ(ev.stats().from_db, 8u);
  size_t charged_free = 0;
  for (const auto& h : r.history)
    if (ev.detail(h.config)->from_db) {
      EXPECT_EQ(h.eval.cost_s, 0);
      ++charged_free;
    }
  EXPECT_EQ(charged_free, 8u);
  // every configuration measured exactly once over both runs
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 21);
  EXPECT_EQ(test::count_rows(database, "SELECT max(c) FROM (SELECT count(*) AS c FROM measurements m JOIN variants v "
                                       "ON v.id = m.variant_id GROUP BY v.parameters)"),
            1);
  EXPECT_EQ(test::count_rows(database, "SELECT count(DISTINCT run_guid) FROM measurements"), 2);
  // device requests: the second run sent only what the first did not measure
  size_t pruned_now = 0, device_now = 0;
  for (const auto& h : r.history) {
    const auto* d = ev.detail(h.config);
    if (d->from_db) continue;
    if (d->status == Status::resource || d->status == Status::compile) ++pruned_now;
    else ++device_now;
  }
  EXPECT_EQ(runner.requests(), device_now);
  EXPECT_EQ(first_requests + runner.requests(), 15u) // 21 minus lds x3 and asm-error x3, pruned on the CPU
      << "first " << first_requests << " now " << runner.requests() << " pruned now " << pruned_now;

  // A third run has everything: no device request at all.
  InProcessRunner idle(test::quick_emulator());
  GeneratorEvaluator again(job, idle, o);
  TuneResult r3 = run(again, "hybrid", std::nullopt, 7);
  EXPECT_EQ(idle.requests(), 0u);
  EXPECT_EQ(again.stats().from_db, r3.history.size());
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 21);
  ASSERT_TRUE(r3.best);
  EXPECT_EQ(again.detail(r3.history[*r3.best].config)->params.at("behaviour").text, "ok");
}

TEST(TuneResume, OtherProblemOrDeviceIsMeasured) {
  const std::string path = test::temp_path("resume-other.db");
  auto database = db::Database::open(path);
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  o.db = &database;
  const auto ok = [](const gen::Space& s) {
    return gen::config_of(s, {{"behaviour", gen::Value::str("ok")}, {"unroll", gen::Value::num(1)}});
  };
  {
    GeneratorEvaluator ev(selftest_job(4096), runner, o);
    EXPECT_EQ(ev.evaluate(ok(ev.space())).status, Status::ok);
  }
  {
    GeneratorEvaluator ev(selftest_job(2048), runner, o); // another problem: measured
    EXPECT_EQ(ev.evaluate(ok(ev.space())).status, Status::ok);
    EXPECT_EQ(ev.stats().from_db, 0u);
  }
  {
    auto job = selftest_job(4096); // both problems: only the new one would be measured, none here
    job.problems.push_back({{"N", 2048}});
    GeneratorEvaluator ev(job, runner, o);
    EXPECT_EQ(ev.evaluate(ok(ev.space())).status, Status::ok);
    EXPECT_EQ(ev.stats().from_db, 1u);
  }
  EXPECT_EQ(runner.requests(), 2u);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 2);
}

TEST(TuneResume, WorkerRequestsCountOnlyNewMeasurements) {
  const std::string path = test::temp_path("resume-worker.db");
  auto database = db::Database::open(path);
  WorkerOptions w;
  w.command = {ISATUNE_CLI_PATH, "internal-device-worker", "--device", "emu:gfx942"};
  GeneratorEvaluatorOptions o;
  o.compile_threads = 1;
  o.db = &database;
  o.timeout_s = 4;
  auto job = selftest_job();
  size_t first = 0;
  {
    WorkerRunner runner(w);
    GeneratorEvaluator ev(job, runner, o);
    auto s = make_strategy("exhaustive");
    TuneOptions to;
    to.budget.evaluations = 5; // ok x3, slow x2: all reach the device
    tune::tune(ev.space(), ev, *s, to);
    first = runner.requests();
  }
  EXPECT_EQ(first, 5u);
  WorkerRunner runner(w);
  GeneratorEvaluator ev(job, runner, o);
  auto s = make_strategy("exhaustive");
  TuneOptions to;
  to.budget.evaluations = 8;
  TuneResult r = tune::tune(ev.space(), ev, *s, to);
  EXPECT_EQ(r.history.size(), 8u);
  EXPECT_EQ(ev.stats().from_db, 5u);
  EXPECT_EQ(runner.requests(), 3u); // slow x1, wrong x2
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), 8);
}

// The generator evaluator in process: pruning before device time, compile ahead on the pool, DB recording.
#include <chrono>
#include <set>
#include <thread>

#include "selftest_fixture.h"

using namespace isatune;
using namespace isatune::tune;
using isatune::test::selftest_job;

namespace {

TuneResult run_exhaustive(GeneratorEvaluator& ev) {
  auto s = make_strategy("exhaustive");
  TuneOptions o;
  return tune::tune(ev.space(), ev, *s, o);
}

} // namespace

TEST(TunePipeline, SelftestStatusesInProcess) {
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 2;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  TuneResult r = run_exhaustive(ev);
  ASSERT_EQ(r.history.size(), ev.space().size());
  for (int u : {1, 2, 4}) {
    EXPECT_EQ(test::status_of(r, ev, "ok", u).status, Status::ok);
    EXPECT_EQ(test::status_of(r, ev, "slow", u).status, Status::ok);
    EXPECT_EQ(test::status_of(r, ev, "wrong", u).status, Status::wrong_answer);
    EXPECT_EQ(test::status_of(r, ev, "hang", u).status, Status::runtime); // the emulator's instruction limit
    EXPECT_EQ(test::status_of(r, ev, "fault", u).status, Status::runtime);
    EXPECT_EQ(test::status_of(r, ev, "lds", u).status, Status::resource);
    EXPECT_EQ(test::status_of(r, ev, "asm-error", u).status, Status::compile);
  }
  ASSERT_TRUE(r.best);
  const auto* best = ev.detail(r.history[*r.best].config);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->params.at("behaviour").text, "ok");
  EXPECT_GT(best->time_ms, 0);
  EXPECT_LT(test::status_of(r, ev, "ok", 1).time_ms, test::status_of(r, ev, "slow", 1).time_ms);
}

TEST(TunePipeline, ResourcePruningUsesNoDeviceTime) {
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  TuneResult r = run_exhaustive(ev);
  size_t reached_device = 0;
  for (const auto& h : r.history) {
    const auto* d = ev.detail(h.config);
    ASSERT_TRUE(d);
    if (d->params.at("behaviour").text == "lds") {
      EXPECT_EQ(d->status, Status::resource);
      EXPECT_NE(d->message.find("LDS 131072 bytes > the device's 65536"), std::string::npos) << d->message;
      EXPECT_EQ(d->run_s, 0);
    }
    if (d->status != Status::resource && d->status != Status::compile && d->status != Status::constraint)
      ++reached_device;
  }
  EXPECT_EQ(runner.requests(), reached_device);
  EXPECT_EQ(ev.stats().pruned, 6u); // lds x3, asm-error x3
  EXPECT_EQ(ev.stats().device_requests, reached_device);
}

TEST(TunePipeline, OccupancyFloorAndScratchLimits) {
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  o.limits.min_waves_per_simd = 100; // no kernel reaches it
  GeneratorEvaluator ev(selftest_job(), runner, o);
  Evaluation e = ev.evaluate(gen::config_of(ev.space(), {{"behaviour", gen::Value::str("ok")},
                                                          {"unroll", gen::Value::num(1)}}));
  EXPECT_EQ(e.status, Status::resource);
  EXPECT_EQ(runner.requests(), 0u);
}

TEST(TunePipeline, CompilesAheadOnPoolThreads) {
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 3;
  GeneratorEvaluator ev(selftest_job(), runner, o);
  TuneResult r = run_exhaustive(ev);
  const auto s = ev.stats().compile;
  EXPECT_EQ(s.threads, 3u);
  EXPECT_GT(s.on_pool, 0u);             // compiled by pool threads, not by the device's thread
  EXPECT_GT(s.ready + s.waited, 0u);    // some requests found their compilation done or under way
  EXPECT_EQ(s.requested, r.history.size());
  EXPECT_LT(s.inline_compiles, s.requested);
  EXPECT_GE(s.idle_s, 0);
}

TEST(TunePipeline, CompilePoolServesEveryRequestOnce) {
  const auto job = selftest_job();
  const gen::Space space = job.generator->space(job.isa, job.sig);
  CompilePool pool(*job.generator, job.isa, job.sig, 2, 4);
  std::vector<gen::Params> all;
  for (size_t i = 0; i < space.size(); ++i) all.push_back(gen::params_of(space, space.valid_config(i)));
  pool.prefetch(all); // more than the capacity: bounded to 4
  // get() compiles a queued entry no pool thread has started on the caller's thread (the device must not wait),
  // so on a loaded machine the caller could take all four before a pool thread ran: wait for the pool first.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (pool.stats().on_pool < 4 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(pool.stats().on_pool, 4u) << "the pool did not compile the four prefetched variants in 60 s";
  std::set<std::string> kernels;
  for (const auto& p : all) {
    CompileOutcome o = pool.get(p);
    if (p.at("behaviour").text == "asm-error") {
      EXPECT_EQ(o.status, Status::compile);
    } else {
      ASSERT_EQ(o.status, Status::ok) << o.message;
      kernels.insert(o.compiled->generated.kernel_name);
    }
  }
  EXPECT_EQ(kernels.size(), space.size() - 3);
  const auto s = pool.stats();
  EXPECT_EQ(s.requested, space.size());
  EXPECT_EQ(s.on_pool, 4u);                          // the prefetched ones, each once
  EXPECT_EQ(s.ready, 4u);                            // ... found compiled
  EXPECT_EQ(s.inline_compiles, space.size() - 4);   // the rest on the caller's thread
  EXPECT_EQ(s.compiled, space.size());               // nothing compiled twice
  EXPECT_EQ(s.dropped, 0u);
}

TEST(TunePipeline, RecordsEveryEvaluation) {
  const std::string path = test::temp_path("pipeline.db");
  auto database = db::Database::open(path);
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 2;
  o.db = &database;
  o.strategy = "exhaustive";
  {
    GeneratorEvaluator ev(selftest_job(), runner, o);
    TuneResult r = run_exhaustive(ev);
    ev.finish();
    EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements"), int64_t(r.history.size()));
    EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE run_guid = '" + ev.run_guid() + "'"),
              int64_t(r.history.size()));
  }
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE status = 'ok' AND median_ms > 0 "
                                       "AND device_kind = 'emulated' AND timing_method = 'emulator-estimate'"),
            6);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE status = 'resource'"), 3);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE status = 'compile'"), 3);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE status = 'wrong-answer'"), 3);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM variants WHERE code_object IS NULL"), 3);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM best"), 1);
  EXPECT_EQ(test::count_rows(database, "SELECT count(*) FROM measurements WHERE problem = '{\"N\":4096}'"),
            21);
}

TEST(TunePipeline, SeveralProblemsSumTheirTimes) {
  auto job = selftest_job();
  job.problems.push_back({{"N", 1000}});
  InProcessRunner runner(test::quick_emulator());
  GeneratorEvaluatorOptions o;
  o.compile_threads = 0;
  GeneratorEvaluator ev(job, runner, o);
  const auto ok = gen::config_of(ev.space(), {{"behaviour", gen::Value::str("ok")}, {"unroll", gen::Value::num(2)}});
  Evaluation e = ev.evaluate(ok);
  ASSERT_EQ(e.status, Status::ok);
  const auto* d = ev.detail(ok);
  ASSERT_EQ(d->problem_ms.size(), 2u);
  EXPECT_DOUBLE_EQ(e.time_ms, d->problem_ms[0] + d->problem_ms[1]);
  EXPECT_EQ(runner.requests(), 2u);
}

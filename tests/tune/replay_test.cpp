#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "datasets.h"
#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "isatune/tune/tuner.h"

using namespace isatune::tune;
using namespace isatune::tune::test;

class Dataset : public ::testing::TestWithParam<DatasetCase> {};

TEST_P(Dataset, ReadsEntriesAndInvalidCounts) {
  const auto& dc = GetParam();
  std::string path = dataset_path(dc.file);
  ISATUNE_NEED_DATASET(path);
  ReplayData d = read_replay(path);
  EXPECT_EQ(d.format, dc.format);
  EXPECT_FALSE(d.repaired);
  EXPECT_EQ(d.entries.size(), dc.entries);
  EXPECT_EQ(d.entries.size() - d.count(Status::ok), dc.invalid);
  for (const auto& e : d.entries)
    EXPECT_GT(e.cost_s, 0.0);
  ReplayEvaluator ev(d);
  EXPECT_EQ(ev.space().size(), dc.entries); // every entry is a distinct configuration
}

TEST_P(Dataset, ExhaustiveReplayReproducesTheRecordedOptimum) {
  const auto& dc = GetParam();
  std::string path = dataset_path(dc.file);
  ISATUNE_NEED_DATASET(path);
  ReplayData d = read_replay(path);
  double recorded = INFINITY;
  for (const auto& e : d.entries)
    if (e.status == Status::ok)
      recorded = std::min(recorded, e.time_ms);
  ReplayEvaluator ev(d);
  auto s = make_strategy("exhaustive");
  TuneResult r = tune(ev.space(), ev, *s, TuneOptions{});
  EXPECT_EQ(r.history.size(), dc.entries);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(r.history[*r.best].eval.time_ms, recorded);
  size_t failed = 0;
  for (const auto& rec : r.history)
    failed += rec.eval.status != Status::ok;
  EXPECT_EQ(failed, dc.invalid);
}

INSTANTIATE_TEST_SUITE_P(Shared, Dataset, ::testing::ValuesIn(kDatasets), [](const auto& info) {
  std::string n = info.param.file;
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
});

TEST(Replay, KnownFiguresOfTheSharedDatasets) {
  std::string a100 = dataset_path("convolution-a100-mi250x/A100.json.gz");
  ISATUNE_NEED_DATASET(a100);
  ReplayData d = read_replay(a100);
  EXPECT_EQ(d.count(Status::runtime), 155u);
  EXPECT_EQ(d.count(Status::compile), 6u);
  EXPECT_EQ(d.device, "NVIDIA A100-PCIE-40GB");
  std::string ktt = dataset_path("pnpoly-rtx3090/KTPnpolyOutput_3090.json.gz");
  ISATUNE_NEED_DATASET(ktt);
  ReplayData k = read_replay(ktt);
  EXPECT_EQ(k.count(Status::runtime), 274u);
  EXPECT_EQ(k.parameters.size(), 5u); // VERTICES (constant 600) and the four tuned parameters
  std::string kt = dataset_path("pnpoly-rtx3090/RTX_3090.json.gz");
  ISATUNE_NEED_DATASET(kt);
  ReplayData p = read_replay(kt);
  double best_kt = INFINITY, best_ktt = INFINITY;
  for (const auto& e : p.entries)
    if (e.status == Status::ok)
      best_kt = std::min(best_kt, e.time_ms);
  for (const auto& e : k.entries)
    if (e.status == Status::ok)
      best_ktt = std::min(best_ktt, e.time_ms);
  EXPECT_NEAR(best_kt, 7.224, 0.001);
  EXPECT_NEAR(best_ktt, best_kt, 1e-6); // the KT file is a conversion of the KTT run
}

TEST(Replay, RepairsAnUnclosedCacheFromACrashedRun) {
  std::string path = dataset_path("pnpoly-rtx3090/RTX_3090.json.gz");
  ISATUNE_NEED_DATASET(path);
  std::string text = read_maybe_gzip(path);
  // cut in the middle of an entry about two thirds in, as a crash while writing would
  size_t cut = text.size() * 2 / 3;
  std::string truncated = text.substr(0, cut);
  ReplayData d = parse_replay_text(truncated, "truncated.json");
  EXPECT_TRUE(d.repaired);
  EXPECT_GT(d.entries.size(), 2000u);
  EXPECT_LT(d.entries.size(), 4092u);
  // every kept entry is complete and equal to the one in the intact file (entries come back in key order)
  size_t complete = 0;
  ReplayData full = parse_replay_text(text, "full.json");
  EXPECT_FALSE(full.repaired);
  std::map<uint64_t, Evaluation> by_index;
  for (size_t i = 0; i < full.entries.size(); ++i)
    by_index[full.indices[i]] = full.entries[i];
  for (size_t i = 0; i < d.entries.size(); ++i) {
    const Evaluation& e = by_index.at(d.indices[i]);
    complete += d.entries[i].status == e.status && d.entries[i].time_ms == e.time_ms &&
                d.entries[i].cost_s == e.cost_s;
  }
  EXPECT_EQ(complete, d.entries.size());
  // also through a gzip file on disk
  std::string tmp = ::testing::TempDir() + "/unclosed.json.gz";
  gzFile f = gzopen(tmp.c_str(), "wb");
  ASSERT_TRUE(f);
  gzwrite(f, truncated.data(), static_cast<unsigned>(truncated.size()));
  gzclose(f);
  ReplayData g = read_replay(tmp);
  EXPECT_TRUE(g.repaired);
  EXPECT_EQ(g.entries.size(), d.entries.size());
}

TEST(Replay, OldConventionAndErrorStrings) {
  std::string text = R"({"device_name": "X", "kernel_name": "k", "tune_params_keys": ["a", "m"],
    "tune_params": {"a": [1, 2, 4], "m": ["p", "q"]}, "objective": "time", "cache": {
    "1,p": {"a": 1, "m": "p", "time": 3.5, "compile_time": 100, "benchmark_time": 50},
    "2,p": {"a": 2, "m": "p", "time": 1e20, "compile_time": 100},
    "4,p": {"a": 4, "m": "p", "time": "InvalidConfig"},
    "1,q": {"a": 1, "m": "q", "time": "CompilationFailedConfig", "compile_time": 10},
    "2,q": {"a": 2, "m": "q", "time": "RuntimeFailedConfig", "compile_time": 10},
    "4,q": {"a": 4, "m": "q", "time": 2.5, "compile_time": 10, "verification_time": 5, "framework_time": 5})";
  ReplayData d = parse_replay_text(text, "inline");
  EXPECT_TRUE(d.repaired);
  ASSERT_EQ(d.entries.size(), 6u);
  EXPECT_EQ(d.count(Status::ok), 2u);
  EXPECT_EQ(d.count(Status::runtime), 2u);
  EXPECT_EQ(d.count(Status::compile), 1u);
  EXPECT_EQ(d.count(Status::constraint), 1u);
  EXPECT_DOUBLE_EQ(d.entries[0].cost_s, 0.15);
  EXPECT_FALSE(d.parameters[1].ordered);
  ReplayEvaluator ev(d);
  EXPECT_EQ(ev.space().size(), 5u); // the InvalidConfig entry is outside the space
  EXPECT_FALSE(ev.space().is_valid(Config{2, 0}));
  EXPECT_EQ(ev.evaluate(Config{2, 1}).time_ms, 2.5);
}

TEST(Replay, BadInputIsAnInputError) {
  EXPECT_THROW(parse_replay_text("not json at all", "x"), isatune::InputError);
  EXPECT_THROW(parse_replay_text("[1, 2]", "x"), isatune::InputError);
  EXPECT_THROW(parse_replay_text(R"({"cache": {}})", "x"), isatune::InputError);
  EXPECT_THROW(read_replay("/nonexistent/file.json"), isatune::InputError);
}

// Merging shard databases (loader/src/merge.cpp) and the v3 -> v4 migration (device identity in run rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <tuple>

#include "../../loader/src/sqlite_stmt.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "test_util.h"

namespace db = isatune::db;

namespace {

int64_t count(db::Database& d, const std::string& sql) { return std::get<int64_t>(d.query(sql).at(0).at(0)); }

db::DeviceRecord device(bool emulated) {
  db::DeviceRecord d;
  d.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  d.isa = "gfx942";
  d.name = emulated ? "CDNA emulator (gfx942)" : "AMD Instinct MI300X";
  d.compute_units = 304;
  d.memory_bytes = 192ull << 30;
  d.driver_version = "test";
  d.emulated = emulated;
  return d;
}

struct Eval {
  int variant;     // parameters {"tile":variant}
  int n;           // problem {"n":n}
  double median;   // < 0: a runtime failure
};

// A shard database as a tuning task writes it: one device, one generator, one run per call of add_run.
struct Shard {
  db::Database d;
  int64_t dev, gen, tc;
  explicit Shard(const std::string& path, bool emulated = true) : d(db::Database::open(path)) {
    dev = d.record_device(device(emulated));
    gen = d.record_generator("vector_add", "h1");
    tc = d.record_toolchain("llvm", "19");
  }
  void add(const std::string& run, const std::vector<Eval>& evals, const std::string& kind = "") {
    for (const auto& e : evals) {
      auto code = testutil::code_object("tile" + std::to_string(e.variant));
      db::VariantRecord v{gen, testutil::kSignature, "{\"tile\":" + std::to_string(e.variant) + "}",
                          d.record_code_object(code, tc), "vector_add", testutil::kLaunch};
      db::MeasurementRecord m;
      m.variant_id = d.record_variant(v);
      m.device_id = dev;
      m.problem = "{\"n\":" + std::to_string(e.n) + "}";
      if (e.median < 0) {
        m.status = "runtime";
      } else {
        m.median_ms = e.median;
        m.count = 5;
      }
      m.device_kind = !kind.empty() ? kind : device_kind();
      m.timing_method = "emulator-estimate";
      m.run_guid = run;
      d.record_measurement(m);
    }
  }
  std::string device_kind() {
    return count(d, "SELECT emulated FROM devices WHERE id = " + std::to_string(dev)) ? "emulated" : "real";
  }
  void start(const std::string& run, const std::string& shard) {
    db::RunIdentity id;
    id.shard = shard;
    id.device_id = dev;
    id.device_uuid = "emu-gfx942-0";
    d.record_run_start({run, "exhaustive", "all", "node1", "", ""}, id);
  }
};

// The winners a database selects: (generator, signature, problem, device kind) -> (parameters, median).
std::map<std::string, std::pair<std::string, double>> winners(db::Database& d) {
  std::map<std::string, std::pair<std::string, double>> w;
  for (auto& r : d.query("SELECT b.generator || b.signature || b.problem || b.device_kind, v.parameters, b.median_ms "
                         "FROM best b JOIN variants v ON v.id = b.variant_id"))
    w[std::get<std::string>(r[0])] = {std::get<std::string>(r[1]), std::get<double>(r[2])};
  return w;
}

// Every measurement as content (no ids), sorted: what "the same evaluations" means.
std::vector<std::string> evaluations(db::Database& d) {
  std::vector<std::string> out;
  for (auto& r : d.query("SELECT v.parameters || m.problem || m.status || ifnull(m.median_ms, 'null') || m.run_guid "
                         "FROM measurements m JOIN variants v ON v.id = m.variant_id"))
    out.push_back(std::get<std::string>(r[0]));
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

// Random tuning results split over shards as a distributed run would (and in random order), merged in another
// order: the merged database holds exactly the evaluations of one database that recorded everything, selects
// the same winners (ties included: equal medians are common on the emulator), and a second merge adds nothing.
TEST(Merge, ShardsMergeToTheSameEvaluationsAndWinnersAsOneDatabase) {
  const auto dir = testutil::temp_dir();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> ms(0.05, 3.0);
  const int variants = 11, shards = 5;
  const std::vector<int> sizes = {127, 1000, 4093};
  std::vector<Eval> all;
  for (int n : sizes)
    for (int v = 0; v < variants; ++v) {
      double t = std::round(ms(rng) * 8) / 8; // coarse: ties happen
      if (v % 7 == 3) t = -1;                 // a failure is a measurement too
      all.push_back({v, n, t});
    }
  all.push_back({2, 127, all[2].median > 0 ? all[2].median + 0.25 : 1.0}); // a repeat of one variant: data, kept
  {
    Shard ref(dir + "/ref.sqlite");
    ref.start("runs-in-one", "");
    ref.add("runs-in-one", all);
  }
  std::vector<std::vector<Eval>> parts(shards);
  std::vector<Eval> shuffled = all;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (size_t k = 0; k < shuffled.size(); ++k) parts[k % shards].push_back(shuffled[k]);
  std::vector<std::string> files;
  for (int s = 0; s < shards; ++s) {
    files.push_back(dir + "/shard-" + std::to_string(s) + ".sqlite");
    Shard sh(files.back());
    const std::string run = "shard" + std::to_string(s);
    sh.start(run, std::to_string(s) + "/" + std::to_string(shards));
    sh.add(run, parts[size_t(s)]);
    sh.d.record_run_end(run);
  }
  std::reverse(files.begin(), files.end());
  auto out = db::Database::open(dir + "/merged.sqlite");
  const db::MergeReport r = out.merge(files);
  ASSERT_EQ(r.files.size(), size_t(shards));
  for (const auto& f : r.files) EXPECT_TRUE(f.merged) << f.error;
  EXPECT_EQ(r.measurements_added, all.size());
  ASSERT_EQ(r.shards.size(), size_t(shards));
  for (const auto& s : r.shards) EXPECT_EQ(s.state, "done") << s.index;
  EXPECT_TRUE(r.complete());

  auto ref = db::Database::open(dir + "/ref.sqlite", {.read_only = true});
  const auto w = winners(out);
  EXPECT_EQ(w, winners(ref));
  EXPECT_EQ(w.size(), sizes.size());
  // Same content up to the run GUIDs (the reference had one run).
  auto a = evaluations(out), b = evaluations(ref);
  for (auto& s : a) s.erase(s.find("shard"));
  for (auto& s : b) s.erase(s.find("runs-in-one"));
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_TRUE(out.verify().problems.empty());

  // Idempotent: merging everything again (in yet another order) adds nothing and changes no winner.
  std::shuffle(files.begin(), files.end(), rng);
  const auto again = out.merge(files);
  EXPECT_EQ(again.measurements_added, 0u);
  EXPECT_EQ(count(out, "SELECT count(*) FROM measurements"), int64_t(all.size()));
  EXPECT_EQ(winners(out), w);
  // The run rows carry the shard and the device identity through the merge.
  EXPECT_EQ(count(out, "SELECT count(*) FROM runs WHERE shard LIKE '%/5' AND device_uuid = 'emu-gfx942-0' AND "
                       "device_id IS NOT NULL"), shards);
}

// A shard merged while it runs, then again after it finished, adds just what it measured in between; a shard
// killed and resumed (a second run in the same file) keeps both runs' measurements, repeats included.
TEST(Merge, PartialShardsAddOnlyWhatIsNewAndReportUnfinishedAndMissingShards) {
  const auto dir = testutil::temp_dir();
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> ms(0.1, 9.0);
  auto some = [&](int k, int n) {
    std::vector<Eval> v;
    for (int i = 0; i < k; ++i) v.push_back({i, n, ms(rng)});
    return v;
  };
  Shard s0(dir + "/s0.sqlite"), s1(dir + "/s1.sqlite");
  s0.start("a", "0/3");
  s0.add("a", some(4, 77));
  s1.start("b", "1/3");
  s1.add("b", some(3, 77));
  s1.d.record_run_end("b");
  auto out = db::Database::open(dir + "/out.sqlite");
  const std::vector<std::string> files = {dir + "/s0.sqlite", dir + "/s1.sqlite", dir + "/s2.sqlite"};
  auto r = out.merge(files);
  EXPECT_EQ(r.measurements_added, 7u);
  EXPECT_FALSE(r.files[2].merged);
  EXPECT_NE(r.files[2].error.find("no such file"), std::string::npos) << r.files[2].error;
  ASSERT_EQ(r.shards.size(), 3u);
  EXPECT_EQ(r.shards[0].state, "unfinished");
  EXPECT_EQ(r.shards[1].state, "done");
  EXPECT_EQ(r.shards[2].state, "missing");
  EXPECT_FALSE(r.complete());

  // Shard 0 goes on (2 more in run a, which then ends), and a second run c measures 4 more, one a repeat.
  s0.add("a", some(2, 99));
  s0.d.record_run_end("a");
  s0.start("c", "0/3");
  auto more = some(3, 55);
  more.push_back({0, 77, ms(rng)});
  s0.add("c", more);
  s0.d.record_run_end("c");
  {
    Shard s2(dir + "/s2.sqlite");
    s2.start("d", "2/3");
    s2.add("d", some(5, 31));
    s2.d.record_run_end("d");
  }
  r = out.merge(files);
  EXPECT_EQ(r.measurements_added, 2u + 4u + 5u);
  for (const auto& s : r.shards) EXPECT_EQ(s.state, "done") << s.index;
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(count(out, "SELECT count(*) FROM measurements"), 7 + 11);
  EXPECT_EQ(count(out, "SELECT count(*) FROM measurements m JOIN variants v ON v.id = m.variant_id WHERE "
                       "v.parameters = '{\"tile\":0}' AND m.problem = '{\"n\":77}'"), 3); // s0 twice, s1 once
  // The end of run a, merged while it was open, arrived with the second merge.
  EXPECT_EQ(count(out, "SELECT count(*) FROM runs WHERE guid = 'a' AND ended_at IS NOT NULL"), 1);
  EXPECT_EQ(out.merge(files).measurements_added, 0u);
  // The single-file form still works and is idempotent too.
  EXPECT_EQ(out.merge_from(dir + "/s0.sqlite"), 0u);
}

// Measurements of another device kind than their device row say (a real time under an emulated device key) are
// refused, as are corrupt blobs; the other files are merged all the same.
TEST(Merge, RefusesMixedDeviceKindsAndCorruptBlobs) {
  const auto dir = testutil::temp_dir();
  {
    Shard good(dir + "/good.sqlite");
    good.start("g", "0/3");
    good.add("g", {{1, 64, 0.7}, {2, 64, 0.4}});
    good.d.record_run_end("g");
    Shard mixed(dir + "/mixed.sqlite");
    mixed.start("m", "1/3");
    mixed.add("m", {{1, 64, 0.9}});
    mixed.add("m", {{3, 64, 0.2}}, "real"); // a real measurement under the emulated device key
    mixed.d.record_run_end("m");
    Shard bad(dir + "/bad.sqlite");
    bad.start("b", "2/3");
    bad.add("b", {{4, 64, 0.3}});
    bad.d.record_run_end("b");
    bad.d.query("UPDATE code_objects SET bytes = zeroblob(256)");
  }
  auto out = db::Database::open(dir + "/out.sqlite");
  const auto r = out.merge({dir + "/mixed.sqlite", dir + "/good.sqlite", dir + "/bad.sqlite"});
  ASSERT_EQ(r.files.size(), 3u);
  EXPECT_FALSE(r.files[0].merged);
  EXPECT_NE(r.files[0].error.find("device kinds"), std::string::npos) << r.files[0].error;
  EXPECT_NE(r.files[0].error.find("1 real measurement(s) under the emulated device"), std::string::npos)
      << r.files[0].error;
  EXPECT_TRUE(r.files[1].merged) << r.files[1].error;
  EXPECT_FALSE(r.files[2].merged);
  EXPECT_NE(r.files[2].error.find("corrupt blob"), std::string::npos) << r.files[2].error;
  EXPECT_EQ(r.measurements_added, 2u);
  EXPECT_EQ(count(out, "SELECT count(*) FROM measurements"), 2);
  EXPECT_EQ(r.shards[1].state, "missing"); // refused files count as not there
  EXPECT_FALSE(r.complete());
  EXPECT_THROW(out.merge_from(dir + "/bad.sqlite"), isatune::InputError);
  EXPECT_TRUE(out.verify().problems.empty());
}

// Version 4 adds the device identity, shard and job id to run rows: a version-3 file keeps its runs (new
// columns unknown), `best` is rebuilt with the content tie-break, and new runs record the identity.
TEST(Merge, VersionThreeFileGainsRunIdentityColumns) {
  const auto dir = testutil::temp_dir();
  const std::string path = dir + "/v3.db";
  const std::string sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    db::detail::exec(raw, "BEGIN", path);
    db::detail::migrate(raw, 0, 3, path);
    db::detail::exec(raw, (R"sql(
      INSERT INTO devices(id, vendor, target_id, isa, name, compute_units, memory_bytes, driver_version,
                          runtime_version, emulated) VALUES(5,'amd','gfx942','gfx942','MI300X',304,1,'d','',0);
      INSERT INTO generators VALUES(1,'gemm','h');
      INSERT INTO code_objects VALUES(')sql" + sha + R"sql(','amd','gfx942','gfx942',0,x'',NULL,'t');
      INSERT INTO variants VALUES(3,1,'{}','{"tile":9}',')sql" + sha + R"sql(','k','{}');
      INSERT INTO variants VALUES(4,1,'{}','{"tile":1}',')sql" + sha + R"sql(','k','{}');
      INSERT INTO runs VALUES('g1','random','60s','h','t','t2');
      INSERT INTO measurements(id,variant_id,device_id,problem,status,median_ms,timing_method,device_kind,measured_at,
                               run_guid) VALUES
        (11,3,5,'{"n":1}','ok',2.5,'events','real','t','g1'),
        (12,4,5,'{"n":1}','ok',2.5,'events','real','t','g1');
      COMMIT;)sql").c_str(), path);
    sqlite3_close(raw);
  }
  auto d = db::Database::open(path);
  EXPECT_EQ(d.schema_version(), db::kSchemaVersion);
  auto runs = d.query("SELECT guid, ended_at, device_id, device_uuid, pci_bus_id, compute_units, clock_khz, "
                      "driver_version, shard, scheduler_job FROM runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(std::get<std::string>(runs[0][0]), "g1");
  EXPECT_EQ(std::get<std::string>(runs[0][1]), "t2");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(runs[0][2]));
  EXPECT_EQ(std::get<std::string>(runs[0][3]), "");
  EXPECT_EQ(std::get<int64_t>(runs[0][5]), 0);
  EXPECT_EQ(std::get<std::string>(runs[0][8]), "");
  // The tie at 2.5 ms goes to the smaller parameters text ({"tile":1}), whichever row came first.
  EXPECT_EQ(count(d, "SELECT variant_id FROM best"), 4);
  db::RunIdentity r;
  r.device_id = 5;
  r.device_uuid = "GPU-12345678-abcd-ef01-2345-6789abcdef01";
  r.pci_bus_id = "0000:41:00.0";
  r.compute_units = 304;
  r.clock_khz = 2100000;
  r.driver_version = "rocm 6.4";
  r.shard = "3/8";
  r.scheduler_job = "slurm 77_3 CUDA_VISIBLE_DEVICES=3";
  d.record_run_start({"g2", "exhaustive", "all", "node7", "", ""}, r);
  auto g2 = d.query("SELECT device_id, device_uuid, pci_bus_id, compute_units, clock_khz, driver_version, shard, "
                    "scheduler_job FROM runs WHERE guid = 'g2'");
  ASSERT_EQ(g2.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(g2[0][0]), 5);
  EXPECT_EQ(std::get<std::string>(g2[0][1]), r.device_uuid);
  EXPECT_EQ(std::get<std::string>(g2[0][2]), r.pci_bus_id);
  EXPECT_EQ(std::get<int64_t>(g2[0][4]), 2100000);
  EXPECT_EQ(std::get<std::string>(g2[0][6]), "3/8");
  EXPECT_EQ(std::get<std::string>(g2[0][7]), r.scheduler_job);
  EXPECT_TRUE(d.verify().problems.empty());
}

// The vendor library's recorded time and the re-ranking's winner in the database (schema version 5): select()
// never returns a tuned entry the vendor library beats on its problem (VendorFasterError, ISATUNE_USE_VENDOR in
// the C API), and it returns the re-ranking's winner rather than the fastest single median while no later search
// found something faster. The migration from version 4 keeps every row.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "fake_device.h"
#include "isatune.h"
#include "isatune/loader/loader.h"
#include "isatune/loader/vendor_gemm.h"
#include "test_util.h"
#include "../../loader/src/sqlite_stmt.h"

using namespace isatune;

namespace {
// populate(): variant v's median at n is n * 1e-6 + v (variant 0 fastest), except at n = 4096 (variant 2).
struct VendorFixture : ::testing::Test {
  std::string dir = testutil::temp_dir();
  std::string path = dir + "/tune.db";
  testutil::Ids ids;
  void SetUp() override {
    auto d = db::Database::open(path);
    ids = testutil::populate(d, {256, 1024, 4096}, 3, false, 304);
  }
  void vendor(const std::string& problem, double ms, const std::string& library = "cublas test") {
    auto d = db::Database::open(path);
    db::VendorTimeRecord v;
    v.generator = "vector_add";
    v.signature = testutil::kSignature;
    v.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
    v.compute_units = 304;
    v.problem = problem;
    v.library = library;
    v.median_ms = ms;
    v.source = "manual";
    v.timing_method = "manual";
    d.record_vendor_time(v);
  }
};

int64_t count(db::Database& d, const std::string& sql) { return std::get<int64_t>(d.query(sql)[0][0]); }

struct RealBackend : loader::Backend {
  std::string name() const override { return "fakereal"; }
  std::string unavailable_reason() override { return ""; }
  std::vector<loader::DeviceProperties> list_devices() override { return {fake::gfx942()}; }
  std::shared_ptr<loader::Device> open(const std::string&) override {
    return std::make_shared<fake::FakeDevice>(fake::gfx942());
  }
};
} // namespace

TEST_F(VendorFixture, ATunedEntrySlowerThanTheVendorIsNeverSelected) {
  vendor(R"({"n":1024})", 0.0005); // beats the tuned 0.001024
  vendor(R"({"n":256})", 1.0);     // the tuned 0.000256 is faster
  auto db = loader::TuningDb::open(path);
  const auto dev = fake::gfx942();
  auto s256 = db->select("vector_add", testutil::kSignature, R"({"n":256})", dev);
  EXPECT_DOUBLE_EQ(s256->vendor_ms, 1.0);
  EXPECT_EQ(s256->vendor_library, "cublas test");
  try {
    db->select("vector_add", testutil::kSignature, R"({"n":1024})", dev);
    FAIL() << "the vendor library's faster time was ignored";
  } catch (const loader::VendorFasterError& e) {
    EXPECT_NE(std::string(e.what()).find("no tuned entry better than the vendor library"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.library, "cublas test");
    EXPECT_DOUBLE_EQ(e.vendor_ms, 0.0005);
    EXPECT_DOUBLE_EQ(e.tuned_ms, 0.001024);
  }
  // A problem between: the nearest entry (1024) is beaten, so the next nearest that is not (256, not 4096).
  auto near = db->select("vector_add", testutil::kSignature, R"({"n":1000})", dev);
  EXPECT_EQ(near->tuned_problem, R"({"n":256})");
  EXPECT_FALSE(near->exact);
  // The emulated view does not see vendor times (none for emulated devices).
  auto d = db::Database::open(path);
  testutil::populate(d, {1024}, 1, true, 304);
  auto emu = loader::TuningDb::open(path)->select("vector_add", testutil::kSignature, R"({"n":1024})",
                                                  fake::gfx942(304, true));
  EXPECT_EQ(emu->vendor_ms, 0);
  // Every entry beaten: the vendor library, for any problem.
  vendor(R"({"n":256})", 1e-6);
  vendor(R"({"n":4096})", 1e-6);
  auto all = loader::TuningDb::open(path);
  EXPECT_THROW(all->select("vector_add", testutil::kSignature, R"({"n":2000})", dev), loader::VendorFasterError);
  // A vendor time is positive.
  EXPECT_THROW(vendor(R"({"n":256})", 0), InputError);
  EXPECT_THROW(vendor(R"({"n":256})", -1), InputError);
}

TEST_F(VendorFixture, TheCApiSaysUseTheVendorLibrary) {
  vendor(R"({"n":1024})", 0.0005, "rocblas test");
  loader::register_backend("fakereal", [] { return std::make_shared<RealBackend>(); });
  isatune_context* ctx = nullptr;
  ASSERT_EQ(isatune_open(path.c_str(), "fakereal:0", &ctx), ISATUNE_OK) << isatune_last_error();
  isatune_kernel* k = nullptr;
  EXPECT_EQ(isatune_select(ctx, "vector_add", testutil::kSignature, R"({"n":1024})", &k), ISATUNE_USE_VENDOR);
  EXPECT_EQ(k, nullptr);
  EXPECT_NE(std::string(isatune_last_error()).find("call the vendor library"), std::string::npos);
  const char* lib = nullptr;
  double vendor_ms = 0, tuned_ms = 0;
  ASSERT_EQ(isatune_vendor_advice(&lib, &vendor_ms, &tuned_ms), ISATUNE_OK);
  EXPECT_STREQ(lib, "rocblas test");
  EXPECT_DOUBLE_EQ(vendor_ms, 0.0005);
  EXPECT_DOUBLE_EQ(tuned_ms, 0.001024);
  ASSERT_EQ(isatune_select(ctx, "vector_add", testutil::kSignature, R"({"n":256})", &k), ISATUNE_OK);
  isatune_kernel_desc desc;
  ASSERT_EQ(isatune_kernel_describe(k, &desc), ISATUNE_OK);
  EXPECT_EQ(desc.vendor_ms, 0);
  EXPECT_STREQ(desc.vendor_library, "");
  EXPECT_EQ(desc.rerank_winner, 0);
  isatune_close(ctx);
}

TEST_F(VendorFixture, TheRerankWinnerIsSelectedUntilASearchFindsSomethingFaster) {
  auto d = db::Database::open(path);
  db::RerankWinnerRecord w;
  w.generator = "vector_add";
  w.signature = testutil::kSignature;
  w.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
  w.compute_units = 304;
  w.problem = R"({"n":1024})";
  w.variant_id = ids.variants[1]; // 1.001024 single median, but the interval's winner
  w.rerank_median_ms = 0.9, w.rerank_lo_ms = 0.89, w.rerank_hi_ms = 0.91;
  w.candidates = 3, w.rounds = 12, w.separated = true, w.flip_rate = 0.25;
  w.run_guid = "run-304r";
  d.record_rerank_winner(w);
  EXPECT_EQ(count(d, "SELECT count(*) FROM rerank_winners WHERE search_best_ms = 0.001024"), 1);
  {
    auto s = loader::TuningDb::open(path)->select("vector_add", testutil::kSignature, R"({"n":1024})", fake::gfx942());
    EXPECT_TRUE(s->rerank_winner);
    EXPECT_EQ(s->variant_id, ids.variants[1]);
    EXPECT_EQ(s->parameters, R"({"unroll":2})");
    EXPECT_DOUBLE_EQ(s->median_ms, 1.001024); // its own recorded median
    auto other = loader::TuningDb::open(path)->select("vector_add", testutil::kSignature, R"({"n":256})",
                                                      fake::gfx942());
    EXPECT_FALSE(other->rerank_winner);
  }
  // A variant without an ok measurement of the problem, or a problem not tuned, is refused.
  w.variant_id = 9999;
  EXPECT_THROW(d.record_rerank_winner(w), InputError);
  w.variant_id = ids.variants[1];
  w.problem = R"({"n":5})";
  EXPECT_THROW(d.record_rerank_winner(w), InputError);
  // A later search finds something faster than what was re-ranked: best moves, the winner no longer applies.
  db::MeasurementRecord m;
  m.variant_id = ids.variants[2];
  m.device_id = ids.device;
  m.problem = R"({"n":1024})";
  m.median_ms = 0.0001;
  m.count = 10;
  d.record_measurement(m);
  auto s = loader::TuningDb::open(path)->select("vector_add", testutil::kSignature, R"({"n":1024})", fake::gfx942());
  EXPECT_FALSE(s->rerank_winner);
  EXPECT_EQ(s->variant_id, ids.variants[2]);
  // Rebuilding best (gc, merge) keeps the winner table.
  d.gc();
  EXPECT_EQ(count(d, "SELECT count(*) FROM rerank_winners"), 1);
}

TEST(VendorSchema, VersionFourFileKeepsEveryRowAndGainsTheTables) {
  auto dir = testutil::temp_dir();
  std::string path = dir + "/v4.db";
  const std::string sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    db::detail::exec(raw, "BEGIN", path);
    db::detail::migrate(raw, 0, 4, path);
    db::detail::exec(raw, (R"sql(
      INSERT INTO devices(id,vendor,target_id,isa,name,compute_units,memory_bytes,driver_version,runtime_version,emulated)
        VALUES(7,'nvidia','sm_90a','sm_90a','NVIDIA H200',132,1,'cuda driver 13.0','',0);
      INSERT INTO generators VALUES(1,'gemm','h');
      INSERT INTO code_objects VALUES(')sql" + sha + R"sql(','nvidia','sm_90a','sm_90a',0,x'',NULL,'t');
      INSERT INTO variants VALUES(3,1,'{}','{"tile":1}',')sql" + sha + R"sql(','k','{}');
      INSERT INTO runs(guid,strategy,budget,host,started_at) VALUES('g1','random','60s','h','t');
      INSERT INTO measurements(id,variant_id,device_id,problem,status,median_ms,timing_method,device_kind,measured_at,
                               run_guid) VALUES
        (11,3,7,'{"M":64}','ok',2.5,'events','real','t','g1'),
        (12,3,7,'{"M":128}','wrong-answer',NULL,'events','real','t','g1');
      COMMIT;)sql").c_str(), path);
    sqlite3_close(raw);
  }
  auto d = db::Database::open(path);
  EXPECT_EQ(d.schema_version(), 5);
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements"), 2);
  EXPECT_EQ(count(d, "SELECT count(*) FROM best WHERE measurement_id = 11"), 1);
  EXPECT_EQ(count(d, "SELECT count(*) FROM runs WHERE guid = 'g1'"), 1);
  EXPECT_EQ(count(d, "SELECT count(*) FROM vendor_times"), 0);
  EXPECT_EQ(count(d, "SELECT count(*) FROM rerank_winners"), 0);
  EXPECT_TRUE(d.verify().problems.empty());
}

TEST(VendorTiming, NothingOnAnEmulatedOrUnknownDevice) {
  loader::VendorGemm g;
  g.m = g.n = g.k = 64;
  fake::FakeDevice emu(fake::gfx942(304, true));
  auto t = loader::time_vendor_gemm(emu, g);
  EXPECT_FALSE(t.timed());
  EXPECT_NE(t.unavailable.find("emulated: no vendor library"), std::string::npos) << t.unavailable;
  fake::FakeDevice other(fake::gfx942());
  t = loader::time_vendor_gemm(other, g);
  EXPECT_FALSE(t.timed());
  EXPECT_NE(t.unavailable.find("backend 'fake' has no vendor library"), std::string::npos) << t.unavailable;
}

TEST_F(VendorFixture, MergeCarriesVendorTimesAndWinners) {
  vendor(R"({"n":1024})", 0.0005);
  {
    auto d = db::Database::open(path);
    db::RerankWinnerRecord w;
    w.generator = "vector_add";
    w.signature = testutil::kSignature;
    w.target_id = "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-";
    w.compute_units = 304;
    w.problem = R"({"n":256})";
    w.variant_id = ids.variants[2];
    w.rerank_median_ms = 2.0, w.rerank_lo_ms = 1.9, w.rerank_hi_ms = 2.1;
    w.candidates = 3, w.rounds = 10;
    d.record_rerank_winner(w);
  }
  const std::string out = dir + "/out.db";
  {
    auto o = db::Database::open(out);
    testutil::populate(o, {64}, 1, false, 228); // other rows first: the ids differ from the input's
    auto r = o.merge({path});
    ASSERT_TRUE(r.files.at(0).merged) << r.files.at(0).error;
    r = o.merge({path}); // again: nothing changes
    ASSERT_TRUE(r.files.at(0).merged) << r.files.at(0).error;
    EXPECT_EQ(count(o, "SELECT count(*) FROM vendor_times"), 1);
    EXPECT_EQ(count(o, "SELECT count(*) FROM rerank_winners"), 1);
    EXPECT_TRUE(o.verify().problems.empty());
  }
  auto db = loader::TuningDb::open(out);
  auto s = db->select("vector_add", testutil::kSignature, R"({"n":256})", fake::gfx942());
  EXPECT_TRUE(s->rerank_winner);
  EXPECT_EQ(s->parameters, R"({"unroll":3})");
  EXPECT_THROW(db->select("vector_add", testutil::kSignature, R"({"n":1024})", fake::gfx942()),
               loader::VendorFasterError);
}

// The database: schema versions, journal modes, clear errors, concurrent writers, killed writers, admin.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "isatune/db/database.h"
#include "isatune/db/journal.h"
#include "isatune/loader/select.h"
#include "test_util.h"
#include "../../loader/src/sqlite_stmt.h"

using namespace isatune;
namespace fs = std::filesystem;

namespace {
std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

int64_t count(db::Database& d, const std::string& sql) { return std::get<int64_t>(d.query(sql)[0][0]); }
} // namespace

TEST(Database, FreshFileHasCurrentSchemaAndWal) {
  auto dir = testutil::temp_dir();
  auto d = db::Database::open(dir + "/t.db", {.journal = db::JournalMode::wal});
  EXPECT_EQ(d.schema_version(), db::kSchemaVersion);
  EXPECT_EQ(d.journal_mode(), "wal");
  auto r = db::Database::open(dir + "/t.db", {.read_only = true});
  EXPECT_EQ(r.schema_version(), db::kSchemaVersion);
}

TEST(Database, JournalOverrideAndNetworkDetection) {
  auto dir = testutil::temp_dir();
  auto d = db::Database::open(dir + "/t.db", {.journal = db::JournalMode::rollback});
  EXPECT_EQ(d.journal_mode(), "delete");
  EXPECT_TRUE(db::is_network_filesystem_type(0x6969));      // NFS
  EXPECT_TRUE(db::is_network_filesystem_type(0xFF534D42L)); // CIFS
  EXPECT_TRUE(db::is_network_filesystem_type(0x65735546));  // FUSE
  EXPECT_FALSE(db::is_network_filesystem_type(0xEF53));     // ext4
  EXPECT_FALSE(db::is_network_filesystem_type(0x01021994)); // tmpfs
  setenv("ISATUNE_DB_JOURNAL", "delete", 1);
  EXPECT_EQ(db::resolve_journal_mode(db::JournalMode::automatic, dir + "/x.db"), db::JournalMode::rollback);
  auto e = db::Database::open(dir + "/env.db");
  EXPECT_EQ(e.journal_mode(), "delete");
  setenv("ISATUNE_DB_JOURNAL", "bogus", 1);
  EXPECT_THROW(db::resolve_journal_mode(db::JournalMode::automatic, dir + "/x.db"), InputError);
  unsetenv("ISATUNE_DB_JOURNAL");
  EXPECT_EQ(db::resolve_journal_mode(db::JournalMode::wal, dir + "/x.db"), db::JournalMode::wal);
}

TEST(Database, ClearErrors) {
  auto dir = testutil::temp_dir();
  // Missing file.
  EXPECT_NE(message_of([&] { db::Database::open(dir + "/none.db", {.read_only = true}); }).find("no such database file"),
            std::string::npos);
  // Not a database.
  { std::ofstream(dir + "/text.db") << "hello, this is not SQLite at all, just some text that is long enough....."
                                       "...................................................................."; }
  EXPECT_NE(message_of([&] { db::Database::open(dir + "/text.db", {.read_only = true}); }).find("not an isatune database"),
            std::string::npos);
  // Truncated file.
  {
    auto d = db::Database::open(dir + "/full.db", {.journal = db::JournalMode::rollback});
    testutil::populate(d, {256, 1024, 4096, 65536}, 4);
  }
  auto size = fs::file_size(dir + "/full.db");
  fs::copy_file(dir + "/full.db", dir + "/cut.db");
  fs::resize_file(dir + "/cut.db", size / 2);
  EXPECT_NE(message_of([&] { db::Database::open(dir + "/cut.db", {.read_only = true}); }).find("truncated"),
            std::string::npos);
  // Wrong (newer) schema version.
  fs::copy_file(dir + "/full.db", dir + "/new.db");
  {
    sqlite3* raw = nullptr;
    sqlite3_open((dir + "/new.db").c_str(), &raw);
    sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
  }
  auto newer = message_of([&] { db::Database::open(dir + "/new.db", {.read_only = true}); });
  EXPECT_NE(newer.find("schema version 99 is newer"), std::string::npos) << newer;
  EXPECT_NE(message_of([&] { db::Database::open(dir + "/new.db"); }).find("newer"), std::string::npos);
  // Read-only file opened for writing; read-only opening works.
  fs::copy_file(dir + "/full.db", dir + "/ro.db");
  fs::permissions(dir + "/ro.db", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_NE(message_of([&] { db::Database::open(dir + "/ro.db"); }).find("read-only"), std::string::npos);
  EXPECT_NO_THROW(db::Database::open(dir + "/ro.db", {.read_only = true}));
  // Corrupted blob: refused with the row named.
  fs::copy_file(dir + "/full.db", dir + "/blob.db");
  std::string sha;
  {
    auto d = db::Database::open(dir + "/blob.db");
    sha = std::get<std::string>(d.query("SELECT sha256 FROM code_objects ORDER BY sha256 LIMIT 1")[0][0]);
    d.query("UPDATE code_objects SET bytes = zeroblob(256) WHERE sha256 = ?", {sha});
    auto msg = message_of([&] { d.code_object(sha); });
    EXPECT_NE(msg.find("sha256=" + sha), std::string::npos) << msg;
    EXPECT_NE(msg.find("corrupt"), std::string::npos) << msg;
    auto report = d.verify();
    EXPECT_TRUE(report.integrity_ok);
    ASSERT_EQ(report.problems.size(), 1u);
    EXPECT_NE(report.problems[0].find(sha), std::string::npos);
    EXPECT_EQ(report.blobs_checked, 4u);
  }
}

TEST(Database, OlderSchemaIsMigratedInOneTransaction) {
  auto dir = testutil::temp_dir();
  std::string path = dir + "/v1.db";
  {
    // A version-1 file as an older isatune wrote it, with one measurement.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    db::detail::exec(raw, "BEGIN", path);
    db::detail::migrate(raw, 0, 1, path);
    db::detail::exec(raw, R"sql(
      INSERT INTO devices VALUES(1,'amd','amdgcn-amd-amdhsa--gfx942','gfx942','MI300X',304,1,'d','r',0);
      INSERT INTO generators VALUES(1,'vector_add','h');
      INSERT INTO code_objects VALUES('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855','amd','gfx942','x',0,x'',NULL,'t');
      INSERT INTO variants VALUES(1,1,'{}','{}','e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855','k','{}');
      INSERT INTO measurements(variant_id,device_id,problem,status,median_ms,timing_method,device_kind,measured_at)
        VALUES(1,1,'{"n":1}','ok',2.5,'events','real','t');
      COMMIT;)sql", path);
    sqlite3_close(raw);
  }
  auto ro = [&] { db::Database::open(path, {.read_only = true}); };
  EXPECT_NE(message_of(ro).find("older"), std::string::npos);
  auto d = db::Database::open(path);
  EXPECT_EQ(d.schema_version(), db::kSchemaVersion);
  EXPECT_EQ(count(d, "SELECT count(*) FROM best"), 1);
  EXPECT_NO_THROW(ro());
}

// Version 3 rebuilt `devices` with the clocks, bus width and L2 size in its key: a version-2 file keeps every
// row and id, the trigger that keeps `best` still works, and foreign keys are enforced again afterwards.
TEST(Database, VersionTwoFileKeepsEverythingWhenTheDeviceKeyGrows) {
  auto dir = testutil::temp_dir();
  std::string path = dir + "/v2.db";
  const std::string sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    db::detail::exec(raw, "BEGIN", path);
    db::detail::migrate(raw, 0, 2, path);
    db::detail::exec(raw, (R"sql(
      INSERT INTO devices VALUES(7,'nvidia','sm_90a','sm_90a','NVIDIA H200',132,150754820096,'cuda driver 13.0','',0);
      INSERT INTO devices VALUES(9,'amd','gfx942','gfx942','CDNA emulator (gfx942)',304,1,'emu','',1);
      INSERT INTO generators VALUES(1,'gemm','h');
      INSERT INTO code_objects VALUES(')sql" + sha + R"sql(','nvidia','sm_90a','sm_90a',0,x'',NULL,'t');
      INSERT INTO variants VALUES(3,1,'{}','{"tile":1}',')sql" + sha + R"sql(','k','{}');
      INSERT INTO runs VALUES('g1','random','60s','h','t',NULL);
      INSERT INTO measurements(id,variant_id,device_id,problem,status,median_ms,timing_method,device_kind,measured_at,
                               run_guid) VALUES
        (11,3,7,'{"n":1}','ok',2.5,'events','real','t','g1'),
        (12,3,7,'{"n":2}','ok',4.0,'events','real','t','g1'),
        (13,3,9,'{"n":1}','runtime',NULL,'emulator-estimate','emulated','t',NULL);
      COMMIT;)sql").c_str(), path);
    sqlite3_close(raw);
  }
  auto d = db::Database::open(path);
  EXPECT_EQ(d.schema_version(), db::kSchemaVersion);
  auto devices = d.query("SELECT id, name, compute_units, memory_bytes, driver_version, emulated, clock_khz, "
                         "memory_clock_khz, memory_bus_bits, l2_bytes FROM devices ORDER BY id");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(std::get<int64_t>(devices[0][0]), 7);
  EXPECT_EQ(std::get<std::string>(devices[0][1]), "NVIDIA H200");
  EXPECT_EQ(std::get<int64_t>(devices[0][3]), 150754820096);
  EXPECT_EQ(std::get<std::string>(devices[0][4]), "cuda driver 13.0");
  EXPECT_EQ(std::get<int64_t>(devices[1][0]), 9);
  EXPECT_EQ(std::get<int64_t>(devices[1][5]), 1);
  for (int col = 6; col < 10; ++col) EXPECT_EQ(std::get<int64_t>(devices[0][size_t(col)]), 0) << col;
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements WHERE (id = 11 OR id = 12) AND device_id = 7"), 2);
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements WHERE id = 13 AND device_id = 9 AND status = 'runtime'"), 1);
  EXPECT_EQ(count(d, "SELECT count(*) FROM best WHERE measurement_id IN (11, 12)"), 2);
  EXPECT_EQ(count(d, "SELECT count(*) FROM variants WHERE id = 3"), 1);
  EXPECT_EQ(count(d, "SELECT count(*) FROM runs"), 1);
  auto report = d.verify();
  EXPECT_TRUE(report.integrity_ok);
  EXPECT_TRUE(report.problems.empty()) << report.problems.front();

  // The old key with unknown clocks finds the old row; the same GPU with known clocks is another device.
  db::DeviceRecord h200{"nvidia", "sm_90a", "sm_90a", "NVIDIA H200", 132, 150754820096, "cuda driver 13.0", "", false};
  EXPECT_EQ(d.record_device(h200), 7);
  h200.clock_khz = 1980000;
  h200.memory_clock_khz = 3201000;
  h200.memory_bus_bits = 6144;
  h200.l2_bytes = 50ull << 20;
  int64_t known = d.record_device(h200);
  EXPECT_NE(known, 7);
  EXPECT_EQ(d.record_device(h200), known);
  h200.clock_khz = 1500000; // a variant with a lower rated clock
  EXPECT_NE(d.record_device(h200), known);

  // The trigger was made again: a faster measurement replaces the best one.
  db::MeasurementRecord m;
  m.variant_id = 3;
  m.device_id = 7;
  m.problem = R"({"n":1})";
  m.median_ms = 1.5;
  m.count = 3;
  int64_t faster = d.record_measurement(m);
  EXPECT_EQ(count(d, "SELECT measurement_id FROM best WHERE problem = '{\"n\":1}' AND device_kind = 'real'"), faster);
  // Foreign keys are on again after the migration.
  m.device_id = 99;
  EXPECT_THROW(d.record_measurement(m), Error);
  EXPECT_NO_THROW(db::Database::open(path, {.read_only = true}));
}

TEST(Database, EightProcessesWriteConcurrently) {
  auto dir = testutil::temp_dir();
  std::string path = dir + "/c.db";
  testutil::Ids ids;
  {
    auto d = db::Database::open(path);
    ids = testutil::populate(d, {}, 1);
  }
  constexpr int kProcs = 8, kRows = 60;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        auto d = db::Database::open(path);
        for (int i = 0; i < kRows; ++i) {
          db::MeasurementRecord m{};
          m.variant_id = ids.variants[0];
          m.device_id = ids.device;
          m.problem = "{\"n\":" + std::to_string(p * 1000 + i) + "}";
          m.median_ms = 1.0 + i;
          m.count = 1;
          d.record_measurement(m);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", p, e.what());
        rc = 1;
      }
      _exit(rc);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  auto d = db::Database::open(path);
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements"), kProcs * kRows);
  EXPECT_EQ(count(d, "SELECT count(DISTINCT problem) FROM measurements"), kProcs * kRows);
  EXPECT_EQ(count(d, "SELECT count(*) FROM best"), kProcs * kRows);
  auto report = d.verify();
  EXPECT_TRUE(report.integrity_ok);
  EXPECT_TRUE(report.problems.empty());
}

TEST(Database, KilledWriterLosesOnlyItsUncommittedRows) {
  auto dir = testutil::temp_dir();
  std::string path = dir + "/k.db";
  testutil::Ids ids;
  {
    auto d = db::Database::open(path);
    ids = testutil::populate(d, {}, 1);
  }
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipefd[0]);
    auto d = db::Database::open(path);
    db::MeasurementRecord m;
    m.variant_id = ids.variants[0];
    m.device_id = ids.device;
    m.median_ms = 1;
    for (int i = 0; i < 5; ++i) { // committed, one transaction each
      m.problem = "{\"n\":" + std::to_string(i) + "}";
      d.record_measurement(m);
    }
    d.begin();
    for (int i = 100; i < 200; ++i) { // never committed
      m.problem = "{\"n\":" + std::to_string(i) + "}";
      d.record_measurement(m);
    }
    char c = 'x';
    if (write(pipefd[1], &c, 1) != 1) _exit(2);
    pause();
    _exit(0);
  }
  close(pipefd[1]);
  char c;
  ASSERT_EQ(read(pipefd[0], &c, 1), 1);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  auto d = db::Database::open(path);
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements"), 5);
  EXPECT_TRUE(d.verify().problems.empty());
  db::MeasurementRecord again;
  again.variant_id = ids.variants[0];
  again.device_id = ids.device;
  again.problem = "{\"n\":7}";
  d.record_measurement(again); // still writable afterwards
  EXPECT_EQ(count(d, "SELECT count(*) FROM measurements"), 6);
}

TEST(Database, RecordsAreIdempotentAndValidated) {
  auto dir = testutil::temp_dir();
  auto d = db::Database::open(dir + "/r.db");
  auto ids = testutil::populate(d, {1024}, 2);
  EXPECT_EQ(d.record_generator("vector_add", "abc123"), ids.generator);
  auto code = testutil::code_object("variant0");
  EXPECT_EQ(d.record_code_object(code), code.sha256);
  code.sha256 = std::string(64, '0');
  EXPECT_THROW(d.record_code_object(code), InputError);
  db::MeasurementRecord m;
  m.variant_id = ids.variants[0];
  m.device_id = ids.device;
  m.problem = "{}";
  m.status = "exploded";
  EXPECT_THROW(d.record_measurement(m), InputError);
  db::VariantRecord v{ids.generator, "{}", "{}", std::string(64, 'a'), "k"};
  EXPECT_THROW(d.record_variant(v), InputError);
  // A variant that failed to compile (no code object) is recorded once, however often it is recorded.
  db::VariantRecord failed{ids.generator, R"({"a":"f16"})", R"({"tile":48})", "", "k"};
  const int64_t first = d.record_variant(failed);
  EXPECT_EQ(d.record_variant(failed), first);
  auto rows = d.query("SELECT COUNT(*) FROM variants WHERE code_object IS NULL");
  EXPECT_EQ(std::get<int64_t>(rows.at(0).at(0)), 1);
  // The stored code object round-trips, descriptor and arguments included.
  auto back = d.code_object(testutil::code_object("variant1").sha256);
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0].args.size(), 6u);
  EXPECT_EQ(back.kernels[0].args[3].value_kind, "by_value");
  ASSERT_TRUE(back.kernels[0].descriptor.has_value());
  EXPECT_EQ(back.kernels[0].descriptor->compute_pgm_rsrc1, 0x1234u);
  EXPECT_TRUE(back.kernels[0].descriptor->workgroup_id_x);
}

TEST(Database, MergeIsIdempotentExportImportRoundTripGcVerify) {
  auto dir = testutil::temp_dir();
  {
    auto a = db::Database::open(dir + "/a.db");
    testutil::populate(a, {256, 1024}, 2, false, 304);
    auto b = db::Database::open(dir + "/b.db");
    testutil::populate(b, {256, 4096}, 3, false, 228);
  }
  auto a = db::Database::open(dir + "/a.db");
  EXPECT_EQ(count(a, "SELECT count(*) FROM measurements"), 4);
  EXPECT_EQ(a.merge_from(dir + "/b.db"), 6u);
  EXPECT_EQ(a.merge_from(dir + "/b.db"), 0u);
  EXPECT_EQ(count(a, "SELECT count(*) FROM measurements"), 10);
  EXPECT_EQ(count(a, "SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(count(a, "SELECT count(*) FROM code_objects"), 3);
  EXPECT_EQ(count(a, "SELECT count(*) FROM best"), 4);
  EXPECT_TRUE(a.verify().problems.empty());

  EXPECT_EQ(a.export_to(dir + "/export"), 4u);
  EXPECT_TRUE(fs::exists(dir + "/export/manifest.json"));
  auto c = db::Database::open(dir + "/c.db");
  EXPECT_EQ(c.import_from(dir + "/export"), 4u);
  EXPECT_EQ(c.import_from(dir + "/export"), 0u);
  EXPECT_EQ(count(c, "SELECT count(*) FROM best"), 4);
  EXPECT_EQ(std::get<std::string>(c.query("SELECT group_concat(problem || median_ms, ';') FROM (SELECT * FROM best ORDER BY 1,2,3,4,5,6)")[0][0]),
            std::get<std::string>(a.query("SELECT group_concat(problem || median_ms, ';') FROM (SELECT * FROM best ORDER BY 1,2,3,4,5,6)")[0][0]));
  // A corrupted export file is refused.
  {
    std::string sha = std::get<std::string>(a.query("SELECT code_object FROM variants LIMIT 1")[0][0]);
    std::ofstream(dir + "/export/code_objects/" + sha + ".co", std::ios::binary) << "garbage";
    auto e = db::Database::open(dir + "/e.db");
    EXPECT_THROW(e.import_from(dir + "/export"), InputError);
  }
  // gc drops what no measurement uses.
  auto g = db::Database::open(dir + "/g.db");
  auto ids = testutil::populate(g, {256}, 2);
  g.record_code_object(testutil::code_object("orphan"));
  auto r = g.gc();
  EXPECT_EQ(r.code_objects_removed, 1u);
  EXPECT_EQ(count(g, "SELECT count(*) FROM code_objects"), 2);
  (void)ids;
}

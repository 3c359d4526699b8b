#include "isatune/db/database.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include "isatune/db/journal.h"
#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/loader/sha256.h"
#include "kernel_json.h"
#include "sqlite_stmt.h"

namespace isatune::db {

using detail::exec;
using detail::Stmt;

namespace {

// Waits for a lock with exponential backoff (1, 2, 4 ... 64 ms, each with jitter) until the timeout.
int busy_handler(void* arg, int count) {
  int timeout_ms = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  int64_t waited = 0;
  for (int i = 0; i < count; ++i) waited += std::min(1 << std::min(i, 6), 64);
  if (waited >= timeout_ms) return 0;
  thread_local std::minstd_rand rng(std::random_device{}());
  int step = std::min(1 << std::min(count, 6), 64);
  int sleep_us = step * 500 + static_cast<int>(rng() % static_cast<unsigned>(step * 500 + 1));
  std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  return 1;
}

uint32_t be32(const unsigned char* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }

// Catches what SQLite would report late or vaguely: not an SQLite file, or a file shorter than its header says.
void check_header(const std::string& path, bool read_only) {
  // Another process may be committing (rollback journal) or checkpointing (WAL) as this reads, outside SQLite's
  // locks: it writes page 1, with the new page count, before the pages that extend the file (CI saw "98304
  // bytes, its header says 106496" in Database.EightProcessesWriteConcurrently). A truncated file stays short,
  // so only a shortfall seen on every one of a few reads, 200 ms apart at most, is reported.
  for (int attempt = 0;; ++attempt) {
    std::error_code ec;
    auto size = std::filesystem::file_size(path, ec);
    if (ec) throw InputError(path + ": cannot read the database file (" + ec.message() + ")");
    if (size == 0) {
      if (read_only) throw InputError(path + ": empty file, not an isatune database");
      return;
    }
    unsigned char h[100] = {};
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot read the database file (permission denied?)");
    in.read(reinterpret_cast<char*>(h), sizeof h);
    if (in.gcount() < 100 || std::string(reinterpret_cast<char*>(h), 16) != std::string("SQLite format 3\0", 16))
      throw InputError(path +
                       ": not an isatune database (no SQLite header; the file is truncated or of another kind)");
    uint32_t page_size = (uint32_t(h[16]) << 8) | h[17];
    if (page_size == 1) page_size = 65536;
    uint32_t pages = be32(h + 28);
    if (!pages || be32(h + 24) != be32(h + 92) || size >= uint64_t(page_size) * pages) return;
    if (attempt == 4)
      throw InputError(path + ": the database file is truncated (" + std::to_string(size) +
                       " bytes, its header says " + std::to_string(uint64_t(page_size) * pages) + ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(25 << attempt)); // 25, 50, 100, 200 ms
  }
}

int pragma_int(sqlite3* db, const char* sql) {
  Stmt s(db, sql);
  return s.step() ? static_cast<int>(s.int64(0)) : 0;
}

// Checks application id and version; returns the version. `writable`: older versions are acceptable.
int check_schema(sqlite3* db, const std::string& path, bool writable) {
  int version = pragma_int(db, "PRAGMA user_version");
  int app = pragma_int(db, "PRAGMA application_id");
  int tables = 0;
  try {
    tables = pragma_int(db, "SELECT count(*) FROM sqlite_master");
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what()); // a corrupt schema: say which file
  }
  if (tables == 0 && version == 0) {
    if (!writable) throw InputError(path + ": empty database, not an isatune database");
    return 0;
  }
  if (app != kApplicationId)
    throw InputError(path + ": not an isatune database (SQLite file with application_id " + std::to_string(app) + ")");
  if (version > kSchemaVersion)
    throw InputError(path + ": schema version " + std::to_string(version) +
                     " is newer than this isatune understands (" + std::to_string(kSchemaVersion) +
                     "); upgrade isatune to read it");
  // Every table a current database has (another program's edits, a partial copy): merge and import read them all.
  if (version == kSchemaVersion)
    for (const char* table : {"devices", "toolchains", "generators", "code_objects", "kernels", "variants", "runs",
                              "measurements"}) {
      Stmt t(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
      t.bind(1, std::string(table));
      if (!t.step()) throw InputError(path + ": not a complete isatune database (no table " + table + ")");
    }
  if (version < kSchemaVersion && !writable)
    throw InputError(path + ": schema version " + std::to_string(version) + " is older than " +
                     std::to_string(kSchemaVersion) +
                     "; open it once for writing to migrate it (isatune db migrate --db " + path + ")");
  return version;
}

template <class Fn> auto write_txn(sqlite3* db, const std::string& path, Fn&& fn) {
  bool own = sqlite3_get_autocommit(db) != 0;
  if (own) exec(db, "BEGIN IMMEDIATE", path);
  try {
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      if (own) exec(db, "COMMIT", path);
    } else {
      auto r = fn();
      if (own) exec(db, "COMMIT", path);
      return r;
    }
  } catch (...) {
    if (own) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::string vendor_name(Vendor v) { return v == Vendor::amd ? "amd" : "nvidia"; }
} // namespace

std::string to_string(const Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", std::get<double>(v));
    return buf;
  }
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return "";
}

void check_status(const std::string& status) {
  for (const char* s : kStatuses)
    if (status == s) return;
  throw InputError("measurement status '" + status +
                   "': expected one of ok, constraint, compile, resource, runtime, wrong-answer, timeout");
}

std::string now_iso8601() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

Database Database::open(const std::string& path, const OpenOptions& options) {
  std::error_code ec;
  bool exists = std::filesystem::exists(path, ec);
  if (!exists && options.read_only) throw InputError(path + ": no such database file");
  if (exists) {
    check_header(path, options.read_only);
    std::error_code pec;
    auto perms = std::filesystem::status(path, pec).permissions();
    bool no_write_bits = !pec && (perms & std::filesystem::perms::all & (std::filesystem::perms::owner_write |
                                  std::filesystem::perms::group_write | std::filesystem::perms::others_write)) ==
                                     std::filesystem::perms::none;
    if (!options.read_only && (access(path.c_str(), W_OK) != 0 || no_write_bits))
      throw InputError(path + ": the database file is read-only; open it read-only or make it writable");
  }
  Database d;
  d.path_ = path;
  d.read_only_ = options.read_only;
  int flags = (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
              SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &d.db_, flags, nullptr);
  if (rc != SQLITE_OK) detail::throw_sqlite(d.db_, rc, path);
  sqlite3_extended_result_codes(d.db_, 1);
  sqlite3_busy_handler(d.db_, busy_handler, reinterpret_cast<void*>(static_cast<intptr_t>(options.busy_timeout_ms)));

  if (options.read_only) {
    check_schema(d.db_, path, false);
    return d;
  }
  JournalMode mode = resolve_journal_mode(options.journal, path);
  {
    Stmt s(d.db_, mode == JournalMode::wal ? "PRAGMA journal_mode=WAL" : "PRAGMA journal_mode=DELETE");
    s.step();
  }
  exec(d.db_, mode == JournalMode::wal ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL", path);
  // Create or migrate under the write lock, so that concurrent openers do it once. Foreign keys stay off
  // while a migration rebuilds a table others refer to (it checks them itself before committing).
  int version = check_schema(d.db_, path, true);
  if (version < kSchemaVersion) {
    write_txn(d.db_, path, [&] {
      int now = check_schema(d.db_, path, true);
      if (now < kSchemaVersion) detail::migrate(d.db_, now, kSchemaVersion, path);
    });
  }
  exec(d.db_, "PRAGMA foreign_keys=ON", path);
  return d;
}

Database::Database(Database&& o) noexcept : path_(std::move(o.path_)), read_only_(o.read_only_), db_(o.db_) {
  o.db_ = nullptr;
}

Database& Database::operator=(Database&& o) noexcept {
  if (this != &o) {
    if (db_) sqlite3_close_v2(db_);
    path_ = std::move(o.path_);
    read_only_ = o.read_only_;
    db_ = o.db_;
    o.db_ = nullptr;
  }
  return *this;
}

Database::~Database() {
  if (db_) sqlite3_close_v2(db_);
}

std::string Database::journal_mode() {
  Stmt s(db_, "PRAGMA journal_mode");
  return s.step() ? s.text(0) : "";
}

int Database::schema_version() { return pragma_int(db_, "PRAGMA user_version"); }

void Database::begin() { exec(db_, "BEGIN IMMEDIATE", path_); }
void Database::commit() { exec(db_, "COMMIT", path_); }
void Database::rollback() { exec(db_, "ROLLBACK", path_); }

int64_t Database::record_device(const DeviceRecord& d) {
  return write_txn(db_, path_, [&] {
    const char* cols = "vendor, target_id, isa, name, compute_units, memory_bytes, driver_version, runtime_version, "
                       "emulated, clock_khz, memory_clock_khz, memory_bus_bits, l2_bytes";
    Stmt ins(db_,
             (std::string("INSERT OR IGNORE INTO devices(") + cols + ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)").c_str());
    ins.bind(1, d.vendor).bind(2, d.target_id).bind(3, d.isa).bind(4, d.name).bind(5, int64_t(d.compute_units))
        .bind(6, int64_t(d.memory_bytes)).bind(7, d.driver_version).bind(8, d.runtime_version)
        .bind(9, int64_t(d.emulated)).bind(10, int64_t(d.clock_khz)).bind(11, int64_t(d.memory_clock_khz))
        .bind(12, int64_t(d.memory_bus_bits)).bind(13, int64_t(d.l2_bytes));
    ins.step();
    Stmt q(db_, "SELECT id FROM devices WHERE vendor=? AND target_id=? AND name=? AND compute_units=? AND "
                "memory_bytes=? AND driver_version=? AND runtime_version=? AND emulated=? AND clock_khz=? AND "
                "memory_clock_khz=? AND memory_bus_bits=? AND l2_bytes=?");
    q.bind(1, d.vendor).bind(2, d.target_id).bind(3, d.name).bind(4, int64_t(d.compute_units))
        .bind(5, int64_t(d.memory_bytes)).bind(6, d.driver_version).bind(7, d.runtime_version)
        .bind(8, int64_t(d.emulated)).bind(9, int64_t(d.clock_khz)).bind(10, int64_t(d.memory_clock_khz))
        .bind(11, int64_t(d.memory_bus_bits)).bind(12, int64_t(d.l2_bytes));
    if (!q.step()) throw Error(path_ + ": device row vanished after insert");
    return q.int64(0);
  });
}

int64_t Database::record_toolchain(const std::string& assembler, const std::string& version) {
  return write_txn(db_, path_, [&] {
    Stmt ins(db_, "INSERT OR IGNORE INTO toolchains(assembler, version) VALUES(?,?)");
    ins.bind(1, assembler).bind(2, version).step();
    Stmt q(db_, "SELECT id FROM toolchains WHERE assembler=? AND version=?");
    q.bind(1, assembler).bind(2, version).step();
    return q.int64(0);
  });
}

int64_t Database::record_generator(const std::string& name, const std::string& version_hash) {
  return write_txn(db_, path_, [&] {
    Stmt ins(db_, "INSERT OR IGNORE INTO generators(name, version_hash) VALUES(?,?)");
    ins.bind(1, name).bind(2, version_hash).step();
    Stmt q(db_, "SELECT id FROM generators WHERE name=? AND version_hash=?");
    q.bind(1, name).bind(2, version_hash).step();
    return q.int64(0);
  });
}

std::string Database::record_code_object(const CodeObject& code, int64_t toolchain_id) {
  std::string digest = loader::sha256_hex(code.bytes);
  if (!code.sha256.empty() && code.sha256 != digest)
    throw InputError("code object for " + code.isa + ": its sha256 field " + code.sha256 +
                     " does not match its bytes (" + digest + ")");
  write_txn(db_, path_, [&] {
    Stmt ins(db_, "INSERT OR IGNORE INTO code_objects(sha256, vendor, isa, target_id, size, bytes, toolchain_id, "
                  "created_at) VALUES(?,?,?,?,?,?,?,?)");
    ins.bind(1, digest).bind(2, vendor_name(code.vendor)).bind(3, code.isa).bind(4, code.target_id)
        .bind(5, int64_t(code.bytes.size())).bind(6, std::span<const uint8_t>(code.bytes));
    if (toolchain_id) ins.bind(7, toolchain_id);
    else ins.bind_null(7);
    ins.bind(8, now_iso8601()).step();
    Stmt k(db_, "INSERT OR IGNORE INTO kernels(code_object, name, symbol, kernarg_size, kernarg_align, lds_bytes, "
                "scratch_bytes, vgprs, agprs, sgprs, max_workgroup_size, wave_size, code_offset, code_size, args, "
                "descriptor) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (const auto& kern : code.kernels) {
      k.reset();
      k.bind(1, digest).bind(2, kern.name).bind(3, kern.symbol).bind(4, int64_t(kern.kernarg_size))
          .bind(5, int64_t(kern.kernarg_align)).bind(6, int64_t(kern.lds_bytes)).bind(7, int64_t(kern.scratch_bytes))
          .bind(8, int64_t(kern.vgprs)).bind(9, int64_t(kern.agprs)).bind(10, int64_t(kern.sgprs))
          .bind(11, int64_t(kern.max_workgroup_size)).bind(12, int64_t(kern.wave_size))
          .bind(13, int64_t(kern.code_offset)).bind(14, int64_t(kern.code_size))
          .bind(15, detail::args_to_json(kern.args).canonical());
      if (kern.descriptor) k.bind(16, detail::descriptor_to_json(*kern.descriptor).canonical());
      else k.bind_null(16);
      k.step();
    }
  });
  return digest;
}

int64_t Database::record_variant(const VariantRecord& v) {
  std::string sig = canonical_json(v.signature, "variant signature");
  std::string params = canonical_json(v.parameters, "variant parameters");
  std::string launch = canonical_json(v.launch.empty() ? "{}" : v.launch, "variant launch");
  return write_txn(db_, path_, [&] {
    if (!v.code_object.empty()) {
      Stmt c(db_, "SELECT 1 FROM kernels WHERE code_object=? AND name=?");
      c.bind(1, v.code_object).bind(2, v.kernel);
      if (!c.step())
        throw InputError(path_ + ": variant refers to code object " + v.code_object + " kernel '" + v.kernel +
                         "', which is not recorded; record the code object first");
    }
    // Looked up first with IS: a variant that failed to compile has no code object, and the UNIQUE constraint
    // treats NULLs as distinct, so INSERT OR IGNORE alone would add it again on every rerun.
    auto find = [&]() -> std::optional<int64_t> {
      Stmt q(db_, "SELECT id FROM variants WHERE generator_id=? AND signature=? AND parameters=? AND "
                  "code_object IS ? AND kernel=?");
      q.bind(1, v.generator_id).bind(2, sig).bind(3, params);
      if (v.code_object.empty()) q.bind_null(4);
      else q.bind(4, v.code_object);
      q.bind(5, v.kernel);
      if (!q.step()) return std::nullopt;
      return q.int64(0);
    };
    if (auto id = find()) return *id;
    Stmt ins(db_, "INSERT OR IGNORE INTO variants(generator_id, signature, parameters, code_object, kernel, launch) "
                  "VALUES(?,?,?,?,?,?)");
    ins.bind(1, v.generator_id).bind(2, sig).bind(3, params);
    if (v.code_object.empty()) ins.bind_null(4);
    else ins.bind(4, v.code_object);
    ins.bind(5, v.kernel).bind(6, launch).step();
    if (auto id = find()) return *id;
    throw Error(path_ + ": variant row vanished after insert");
  });
}

void Database::record_run_start(const RunRecord& r, const RunIdentity& id) {
  if (r.guid.empty()) throw InputError("run: empty GUID");
  write_txn(db_, path_, [&] {
    Stmt s(db_, "INSERT INTO runs(guid, strategy, budget, host, started_at, ended_at, device_id, device_uuid, "
                "pci_bus_id, compute_units, clock_khz, memory_clock_khz, driver_version, shard, scheduler_job) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(guid) DO NOTHING");
    s.bind(1, r.guid).bind(2, r.strategy).bind(3, r.budget).bind(4, r.host)
        .bind(5, r.started_at.empty() ? now_iso8601() : r.started_at);
    if (r.ended_at.empty()) s.bind_null(6);
    else s.bind(6, r.ended_at);
    if (id.device_id) s.bind(7, id.device_id);
    else s.bind_null(7);
    s.bind(8, id.device_uuid).bind(9, id.pci_bus_id).bind(10, int64_t(id.compute_units))
        .bind(11, int64_t(id.clock_khz)).bind(12, int64_t(id.memory_clock_khz)).bind(13, id.driver_version)
        .bind(14, id.shard).bind(15, id.scheduler_job);
    s.step();
  });
}

void Database::record_run_end(const std::string& guid, const std::string& ended_at) {
  write_txn(db_, path_, [&] {
    Stmt s(db_, "UPDATE runs SET ended_at=? WHERE guid=?");
    s.bind(1, ended_at.empty() ? now_iso8601() : ended_at).bind(2, guid).step();
    if (sqlite3_changes(db_) == 0) throw InputError(path_ + ": no run with GUID " + guid);
  });
}

int64_t Database::record_measurement(const MeasurementRecord& m) {
  check_status(m.status);
  if (m.device_kind != "real" && m.device_kind != "emulated")
    throw InputError("measurement device_kind '" + m.device_kind + "': expected real or emulated");
  std::string problem = canonical_json(m.problem, "measurement problem");
  return write_txn(db_, path_, [&] {
    Stmt s(db_, "INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, min_ms, "
                "count, timing_method, device_kind, measured_at, run_guid, message) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, m.variant_id).bind(2, m.device_id).bind(3, problem).bind(4, m.status).bind_opt(5, m.median_ms)
        .bind_opt(6, m.p20_ms).bind_opt(7, m.p80_ms).bind_opt(8, m.min_ms).bind(9, m.count)
        .bind(10, m.timing_method).bind(11, m.device_kind)
        .bind(12, m.measured_at.empty() ? now_iso8601() : m.measured_at);
    if (m.run_guid.empty()) s.bind_null(13);
    else s.bind(13, m.run_guid);
    s.bind(14, m.message).step();
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  });
}

void Database::record_vendor_time(const VendorTimeRecord& v) {
  if (!(v.median_ms > 0) || !std::isfinite(v.median_ms))
    throw InputError("vendor time " + std::to_string(v.median_ms) + " ms: expected a positive number of milliseconds");
  if (v.source != "measured" && v.source != "manual")
    throw InputError("vendor time source '" + v.source + "': expected measured or manual");
  if (v.generator.empty() || v.target_id.empty() || v.library.empty())
    throw InputError("vendor time: generator, target and library are required");
  const std::string sig = canonical_json(v.signature, "vendor time signature");
  const std::string problem = canonical_json(v.problem, "vendor time problem");
  write_txn(db_, path_, [&] {
    Stmt s(db_, "INSERT OR REPLACE INTO vendor_times(generator, signature, target_id, compute_units, problem, library, "
                "median_ms, p20_ms, p80_ms, min_ms, count, timing_method, source, device_id, measured_at, message) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, v.generator).bind(2, sig).bind(3, v.target_id).bind(4, int64_t(v.compute_units)).bind(5, problem)
        .bind(6, v.library).bind(7, v.median_ms).bind_opt(8, v.p20_ms).bind_opt(9, v.p80_ms).bind_opt(10, v.min_ms)
        .bind(11, v.count).bind(12, v.timing_method).bind(13, v.source);
    if (v.device_id) s.bind(14, v.device_id);
    else s.bind_null(14);
    s.bind(15, v.measured_at.empty() ? now_iso8601() : v.measured_at).bind(16, v.message).step();
  });
}

void Database::record_rerank_winner(const RerankWinnerRecord& w) {
  const std::string sig = canonical_json(w.signature, "winner signature");
  const std::string problem = canonical_json(w.problem, "winner problem");
  const std::string key = w.generator + " " + sig + " on " + w.target_id + " (" + std::to_string(w.compute_units) +
                          " CUs, " + w.device_kind + ") at " + problem;
  write_txn(db_, path_, [&] {
    Stmt b(db_, "SELECT median_ms FROM best WHERE generator=? AND signature=? AND target_id=? AND compute_units=? AND "
                "device_kind=? AND problem=?");
    b.bind(1, w.generator).bind(2, sig).bind(3, w.target_id).bind(4, int64_t(w.compute_units)).bind(5, w.device_kind)
        .bind(6, problem);
    if (!b.step()) throw InputError(path_ + ": re-ranking winner for " + key + ": nothing of it is tuned");
    const double search_best = b.real(0);
    Stmt m(db_, "SELECT m.id, m.median_ms FROM measurements m JOIN devices d ON d.id = m.device_id WHERE "
                "m.variant_id=? AND m.problem=? AND m.status='ok' AND m.median_ms IS NOT NULL AND m.device_kind=? AND "
                "d.target_id=? AND d.compute_units=? ORDER BY m.median_ms, m.id LIMIT 1");
    m.bind(1, w.variant_id).bind(2, problem).bind(3, w.device_kind).bind(4, w.target_id)
        .bind(5, int64_t(w.compute_units));
    if (!m.step())
      throw InputError(path_ + ": re-ranking winner for " + key + ": variant " + std::to_string(w.variant_id) +
                       " has no ok measurement of that problem on that device");
    const int64_t measurement = m.int64(0);
    const double median = m.real(1);
    Stmt s(db_, "INSERT OR REPLACE INTO rerank_winners(generator, signature, target_id, compute_units, device_kind, "
                "problem, measurement_id, variant_id, median_ms, search_best_ms, rerank_median_ms, rerank_lo_ms, "
                "rerank_hi_ms, candidates, rounds, separated, flip_rate, run_guid, decided_at) "
                "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, w.generator).bind(2, sig).bind(3, w.target_id).bind(4, int64_t(w.compute_units)).bind(5, w.device_kind)
        .bind(6, problem).bind(7, measurement).bind(8, w.variant_id).bind(9, median).bind(10, search_best)
        .bind(11, w.rerank_median_ms).bind(12, w.rerank_lo_ms).bind(13, w.rerank_hi_ms).bind(14, w.candidates)
        .bind(15, w.rounds).bind(16, int64_t(w.separated ? 1 : 0)).bind(17, w.flip_rate);
    if (w.run_guid.empty()) s.bind_null(18);
    else s.bind(18, w.run_guid);
    s.bind(19, now_iso8601()).step();
  });
}

bool Database::has_code_object(const std::string& sha256) {
  Stmt s(db_, "SELECT 1 FROM code_objects WHERE sha256=?");
  s.bind(1, sha256);
  return s.step();
}

CodeObject Database::code_object(const std::string& sha256) {
  CodeObject code;
  {
    Stmt s(db_, "SELECT vendor, isa, target_id, bytes FROM code_objects WHERE sha256=?");
    s.bind(1, sha256);
    if (!s.step()) throw InputError(path_ + ": no code object with sha256 " + sha256);
    code.vendor = s.text(0) == "nvidia" ? Vendor::nvidia : Vendor::amd;
    code.isa = s.text(1);
    code.target_id = s.text(2);
    code.bytes = s.blob(3);
    // NVIDIA objects are cubins (ELF) or PTX text, which the PTX emulator runs and the driver compiles at load.
    const bool elf = code.bytes.size() >= 4 && code.bytes[0] == 0x7f && code.bytes[1] == 'E' && code.bytes[2] == 'L' &&
                     code.bytes[3] == 'F';
    if (code.vendor == Vendor::nvidia && !elf) code.format = CodeFormat::ptx;
  }
  std::string digest = loader::sha256_hex(code.bytes);
  if (digest != sha256)
    throw InputError(path_ + ": code_objects row sha256=" + sha256 + ": the stored blob hashes to " + digest +
                     "; the blob is corrupt, refusing to load it");
  code.sha256 = digest;
  Stmt k(db_, "SELECT name, symbol, kernarg_size, kernarg_align, lds_bytes, scratch_bytes, vgprs, agprs, sgprs, "
              "max_workgroup_size, wave_size, code_offset, code_size, args, descriptor FROM kernels "
              "WHERE code_object=? ORDER BY name");
  k.bind(1, sha256);
  while (k.step()) {
    KernelInfo ki;
    ki.name = k.text(0);
    ki.symbol = k.text(1);
    ki.kernarg_size = uint32_t(k.int64(2));
    ki.kernarg_align = uint32_t(k.int64(3));
    ki.lds_bytes = uint32_t(k.int64(4));
    ki.scratch_bytes = uint32_t(k.int64(5));
    ki.vgprs = uint32_t(k.int64(6));
    ki.agprs = uint32_t(k.int64(7));
    ki.sgprs = uint32_t(k.int64(8));
    ki.max_workgroup_size = uint32_t(k.int64(9));
    ki.wave_size = uint32_t(k.int64(10));
    ki.code_offset = uint64_t(k.int64(11));
    ki.code_size = uint64_t(k.int64(12));
    ki.args = detail::args_from_json(JsonValue::parse(k.text(13)));
    if (!k.is_null(14)) ki.descriptor = detail::descriptor_from_json(JsonValue::parse(k.text(14)));
    code.kernels.push_back(std::move(ki));
  }
  return code;
}

std::vector<Row> Database::query(const std::string& sql, const std::vector<Value>& params) {
  Stmt s(db_, sql.c_str());
  for (size_t i = 0; i < params.size(); ++i) s.bind_value(int(i + 1), params[i]);
  std::vector<Row> rows;
  while (s.step()) {
    Row r;
    for (int c = 0; c < s.columns(); ++c) r.push_back(s.value(c));
    rows.push_back(std::move(r));
  }
  return rows;
}

} // namespace isatune::db

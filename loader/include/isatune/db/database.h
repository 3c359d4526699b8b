#pragma once
// The tuning database: one SQLite file with a versioned schema (docs/database.md). Writers record devices,
// toolchains, generators, code objects, variants, runs and measurements, each committed as it finishes;
// readers (the loader, the CLI) open it read-only.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "isatune/code_object.h"

struct sqlite3;

namespace isatune::db {

// The schema this library writes. Older files are migrated in one transaction when opened for writing;
// newer ones are refused.
constexpr int kSchemaVersion = 5;
// PRAGMA application_id of an isatune database ("isat").
constexpr int32_t kApplicationId = 0x69736174;

enum class JournalMode {
  automatic, // WAL on local disks, rollback journal (DELETE) on network filesystems
  wal,
  rollback,
};

struct OpenOptions {
  bool read_only = false;     // read-only never creates, migrates or writes
  JournalMode journal = JournalMode::automatic; // ISATUNE_DB_JOURNAL=wal|delete overrides `automatic`
  int busy_timeout_ms = 30000; // total wait for a lock, retried with exponential backoff
};

struct DeviceRecord {
  std::string vendor = "amd"; // amd | nvidia
  std::string target_id;      // full AMD target id or sm name
  std::string isa;            // gfx942, sm_90a
  std::string name;
  uint32_t compute_units = 0;
  uint64_t memory_bytes = 0;
  std::string driver_version;
  std::string runtime_version;
  bool emulated = false;
  // Part of the device key since schema version 3 (0: unknown, as for devices recorded before).
  uint32_t clock_khz = 0;
  uint32_t memory_clock_khz = 0;
  uint32_t memory_bus_bits = 0;
  uint64_t l2_bytes = 0;
};

struct RunRecord {
  std::string guid;       // unique across machines: merge uses it to stay idempotent
  std::string strategy;
  std::string budget;     // free text or JSON ("600s", {"evaluations":1000})
  std::string host;
  std::string started_at; // ISO 8601 UTC; empty: now
  std::string ended_at;   // empty while running
};

// Since schema version 4, in the run row: the physical device the run measured on (0 / empty: unknown), and for
// a shard of distributed tuning its "I/N" and the scheduler's job id ("slurm 1234_3 CUDA_VISIBLE_DEVICES=3").
struct RunIdentity {
  int64_t device_id = 0;
  std::string device_uuid;
  std::string pci_bus_id;
  uint32_t compute_units = 0;
  uint32_t clock_khz = 0;
  uint32_t memory_clock_khz = 0;
  std::string driver_version;
  std::string shard;
  std::string scheduler_job;
};

struct VariantRecord {
  int64_t generator_id = 0;
  std::string signature;   // JSON, stored canonical
  std::string parameters;  // JSON, stored canonical
  std::string code_object; // sha256; empty when the variant failed to compile
  std::string kernel;      // kernel name inside the code object
  std::string launch = "{}"; // launch template JSON (docs/database.md): block, grid rule, dynamic shared bytes
};

// Status taxonomy of a measurement.
inline constexpr const char* kStatuses[] = {"ok",      "constraint",   "compile", "resource",
                                            "runtime", "wrong-answer", "timeout"};

struct MeasurementRecord {
  int64_t variant_id = 0;
  int64_t device_id = 0;
  std::string problem;   // JSON, stored canonical
  std::string status = "ok";
  std::optional<double> median_ms, p20_ms, p80_ms, min_ms;
  int64_t count = 0;
  std::string timing_method = "events"; // events | wallclock | emulator-estimate | ...
  std::string device_kind = "real";     // real | emulated
  std::string measured_at;              // ISO 8601 UTC; empty: now
  std::string run_guid;                 // empty: no run
  std::string message;
};

// Since schema version 5: the vendor library's time for a tuned problem (docs/database.md, vendor_times), keyed
// as `best` keys a tuned problem but for real devices only. source: measured (the tuner, through the loader's
// loader/vendor_gemm.h) or manual (`isatune db vendor-time`, for machines where the tuner did not measure it).
struct VendorTimeRecord {
  std::string generator;
  std::string signature;    // JSON, stored canonical
  std::string target_id;
  uint32_t compute_units = 0;
  std::string problem;      // JSON, stored canonical
  std::string library;      // "cublas 13.0 cublasGemmEx", "rocblas rocblas_gemm_ex", free text when manual
  double median_ms = 0;     // > 0
  std::optional<double> p20_ms, p80_ms, min_ms;
  int64_t count = 0;
  std::string timing_method = "events";
  std::string source = "measured"; // measured | manual
  int64_t device_id = 0;    // 0: none (manual)
  std::string measured_at;  // empty: now
  std::string message;
};

// Since schema version 5: the re-ranking's winner for one tuned problem (tuner/rerank.h). The winning variant's
// own fastest ok measurement on the problem and `best`'s current median are looked up when it is recorded.
struct RerankWinnerRecord {
  std::string generator, signature, target_id;
  uint32_t compute_units = 0;
  std::string device_kind = "real";
  std::string problem;
  int64_t variant_id = 0;
  double rerank_median_ms = 0, rerank_lo_ms = 0, rerank_hi_ms = 0; // of the job (the sum over its problems)
  int64_t candidates = 0, rounds = 0;
  bool separated = false;
  double flip_rate = 0;
  std::string run_guid; // empty: none
};

// The entry of one tuned problem that every reader uses (docs/database.md "Which entry a tuned problem has"):
// the re-ranking's winner when `rerank_winners` has one for the key of `best` and no later search found anything
// faster (best.median_ms >= search_best_ms), else `best`'s fastest single median; beside it the vendor library's
// recorded time (real devices only). `isatune db best`, the loader's select and Python's isatune.best() all read
// Database::tuned_entries, so they agree on one file.
struct TunedEntry {
  std::string generator, signature, target_id; // signature canonical JSON
  uint32_t compute_units = 0;
  std::string device_kind, problem;            // problem canonical JSON
  int64_t measurement_id = 0, variant_id = 0;  // the entry's own measurement and variant
  double median_ms = 0;
  std::string parameters, code_object, kernel, launch, generator_version; // of the entry's variant
  bool rerank_winner = false;                  // chosen by the re-ranking, not the fastest single median
  double rerank_median_ms = 0, rerank_lo_ms = 0, rerank_hi_ms = 0, flip_rate = 0; // when rerank_winner
  int64_t rounds = 0;
  std::optional<double> vendor_ms;             // the vendor library's time for the key (real devices)
  std::string vendor_library, vendor_source;
  // The loader never returns such an entry (it says: call the vendor library).
  bool slower_than_vendor() const { return vendor_ms && median_ms > *vendor_ms; }
};

// Which entries tuned_entries() reads; an empty field (compute_units 0) matches every value.
struct TunedEntryFilter {
  std::string generator, signature, target_id, device_kind;
  uint32_t compute_units = 0;
};

// One cell of a query result.
using Value = std::variant<std::monostate, int64_t, double, std::string>;
using Row = std::vector<Value>;
std::string to_string(const Value& v);

struct VerifyReport {
  bool integrity_ok = true;
  std::vector<std::string> problems; // one line each: integrity_check output, hash mismatches, dangling rows
  size_t blobs_checked = 0;
};

struct GcReport {
  size_t code_objects_removed = 0;
  size_t variants_removed = 0;
  size_t bytes_before = 0, bytes_after = 0;
};

// What `merge` did with one input file.
struct MergeFileReport {
  std::string path;
  bool merged = false;      // false: missing or refused (`error` says why); nothing of it was copied
  std::string error;
  size_t measurements_added = 0;
  size_t measurements_in_file = 0;
  size_t runs_added = 0;
  size_t blobs_checked = 0; // code objects whose SHA-256 was verified before copying
};

// A shard of distributed tuning, as the runs of the merged inputs tell it.
struct ShardState {
  uint32_t index = 0, count = 0;
  std::string state; // done (a run of it ended), unfinished (runs, none ended: killed or still running), missing
  size_t runs = 0;
};

struct MergeReport {
  std::vector<MergeFileReport> files;
  size_t measurements_added = 0;
  std::vector<ShardState> shards; // every shard 0..N-1 when any input run names a shard (or expected_shards)
  bool complete() const;          // every file merged and every shard done
};

class Database {
public:
  // Throws InputError with a clear message for a missing file (read-only), a file that is not an isatune
  // database, a truncated file, a newer schema, or a read-only file opened for writing.
  static Database open(const std::string& path, const OpenOptions& options = {});
  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  ~Database();

  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  std::string journal_mode();
  int schema_version();

  // Writer API: each call is its own committed transaction unless inside begin()/commit().
  int64_t record_device(const DeviceRecord& d);
  int64_t record_toolchain(const std::string& assembler, const std::string& version);
  int64_t record_generator(const std::string& name, const std::string& version_hash);
  // Verifies code.sha256 against the bytes (computing it when empty); returns the digest.
  std::string record_code_object(const CodeObject& code, int64_t toolchain_id = 0);
  int64_t record_variant(const VariantRecord& v);
  void record_run_start(const RunRecord& r, const RunIdentity& identity = {});
  void record_run_end(const std::string& guid, const std::string& ended_at = "");
  int64_t record_measurement(const MeasurementRecord& m);
  // Replaces the key's vendor time (a later measurement or a hand-set value wins). Throws InputError for a
  // non-positive time, an unknown source or malformed JSON.
  void record_vendor_time(const VendorTimeRecord& v);
  // Replaces the key's winner. Throws InputError when the variant has no ok measurement of the problem on a
  // device of that key, or when the key has no `best` row.
  void record_rerank_winner(const RerankWinnerRecord& w);

  void begin();    // BEGIN IMMEDIATE (waits for the write lock with backoff)
  void commit();
  void rollback();

  // The stored code object with its kernels; the blob's hash is checked, a mismatch is an InputError naming
  // the row.
  CodeObject code_object(const std::string& sha256);
  bool has_code_object(const std::string& sha256);

  // Every tuned problem's entry (TunedEntry), ordered by generator, signature, target, CUs, kind, problem.
  std::vector<TunedEntry> tuned_entries(const TunedEntryFilter& filter = {});

  // Generic query with text parameters (the CLI's listings).
  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {});

  // Administration.
  VerifyReport verify();            // PRAGMA integrity_check, foreign keys, every blob hash
  GcReport gc();                    // drops code objects no variant uses and variants no measurement uses; VACUUM
  // Copies rows of another database in: runs already present (by GUID) are skipped, so merging twice adds
  // nothing. Returns the number of measurements added.
  size_t merge_from(const std::string& other_path);
  // Merges many files (merge.cpp), each in its own transaction: a missing or refused file is reported and the
  // others are still merged. Idempotent and order-independent: a run's measurements are copied by their rank
  // inside the run, so a shard merged while it ran and again after it finished adds only what is new, and
  // repeated measurements of one variant are all kept. A file is refused when a blob does not hash to its key
  // or when it holds measurements of another device kind (real vs emulated) than its device row or than what
  // the merged database holds under the same device key. expected_shards (0: from the runs) sets N for the
  // shard report.
  MergeReport merge(const std::vector<std::string>& inputs, uint32_t expected_shards = 0);
  // Writes <dir>/manifest.json and <dir>/code_objects/<sha256>.co for the best kernel of every tuned
  // problem: enough for an application that wants no SQLite at run time. Returns the number of entries.
  size_t export_to(const std::string& dir);
  // Reads an export folder back (the best measurements, their variants and code objects). Returns entries.
  size_t import_from(const std::string& dir);

  sqlite3* handle() { return db_; }

private:
  Database() = default;
  std::string path_;
  bool read_only_ = false;
  sqlite3* db_ = nullptr;
};

// "ok" when the status is one of kStatuses; throws InputError otherwise.
void check_status(const std::string& status);
// The current time as ISO 8601 UTC with milliseconds.
std::string now_iso8601();

} // namespace isatune::db

// Merging tuning databases: the per-shard files of distributed tuning into one (docs/distributed.md). Each input
// is attached and copied in one transaction; rows are matched by content (devices, toolchains, generators, code
// objects, variants) and measurements by (run GUID, rank inside the run), which makes the merge lossless,
// idempotent and independent of the order of the files.
#include <filesystem>
#include <map>
#include <set>

#include "isatune/db/database.h"
#include "isatune/error.h"
#include "sqlite_stmt.h"

namespace isatune::db {

using detail::exec;
using detail::Stmt;

namespace {

// "I/N" -> (I, N); false for anything else.
bool parse_shard(const std::string& text, uint32_t& index, uint32_t& count) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return false;
  try {
    size_t used = 0;
    const unsigned long i = std::stoul(text.substr(0, slash), &used);
    if (used != slash) return false;
    const unsigned long n = std::stoul(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1 || n == 0 || i >= n) return false;
    index = uint32_t(i), count = uint32_t(n);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Copies the rows of the attached `src` that main lacks. Runs inside the caller's transaction.
const char* kCopyRows = R"sql(
INSERT OR IGNORE INTO devices(vendor, target_id, isa, name, compute_units, memory_bytes, driver_version,
                              runtime_version, emulated, clock_khz, memory_clock_khz, memory_bus_bits, l2_bytes)
  SELECT vendor, target_id, isa, name, compute_units, memory_bytes, driver_version, runtime_version, emulated,
         clock_khz, memory_clock_khz, memory_bus_bits, l2_bytes
  FROM src.devices;
INSERT OR IGNORE INTO toolchains(assembler, version) SELECT assembler, version FROM src.toolchains;
INSERT OR IGNORE INTO generators(name, version_hash) SELECT name, version_hash FROM src.generators;
INSERT OR IGNORE INTO code_objects(sha256, vendor, isa, target_id, size, bytes, toolchain_id, created_at)
  SELECT c.sha256, c.vendor, c.isa, c.target_id, c.size, c.bytes,
         (SELECT t.id FROM main.toolchains t JOIN src.toolchains st ON t.assembler = st.assembler
            AND t.version = st.version WHERE st.id = c.toolchain_id),
         c.created_at
  FROM src.code_objects c;
INSERT OR IGNORE INTO kernels SELECT * FROM src.kernels;
INSERT OR IGNORE INTO variants(generator_id, signature, parameters, code_object, kernel, launch)
  SELECT (SELECT g.id FROM main.generators g JOIN src.generators sg ON g.name = sg.name
            AND g.version_hash = sg.version_hash WHERE sg.id = v.generator_id),
         v.signature, v.parameters, v.code_object, v.kernel, v.launch
  FROM src.variants v;
CREATE TEMP TABLE merge_vmap(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
INSERT INTO merge_vmap
  SELECT sv.id, mv.id FROM src.variants sv JOIN src.generators sg ON sg.id = sv.generator_id
  JOIN main.generators mg ON mg.name = sg.name AND mg.version_hash = sg.version_hash
  JOIN main.variants mv ON mv.generator_id = mg.id AND mv.signature = sv.signature
    AND mv.parameters = sv.parameters AND mv.code_object IS sv.code_object AND mv.kernel = sv.kernel;
CREATE TEMP TABLE merge_dmap(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
INSERT INTO merge_dmap
  SELECT sd.id, md.id FROM src.devices sd JOIN main.devices md ON md.vendor = sd.vendor
    AND md.target_id = sd.target_id AND md.name = sd.name AND md.compute_units = sd.compute_units
    AND md.memory_bytes = sd.memory_bytes AND md.driver_version = sd.driver_version
    AND md.runtime_version = sd.runtime_version AND md.emulated = sd.emulated AND md.clock_khz = sd.clock_khz
    AND md.memory_clock_khz = sd.memory_clock_khz AND md.memory_bus_bits = sd.memory_bus_bits
    AND md.l2_bytes = sd.l2_bytes;
)sql";

// Runs and their measurements. A run already present keeps its first `n` measurements (those merged before):
// only the ones ranked after them are new.
const char* kCopyMeasurements = R"sql(
CREATE TEMP TABLE merge_have(guid TEXT PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO merge_have
  SELECT r.guid, (SELECT count(*) FROM main.measurements x WHERE x.run_guid = r.guid) FROM src.runs r;
INSERT INTO runs(guid, strategy, budget, host, started_at, ended_at, device_id, device_uuid, pci_bus_id,
                 compute_units, clock_khz, memory_clock_khz, driver_version, shard, scheduler_job)
  SELECT r.guid, r.strategy, r.budget, r.host, r.started_at, r.ended_at,
         (SELECT dst FROM merge_dmap WHERE src = r.device_id), r.device_uuid, r.pci_bus_id, r.compute_units,
         r.clock_khz, r.memory_clock_khz, r.driver_version, r.shard, r.scheduler_job
  FROM src.runs r WHERE r.guid NOT IN (SELECT guid FROM main.runs);
UPDATE main.runs SET ended_at = (SELECT s.ended_at FROM src.runs s WHERE s.guid = runs.guid)
  WHERE ended_at IS NULL AND guid IN (SELECT guid FROM src.runs WHERE ended_at IS NOT NULL);
INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, min_ms, count,
                         timing_method, device_kind, measured_at, run_guid, message)
  SELECT vm.dst, dm.dst, m.problem, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count,
         m.timing_method, m.device_kind, m.measured_at, m.run_guid, m.message
  FROM (SELECT *, row_number() OVER (PARTITION BY run_guid ORDER BY id) AS seq FROM src.measurements
        WHERE run_guid IS NOT NULL) m
  JOIN merge_have h ON h.guid = m.run_guid
  JOIN merge_vmap vm ON vm.src = m.variant_id JOIN merge_dmap dm ON dm.src = m.device_id
  WHERE m.seq > h.n
  ORDER BY m.id;
)sql";

// Measurements without a run (imported by hand): matched by content.
const char* kCopyRunless = R"sql(
INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, min_ms, count,
                         timing_method, device_kind, measured_at, run_guid, message)
  SELECT vm.dst, dm.dst, m.problem, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count,
         m.timing_method, m.device_kind, m.measured_at, m.run_guid, m.message
  FROM src.measurements m JOIN merge_vmap vm ON vm.src = m.variant_id JOIN merge_dmap dm ON dm.src = m.device_id
  WHERE m.run_guid IS NULL AND NOT EXISTS (
           SELECT 1 FROM main.measurements x WHERE x.variant_id = vm.dst AND x.device_id = dm.dst
             AND x.problem = m.problem AND x.measured_at = m.measured_at AND x.status = m.status
             AND x.median_ms IS m.median_ms)
  ORDER BY m.id;
)sql";

// Schema version 5's tables. A vendor time is keyed by strings: the newer one wins. A re-ranking winner is mapped
// to this database's variant and to its fastest ok measurement of the problem on a device of that key (the
// measurement ids differ); the newer decision wins. Readers drop a winner that `best` has since beaten.
// Followed by kRerankWinnerNewerWins (sqlite_stmt.h), the conflict rule it shares with db import.
const char* kCopyBaselines = R"sql(
INSERT INTO vendor_times(generator, signature, target_id, compute_units, problem, library, median_ms, p20_ms, p80_ms,
                         min_ms, count, timing_method, source, device_id, measured_at, message)
  SELECT s.generator, s.signature, s.target_id, s.compute_units, s.problem, s.library, s.median_ms, s.p20_ms,
         s.p80_ms, s.min_ms, s.count, s.timing_method, s.source, (SELECT dst FROM merge_dmap WHERE src = s.device_id),
         s.measured_at, s.message
  FROM src.vendor_times s WHERE true
  ON CONFLICT(generator, signature, target_id, compute_units, problem) DO UPDATE SET
    library = excluded.library, median_ms = excluded.median_ms, p20_ms = excluded.p20_ms, p80_ms = excluded.p80_ms,
    min_ms = excluded.min_ms, count = excluded.count, timing_method = excluded.timing_method, source = excluded.source,
    device_id = excluded.device_id, measured_at = excluded.measured_at, message = excluded.message
  WHERE excluded.measured_at > vendor_times.measured_at;
INSERT INTO rerank_winners(generator, signature, target_id, compute_units, device_kind, problem, measurement_id,
                           variant_id, median_ms, search_best_ms, rerank_median_ms, rerank_lo_ms, rerank_hi_ms,
                           candidates, rounds, separated, flip_rate, run_guid, decided_at)
  SELECT w.generator, w.signature, w.target_id, w.compute_units, w.device_kind, w.problem, m.id, vm.dst, m.median_ms,
         w.search_best_ms, w.rerank_median_ms, w.rerank_lo_ms, w.rerank_hi_ms, w.candidates, w.rounds, w.separated,
         w.flip_rate, w.run_guid, w.decided_at
  FROM src.rerank_winners w JOIN merge_vmap vm ON vm.src = w.variant_id
  JOIN main.measurements m ON m.id = (
    SELECT x.id FROM main.measurements x JOIN main.devices d ON d.id = x.device_id
    WHERE x.variant_id = vm.dst AND x.problem = w.problem AND x.status = 'ok' AND x.median_ms IS NOT NULL
      AND x.device_kind = w.device_kind AND d.target_id = w.target_id AND d.compute_units = w.compute_units
    ORDER BY x.median_ms, x.id LIMIT 1)
  WHERE true)sql";

std::string device_key_text(Stmt& s, int first) {
  return s.text(first) + " " + s.text(first + 1) + " '" + s.text(first + 2) + "' " + s.text(first + 3) + " CUs";
}

} // namespace

bool MergeReport::complete() const {
  for (const auto& f : files)
    if (!f.merged) return false;
  for (const auto& s : shards)
    if (s.state != "done") return false;
  return true;
}

size_t Database::merge_from(const std::string& other_path) {
  MergeReport r = merge({other_path});
  if (!r.files.front().merged) throw InputError(r.files.front().error);
  return r.measurements_added;
}

MergeReport Database::merge(const std::vector<std::string>& inputs, uint32_t expected_shards) {
  MergeReport report;
  // Device kinds already under each device key of this database: a file may not add the other kind.
  std::map<int64_t, std::set<std::string>> kinds;
  {
    Stmt s(db_, "SELECT DISTINCT device_id, device_kind FROM measurements");
    while (s.step()) kinds[s.int64(0)].insert(s.text(1));
  }
  std::map<uint32_t, std::pair<size_t, bool>> shard_runs; // index -> (runs, any ended)
  uint32_t shard_count = expected_shards;
  std::set<uint32_t> counts_seen;

  for (const auto& path : inputs) {
    MergeFileReport f;
    f.path = path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      f.error = path + ": no such file (a shard that never started, or a wrong path)";
      report.files.push_back(std::move(f));
      continue;
    }
    if (std::filesystem::equivalent(path, path_, ec)) {
      f.error = path + ": is the output database itself";
      report.files.push_back(std::move(f));
      continue;
    }
    std::vector<std::pair<std::string, bool>> runs_of_file;
    try {
      Database src = Database::open(path, OpenOptions{.read_only = true});
      // A corrupt page can surface only at COMMIT (SQLITE_CORRUPT after this database's rows were written: the
      // merge reported failure yet kept them; found by fuzz_db), so the whole source is checked first.
      std::string check;
      try {
        auto rows = src.query("PRAGMA quick_check(1)");
        check = rows.empty() ? "no answer" : std::get<std::string>(rows[0][0]);
      } catch (const InputError& e) {
        check = e.what();
      }
      if (check != "ok") throw InputError(path + ": the database is corrupt (" + check + "); not merging this file");
      auto bad = detail::corrupt_blobs(src.db_, &f.blobs_checked);
      if (!bad.empty()) throw InputError(path + ": " + bad.front() + "; not merging this file");
      {
        Stmt k(src.db_, "SELECT d.vendor, d.isa, d.name, d.compute_units, m.device_kind, count(*) FROM measurements m "
                        "JOIN devices d ON d.id = m.device_id WHERE m.device_kind <> CASE d.emulated WHEN 1 THEN "
                        "'emulated' ELSE 'real' END GROUP BY d.id, m.device_kind");
        if (k.step())
          throw InputError(path + ": " + std::to_string(k.int64(5)) + " " + k.text(4) + " measurement(s) under the " +
                           (k.text(4) == "real" ? "emulated" : "real") + " device " + device_key_text(k, 0) +
                           "; refusing to mix device kinds under one device key, not merging this file");
      }
      {
        Stmt c(src.db_, "SELECT count(*) FROM measurements");
        c.step();
        f.measurements_in_file = size_t(c.int64(0));
        Stmt s(src.db_, "SELECT shard, ended_at IS NOT NULL FROM runs WHERE shard <> ''");
        while (s.step()) runs_of_file.emplace_back(s.text(0), s.int64(1) != 0);
      }
    } catch (const InputError& e) {
      f.error = e.what();
      report.files.push_back(std::move(f));
      continue;
    }

    {
      Stmt a(db_, "ATTACH DATABASE ? AS src");
      a.bind(1, path).step();
    }
    auto cleanup = [&] {
      sqlite3_exec(db_, "DROP TABLE IF EXISTS temp.merge_vmap; DROP TABLE IF EXISTS temp.merge_dmap; "
                        "DROP TABLE IF EXISTS temp.merge_have;", nullptr, nullptr, nullptr);
    };
    try {
      exec(db_, "BEGIN IMMEDIATE", path_);
      exec(db_, kCopyRows, path_ + " <- " + path);
      // The same device key may not hold both kinds: checked against what this database already has.
      std::vector<std::pair<int64_t, std::string>> added_kinds;
      {
        Stmt s(db_, "SELECT DISTINCT dm.dst, m.device_kind, d.vendor, d.isa, d.name, d.compute_units FROM "
                    "src.measurements m JOIN merge_dmap dm ON dm.src = m.device_id JOIN main.devices d ON d.id = dm.dst");
        while (s.step()) {
          const auto& have = kinds[s.int64(0)];
          const std::string kind = s.text(1);
          if (!have.empty() && !have.count(kind))
            throw InputError(path + ": " + kind + " measurements for device " + device_key_text(s, 2) + ", which " +
                             path_ + " holds " + *have.begin() +
                             " measurements for; refusing to mix device kinds under one device key, not merging "
                             "this file");
          added_kinds.emplace_back(s.int64(0), kind);
        }
      }
      {
        Stmt n(db_, "SELECT count(*) FROM src.runs WHERE guid NOT IN (SELECT guid FROM main.runs)");
        n.step();
        f.runs_added = size_t(n.int64(0));
      }
      exec(db_, kCopyMeasurements, path_ + " <- " + path);
      f.measurements_added = size_t(sqlite3_changes(db_));
      exec(db_, kCopyRunless, path_ + " <- " + path);
      f.measurements_added += size_t(sqlite3_changes(db_));
      exec(db_, (std::string(kCopyBaselines) + detail::kRerankWinnerNewerWins + ";").c_str(), path_ + " <- " + path);
      cleanup();
      exec(db_, "COMMIT", path_);
      for (auto& [dev, kind] : added_kinds) kinds[dev].insert(kind);
      f.merged = true;
    } catch (const Error& e) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      cleanup();
      f.error = e.what();
    }
    sqlite3_exec(db_, "DETACH DATABASE src", nullptr, nullptr, nullptr);
    if (f.merged) {
      report.measurements_added += f.measurements_added;
      for (const auto& [text, ended] : runs_of_file) {
        uint32_t i = 0, n = 0;
        if (!parse_shard(text, i, n)) continue;
        counts_seen.insert(n);
        auto& s = shard_runs[i];
        s.first++;
        s.second = s.second || ended;
      }
    }
    report.files.push_back(std::move(f));
  }

  if (!shard_count && !counts_seen.empty()) shard_count = *counts_seen.rbegin();
  for (uint32_t i = 0; i < shard_count; ++i) {
    ShardState s;
    s.index = i, s.count = shard_count;
    auto it = shard_runs.find(i);
    s.runs = it == shard_runs.end() ? 0 : it->second.first;
    s.state = it == shard_runs.end() ? "missing" : it->second.second ? "done" : "unfinished";
    report.shards.push_back(s);
  }
  return report;
}

} // namespace isatune::db

// Database administration: verify, gc, export, import (merge: merge.cpp).
#include <filesystem>
#include <fstream>
#include <set>

#include "isatune/db/database.h"
#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/loader/sha256.h"
#include "kernel_json.h"
#include "sqlite_stmt.h"

namespace isatune::db {

using detail::exec;
using detail::Stmt;

std::vector<std::string> detail::corrupt_blobs(sqlite3* db, size_t* checked) {
  std::vector<std::string> bad;
  Stmt s(db, "SELECT sha256, bytes FROM code_objects ORDER BY sha256");
  while (s.step()) {
    std::string sha = s.text(0);
    std::string digest = loader::sha256_hex(s.blob(1));
    if (checked) ++*checked;
    if (digest != sha)
      bad.push_back("code_objects row sha256=" + sha + ": the stored blob hashes to " + digest + " (corrupt blob)");
  }
  return bad;
}

namespace {
namespace fs = std::filesystem;

// Export folders: 1 the best entries and their code objects; 2 (schema version 5) also rerank_winners and
// vendor_times.
constexpr int kExportFormat = 2;

uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

JsonValue json_or_string(const std::string& text) {
  try {
    return JsonValue::parse(text);
  } catch (const InputError&) {
    return JsonValue::str(text);
  }
}

JsonValue opt_number(sqlite3_stmt*, const Stmt& s, int col) {
  return s.is_null(col) ? JsonValue() : JsonValue::number(s.real(col));
}

std::string need_str(const JsonValue& j, const char* key, const std::string& where) {
  const JsonValue* v = j.find(key);
  if (!v || !v->is_string()) throw InputError(where + ": missing string field '" + key + "'");
  return v->as_string();
}
double need_num(const JsonValue& j, const char* key, const std::string& where) {
  const JsonValue* v = j.find(key);
  if (!v || !v->is_number()) throw InputError(where + ": missing number field '" + key + "'");
  return v->as_number();
}
std::optional<double> opt_num(const JsonValue& j, const char* key) {
  const JsonValue* v = j.find(key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->as_number();
}
// A device of an export manifest.
DeviceRecord device_of(const JsonValue& d, const std::string& where) {
  DeviceRecord dev;
  dev.vendor = need_str(d, "vendor", where);
  dev.target_id = need_str(d, "target_id", where);
  dev.isa = need_str(d, "isa", where);
  dev.name = need_str(d, "name", where);
  dev.compute_units = uint32_t(need_num(d, "compute_units", where));
  dev.memory_bytes = uint64_t(need_num(d, "memory_bytes", where));
  dev.driver_version = need_str(d, "driver_version", where);
  dev.runtime_version = need_str(d, "runtime_version", where);
  const JsonValue* emu = d.find("emulated");
  dev.emulated = emu && emu->as_bool();
  // Absent in exports written before schema version 3: unknown.
  dev.clock_khz = uint32_t(opt_num(d, "clock_khz").value_or(0));
  dev.memory_clock_khz = uint32_t(opt_num(d, "memory_clock_khz").value_or(0));
  dev.memory_bus_bits = uint32_t(opt_num(d, "memory_bus_bits").value_or(0));
  dev.l2_bytes = uint64_t(opt_num(d, "l2_bytes").value_or(0));
  return dev;
}
} // namespace

VerifyReport Database::verify() {
  VerifyReport r;
  {
    Stmt s(db_, "PRAGMA integrity_check");
    while (s.step()) {
      std::string line = s.text(0);
      if (line != "ok") {
        r.integrity_ok = false;
        r.problems.push_back("integrity_check: " + line);
      }
    }
  }
  {
    Stmt s(db_, "PRAGMA foreign_key_check");
    while (s.step()) {
      r.integrity_ok = false;
      r.problems.push_back("foreign key: table " + s.text(0) + " row " + s.text(1) + " refers to a missing " +
                           s.text(2) + " row");
    }
  }
  for (auto& p : detail::corrupt_blobs(db_, &r.blobs_checked)) r.problems.push_back(std::move(p));
  return r;
}

GcReport Database::gc() {
  GcReport r;
  r.bytes_before = file_bytes(path_);
  exec(db_, "BEGIN IMMEDIATE", path_);
  try {
    exec(db_, "DELETE FROM variants WHERE id NOT IN (SELECT variant_id FROM measurements)", path_);
    r.variants_removed = size_t(sqlite3_changes(db_));
    exec(db_, "DELETE FROM kernels WHERE code_object NOT IN (SELECT code_object FROM variants WHERE code_object "
              "IS NOT NULL)", path_);
    exec(db_, "DELETE FROM code_objects WHERE sha256 NOT IN (SELECT code_object FROM variants WHERE code_object "
              "IS NOT NULL)", path_);
    r.code_objects_removed = size_t(sqlite3_changes(db_));
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, "VACUUM", path_);
  exec(db_, "PRAGMA wal_checkpoint(TRUNCATE)", path_);
  r.bytes_after = file_bytes(path_);
  return r;
}

size_t Database::export_to(const std::string& dir) {
  fs::create_directories(fs::path(dir) / "code_objects");
  JsonValue entries = JsonValue::array();
  JsonValue objects = JsonValue::object();
  Stmt s(db_, R"sql(
SELECT b.generator, g.version_hash, b.signature, v.parameters, b.problem, v.code_object, v.kernel, v.launch,
       d.vendor, d.target_id, d.isa, d.name, d.compute_units, d.memory_bytes, d.driver_version, d.runtime_version,
       d.emulated, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count, m.timing_method, m.device_kind,
       m.measured_at, m.run_guid, d.clock_khz, d.memory_clock_khz, d.memory_bus_bits, d.l2_bytes
FROM best b JOIN measurements m ON m.id = b.measurement_id JOIN variants v ON v.id = m.variant_id
     JOIN generators g ON g.id = v.generator_id JOIN devices d ON d.id = m.device_id
ORDER BY b.generator, b.signature, b.target_id, b.compute_units, b.device_kind, b.problem)sql");
  std::set<std::string> written;
  // One entry (and its code object's file, once) from a row of kEntryColumns.
  auto entry_of = [&](const Stmt& s) {
    std::string sha = s.text(5);
    if (!written.count(sha)) {
      CodeObject code = code_object(sha); // verifies the hash
      std::string file = "code_objects/" + sha + ".co";
      fs::path tmp = fs::path(dir) / (file + ".tmp");
      {
        std::ofstream out(tmp, std::ios::binary);
        out.write(reinterpret_cast<const char*>(code.bytes.data()), std::streamsize(code.bytes.size()));
        if (!out) throw Error(dir + ": cannot write " + file);
      }
      fs::rename(tmp, fs::path(dir) / file);
      JsonValue o = JsonValue::object();
      o.set("file", JsonValue::str(file));
      o.set("vendor", JsonValue::str(code.vendor == Vendor::amd ? "amd" : "nvidia"));
      o.set("isa", JsonValue::str(code.isa));
      o.set("target_id", JsonValue::str(code.target_id));
      o.set("size", JsonValue::number(double(code.bytes.size())));
      JsonValue ks = JsonValue::array();
      for (const auto& k : code.kernels) ks.push(detail::kernel_to_json(k));
      o.set("kernels", std::move(ks));
      objects.set(sha, std::move(o));
      written.insert(sha);
    }
    JsonValue e = JsonValue::object();
    e.set("generator", JsonValue::str(s.text(0)));
    e.set("generator_version", JsonValue::str(s.text(1)));
    e.set("signature", json_or_string(s.text(2)));
    e.set("parameters", json_or_string(s.text(3)));
    e.set("problem", json_or_string(s.text(4)));
    e.set("code_object", JsonValue::str(sha));
    e.set("kernel", JsonValue::str(s.text(6)));
    e.set("launch", json_or_string(s.text(7)));
    JsonValue d = JsonValue::object();
    d.set("vendor", JsonValue::str(s.text(8)));
    d.set("target_id", JsonValue::str(s.text(9)));
    d.set("isa", JsonValue::str(s.text(10)));
    d.set("name", JsonValue::str(s.text(11)));
    d.set("compute_units", JsonValue::number(double(s.int64(12))));
    d.set("memory_bytes", JsonValue::number(double(s.int64(13))));
    d.set("driver_version", JsonValue::str(s.text(14)));
    d.set("runtime_version", JsonValue::str(s.text(15)));
    d.set("emulated", JsonValue::boolean(s.int64(16) != 0));
    d.set("clock_khz", JsonValue::number(double(s.int64(27))));
    d.set("memory_clock_khz", JsonValue::number(double(s.int64(28))));
    d.set("memory_bus_bits", JsonValue::number(double(s.int64(29))));
    d.set("l2_bytes", JsonValue::number(double(s.int64(30))));
    e.set("device", std::move(d));
    JsonValue m = JsonValue::object();
    m.set("status", JsonValue::str(s.text(17)));
    m.set("median_ms", opt_number(nullptr, s, 18));
    m.set("p20_ms", opt_number(nullptr, s, 19));
    m.set("p80_ms", opt_number(nullptr, s, 20));
    m.set("min_ms", opt_number(nullptr, s, 21));
    m.set("count", JsonValue::number(double(s.int64(22))));
    m.set("timing_method", JsonValue::str(s.text(23)));
    m.set("device_kind", JsonValue::str(s.text(24)));
    m.set("measured_at", JsonValue::str(s.text(25)));
    m.set("run_guid", s.is_null(26) ? JsonValue() : JsonValue::str(s.text(26)));
    e.set("measurement", std::move(m));
    return e;
  };
  while (s.step()) entries.push(entry_of(s));

  // Schema version 5's tables. A re-ranking winner travels as an entry of its own (its variant, device and the
  // measurement it names) plus the decision; a vendor time with the device it was measured on.
  JsonValue winners = JsonValue::array();
  Stmt w(db_, R"sql(
SELECT w.generator, g.version_hash, w.signature, v.parameters, w.problem, v.code_object, v.kernel, v.launch,
       d.vendor, d.target_id, d.isa, d.name, d.compute_units, d.memory_bytes, d.driver_version, d.runtime_version,
       d.emulated, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count, m.timing_method, m.device_kind,
       m.measured_at, m.run_guid, d.clock_khz, d.memory_clock_khz, d.memory_bus_bits, d.l2_bytes,
       w.target_id, w.compute_units, w.device_kind, w.search_best_ms, w.rerank_median_ms, w.rerank_lo_ms,
       w.rerank_hi_ms, w.candidates, w.rounds, w.separated, w.flip_rate, w.run_guid, w.decided_at
FROM rerank_winners w JOIN measurements m ON m.id = w.measurement_id JOIN variants v ON v.id = m.variant_id
     JOIN generators g ON g.id = v.generator_id JOIN devices d ON d.id = m.device_id
ORDER BY w.generator, w.signature, w.target_id, w.compute_units, w.device_kind, w.problem)sql");
  while (w.step()) {
    JsonValue e = entry_of(w);
    JsonValue r = JsonValue::object();
    r.set("target_id", JsonValue::str(w.text(31)));
    r.set("compute_units", JsonValue::number(double(w.int64(32))));
    r.set("device_kind", JsonValue::str(w.text(33)));
    r.set("search_best_ms", JsonValue::number(w.real(34)));
    r.set("rerank_median_ms", JsonValue::number(w.real(35)));
    r.set("rerank_lo_ms", JsonValue::number(w.real(36)));
    r.set("rerank_hi_ms", JsonValue::number(w.real(37)));
    r.set("candidates", JsonValue::number(double(w.int64(38))));
    r.set("rounds", JsonValue::number(double(w.int64(39))));
    r.set("separated", JsonValue::boolean(w.int64(40) != 0));
    r.set("flip_rate", JsonValue::number(w.real(41)));
    r.set("run_guid", w.is_null(42) ? JsonValue() : JsonValue::str(w.text(42)));
    r.set("decided_at", JsonValue::str(w.text(43)));
    e.set("rerank", std::move(r));
    winners.push(std::move(e));
  }
  JsonValue vendor = JsonValue::array();
  Stmt vt(db_, R"sql(
SELECT t.generator, t.signature, t.target_id, t.compute_units, t.problem, t.library, t.median_ms, t.p20_ms, t.p80_ms,
       t.min_ms, t.count, t.timing_method, t.source, t.measured_at, t.message, d.id, d.vendor, d.target_id, d.isa,
       d.name, d.compute_units, d.memory_bytes, d.driver_version, d.runtime_version, d.emulated, d.clock_khz,
       d.memory_clock_khz, d.memory_bus_bits, d.l2_bytes
FROM vendor_times t LEFT JOIN devices d ON d.id = t.device_id
ORDER BY t.generator, t.signature, t.target_id, t.compute_units, t.problem)sql");
  while (vt.step()) {
    JsonValue e = JsonValue::object();
    e.set("generator", JsonValue::str(vt.text(0)));
    e.set("signature", json_or_string(vt.text(1)));
    e.set("target_id", JsonValue::str(vt.text(2)));
    e.set("compute_units", JsonValue::number(double(vt.int64(3))));
    e.set("problem", json_or_string(vt.text(4)));
    e.set("library", JsonValue::str(vt.text(5)));
    e.set("median_ms", JsonValue::number(vt.real(6)));
    e.set("p20_ms", opt_number(nullptr, vt, 7));
    e.set("p80_ms", opt_number(nullptr, vt, 8));
    e.set("min_ms", opt_number(nullptr, vt, 9));
    e.set("count", JsonValue::number(double(vt.int64(10))));
    e.set("timing_method", JsonValue::str(vt.text(11)));
    e.set("source", JsonValue::str(vt.text(12)));
    e.set("measured_at", JsonValue::str(vt.text(13)));
    e.set("message", JsonValue::str(vt.text(14)));
    if (vt.is_null(15)) {
      e.set("device", JsonValue());
    } else {
      JsonValue d = JsonValue::object();
      d.set("vendor", JsonValue::str(vt.text(16)));
      d.set("target_id", JsonValue::str(vt.text(17)));
      d.set("isa", JsonValue::str(vt.text(18)));
      d.set("name", JsonValue::str(vt.text(19)));
      d.set("compute_units", JsonValue::number(double(vt.int64(20))));
      d.set("memory_bytes", JsonValue::number(double(vt.int64(21))));
      d.set("driver_version", JsonValue::str(vt.text(22)));
      d.set("runtime_version", JsonValue::str(vt.text(23)));
      d.set("emulated", JsonValue::boolean(vt.int64(24) != 0));
      d.set("clock_khz", JsonValue::number(double(vt.int64(25))));
      d.set("memory_clock_khz", JsonValue::number(double(vt.int64(26))));
      d.set("memory_bus_bits", JsonValue::number(double(vt.int64(27))));
      d.set("l2_bytes", JsonValue::number(double(vt.int64(28))));
      e.set("device", std::move(d));
    }
    vendor.push(std::move(e));
  }
  JsonValue manifest = JsonValue::object();
  manifest.set("format", JsonValue::str("isatune-export"));
  manifest.set("format_version", JsonValue::number(kExportFormat));
  manifest.set("schema_version", JsonValue::number(kSchemaVersion));
  manifest.set("code_objects", std::move(objects));
  size_t n = entries.items().size();
  manifest.set("entries", std::move(entries));
  manifest.set("rerank_winners", std::move(winners));
  manifest.set("vendor_times", std::move(vendor));
  fs::path tmp = fs::path(dir) / "manifest.json.tmp";
  {
    std::ofstream out(tmp);
    out << manifest.canonical() << "\n";
    if (!out) throw Error(dir + ": cannot write manifest.json");
  }
  fs::rename(tmp, fs::path(dir) / "manifest.json");
  return n;
}

size_t Database::import_from(const std::string& dir) {
  std::string mpath = (fs::path(dir) / "manifest.json").string();
  std::ifstream in(mpath);
  if (!in) throw InputError(mpath + ": no export manifest here");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  JsonValue manifest;
  try {
    manifest = JsonValue::parse(text);
  } catch (const InputError& e) {
    throw InputError(mpath + ": " + e.what());
  }
  if (const JsonValue* f = manifest.find("format"); !f || !f->is_string() || f->as_string() != "isatune-export")
    throw InputError(mpath + ": not an isatune export manifest");
  if (const JsonValue* v = manifest.find("format_version"); v && v->is_number() && v->as_number() > kExportFormat)
    throw InputError(mpath + ": export format " + std::to_string(int64_t(v->as_number())) +
                     " is newer than this isatune understands (" + std::to_string(kExportFormat) + ")");
  const JsonValue* objects = manifest.find("code_objects");
  const JsonValue* entries = manifest.find("entries");
  if (!objects || !objects->is_object() || !entries || !entries->is_array())
    throw InputError(mpath + ": manifest lacks code_objects or entries");

  std::set<std::string> runs_before;
  for (auto& row : query("SELECT guid FROM runs")) runs_before.insert(std::get<std::string>(row[0]));

  begin();
  try {
    for (const auto& [sha, o] : objects->members()) {
      std::string where = mpath + ": code object " + sha;
      std::string file = (fs::path(dir) / need_str(o, "file", where)).string();
      std::ifstream b(file, std::ios::binary);
      if (!b) throw InputError(file + ": missing code object file");
      CodeObject code;
      code.bytes.assign(std::istreambuf_iterator<char>(b), std::istreambuf_iterator<char>());
      if (loader::sha256_hex(code.bytes) != sha)
        throw InputError(file + ": its bytes do not hash to " + sha + " (corrupt code object)");
      code.sha256 = sha;
      code.vendor = need_str(o, "vendor", where) == "nvidia" ? Vendor::nvidia : Vendor::amd;
      code.isa = need_str(o, "isa", where);
      code.target_id = need_str(o, "target_id", where);
      if (const JsonValue* ks = o.find("kernels"); ks && ks->is_array())
        for (const auto& k : ks->items()) code.kernels.push_back(detail::kernel_from_json(k));
      record_code_object(code);
    }
    size_t added = 0;
    // One entry: its generator, device, variant and measurement. A measurement of a run that was here before
    // the import is skipped (idempotent), as is one without a run (or, with `dedupe`, any) equal to one here.
    struct Imported {
      int64_t variant_id = 0, device_id = 0;
    };
    auto import_entry = [&](const JsonValue& e, const std::string& where, bool dedupe) {
      int64_t gen = record_generator(need_str(e, "generator", where), need_str(e, "generator_version", where));
      const JsonValue* d = e.find("device");
      const JsonValue* m = e.find("measurement");
      if (!d || !m) throw InputError(where + " lacks device or measurement");
      int64_t dev_id = record_device(device_of(*d, where));
      VariantRecord v;
      v.generator_id = gen;
      v.signature = e.find("signature") ? e.find("signature")->canonical() : "{}";
      v.parameters = e.find("parameters") ? e.find("parameters")->canonical() : "{}";
      v.code_object = need_str(e, "code_object", where);
      v.kernel = need_str(e, "kernel", where);
      v.launch = e.find("launch") ? e.find("launch")->canonical() : "{}";
      int64_t var_id = record_variant(v);
      MeasurementRecord mr;
      mr.variant_id = var_id;
      mr.device_id = dev_id;
      mr.problem = e.find("problem") ? e.find("problem")->canonical() : "{}";
      mr.status = need_str(*m, "status", where);
      mr.median_ms = opt_num(*m, "median_ms");
      mr.p20_ms = opt_num(*m, "p20_ms");
      mr.p80_ms = opt_num(*m, "p80_ms");
      mr.min_ms = opt_num(*m, "min_ms");
      mr.count = int64_t(opt_num(*m, "count").value_or(0));
      mr.timing_method = need_str(*m, "timing_method", where);
      mr.device_kind = need_str(*m, "device_kind", where);
      mr.measured_at = need_str(*m, "measured_at", where);
      if (const JsonValue* g = m->find("run_guid"); g && g->is_string()) mr.run_guid = g->as_string();
      const Imported out{var_id, dev_id};
      if (!mr.run_guid.empty() && runs_before.count(mr.run_guid)) return out; // that run is already here
      if (mr.run_guid.empty() || dedupe) {
        auto same = query("SELECT 1 FROM measurements WHERE variant_id=? AND device_id=? AND problem=? AND "
                          "measured_at=?",
                          {var_id, dev_id, canonical_json(mr.problem), mr.measured_at});
        if (!same.empty()) return out;
      }
      if (!mr.run_guid.empty() && query("SELECT 1 FROM runs WHERE guid=?", {mr.run_guid}).empty())
        record_run_start(RunRecord{mr.run_guid, "import", "", "", mr.measured_at, mr.measured_at});
      record_measurement(mr);
      ++added;
      return out;
    };
    for (const auto& e : entries->items()) import_entry(e, mpath + ": entry", false);

    // Since export format 2 (schema version 5): the re-ranking's winners and the vendor times; older folders
    // have neither. A winner is mapped to this database's variant and its fastest ok measurement of the problem
    // on a device of the key, as merge does; the newer decision (vendor time: measurement) of a key wins.
    if (const JsonValue* ws = manifest.find("rerank_winners"); ws && ws->is_array()) {
      for (const auto& e : ws->items()) {
        const std::string where = mpath + ": rerank winner";
        const JsonValue* r = e.find("rerank");
        if (!r || !r->is_object()) throw InputError(where + " lacks its rerank object");
        const Imported in = import_entry(e, where, true);
        std::string run_guid;
        if (const JsonValue* g = r->find("run_guid"); g && g->is_string()) run_guid = g->as_string();
        const std::string decided_at = need_str(*r, "decided_at", where);
        if (!run_guid.empty() && query("SELECT 1 FROM runs WHERE guid=?", {run_guid}).empty())
          record_run_start(RunRecord{run_guid, "import", "", "", decided_at, decided_at});
        Stmt w(db_, (R"sql(
INSERT INTO rerank_winners(generator, signature, target_id, compute_units, device_kind, problem, measurement_id,
                           variant_id, median_ms, search_best_ms, rerank_median_ms, rerank_lo_ms, rerank_hi_ms,
                           candidates, rounds, separated, flip_rate, run_guid, decided_at)
  SELECT ?1, ?2, ?3, ?4, ?5, ?6, m.id, ?7, m.median_ms, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17
  FROM measurements m WHERE m.id = (
    SELECT x.id FROM measurements x JOIN devices d ON d.id = x.device_id
    WHERE x.variant_id = ?7 AND x.problem = ?6 AND x.status = 'ok' AND x.median_ms IS NOT NULL
      AND x.device_kind = ?5 AND d.target_id = ?3 AND d.compute_units = ?4
    ORDER BY x.median_ms, x.id LIMIT 1))sql" +
                        std::string(detail::kRerankWinnerNewerWins)).c_str());
        w.bind(1, need_str(e, "generator", where))
            .bind(2, e.find("signature") ? e.find("signature")->canonical() : "{}")
            .bind(3, need_str(*r, "target_id", where))
            .bind(4, int64_t(need_num(*r, "compute_units", where)))
            .bind(5, need_str(*r, "device_kind", where))
            .bind(6, e.find("problem") ? e.find("problem")->canonical() : "{}")
            .bind(7, in.variant_id)
            .bind(8, need_num(*r, "search_best_ms", where))
            .bind(9, need_num(*r, "rerank_median_ms", where))
            .bind(10, need_num(*r, "rerank_lo_ms", where))
            .bind(11, need_num(*r, "rerank_hi_ms", where))
            .bind(12, int64_t(need_num(*r, "candidates", where)))
            .bind(13, int64_t(need_num(*r, "rounds", where)));
        const JsonValue* sep = r->find("separated");
        w.bind(14, int64_t(sep && sep->as_bool() ? 1 : 0)).bind(15, need_num(*r, "flip_rate", where));
        if (run_guid.empty()) w.bind_null(16);
        else w.bind(16, run_guid);
        w.bind(17, decided_at).step();
      }
    }
    if (const JsonValue* vs = manifest.find("vendor_times"); vs && vs->is_array()) {
      for (const auto& e : vs->items()) {
        const std::string where = mpath + ": vendor time";
        int64_t dev_id = 0;
        if (const JsonValue* d = e.find("device"); d && d->is_object()) dev_id = record_device(device_of(*d, where));
        Stmt t(db_, R"sql(
INSERT INTO vendor_times(generator, signature, target_id, compute_units, problem, library, median_ms, p20_ms, p80_ms,
                         min_ms, count, timing_method, source, device_id, measured_at, message)
  VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
  ON CONFLICT(generator, signature, target_id, compute_units, problem) DO UPDATE SET
    library = excluded.library, median_ms = excluded.median_ms, p20_ms = excluded.p20_ms, p80_ms = excluded.p80_ms,
    min_ms = excluded.min_ms, count = excluded.count, timing_method = excluded.timing_method, source = excluded.source,
    device_id = excluded.device_id, measured_at = excluded.measured_at, message = excluded.message
  WHERE excluded.measured_at > vendor_times.measured_at)sql");
        t.bind(1, need_str(e, "generator", where))
            .bind(2, e.find("signature") ? e.find("signature")->canonical() : "{}")
            .bind(3, need_str(e, "target_id", where))
            .bind(4, int64_t(need_num(e, "compute_units", where)))
            .bind(5, e.find("problem") ? e.find("problem")->canonical() : "{}")
            .bind(6, need_str(e, "library", where))
            .bind(7, need_num(e, "median_ms", where))
            .bind_opt(8, opt_num(e, "p20_ms"))
            .bind_opt(9, opt_num(e, "p80_ms"))
            .bind_opt(10, opt_num(e, "min_ms"))
            .bind(11, int64_t(opt_num(e, "count").value_or(0)))
            .bind(12, need_str(e, "timing_method", where))
            .bind(13, need_str(e, "source", where));
        if (dev_id) t.bind(14, dev_id);
        else t.bind_null(14);
        const JsonValue* msg = e.find("message");
        t.bind(15, need_str(e, "measured_at", where)).bind(16, msg && msg->is_string() ? msg->as_string() : "").step();
      }
    }
    commit();
    return added;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

} // namespace isatune::db

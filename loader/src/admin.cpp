// Database administration: verify, gc, merge, export, import.
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

namespace {
namespace fs = std::filesystem;

std::vector<std::string> corrupt_blobs(sqlite3* db, size_t* checked) {
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
  for (auto& p : corrupt_blobs(db_, &r.blobs_checked)) r.problems.push_back(std::move(p));
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

size_t Database::merge_from(const std::string& other_path) {
  {
    // Validates the source (exists, isatune, same schema) and refuses corrupt blobs before anything is copied.
    Database src = Database::open(other_path, OpenOptions{.read_only = true});
    // A corrupt page can surface only at COMMIT (SQLITE_CORRUPT after the target's rows were written: the merge
    // reported failure yet kept them; found by fuzz_db), so the whole source is checked first.
    std::string check;
    try {
      auto rows = src.query("PRAGMA quick_check(1)");
      check = rows.empty() ? "no answer" : std::get<std::string>(rows[0][0]);
    } catch (const InputError& e) {
      check = e.what();
    }
    if (check != "ok") throw InputError(other_path + ": the database is corrupt (" + check + "); not merging");
    auto bad = corrupt_blobs(src.db_, nullptr);
    if (!bad.empty()) throw InputError(other_path + ": " + bad.front() + "; not merging");
  }
  {
    Stmt a(db_, "ATTACH DATABASE ? AS src");
    a.bind(1, other_path).step();
  }
  size_t added = 0;
  try {
    exec(db_, "BEGIN IMMEDIATE", path_);
    exec(db_, R"sql(
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
CREATE TEMP TABLE merge_new_runs(guid TEXT PRIMARY KEY);
INSERT INTO merge_new_runs SELECT guid FROM src.runs WHERE guid NOT IN (SELECT guid FROM main.runs);
INSERT INTO runs SELECT * FROM src.runs WHERE guid IN (SELECT guid FROM merge_new_runs);
)sql", path_);
    exec(db_, R"sql(
INSERT INTO measurements(variant_id, device_id, problem, status, median_ms, p20_ms, p80_ms, min_ms, count,
                         timing_method, device_kind, measured_at, run_guid, message)
  SELECT vm.dst, dm.dst, m.problem, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count,
         m.timing_method, m.device_kind, m.measured_at, m.run_guid, m.message
  FROM src.measurements m JOIN merge_vmap vm ON vm.src = m.variant_id JOIN merge_dmap dm ON dm.src = m.device_id
  WHERE m.run_guid IN (SELECT guid FROM merge_new_runs)
     OR (m.run_guid IS NULL AND NOT EXISTS (
           SELECT 1 FROM main.measurements x WHERE x.variant_id = vm.dst AND x.device_id = dm.dst
             AND x.problem = m.problem AND x.measured_at = m.measured_at AND x.status = m.status
             AND x.median_ms IS m.median_ms))
  ORDER BY m.id;
)sql", path_);
    added = size_t(sqlite3_changes(db_));
    exec(db_, "DROP TABLE temp.merge_vmap; DROP TABLE temp.merge_dmap; DROP TABLE temp.merge_new_runs;", path_);
    exec(db_, "COMMIT", path_);
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(db_, "DETACH DATABASE src", nullptr, nullptr, nullptr);
    throw;
  }
  exec(db_, "DETACH DATABASE src", path_);
  return added;
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
  while (s.step()) {
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
    entries.push(std::move(e));
  }
  JsonValue manifest = JsonValue::object();
  manifest.set("format", JsonValue::str("isatune-export"));
  manifest.set("format_version", JsonValue::number(1));
  manifest.set("schema_version", JsonValue::number(kSchemaVersion));
  manifest.set("code_objects", std::move(objects));
  size_t n = entries.items().size();
  manifest.set("entries", std::move(entries));
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
    for (const auto& e : entries->items()) {
      std::string where = mpath + ": entry";
      int64_t gen = record_generator(need_str(e, "generator", where), need_str(e, "generator_version", where));
      const JsonValue* d = e.find("device");
      const JsonValue* m = e.find("measurement");
      if (!d || !m) throw InputError(where + " lacks device or measurement");
      DeviceRecord dev;
      dev.vendor = need_str(*d, "vendor", where);
      dev.target_id = need_str(*d, "target_id", where);
      dev.isa = need_str(*d, "isa", where);
      dev.name = need_str(*d, "name", where);
      dev.compute_units = uint32_t(need_num(*d, "compute_units", where));
      dev.memory_bytes = uint64_t(need_num(*d, "memory_bytes", where));
      dev.driver_version = need_str(*d, "driver_version", where);
      dev.runtime_version = need_str(*d, "runtime_version", where);
      const JsonValue* emu = d->find("emulated");
      dev.emulated = emu && emu->as_bool();
      // Absent in exports written before schema version 3: unknown.
      dev.clock_khz = uint32_t(opt_num(*d, "clock_khz").value_or(0));
      dev.memory_clock_khz = uint32_t(opt_num(*d, "memory_clock_khz").value_or(0));
      dev.memory_bus_bits = uint32_t(opt_num(*d, "memory_bus_bits").value_or(0));
      dev.l2_bytes = uint64_t(opt_num(*d, "l2_bytes").value_or(0));
      int64_t dev_id = record_device(dev);
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
      if (!mr.run_guid.empty()) {
        if (runs_before.count(mr.run_guid)) continue; // that run is already here: idempotent
        record_run_start(RunRecord{mr.run_guid, "import", "", "", mr.measured_at, mr.measured_at});
      } else {
        auto same = query("SELECT 1 FROM measurements WHERE variant_id=? AND device_id=? AND problem=? AND "
                          "measured_at=?",
                          {var_id, dev_id, canonical_json(mr.problem), mr.measured_at});
        if (!same.empty()) continue;
      }
      record_measurement(mr);
      ++added;
    }
    commit();
    return added;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

} // namespace isatune::db

// `isatune db ls | show | best | export | import | merge | verify | gc | migrate --db FILE`: the tuning database.
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "table.h"

namespace isatune::cli {

namespace {
struct DbOptions {
  std::string db;
  std::string arg;        // show: variant id; export/import: folder; merge: other database
  std::string generator;  // best: filter
  bool json = false;
};

nlohmann::json cell_json(const db::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return nullptr;
}

// Prints rows as a table or as a JSON array of objects.
void print_rows(const std::vector<std::string>& header, const std::vector<db::Row>& rows, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json o;
      for (size_t i = 0; i < header.size(); ++i) o[header[i]] = cell_json(r[i]);
      out.push_back(o);
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  Table t(header);
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    for (const auto& c : r) cells.push_back(db::to_string(c));
    t.add(cells);
  }
  std::cout << t.str();
}

db::Database open_ro(const DbOptions& o) { return db::Database::open(o.db, {.read_only = true}); }
db::Database open_rw(const DbOptions& o) { return db::Database::open(o.db); }

int run_ls(const DbOptions& o) {
  auto d = open_ro(o);
  std::vector<std::string> tables = {"devices", "toolchains", "generators", "code_objects", "variants", "runs",
                                     "measurements", "best"};
  std::vector<db::Row> rows;
  for (const auto& t : tables) rows.push_back({t, d.query("SELECT count(*) FROM " + t)[0][0]});
  if (!o.json) std::cout << o.db << ": schema version " << d.schema_version() << "\n";
  print_rows({"table", "rows"}, rows, o.json);
  if (!o.json) {
    std::cout << "\n";
    print_rows({"generator", "version", "variants"},
               d.query("SELECT g.name, g.version_hash, count(v.id) FROM generators g LEFT JOIN variants v ON "
                       "v.generator_id = g.id GROUP BY g.id ORDER BY g.name"),
               false);
  }
  return kExitOk;
}

int run_show(const DbOptions& o) {
  auto d = open_ro(o);
  auto v = d.query("SELECT v.id, g.name, g.version_hash, v.signature, v.parameters, v.code_object, v.kernel, v.launch "
                   "FROM variants v JOIN generators g ON g.id = v.generator_id WHERE v.id = ?",
                   {db::Value(int64_t(std::stoll(o.arg)))});
  if (v.empty()) throw InputError(o.db + ": no variant with id " + o.arg);
  print_rows({"id", "generator", "version", "signature", "parameters", "code_object", "kernel", "launch"}, v, o.json);
  if (!o.json) std::cout << "\n";
  print_rows({"problem", "status", "median_ms", "p20_ms", "p80_ms", "min_ms", "count", "kind", "device", "run"},
             d.query("SELECT m.problem, m.status, m.median_ms, m.p20_ms, m.p80_ms, m.min_ms, m.count, m.device_kind, "
                     "d.name || ' ' || d.isa || ' ' || d.compute_units, m.run_guid FROM measurements m JOIN devices d "
                     "ON d.id = m.device_id WHERE m.variant_id = ? ORDER BY m.problem, m.median_ms",
                     {v[0][0]}),
             o.json);
  return kExitOk;
}

int run_best(const DbOptions& o) {
  auto d = open_ro(o);
  print_rows({"generator", "signature", "target", "CUs", "kind", "problem", "median_ms", "variant"},
             d.query("SELECT generator, signature, target_id, compute_units, device_kind, problem, median_ms, "
                     "variant_id FROM best WHERE ? = '' OR generator = ? ORDER BY 1, 2, 3, 4, 5, 6",
                     {o.generator, o.generator}),
             o.json);
  return kExitOk;
}

int run_verify(const DbOptions& o) {
  auto d = open_ro(o);
  auto r = d.verify();
  bool ok = r.problems.empty();
  if (o.json) {
    std::cout << nlohmann::json{{"ok", ok}, {"integrity_ok", r.integrity_ok}, {"blobs_checked", r.blobs_checked},
                                {"problems", r.problems}}.dump(2) << "\n";
  } else {
    for (const auto& p : r.problems) std::cout << p << "\n";
    std::cout << o.db << ": " << (ok ? "ok" : "problems found") << " (integrity " << (r.integrity_ok ? "ok" : "FAILED")
              << ", " << r.blobs_checked << " blobs hashed, " << r.problems.size() << " problems)\n";
  }
  return ok ? kExitOk : kExitInputError;
}

struct MergeOptions {
  std::string db;
  std::vector<std::string> files;
  uint32_t expect_shards = 0;
  bool json = false;
};

int run_merge(const MergeOptions& o) {
  std::string out = o.db;
  std::vector<std::string> inputs = o.files;
  if (out.empty()) {
    if (inputs.size() < 2) throw InputError("db merge: give OUT IN... (or --db OUT IN...): nothing to merge");
    out = inputs.front();
    inputs.erase(inputs.begin());
  }
  if (inputs.empty()) throw InputError("db merge: no input database to merge into " + out);
  auto d = db::Database::open(out);
  const auto t0 = std::chrono::steady_clock::now();
  const db::MergeReport r = d.merge(inputs, o.expect_shards);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto v = d.verify(); // the merged result: integrity, foreign keys and every blob's hash
  size_t refused = 0;
  for (const auto& f : r.files) refused += !f.merged;
  std::vector<std::string> missing, unfinished;
  for (const auto& s : r.shards) {
    if (s.state == "missing") missing.push_back(std::to_string(s.index));
    if (s.state == "unfinished") unfinished.push_back(std::to_string(s.index));
  }
  const bool ok = r.complete() && v.problems.empty();
  if (o.json) {
    nlohmann::json j;
    j["db"] = out;
    j["measurements_added"] = r.measurements_added;
    j["wall_s"] = wall;
    j["files"] = nlohmann::json::array();
    for (const auto& f : r.files)
      j["files"].push_back({{"path", f.path}, {"merged", f.merged}, {"error", f.error},
                            {"measurements_added", f.measurements_added},
                            {"measurements_in_file", f.measurements_in_file}, {"runs_added", f.runs_added},
                            {"blobs_checked", f.blobs_checked}});
    j["shards"] = nlohmann::json::array();
    for (const auto& s : r.shards)
      j["shards"].push_back({{"index", s.index}, {"count", s.count}, {"state", s.state}, {"runs", s.runs}});
    j["missing_shards"] = missing;
    j["unfinished_shards"] = unfinished;
    j["verify"] = {{"integrity_ok", v.integrity_ok}, {"blobs_checked", v.blobs_checked}, {"problems", v.problems}};
    j["complete"] = ok;
    std::cout << j.dump(2) << "\n";
  } else {
    Table t({"file", "result", "measurements added", "of", "runs added", "blobs verified"});
    for (const auto& f : r.files)
      t.add({f.path, f.merged ? "merged" : std::filesystem::exists(f.path) ? "REFUSED" : "MISSING",
             std::to_string(f.measurements_added),
             std::to_string(f.measurements_in_file), std::to_string(f.runs_added), std::to_string(f.blobs_checked)});
    std::cout << t.str();
    for (const auto& f : r.files)
      if (!f.merged) std::cout << "not merged: " << f.error << "\n";
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
      return s;
    };
    if (!r.shards.empty())
      std::cout << "shards: " << r.shards.size() - missing.size() - unfinished.size() << " of " << r.shards.size()
                << " done" << (missing.empty() ? "" : "; missing: " + join(missing))
                << (unfinished.empty() ? "" : "; unfinished (killed or still running): " + join(unfinished)) << "\n";
    for (const auto& p : v.problems) std::cout << "verify: " << p << "\n";
    std::cout << out << ": " << r.measurements_added << " measurements added from " << r.files.size() - refused
              << " of " << r.files.size() << " files in " << std::fixed << std::setprecision(2) << wall
              << " s; integrity "
              << (v.integrity_ok ? "ok" : "FAILED") << ", " << v.blobs_checked << " blobs hashed"
              << (ok ? "" : "; INCOMPLETE (exit 1): merge again once the missing shards have run") << "\n";
  }
  return ok ? kExitOk : kExitInputError;
}

void add_merge(CLI::App& db, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<MergeOptions>();
  auto* c = db.add_subcommand(
      "merge",
      "Merge tuning databases into OUT (created if absent): every measurement is kept, a run is matched by its "
      "GUID and its measurements by their rank inside the run, so merging again (or a shard merged while it ran) "
      "adds only what is new. A file whose blobs do not hash to their keys, or that mixes real and emulated "
      "measurements under one device key, is refused; missing and unfinished shards are listed. Exit 1 unless "
      "every file merged and every shard is done.\n"
      "Example: isatune db merge all.sqlite parts/*.sqlite --expect-shards 8");
  c->add_option("files", opt->files, "OUT IN... (or IN... with --db OUT)")->required();
  c->add_option("--db", opt->db, "The output database (the older form: isatune db merge --db OUT IN)");
  c->add_option("--expect-shards", opt->expect_shards,
                "The number of shards the inputs should hold (default: N from their runs' I/N)");
  c->add_flag("--json", opt->json, "Print JSON instead of text");
  c->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_merge(*opt); }); });
}

template <class Fn> int report(const DbOptions& o, const std::string& what, Fn&& fn) {
  size_t n = fn();
  if (o.json) std::cout << nlohmann::json{{what, n}}.dump(2) << "\n";
  else std::cout << o.db << ": " << n << " " << what << "\n";
  return kExitOk;
}
} // namespace

void add_db_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto* db = app.add_subcommand("db", "Inspect and maintain a tuning database");
  db->require_subcommand(1);
  auto sub = [&](const char* name, const char* help, auto fn, const char* arg = nullptr, const char* arg_help = nullptr) {
    auto opt = std::make_shared<DbOptions>();
    auto* c = db->add_subcommand(name, help);
    c->add_option("--db", opt->db, "Tuning database file")->required();
    c->add_flag("--json", opt->json, "Print JSON instead of text");
    if (arg) c->add_option(arg, opt->arg, arg_help)->required();
    if (std::string(name) == "best") c->add_option("-g,--generator", opt->generator, "Only this generator");
    c->callback([opt, fn, &global, &status] { status = run_guarded(global, [&] { return fn(*opt); }); });
  };
  sub("ls", "Row counts and generators", run_ls);
  sub("show", "A variant and its measurements", run_show, "variant", "Variant id");
  sub("best", "The fastest kernel per tuned problem and device", run_best);
  sub("verify", "PRAGMA integrity_check, foreign keys and every blob's SHA-256 (exit 1 on a problem)", run_verify);
  sub("export", "Write <dir>/manifest.json and <dir>/code_objects/ for applications without SQLite",
      [](const DbOptions& o) { return report(o, "entries exported", [&] { return open_ro(o).export_to(o.arg); }); },
      "dir", "Output folder");
  sub("import", "Read an export folder back into the database",
      [](const DbOptions& o) { return report(o, "measurements imported", [&] { return open_rw(o).import_from(o.arg); }); },
      "dir", "Export folder");
  add_merge(*db, global, status);
  sub("gc", "Drop unused variants and code objects, then VACUUM", [](const DbOptions& o) {
    auto r = open_rw(o).gc();
    if (o.json)
      std::cout << nlohmann::json{{"variants_removed", r.variants_removed}, {"code_objects_removed", r.code_objects_removed},
                                  {"bytes_before", r.bytes_before}, {"bytes_after", r.bytes_after}}.dump(2) << "\n";
    else
      std::cout << o.db << ": removed " << r.variants_removed << " variants, " << r.code_objects_removed
                << " code objects; " << r.bytes_before << " -> " << r.bytes_after << " bytes\n";
    return kExitOk;
  });
  sub("migrate", "Bring an older database to the current schema", [](const DbOptions& o) {
    auto d = open_rw(o);
    if (o.json) std::cout << nlohmann::json{{"schema_version", d.schema_version()}}.dump(2) << "\n";
    else std::cout << o.db << ": schema version " << d.schema_version() << "\n";
    return kExitOk;
  });
}

} // namespace isatune::cli

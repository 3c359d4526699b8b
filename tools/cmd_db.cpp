// `isatune db ls | show | best | export | import | merge | verify | gc | migrate --db FILE`: the tuning database.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/db/database.h"
#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/gen/generator.h"
#include "isatune/loader/backend.h"
#include "isatune/loader/vendor_gemm.h"
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
                                     "measurements", "best", "vendor_times", "rerank_winners"};
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

// The entry per tuned problem that select() uses: the re-ranking's winner where it still stands, else the fastest
// single median; beside it the vendor library's recorded time (real devices), the ratio and a flag when slower.
int run_best(const DbOptions& o) {
  auto d = open_ro(o);
  auto fmt = [](double v, const char* f) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return std::string(buf);
  };
  size_t slower = 0;
  nlohmann::json out = nlohmann::json::array();
  Table t({"generator", "signature", "target", "CUs", "kind", "problem", "median_ms", "variant", "chosen by",
           "vendor_ms", "vs vendor", ""});
  db::TunedEntryFilter only;
  only.generator = o.generator;
  for (const auto& e : d.tuned_entries(only)) {
    const bool is_slower = e.slower_than_vendor();
    slower += is_slower;
    if (o.json) {
      nlohmann::json j = {{"generator", e.generator}, {"signature", e.signature}, {"target", e.target_id},
                          {"CUs", e.compute_units},   {"kind", e.device_kind},    {"problem", e.problem},
                          {"median_ms", e.median_ms}, {"variant", e.variant_id},
                          {"chosen_by", e.rerank_winner ? "rerank" : "fastest"}};
      if (e.rerank_winner)
        j["rerank"] = {{"median_ms", e.rerank_median_ms}, {"lo_ms", e.rerank_lo_ms}, {"hi_ms", e.rerank_hi_ms},
                       {"rounds", e.rounds}, {"flip_rate", e.flip_rate}};
      if (e.vendor_ms) {
        j["vendor"] = {{"median_ms", *e.vendor_ms}, {"library", e.vendor_library}, {"source", e.vendor_source}};
        j["vs_vendor"] = e.median_ms / *e.vendor_ms;
      } else {
        j["vendor"] = nullptr;
        j["vs_vendor"] = nullptr;
      }
      j["slower_than_vendor"] = is_slower;
      out.push_back(j);
      continue;
    }
    t.add({e.generator, e.signature, e.target_id, std::to_string(e.compute_units), e.device_kind, e.problem,
           fmt(e.median_ms, "%.6g"), std::to_string(e.variant_id),
           e.rerank_winner ? fmt(e.flip_rate * 100, "rerank (flip %.0f%%)") : "fastest",
           e.vendor_ms ? fmt(*e.vendor_ms, "%.6g") : "-", e.vendor_ms ? fmt(e.median_ms / *e.vendor_ms, "%.2fx") : "-",
           is_slower ? "SLOWER THAN VENDOR" : ""});
  }
  if (o.json) {
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << t.str();
  if (slower)
    std::cout << slower << " tuned entr" << (slower == 1 ? "y is" : "ies are")
              << " slower than the vendor library: the loader never selects them (it says to call the vendor "
                 "library)\n";
  return kExitOk;
}

struct VendorTimeOptions {
  std::string db, generator = "gemm", target, library = "manual", device;
  std::vector<std::string> sig, problem;
  uint32_t cus = 0;
  double ms = 0;
  bool json = false;
};

// A signature or problem as JSON text (starts with '{') or as the generator's k=v words.
std::string json_of(const std::vector<std::string>& words, const std::string& generator, bool signature) {
  std::string joined;
  for (const auto& w : words) joined += (joined.empty() ? "" : ",") + w;
  if (!joined.empty() && joined.front() == '{')
    return db::canonical_json(joined, signature ? "--sig" : "--problem");
  const gen::Generator& g = gen::find_generator(generator);
  if (signature) return db::canonical_json(nlohmann::json(gen::parse_signature(g, words)).dump(), "--sig");
  return db::canonical_json(nlohmann::json(gen::parse_problem(g, words)).dump(), "--problem");
}

int run_vendor_time(const VendorTimeOptions& o) {
  if (o.problem.empty()) throw InputError("db vendor-time: give --problem (k=v,... or JSON)");
  if (!o.device.empty() && o.ms > 0)
    throw InputError("db vendor-time: give --ms (set by hand) or --device (measure), not both");
  if (o.device.empty() && (o.target.empty() || o.cus == 0))
    throw InputError("db vendor-time: give --target and --cus (the device as `db best` lists it), or --device");
  if (o.device.empty() && !(o.ms > 0))
    throw InputError("db vendor-time: give --ms, the vendor library's median time (> 0)");
  db::VendorTimeRecord v;
  v.generator = o.generator;
  v.signature = json_of(o.sig, o.generator, true);
  v.problem = json_of(o.problem, o.generator, false);
  auto d = db::Database::open(o.db);
  if (!o.device.empty()) { // measure it here through the loader
    const auto gemm = loader::vendor_gemm_of(v.generator, v.signature, v.problem);
    if (!gemm) throw InputError("db vendor-time --device: only gemm has a vendor baseline (cuBLAS, rocBLAS)");
    auto dev = loader::open_device(o.device);
    const auto& p = dev->properties();
    const auto t = loader::time_vendor_gemm(*dev, *gemm);
    if (!t.timed()) throw UnavailableError("db vendor-time --device " + o.device + ": " + t.unavailable);
    db::DeviceRecord r;
    r.vendor = p.vendor == Vendor::amd ? "amd" : "nvidia";
    r.target_id = p.target_id;
    r.isa = p.isa;
    r.name = p.name;
    r.compute_units = p.compute_units;
    r.memory_bytes = p.memory_bytes;
    r.driver_version = p.driver_version;
    r.emulated = p.emulated;
    r.clock_khz = p.clock_khz;
    r.memory_clock_khz = p.memory_clock_khz;
    r.memory_bus_bits = p.memory_bus_bits;
    r.l2_bytes = p.l2_bytes;
    v.device_id = d.record_device(r);
    v.target_id = p.target_id;
    v.compute_units = p.compute_units;
    v.library = t.library;
    v.median_ms = t.median_ms;
    v.p20_ms = t.p20_ms, v.p80_ms = t.p80_ms, v.min_ms = t.min_ms;
    v.count = t.reps;
    v.timing_method = t.method;
    v.source = "measured";
  } else {
    v.target_id = o.target;
    v.compute_units = o.cus;
    v.library = o.library;
    v.median_ms = o.ms;
    v.timing_method = "manual";
    v.source = "manual";
  }
  d.record_vendor_time(v);
  if (o.json) {
    std::cout << nlohmann::json{{"generator", v.generator}, {"signature", v.signature}, {"problem", v.problem},
                                {"target", v.target_id},    {"CUs", v.compute_units},   {"library", v.library},
                                {"median_ms", v.median_ms}, {"source", v.source},       {"reps", v.count}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << o.db << ": vendor time " << v.median_ms << " ms (" << v.library << ", " << v.source << ") for "
              << v.generator << " " << v.signature << " " << v.problem << " on " << v.target_id << " ("
              << v.compute_units << " CUs)\n";
  }
  return kExitOk;
}

void add_vendor_time(CLI::App& db, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<VendorTimeOptions>();
  auto* c = db.add_subcommand(
      "vendor-time",
      "Record the vendor library's time (cuBLAS, rocBLAS) for a tuned problem: by hand (--ms, for machines where "
      "the tuner did not measure it) or measured now through the loader (--device cuda:0). `db best` compares "
      "each tuned entry with it and the loader never selects an entry slower than it.");
  c->add_option("--db", opt->db, "Tuning database file")->required();
  c->add_option("-g,--generator", opt->generator, "Generator (default gemm)");
  c->add_option("--sig", opt->sig, "Signature fields k=v[,k=v...] or JSON")->allow_extra_args(false);
  c->add_option("--problem", opt->problem, "Problem sizes k=v[,k=v...] or JSON")->allow_extra_args(false);
  c->add_option("--target", opt->target, "Device target id as `db best` lists it (sm_90a, amdgcn-amd-amdhsa--gfx942...)");
  c->add_option("--cus", opt->cus, "Compute units / SMs of the device as `db best` lists them");
  c->add_option("--ms", opt->ms, "The vendor library's median time in milliseconds");
  c->add_option("--library", opt->library, "What was timed, free text (default: manual)");
  c->add_option("--device", opt->device, "Measure it now on this device (cuda:N, hip:N) instead of --ms");
  c->add_flag("--json", opt->json, "Print JSON instead of text");
  c->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_vendor_time(*opt); }); });
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
  sub("best",
      "The kernel per tuned problem and device the loader selects (the re-ranking's winner, else the fastest "
      "median), with the vendor library's time beside it and entries slower than it flagged",
      run_best);
  sub("verify", "PRAGMA integrity_check, foreign keys and every blob's SHA-256 (exit 1 on a problem)", run_verify);
  sub("export", "Write <dir>/manifest.json and <dir>/code_objects/ for applications without SQLite",
      [](const DbOptions& o) { return report(o, "entries exported", [&] { return open_ro(o).export_to(o.arg); }); },
      "dir", "Output folder");
  sub("import", "Read an export folder back into the database",
      [](const DbOptions& o) { return report(o, "measurements imported", [&] { return open_rw(o).import_from(o.arg); }); },
      "dir", "Export folder");
  add_merge(*db, global, status);
  add_vendor_time(*db, global, status);
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

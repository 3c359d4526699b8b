#include "isatune/loader/select.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace isatune::loader {

using db::JsonValue;

namespace {
double log_size(double v) { return std::log(std::max(v, 1.0)); }

// Adds the squared log distance of a and b to sum; false when they are not comparable.
bool accumulate(const JsonValue& a, const JsonValue& b, double& sum) {
  if (a.is_number() && b.is_number()) {
    double d = log_size(a.as_number()) - log_size(b.as_number());
    sum += d * d;
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i)
      if (!accumulate(a.items()[i], b.items()[i], sum)) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    if (a.members().size() != b.members().size()) return false;
    for (const auto& [k, va] : a.members()) {
      const JsonValue* vb = b.find(k);
      if (!vb || !accumulate(va, *vb, sum)) return false;
    }
    return true;
  }
  return a.canonical() == b.canonical();
}

uint32_t grid_dim(const JsonValue& g, const JsonValue& problem, const std::string& where) {
  auto value_of = [&](const JsonValue& v) -> double {
    if (v.is_number()) return v.as_number();
    if (v.is_string()) {
      const JsonValue* f = problem.find(v.as_string());
      if (!f || !f->is_number())
        throw InputError(where + ": the grid uses problem field '" + v.as_string() + "', which the problem lacks");
      return f->as_number();
    }
    throw InputError(where + ": a grid term must be a number or a problem field name");
  };
  if (g.is_object()) {
    const JsonValue* cd = g.find("ceil_div");
    if (!cd || !cd->is_array() || cd->items().size() != 2)
      throw InputError(where + ": grid rule objects are {\"ceil_div\":[field, divisor]}");
    double n = value_of(cd->items()[0]), d = value_of(cd->items()[1]);
    if (d <= 0) throw InputError(where + ": ceil_div by a non-positive number");
    return static_cast<uint32_t>(std::ceil(n / d));
  }
  return static_cast<uint32_t>(value_of(g));
}

std::string device_kind(const DeviceProperties& d) { return d.emulated ? "emulated" : "real"; }

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return out.empty() ? "none" : out;
}
} // namespace

double problem_distance(const JsonValue& a, const JsonValue& b) {
  double sum = 0;
  if (!accumulate(a, b, sum)) return std::numeric_limits<double>::infinity();
  return std::sqrt(sum);
}

LaunchConfig launch_config_for(const std::string& launch_template, const std::string& problem) {
  std::string where = "launch template " + launch_template;
  JsonValue t = JsonValue::parse(launch_template);
  JsonValue p = JsonValue::parse(problem);
  LaunchConfig c;
  const JsonValue* grid = t.find("grid");
  if (!grid || !grid->is_array() || grid->items().empty() || grid->items().size() > 3)
    throw InputError(where + ": no grid rule; give the launch geometry explicitly");
  uint32_t* gd[3] = {&c.grid.x, &c.grid.y, &c.grid.z};
  for (size_t i = 0; i < grid->items().size(); ++i) *gd[i] = grid_dim(grid->items()[i], p, where);
  if (const JsonValue* block = t.find("block"); block && block->is_array()) {
    uint32_t* bd[3] = {&c.block.x, &c.block.y, &c.block.z};
    for (size_t i = 0; i < block->items().size() && i < 3; ++i) *bd[i] = grid_dim(block->items()[i], p, where);
  }
  if (const JsonValue* dyn = t.find("dynamic_shared_bytes"); dyn && dyn->is_number())
    c.dynamic_shared_bytes = static_cast<uint32_t>(dyn->as_number());
  return c;
}

std::shared_ptr<TuningDb> TuningDb::open(const std::string& path) {
  return std::shared_ptr<TuningDb>(new TuningDb(db::Database::open(path, db::OpenOptions{.read_only = true})));
}

TuningDb::TuningDb(db::Database db) : path_(db.path()), db_(std::move(db)) {}

std::shared_ptr<TuningDb::Group> TuningDb::group(const std::string& generator, const std::string& signature,
                                                 const std::string& target, int64_t cus, const std::string& kind) {
  std::string key = generator + '\x1f' + signature + '\x1f' + target + '\x1f' + std::to_string(cus) + '\x1f' + kind;
  {
    std::shared_lock lock(cache_mutex_);
    if (auto it = groups_.find(key); it != groups_.end()) return it->second;
  }
  auto g = std::make_shared<Group>();
  {
    std::lock_guard conn(conn_mutex_);
    // The entries every reader shares (db::Database::tuned_entries): the re-ranking's winner unless a later
    // search found something faster, with the vendor library's time (real devices only).
    for (auto& e : db_.tuned_entries({.generator = generator, .signature = signature, .target_id = target,
                                      .device_kind = kind, .compute_units = uint32_t(cus)})) {
      if (e.compute_units != uint32_t(cus)) continue; // a filter of 0 CUs matches every count
      auto s = std::make_shared<Selection>();
      s->generator = generator;
      s->signature = signature;
      s->tuned_problem = e.problem;
      s->measurement_id = e.measurement_id;
      s->variant_id = e.variant_id;
      s->median_ms = e.median_ms;
      s->code_object = e.code_object;
      s->kernel = e.kernel;
      s->parameters = e.parameters;
      s->launch = e.launch;
      s->generator_version = e.generator_version;
      s->rerank_winner = e.rerank_winner;
      if (e.vendor_ms) {
        s->vendor_ms = *e.vendor_ms;
        s->vendor_library = e.vendor_library;
      }
      s->target_id = target;
      s->compute_units = uint32_t(cus);
      s->device_kind = kind;
      g->by_problem.emplace(s->tuned_problem, g->points.size());
      g->points.push_back(Point{s->tuned_problem, JsonValue::parse(s->tuned_problem), s});
    }
  }
  std::unique_lock lock(cache_mutex_);
  return groups_.emplace(key, g).first->second;
}

void TuningDb::not_found(const std::string& generator, const std::string& signature, const DeviceProperties& device,
                         const std::string& kind) {
  std::lock_guard conn(conn_mutex_);
  std::set<std::string> gens;
  for (auto& r : db_.query("SELECT DISTINCT generator FROM best")) gens.insert(db::to_string(r[0]));
  if (!gens.count(generator))
    throw NotFoundError(path_ + ": no tuned kernel for generator '" + generator + "' (tuned generators: " +
                        join(gens) + ")");
  std::set<std::string> sigs;
  for (auto& r : db_.query("SELECT DISTINCT signature FROM best WHERE generator=?", {generator}))
    sigs.insert(db::to_string(r[0]));
  if (!sigs.count(signature))
    throw NotFoundError(path_ + ": generator '" + generator + "' has no tuned signature " + signature +
                        " (tuned signatures: " + join(sigs) + ")");
  std::set<std::string> devs;
  for (auto& r : db_.query("SELECT DISTINCT target_id, compute_units, device_kind FROM best WHERE generator=? AND "
                           "signature=?",
                           {generator, signature}))
    devs.insert(db::to_string(r[0]) + " (" + db::to_string(r[1]) + " CUs, " + db::to_string(r[2]) + ")");
  throw NotFoundError(path_ + ": generator '" + generator + "' signature " + signature + " is tuned for " +
                      join(devs) + ", not for this device " + device.target_id + " (" +
                      std::to_string(device.compute_units) + " CUs, " + kind + ")");
}

std::shared_ptr<const Selection> TuningDb::select(std::string_view generator, std::string_view signature,
                                                  std::string_view problem, const DeviceProperties& device) {
  std::string raw;
  raw.reserve(generator.size() + signature.size() + problem.size() + device.target_id.size() + 24);
  raw.append(generator).push_back('\x1f');
  raw.append(signature).push_back('\x1f');
  raw.append(problem).push_back('\x1f');
  raw.append(device.target_id).push_back('\x1f');
  raw.append(std::to_string(device.compute_units)).push_back(device.emulated ? 'e' : 'r');
  {
    std::shared_lock lock(cache_mutex_);
    if (auto it = selections_.find(raw); it != selections_.end()) return it->second;
  }

  std::string gen(generator);
  std::string sig = db::canonical_json(signature, "signature");
  JsonValue prob_json;
  try {
    prob_json = JsonValue::parse(problem);
  } catch (const InputError& e) {
    throw InputError(std::string("problem: ") + e.what());
  }
  std::string prob = prob_json.canonical();
  std::string kind = device_kind(device);

  // Which (target, CU count) groups could serve this device: the same target id (or ISA), the same kind.
  std::string target;
  int64_t cus = 0;
  bool found = false, cus_exact = false;
  {
    std::lock_guard conn(conn_mutex_);
    auto rows = db_.query("SELECT DISTINCT target_id, compute_units, target_id = ? FROM best WHERE generator=? AND "
                          "signature=? AND device_kind=? AND (target_id=? OR isa=?)",
                          {device.target_id, gen, sig, kind, device.target_id, device.isa});
    int64_t best_score = 0;
    for (auto& r : rows) {
      int64_t c = std::get<int64_t>(r[1]);
      bool same_target = std::get<int64_t>(r[2]) != 0;
      // Prefer the exact target id, then the closest CU count.
      int64_t score = (same_target ? 0 : (int64_t(1) << 40)) + std::llabs(c - int64_t(device.compute_units));
      if (!found || score < best_score) {
        found = true;
        best_score = score;
        target = std::get<std::string>(r[0]);
        cus = c;
        cus_exact = c == int64_t(device.compute_units);
      }
    }
  }
  if (!found) not_found(gen, sig, device, kind);
  auto g = group(gen, sig, target, cus, kind);

  // Never an entry the vendor library beats on its own problem.
  auto vendor_faster = [](const Selection& s) { return s.vendor_ms > 0 && s.median_ms > s.vendor_ms; };
  auto use_vendor = [&](const Selection& s) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": tuned %.6g ms, %s %.6g ms", s.median_ms, s.vendor_library.c_str(), s.vendor_ms);
    throw VendorFasterError(path_ + ": no tuned entry better than the vendor library for generator '" + gen +
                                "' signature " + sig + " on " + target + " at " + s.tuned_problem + buf +
                                "; call the vendor library",
                            s.vendor_library, s.vendor_ms, s.median_ms);
  };
  std::shared_ptr<Selection> chosen;
  if (auto it = g->by_problem.find(prob); it != g->by_problem.end()) {
    const Selection& base = *g->points[it->second].base;
    if (vendor_faster(base)) use_vendor(base);
    chosen = std::make_shared<Selection>(base);
    chosen->exact = true;
  } else {
    double best_d = std::numeric_limits<double>::infinity(), beaten_d = best_d;
    const Point* best = nullptr;
    const Point* beaten = nullptr; // the nearest entry the vendor library beats
    for (const auto& p : g->points) {
      double d = problem_distance(prob_json, p.parsed);
      if (vendor_faster(*p.base)) {
        if (d < beaten_d) beaten_d = d, beaten = &p;
        continue;
      }
      if (d < best_d || (d == best_d && best && p.base->median_ms < best->base->median_ms)) {
        best_d = d;
        best = &p;
      }
    }
    if (!best && beaten) use_vendor(*beaten->base);
    if (!best)
      throw NotFoundError(path_ + ": generator '" + gen + "' signature " + sig + " on " + target + ": no tuned problem is " +
                          "comparable with " + prob + " (same keys and equal non-numeric values needed; e.g. " +
                          (g->points.empty() ? std::string("none") : g->points.front().problem) + ")");
    chosen = std::make_shared<Selection>(*best->base);
    chosen->exact = false;
    chosen->distance = best_d;
  }
  chosen->problem = prob;
  chosen->compute_units_exact = cus_exact;

  std::unique_lock lock(cache_mutex_);
  if (selections_.size() > 65536) selections_.clear();
  return selections_.emplace(std::move(raw), std::move(chosen)).first->second;
}

std::shared_ptr<const CodeObject> TuningDb::code_object(const std::string& sha256) {
  {
    std::shared_lock lock(cache_mutex_);
    if (auto it = code_objects_.find(sha256); it != code_objects_.end()) return it->second;
  }
  std::shared_ptr<const CodeObject> code;
  {
    std::lock_guard conn(conn_mutex_);
    code = std::make_shared<const CodeObject>(db_.code_object(sha256));
  }
  std::unique_lock lock(cache_mutex_);
  return code_objects_.emplace(sha256, code).first->second;
}

} // namespace isatune::loader

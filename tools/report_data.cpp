#include "report_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "isatune/error.h"
#include "isatune/gen/generator.h"
#include "isatune/tune/estimate.h"
#include "resource_names.h"

namespace isatune::cli {

namespace {

using nlohmann::json;

std::string text(const db::Value& v) {
  return std::holds_alternative<std::monostate>(v) ? std::string() : db::to_string(v);
}
std::optional<double> number(const db::Value& v) {
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<int64_t>(v)) return double(std::get<int64_t>(v));
  return std::nullopt;
}
int64_t integer(const db::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  if (std::holds_alternative<double>(v)) return int64_t(std::get<double>(v));
  return 0;
}

// Seconds since the epoch of "2026-12-02T06:39:04.039Z" (the database's ISO 8601 UTC); NaN when malformed.
double epoch_seconds(const std::string& iso) {
  std::tm tm{};
  double frac = 0;
  int y, mo, d, h, mi;
  double s;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &y, &mo, &d, &h, &mi, &s) != 6) return NAN;
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d, tm.tm_hour = h, tm.tm_min = mi;
  tm.tm_sec = int(s);
  frac = s - int(s);
  return double(timegm(&tm)) + frac;
}

// One measurement row with what the report needs of its variant and device.
struct Row {
  int64_t id = 0;
  std::string run, status, kind, problem, parameters, signature, generator, code_object, kernel, measured_at;
  std::optional<double> ms;
  int64_t device_id = 0;
  std::string device_name, isa, vendor, target_id;
};

struct Device {
  std::string name, isa, vendor, target_id;
  json to_json(const std::string& kind) const {
    return {{"name", name}, {"isa", isa}, {"vendor", vendor}, {"target_id", target_id}, {"kind", kind}};
  }
};

gen::Params params_from(const json& j) {
  gen::Params p;
  for (const auto& [k, v] : j.items())
    p[k] = v.is_number() ? gen::Value::num(v.get<double>()) : gen::Value::str(v.is_string() ? v.get<std::string>()
                                                                                             : v.dump());
  return p;
}
gen::Signature signature_from(const json& j) {
  gen::Signature s;
  for (const auto& [k, v] : j.items()) s[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return s;
}
gen::Problem problem_from(const json& j) {
  gen::Problem p;
  for (const auto& [k, v] : j.items())
    if (v.is_number_integer()) p[k] = v.get<int64_t>();
  return p;
}

const gen::Generator* generator_named(const std::string& name) {
  for (const auto* g : gen::all_generators())
    if (g->name() == name) return g;
  return nullptr;
}

// Equal-width bins of log10(time) (times span decades); at most 20 bins.
json histogram(std::vector<double> ms) {
  json h = {{"lo_ms", json::array()}, {"hi_ms", json::array()}, {"counts", json::array()}};
  if (ms.empty()) return h;
  std::sort(ms.begin(), ms.end());
  const double lo = std::log10(ms.front()), hi = std::log10(ms.back());
  const size_t bins = std::clamp<size_t>(size_t(std::ceil(std::sqrt(double(ms.size())))), 1, 20);
  const double width = hi > lo ? (hi - lo) / double(bins) : 1;
  std::vector<int> counts(bins, 0);
  for (double v : ms) counts[std::min(bins - 1, size_t((std::log10(v) - lo) / width))]++;
  for (size_t b = 0; b < bins; ++b) {
    h["lo_ms"].push_back(std::pow(10, lo + width * double(b)));
    h["hi_ms"].push_back(std::pow(10, lo + width * double(b + 1)));
    h["counts"].push_back(counts[b]);
  }
  return h;
}

// Share of the variance of log(time) that each parameter explains on its own (eta squared: the between-value
// sum of squares over the total), from the ok measurements of one problem.
json importance(const std::vector<const Row*>& rows) {
  std::vector<double> y;
  std::vector<json> params;
  for (const auto* r : rows) {
    y.push_back(std::log(*r->ms));
    params.push_back(json::parse(r->parameters));
  }
  double mean = 0;
  for (double v : y) mean += v;
  mean /= double(y.size());
  double total = 0;
  for (double v : y) total += (v - mean) * (v - mean);
  json out = json::array();
  if (total <= 0) return out;
  std::set<std::string> names;
  for (const auto& p : params)
    for (const auto& [k, v] : p.items()) names.insert(k);
  for (const auto& name : names) {
    std::map<std::string, std::pair<double, int>> by_value; // sum, count
    for (size_t i = 0; i < y.size(); ++i) {
      const std::string key = params[i].contains(name) ? params[i][name].dump() : "null";
      by_value[key].first += y[i];
      by_value[key].second++;
    }
    double between = 0;
    for (const auto& [k, sc] : by_value) {
      const double m = sc.first / sc.second;
      between += sc.second * (m - mean) * (m - mean);
    }
    out.push_back({{"parameter", name}, {"values", by_value.size()}, {"variance_explained", between / total}});
  }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
    return a["variance_explained"].get<double>() > b["variance_explained"].get<double>();
  });
  return out;
}

} // namespace

std::string time_label(const std::string& device_kind) {
  return device_kind == "emulated" ? "emulated ms (instruction-cost estimate, not a measurement)" : "measured ms";
}

json report_data(db::Database& db) {
  std::vector<Row> rows;
  for (const auto& r : db.query(
           "SELECT m.id, coalesce(m.run_guid, ''), m.status, m.device_kind, m.problem, v.parameters, v.signature, "
           "g.name, coalesce(v.code_object, ''), v.kernel, m.measured_at, m.median_ms, d.id, d.name, d.isa, "
           "d.vendor, d.target_id FROM measurements m JOIN variants v ON v.id = m.variant_id "
           "JOIN generators g ON g.id = v.generator_id JOIN devices d ON d.id = m.device_id ORDER BY m.id")) {
    Row x;
    x.id = integer(r[0]);
    x.run = text(r[1]), x.status = text(r[2]), x.kind = text(r[3]), x.problem = text(r[4]);
    x.parameters = text(r[5]), x.signature = text(r[6]), x.generator = text(r[7]), x.code_object = text(r[8]);
    x.kernel = text(r[9]), x.measured_at = text(r[10]), x.ms = number(r[11]), x.device_id = integer(r[12]);
    x.device_name = text(r[13]), x.isa = text(r[14]), x.vendor = text(r[15]), x.target_id = text(r[16]);
    if (x.status != "ok") x.ms.reset();
    if (x.ms && !(*x.ms > 0)) x.ms.reset();
    rows.push_back(std::move(x));
  }
  std::map<std::string, json> run_info;
  for (const auto& r : db.query("SELECT guid, strategy, budget, host, started_at, coalesce(ended_at, '') FROM runs"))
    run_info[text(r[0])] = {{"guid", text(r[0])},       {"strategy", text(r[1])}, {"budget", text(r[2])},
                            {"host", text(r[3])},       {"started_at", text(r[4])},
                            {"ended_at", text(r[5])}};

  json out;
  out["database"] = db.path();
  out["generated_at"] = db::now_iso8601();
  out["measurements"] = rows.size();
  out["statuses"] = json::array();
  for (const char* s : db::kStatuses) out["statuses"].push_back(s);

  // Runs: one entry per (run, device, device kind, generator, signature, problem), measurements in the order
  // they were recorded (the evaluation order).
  std::map<std::tuple<std::string, int64_t, std::string, std::string, std::string, std::string>,
           std::vector<const Row*>>
      series;
  std::vector<decltype(series)::key_type> order;
  for (const auto& r : rows) {
    auto key = std::make_tuple(r.run, r.device_id, r.kind, r.generator, r.signature, r.problem);
    auto [it, fresh] = series.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(&r);
  }
  out["runs"] = json::array();
  for (const auto& key : order) {
    const auto& ms = series[key];
    const Row& first = *ms.front();
    json run = run_info.count(first.run) ? run_info[first.run] : json{{"guid", first.run}, {"strategy", ""}};
    if (first.run.empty()) run["guid"] = "", run["strategy"] = "(measurements without a run)";
    run["generator"] = first.generator;
    run["signature"] = json::parse(first.signature);
    run["problem"] = json::parse(first.problem);
    run["device"] = Device{first.device_name, first.isa, first.vendor, first.target_id}.to_json(first.kind);
    run["time_label"] = time_label(first.kind);
    double start = run.contains("started_at") ? epoch_seconds(run["started_at"].get<std::string>()) : NAN;
    if (!std::isfinite(start)) start = epoch_seconds(first.measured_at);
    json by_status = json::object();
    for (const char* s : db::kStatuses) by_status[s] = 0;
    json curve = json::array();
    std::vector<double> times;
    std::optional<double> best;
    for (size_t i = 0; i < ms.size(); ++i) {
      const Row& r = *ms[i];
      by_status[r.status] = by_status[r.status].get<int>() + 1;
      if (r.ms) {
        times.push_back(*r.ms);
        if (!best || *r.ms < *best) best = r.ms;
      }
      const double t = epoch_seconds(r.measured_at) - start;
      curve.push_back({{"evaluation", i + 1},
                       {"seconds", std::isfinite(t) ? json(std::max(0.0, t)) : json(nullptr)},
                       {"best_ms", best ? json(*best) : json(nullptr)}});
    }
    run["evaluations"] = ms.size();
    run["by_status"] = by_status;
    run["best_so_far"] = curve;
    run["best_ms"] = best ? json(*best) : json(nullptr);
    run["histogram"] = histogram(times);
    out["runs"].push_back(run);
  }

  // Best variant per (generator, device, kind, signature, problem), its resources and static estimate; and the
  // same groups' ok measurements for rooflines (per generator, device, kind, signature) and importance.
  std::map<std::tuple<std::string, int64_t, std::string, std::string>, std::map<std::string, std::vector<const Row*>>>
      groups;
  for (const auto& r : rows)
    if (r.ms) groups[{r.generator, r.device_id, r.kind, r.signature}][r.problem].push_back(&r);

  out["best"] = json::array();
  out["rooflines"] = json::array();
  out["importance"] = json::array();
  for (const auto& [gkey, problems] : groups) {
    const auto& [gname, device_id, kind, signature] = gkey;
    const Row& any = *problems.begin()->second.front();
    const Device device{any.device_name, any.isa, any.vendor, any.target_id};
    const gen::Generator* g = generator_named(gname);
    const gen::Signature sig = signature_from(json::parse(signature));
    json roof = {{"generator", gname}, {"device", device.to_json(kind)}, {"signature", json::parse(signature)},
                 {"time_label", time_label(kind)}, {"points", json::array()}};
    if (!g) roof["note"] = "generator " + gname + " is not in this isatune: no FLOP or byte counts";
    for (const auto& [problem_text, ok] : problems) {
      const json problem = json::parse(problem_text);
      const Row* best = *std::min_element(ok.begin(), ok.end(), [](auto* a, auto* b) { return *a->ms < *b->ms; });
      json entry = {{"generator", gname},
                    {"device", device.to_json(kind)},
                    {"signature", json::parse(signature)},
                    {"problem", problem},
                    {"median_ms", *best->ms},
                    {"time_label", time_label(kind)},
                    {"parameters", json::parse(best->parameters)},
                    {"kernel", best->kernel},
                    {"measurements", ok.size()}};
      const bool nvidia = device.vendor == "nvidia";
      std::optional<gen::Work> work;
      if (g) {
        try {
          work = g->work(sig, problem_from(problem));
        } catch (const Error& e) {
          entry["note"] = std::string("no work counts: ") + e.what();
        }
      }
      if (g && !best->code_object.empty()) {
        try {
          const CodeObject code = db.code_object(best->code_object);
          const tune::Estimate e = tune::estimate(code, *g, device.isa, sig, params_from(entry["parameters"]),
                                                  problem_from(problem), device.name);
          entry["resources"] = resources_json(e, nvidia);
          entry["occupancy"] = {{nvidia ? "warps_per_scheduler" : "waves_per_simd", e.occupancy.waves_per_simd},
                                {nvidia ? "blocks_per_sm" : "workgroups_per_cu", e.occupancy.workgroups_per_cu},
                                {"limiter", nvidia ? nvidia_limiter_name(e.occupancy.limiter) : e.occupancy.limiter}};
          if (!roof.contains("peak_tflops")) {
            roof["peak_tflops"] = e.peak_tflops, roof["peak_tbps"] = e.peak_tbps, roof["peaks_of"] = e.peaks_of;
          }
          if (!e.note.empty()) entry["note"] = e.note;
        } catch (const Error& e) {
          entry["note"] = std::string("no estimate: ") + e.what();
        }
      }
      if (work && work->bytes > 0) {
        entry["flops"] = work->flops, entry["bytes"] = work->bytes, entry["intensity"] = work->flops / work->bytes;
        entry["tflops"] = work->flops / (*best->ms * 1e-3) / 1e12;
        for (const Row* r : ok)
          roof["points"].push_back({{"intensity", work->flops / work->bytes},
                                    {"tflops", work->flops / (*r->ms * 1e-3) / 1e12},
                                    {"median_ms", *r->ms},
                                    {"problem", problem},
                                    {"parameters", json::parse(r->parameters)},
                                    {"best", r == best}});
      }
      out["best"].push_back(entry);
      if (ok.size() >= 3) {
        json imp = importance(ok);
        if (!imp.empty())
          out["importance"].push_back({{"generator", gname},
                                       {"device", device.to_json(kind)},
                                       {"signature", json::parse(signature)},
                                       {"problem", problem},
                                       {"measurements", ok.size()},
                                       {"parameters", imp}});
      }
    }
    if (!roof["points"].empty()) out["rooflines"].push_back(roof);
  }
  return out;
}

} // namespace isatune::cli

// Kernel Tuner cache files. `time` is a number (ms) or an error string; old files mark failures with 1e20,
// which is read as a runtime failure (Kernel Tuner wrote it for configurations that failed to compile or
// launch as well as run; the file does not say which). Charged time: compile + benchmark + verification +
// framework.
#include <nlohmann/json.hpp>

#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "value_table.h"

namespace isatune::tune {

namespace {
double field_ms(const nlohmann::json& e, const char* key) {
  auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : 0.0;
}
} // namespace

ReplayData read_kernel_tuner(const nlohmann::json& doc) {
  ReplayData d;
  d.format = "kernel-tuner";
  if (doc.contains("device_name") && doc["device_name"].is_string())
    d.device = doc["device_name"];
  if (doc.contains("kernel_name") && doc["kernel_name"].is_string())
    d.kernel = doc["kernel_name"];
  if (!doc.contains("tune_params_keys") || !doc["tune_params_keys"].is_array())
    throw InputError("Kernel Tuner cache without tune_params_keys");
  std::vector<std::string> keys = doc["tune_params_keys"].get<std::vector<std::string>>();
  detail::ValueTable table;
  const auto& tp = doc.value("tune_params", nlohmann::json::object());
  for (const auto& k : keys) {
    std::vector<Value> vs;
    if (tp.contains(k) && tp[k].is_array())
      for (const auto& v : tp[k])
        vs.push_back(detail::to_value(v));
    if (!vs.empty())
      table.declare(k, vs);
  }
  const auto& cache = doc.value("cache", nlohmann::json::object());
  std::vector<std::vector<Value>> rows;
  for (const auto& [key, e] : cache.items()) {
    std::vector<Value> row;
    for (const auto& k : keys) {
      if (!e.contains(k))
        throw InputError("cache entry '" + key + "' lacks parameter '" + k + "'");
      row.push_back(detail::to_value(e[k]));
      table.see(k, row.back());
    }
    Evaluation ev;
    const auto& t = e.contains("time") ? e["time"] : nlohmann::json();
    if (t.is_number()) {
      double v = t.get<double>();
      if (v >= 1e19)
        ev.status = Status::runtime;
      else
        ev.time_ms = v;
    } else if (t.is_string()) {
      std::string s = t;
      if (s == "InvalidConfig")
        ev.status = Status::constraint;
      else if (s == "CompilationFailedConfig")
        ev.status = Status::compile;
      else if (s == "RuntimeFailedConfig")
        ev.status = Status::runtime;
      else
        ev.status = Status::runtime;
    } else {
      throw InputError("cache entry '" + key + "' has no time");
    }
    ev.cost_s = (field_ms(e, "compile_time") + field_ms(e, "benchmark_time") +
                 field_ms(e, "verification_time") + field_ms(e, "framework_time")) /
                1000.0;
    rows.push_back(std::move(row));
    d.entries.push_back(ev);
  }
  d.parameters = table.parameters();
  for (const auto& r : rows)
    d.indices.push_back(table.index(d.parameters, r));
  return d;
}

} // namespace isatune::tune

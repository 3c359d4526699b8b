// KTT JSON output. Durations are in microseconds (Metadata.TimeUnit). Objective: TotalDuration; charged time:
// TotalDuration + TotalOverhead (compilation, data movement, validation and searcher overheads).
// Status: Ok -> ok, ComputationFailed -> runtime, DeviceLimitsExceeded -> resource,
// CompilationFailed -> compile, ValidationFailed -> wrong-answer.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "value_table.h"

namespace isatune::tune {

namespace {
Status ktt_status(const std::string& s) {
  if (s == "Ok")
    return Status::ok;
  if (s == "ComputationFailed")
    return Status::runtime;
  if (s == "DeviceLimitsExceeded")
    return Status::resource;
  if (s == "CompilationFailed")
    return Status::compile;
  if (s == "ValidationFailed")
    return Status::wrong_answer;
  throw InputError("unknown KTT status '" + s + "'");
}
} // namespace

ReplayData read_ktt(const nlohmann::json& doc) {
  ReplayData d;
  d.format = "ktt";
  double to_ms = 1e-3;
  if (doc.contains("Metadata")) {
    const auto& m = doc["Metadata"];
    d.device = m.value("Device", "");
    std::string u = m.value("TimeUnit", "Microseconds");
    if (u == "Nanoseconds")
      to_ms = 1e-6;
    else if (u == "Milliseconds")
      to_ms = 1.0;
    else if (u == "Seconds")
      to_ms = 1e3;
  }
  detail::ValueTable table;
  std::vector<std::string> names;
  std::vector<std::vector<Value>> rows;
  for (const auto& r : doc.at("Results")) {
    if (d.kernel.empty())
      d.kernel = r.value("KernelName", "");
    const auto& cfg = r.at("Configuration");
    if (names.empty())
      for (const auto& p : cfg)
        names.push_back(p.at("Name").get<std::string>());
    std::vector<Value> row(names.size());
    std::vector<bool> have(names.size(), false);
    for (const auto& p : cfg) {
      auto it = std::find(names.begin(), names.end(), p.at("Name").get<std::string>());
      if (it == names.end())
        throw InputError("KTT result with an unknown parameter");
      size_t i = static_cast<size_t>(it - names.begin());
      row[i] = detail::to_value(p.at("Value"));
      have[i] = true;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      if (!have[i])
        throw InputError("KTT result lacks parameter '" + names[i] + "'");
      table.see(names[i], row[i]);
    }
    Evaluation ev;
    ev.status = ktt_status(r.value("Status", "Ok"));
    double total = r.value("TotalDuration", 0.0);
    if (ev.status == Status::ok)
      ev.time_ms = total * to_ms;
    ev.cost_s = (total + r.value("TotalOverhead", 0.0)) * to_ms / 1000.0;
    rows.push_back(std::move(row));
    d.entries.push_back(ev);
  }
  d.parameters = table.parameters();
  for (const auto& r : rows)
    d.indices.push_back(table.index(d.parameters, r));
  return d;
}

} // namespace isatune::tune

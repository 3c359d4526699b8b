// T4 results (the auto-tuning community's common output format). Objective: the measurement named "time".
// Charged time: compilation + sum of runtimes + framework + validation. The published files spell the compile
// field "compilation"; "compilation_time" is accepted too.
#include <nlohmann/json.hpp>

#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "value_table.h"

namespace isatune::tune {

namespace {
double num(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<double>() : 0.0;
}

Status t4_status(const std::string& s) {
  if (s == "correct")
    return Status::ok;
  if (s == "compile")
    return Status::compile;
  if (s == "runtime")
    return Status::runtime;
  if (s == "correctness")
    return Status::wrong_answer;
  if (s == "constraints")
    return Status::constraint;
  if (s == "timeout")
    return Status::timeout;
  throw InputError("unknown T4 invalidity '" + s + "'");
}
} // namespace

ReplayData read_t4(const nlohmann::json& doc) {
  ReplayData d;
  d.format = "t4";
  double unit = 1.0; // to ms
  if (doc.contains("metadata") && doc["metadata"].contains("timeunit")) {
    std::string u = doc["metadata"]["timeunit"].get<std::string>();
    if (u == "seconds")
      unit = 1000.0;
    else if (u == "microseconds")
      unit = 1e-3;
  }
  detail::ValueTable table;
  std::vector<std::string> names;
  std::vector<std::vector<Value>> rows;
  for (const auto& r : doc.at("results")) {
    const auto& cfg = r.at("configuration");
    if (names.empty())
      for (const auto& [k, v] : cfg.items())
        names.push_back(k);
    std::vector<Value> row;
    for (const auto& n : names) {
      if (!cfg.contains(n))
        throw InputError("T4 result lacks parameter '" + n + "'");
      row.push_back(detail::to_value(cfg[n]));
      table.see(n, row.back());
    }
    Evaluation ev;
    ev.status = t4_status(r.value("invalidity", "correct"));
    if (ev.status == Status::ok) {
      bool found = false;
      for (const auto& m : r.value("measurements", nlohmann::json::array()))
        // find, not operator[]: on a const object a missing key is undefined behaviour (an assertion in
        // debug builds), and a measurement without "value" is bad input (found by fuzz_replay).
        if (auto v = m.find("value"); m.value("name", "") == "time" && v != m.end() && v->is_number()) {
          ev.time_ms = v->get<double>() * unit;
          found = true;
        }
      if (!found)
        throw InputError("T4 result without a time measurement");
    }
    const auto& t = r.value("times", nlohmann::json::object());
    double ms =
        num(t, "compilation") + num(t, "compilation_time") + num(t, "framework") + num(t, "validation");
    for (const auto& x : t.value("runtimes", nlohmann::json::array()))
      if (x.is_number())
        ms += x.get<double>();
    ev.cost_s = ms * unit / 1000.0;
    rows.push_back(std::move(row));
    d.entries.push_back(ev);
  }
  d.parameters = table.parameters();
  for (const auto& r : rows)
    d.indices.push_back(table.index(d.parameters, r));
  return d;
}

} // namespace isatune::tune

#include "isatune/tune/trace.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <limits>

#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "isatune/tune/status.h"

namespace isatune::tune {

namespace {
nlohmann::json config_json(const Space& space, const Config& config) {
  nlohmann::json cfg = nlohmann::json::object();
  const auto& params = space.parameters();
  for (size_t p = 0; p < params.size(); ++p) {
    const auto& v = params[p].values[config[p]];
    if (!v.is_number)
      cfg[params[p].name] = v.text;
    else if (v.number == std::floor(v.number) && std::fabs(v.number) < 1e15)
      cfg[params[p].name] = static_cast<long long>(v.number);
    else
      cfg[params[p].name] = v.number;
  }
  return cfg;
}
} // namespace

void write_trace(std::ostream& out, const Space& space, const std::vector<Record>& history) {
  for (size_t i = 0; i < history.size(); ++i) {
    const Record& r = history[i];
    nlohmann::json j{{"evaluation", i + 1},
                     {"config", config_json(space, r.config)},
                     {"status", std::string(to_string(r.eval.status))},
                     {"cost_s", r.eval.cost_s},
                     {"charged_s", r.charged_s}};
    j["time_ms"] = r.eval.status == Status::ok ? nlohmann::json(r.eval.time_ms) : nlohmann::json(nullptr);
    out << j.dump() << "\n";
  }
}

Run read_trace(const std::string& path) {
  std::istringstream in(read_maybe_gzip(path)); // a trace may be kept gzipped
  Run run;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("charged_s") || !j["charged_s"].is_number() ||
        !j.contains("time_ms"))
      throw InputError("trace '" + path + "' line " + std::to_string(n) +
                       ": expected a JSON object with charged_s and time_ms");
    RunPoint p;
    p.charged_s = j["charged_s"].get<double>();
    p.time_ms = j["time_ms"].is_number() ? j["time_ms"].get<double>() : std::numeric_limits<double>::quiet_NaN();
    run.push_back(p);
  }
  return run;
}

} // namespace isatune::tune

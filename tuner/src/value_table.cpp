#include "value_table.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::tune::detail {

Value to_value(const nlohmann::json& j) {
  if (j.is_number())
    return Value::num(j.get<double>());
  if (j.is_boolean())
    return Value::num(j.get<bool>() ? 1 : 0);
  if (j.is_string())
    return Value::str(j.get<std::string>());
  return Value::str(j.dump());
}

ValueTable::Column& ValueTable::column(const std::string& name) {
  for (auto& c : cols_)
    if (c.name == name)
      return c;
  cols_.push_back({name, {}, false});
  return cols_.back();
}

void ValueTable::declare(const std::string& name, const std::vector<Value>& values) {
  auto& c = column(name);
  c.values = values;
  c.declared = true;
}

void ValueTable::see(const std::string& name, const Value& v) {
  auto& c = column(name);
  if (std::find(c.values.begin(), c.values.end(), v) == c.values.end())
    c.values.push_back(v);
}

std::vector<Parameter> ValueTable::parameters() const {
  std::vector<Parameter> out;
  for (const auto& c : cols_) {
    Parameter p{c.name, c.values, true};
    p.ordered = std::all_of(p.values.begin(), p.values.end(), [](const Value& v) { return v.is_number; });
    if (!c.declared) {
      if (p.ordered)
        std::sort(p.values.begin(), p.values.end(),
                  [](const Value& a, const Value& b) { return a.number < b.number; });
      else
        std::sort(p.values.begin(), p.values.end(),
                  [](const Value& a, const Value& b) { return a.str() < b.str(); });
    }
    out.push_back(std::move(p));
  }
  return out;
}

uint64_t ValueTable::index(const std::vector<Parameter>& params, const std::vector<Value>& values) const {
  uint64_t idx = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& vs = params[i].values;
    auto it = std::find(vs.begin(), vs.end(), values[i]);
    if (it == vs.end())
      throw InputError("value " + values[i].str() + " of '" + params[i].name + "' is not declared");
    // A file can declare more configurations than 64 bits count (40 parameters of 4 values): refuse it
    // rather than let indices wrap onto each other.
    if (__builtin_mul_overflow(idx, uint64_t(vs.size()), &idx) ||
        __builtin_add_overflow(idx, static_cast<uint64_t>(it - vs.begin()), &idx))
      throw InputError("the recorded space (" + std::to_string(params.size()) +
                       " parameters) has more than 2^64 configurations");
  }
  return idx;
}

} // namespace isatune::tune::detail

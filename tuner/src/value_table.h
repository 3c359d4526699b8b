#pragma once
// Private to the replay readers: turns recorded parameter values (JSON numbers or strings) into Parameters
// and value indices. Numeric parameters are ordered (ascending unless a declared order is given), others
// categorical.
#include <nlohmann/json.hpp>

#include <map>

#include "isatune/tune/space.h"

namespace isatune::tune::detail {

Value to_value(const nlohmann::json& j);

class ValueTable {
public:
  // Declared values (e.g. Kernel Tuner's tune_params) keep their order.
  void declare(const std::string& name, const std::vector<Value>& values);
  // Records a value seen in an entry (adds it when the parameter was not declared).
  void see(const std::string& name, const Value& v);
  std::vector<Parameter> parameters() const;
  // Cartesian index of an entry's values in parameters(); throws InputError on an unknown value.
  uint64_t index(const std::vector<Parameter>& params, const std::vector<Value>& values) const;

private:
  struct Column {
    std::string name;
    std::vector<Value> values;
    bool declared = false;
  };
  std::vector<Column> cols_;
  Column& column(const std::string& name);
};

} // namespace isatune::tune::detail

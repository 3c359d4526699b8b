#pragma once
// A search space: parameters with value lists (ordered or categorical) and the configurations that satisfy
// the constraints. A Config holds one value index per parameter; the Cartesian index is its mixed-radix
// number (first parameter most significant). Valid configurations are enumerated once, in Cartesian order.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace isatune::gen {

struct Value {
  bool is_number = true;
  double number = 0;
  std::string text;
  static Value num(double v) { return Value{true, v, {}}; }
  static Value str(std::string s) { return Value{false, 0, std::move(s)}; }
  std::string str() const;
  bool operator==(const Value&) const = default;
};

struct Parameter {
  std::string name;
  std::vector<Value> values;
  bool ordered = true; // ordered: neighbours are the adjacent values; categorical: any other value
};

using Config = std::vector<uint32_t>;
using Constraint = std::function<bool(const Config&)>;

class Space {
public:
  // Enumerates the Cartesian product and keeps the configurations every constraint accepts.
  // Throws InputError when a parameter has no values or the product exceeds max_cartesian.
  Space(std::vector<Parameter> params, std::vector<Constraint> constraints = {},
        uint64_t max_cartesian = 100'000'000);
  // A space whose valid configurations are given as Cartesian indices (e.g. the entries of a recorded file).
  Space(std::vector<Parameter> params, std::vector<uint64_t> valid_indices);

  const std::vector<Parameter>& parameters() const { return params_; }
  uint64_t cartesian_size() const { return cartesian_; }
  size_t size() const { return valid_.size(); } // number of valid configurations
  const std::vector<uint64_t>& valid() const { return valid_; }

  uint64_t index_of(const Config& c) const;
  Config config_at(uint64_t cartesian_index) const;
  Config valid_config(size_t position) const { return config_at(valid_[position]); }
  // Position in valid() or -1 when the configuration violates a constraint.
  int64_t position_of(const Config& c) const;
  bool is_valid(const Config& c) const { return position_of(c) >= 0; }

  // Valid configurations differing in one parameter: adjacent values (ordered) or any other value
  // (categorical).
  std::vector<Config> neighbours(const Config& c) const;
  // Valid configurations differing from c in any one parameter, in any value (Hamming distance 1).
  std::vector<Config> hamming_neighbours(const Config& c) const;

  double number(const Config& c, size_t param) const { return params_[param].values[c[param]].number; }
  std::string format(const Config& c) const; // "name=value, ..."

private:
  void init_radix();
  void index_valid();
  std::vector<Parameter> params_;
  std::vector<uint64_t> radix_;
  uint64_t cartesian_ = 1;
  std::vector<uint64_t> valid_;
  std::unordered_map<uint64_t, uint32_t> position_;
};

} // namespace isatune::gen

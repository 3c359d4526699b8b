#pragma once
// A small JSON value with a canonical form, so that equal signatures, parameters and problems are equal
// strings in the database: object keys sorted, no whitespace, integral numbers written as integers,
// other numbers in the shortest form that reads back exactly. The loader links no JSON library, so this is
// its own (standard library only).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace isatune::db {

class JsonValue {
public:
  enum class Type { null, boolean, number, string, array, object };

  JsonValue() = default;
  static JsonValue parse(std::string_view text); // throws InputError with the position of the problem
  static JsonValue number(double v);
  static JsonValue str(std::string v);
  static JsonValue boolean(bool v);
  static JsonValue array();
  static JsonValue object();

  Type type() const { return type_; }
  bool is_number() const { return type_ == Type::number; }
  bool is_string() const { return type_ == Type::string; }
  bool is_object() const { return type_ == Type::object; }
  bool is_array() const { return type_ == Type::array; }
  double as_number() const { return number_; }
  const std::string& as_string() const { return string_; }
  bool as_bool() const { return bool_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::map<std::string, JsonValue>& members() const { return members_; }
  // nullptr when absent or not an object.
  const JsonValue* find(const std::string& key) const;

  void push(JsonValue v) { items_.push_back(std::move(v)); }
  void set(const std::string& key, JsonValue v) { members_[key] = std::move(v); }

  std::string canonical() const;

private:
  void write(std::string& out) const;
  Type type_ = Type::null;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::vector<JsonValue> items_;
  std::map<std::string, JsonValue> members_; // sorted by key: the canonical order
};

// Parses and rewrites text in canonical form; `what` names the text in the error ("signature").
std::string canonical_json(std::string_view text, const char* what = "JSON");

} // namespace isatune::db

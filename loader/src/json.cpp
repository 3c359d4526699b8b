#include "isatune/db/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "isatune/error.h"

namespace isatune::db {

namespace {
class Parser {
public:
  explicit Parser(std::string_view s) : s_(s) {}

  JsonValue document() {
    JsonValue v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the value");
    return v;
  }

private:
  [[noreturn]] void fail(const std::string& why) {
    throw InputError("invalid JSON at offset " + std::to_string(pos_) + ": " + why);
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  JsonValue value(int depth) {
    if (depth > 64) fail("nested too deeply");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of text");
    char c = s_[pos_];
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') return JsonValue::str(string());
    if (literal("true")) return JsonValue::boolean(true);
    if (literal("false")) return JsonValue::boolean(false);
    if (literal("null")) return JsonValue();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    fail(std::string("unexpected character '") + c + "'");
  }
  JsonValue number() {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    while (pos_ < s_.size() && ((s_[pos_] >= '0' && s_[pos_] <= '9') || s_[pos_] == '.' || s_[pos_] == 'e' ||
                                s_[pos_] == 'E' || s_[pos_] == '+' || s_[pos_] == '-'))
      ++pos_;
    double v = 0;
    auto r = std::from_chars(s_.data() + start, s_.data() + pos_, v);
    if (r.ec != std::errc() || r.ptr != s_.data() + pos_) {
      pos_ = start;
      fail("malformed number");
    }
    return JsonValue::number(v);
  }
  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  uint32_t hex4() {
    if (pos_ + 4 > s_.size()) fail("short \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else fail("bad \\u escape");
    }
    return v;
  }
  std::string string() {
    ++pos_; // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
          pos_ += 2;
          uint32_t lo = hex4();
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        put_utf8(out, cp);
        break;
      }
      default: fail("unknown escape");
      }
    }
  }
  JsonValue array(int depth) {
    ++pos_;
    JsonValue a = JsonValue::array();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return a;
    }
    while (true) {
      a.push(value(depth + 1));
      skip_ws();
      if (pos_ >= s_.size()) fail("unterminated array");
      char c = s_[pos_++];
      if (c == ']') return a;
      if (c != ',') fail("expected ',' or ']'");
    }
  }
  JsonValue object(int depth) {
    ++pos_;
    JsonValue o = JsonValue::object();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return o;
    }
    while (true) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a key");
      std::string key = string();
      if (o.find(key)) fail("duplicate key '" + key + "'");
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_++] != ':') fail("expected ':'");
      o.set(key, value(depth + 1));
      skip_ws();
      if (pos_ >= s_.size()) fail("unterminated object");
      char c = s_[pos_++];
      if (c == '}') return o;
      if (c != ',') fail("expected ',' or '}'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

void write_string(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}
} // namespace

JsonValue JsonValue::parse(std::string_view text) { return Parser(text).document(); }

JsonValue JsonValue::number(double v) {
  JsonValue j;
  j.type_ = Type::number;
  j.number_ = v;
  return j;
}
JsonValue JsonValue::str(std::string v) {
  JsonValue j;
  j.type_ = Type::string;
  j.string_ = std::move(v);
  return j;
}
JsonValue JsonValue::boolean(bool v) {
  JsonValue j;
  j.type_ = Type::boolean;
  j.bool_ = v;
  return j;
}
JsonValue JsonValue::array() {
  JsonValue j;
  j.type_ = Type::array;
  return j;
}
JsonValue JsonValue::object() {
  JsonValue j;
  j.type_ = Type::object;
  return j;
}

const JsonValue* JsonValue::find(const std::string& key) const {
  if (type_ != Type::object) return nullptr;
  auto it = members_.find(key);
  return it == members_.end() ? nullptr : &it->second;
}

void JsonValue::write(std::string& out) const {
  switch (type_) {
  case Type::null: out += "null"; break;
  case Type::boolean: out += bool_ ? "true" : "false"; break;
  case Type::number: {
    char buf[32];
    if (!std::isfinite(number_)) {
      out += "null"; // JSON has no infinities
    } else if (number_ == std::floor(number_) && std::fabs(number_) < 9007199254740992.0) {
      auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(number_));
      out.append(buf, r.ptr);
    } else {
      auto r = std::to_chars(buf, buf + sizeof buf, number_); // shortest round-trip form
      out.append(buf, r.ptr);
    }
    break;
  }
  case Type::string: write_string(out, string_); break;
  case Type::array:
    out += '[';
    for (size_t i = 0; i < items_.size(); ++i) {
      if (i) out += ',';
      items_[i].write(out);
    }
    out += ']';
    break;
  case Type::object: {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : members_) {
      if (!first) out += ',';
      first = false;
      write_string(out, k);
      out += ':';
      v.write(out);
    }
    out += '}';
    break;
  }
  }
}

std::string JsonValue::canonical() const {
  std::string out;
  write(out);
  return out;
}

std::string canonical_json(std::string_view text, const char* what) {
  try {
    return JsonValue::parse(text).canonical();
  } catch (const InputError& e) {
    throw InputError(std::string(what) + ": " + e.what());
  }
}

} // namespace isatune::db

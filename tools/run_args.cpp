// `isatune run --arg` values (run_args.h).
#include "run_args.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "isatune/error.h"

namespace isatune::cli {

namespace {

template <class T>
std::vector<uint8_t> bytes_of(T v) {
  std::vector<uint8_t> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

} // namespace

const ElemType* find_type(const std::string& name) {
  static const ElemType types[] = {{"u8", 1, false, false},  {"u16", 2, false, false}, {"u32", 4, false, false},
                                   {"i32", 4, false, true},  {"u64", 8, false, false}, {"i64", 8, false, true},
                                   {"f32", 4, true, true},   {"f64", 8, true, true}};
  for (const auto& t : types)
    if (t.name == name) return &t;
  return nullptr;
}

void bad_arg(size_t index, const std::string& text, const std::string& why) {
  throw InputError("--arg " + std::to_string(index) + " '" + text + "': " + why);
}

// A number as the type says; throws a one-line InputError when it does not parse or does not fit.
static std::vector<uint8_t> encode_scalar(const ElemType& t, const std::string& value, size_t index,
                                          const std::string& text) {
  auto fail = [&](const std::string& why) -> std::vector<uint8_t> { bad_arg(index, text, why); };
  if (t.is_float) {
    char* end = nullptr;
    errno = 0;
    double d = std::strtod(value.c_str(), &end);
    if (value.empty() || *end) return fail("'" + value + "' is not a number");
    return t.size == 4 ? bytes_of(float(d)) : bytes_of(d);
  }
  if (t.is_signed) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v, 10);
    if (ec != std::errc() || p != value.data() + value.size()) return fail("'" + value + "' is not an integer");
    if (t.size == 4) {
      if (v < INT32_MIN || v > INT32_MAX) return fail("out of range for i32");
      return bytes_of(int32_t(v));
    }
    return bytes_of(v);
  }
  uint64_t v = 0;
  int base = value.rfind("0x", 0) == 0 ? 16 : 10;
  const char* b = value.data() + (base == 16 ? 2 : 0);
  auto [p, ec] = std::from_chars(b, value.data() + value.size(), v, base);
  if (value.empty() || ec != std::errc() || p != value.data() + value.size())
    return fail("'" + value + "' is not an unsigned integer");
  if (t.size < 8 && v >> (8 * t.size)) return fail("out of range for " + t.name);
  std::vector<uint8_t> out(t.size);
  std::memcpy(out.data(), &v, t.size); // little-endian host
  return out;
}

std::vector<uint8_t> read_binary(const std::string& path) {
  // Not a device or a pipe: /dev/zero would be read until memory runs out.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw InputError(path + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return {s.begin(), s.end()};
}

ParsedArg parse_arg(size_t index, const std::string& text, std::mt19937_64& rng) {
  ParsedArg a;
  a.text = text;
  if (is_tensor_map_arg(text)) {
    a.tensor_map = true;
    a.tmap = parse_tensor_map_arg(index, text);
    return a;
  }
  auto colon = text.find(':');
  if (colon == std::string::npos)
    bad_arg(index, text, "expected TYPE:VALUE (u32:5, f32:1.5) or buf:TYPE:N:zero|random|file=PATH");
  std::string head = text.substr(0, colon), rest = text.substr(colon + 1);
  if (head != "buf") {
    const ElemType* t = find_type(head);
    if (!t) bad_arg(index, text, "unknown type '" + head + "' (u8, u16, u32, i32, u64, i64, f32, f64, buf)");
    a.type = t;
    a.bytes = encode_scalar(*t, rest, index, text);
    return a;
  }
  a.buffer = true;
  // buf:TYPE[:N][:zero|random|file=PATH][:out=PATH]; out= comes last, file= takes the rest up to it.
  if (auto o = rest.find(":out="); o != std::string::npos) {
    a.out = rest.substr(o + 5);
    rest = rest.substr(0, o);
    if (a.out.empty()) bad_arg(index, text, "out= needs a path");
  } else if (rest.rfind("out=", 0) == 0) {
    bad_arg(index, text, "buf needs an element type first: buf:f32:N:zero:out=PATH");
  }
  colon = rest.find(':');
  std::string type = rest.substr(0, colon);
  a.type = find_type(type);
  if (!a.type) bad_arg(index, text, "unknown element type '" + type + "' (u8, u16, u32, i32, u64, i64, f32, f64)");
  rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
  bool have_count = false;
  if (!rest.empty() && rest.rfind("file=", 0) != 0) {
    colon = rest.find(':');
    std::string n = rest.substr(0, colon);
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos) {
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), a.count);
      if (ec != std::errc() || a.count == 0 || a.count > (uint64_t(1) << 36))
        bad_arg(index, text, "element count " + n + " out of range (1 .. 2^36)");
      have_count = true;
      rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
    }
  }
  a.init = rest.empty() ? "zero" : rest;
  const size_t es = a.type->size;
  if (a.count * es > kMaxBufferBytes)
    bad_arg(index, text, std::to_string(a.count) + " elements of " + std::to_string(es) + " bytes are more than " +
                             std::to_string(kMaxBufferBytes >> 30) + " GiB");
  if (a.init.rfind("file=", 0) == 0) {
    std::string path = a.init.substr(5);
    if (path.empty()) bad_arg(index, text, "file= needs a path");
    a.bytes = read_binary(path);
    if (a.bytes.size() % es)
      bad_arg(index, text, path + " has " + std::to_string(a.bytes.size()) + " bytes, not a multiple of " +
                               std::to_string(es) + " (" + a.type->name + ")");
    uint64_t in_file = a.bytes.size() / es;
    if (!have_count) a.count = in_file;
    if (a.count == 0) bad_arg(index, text, path + " is empty");
    if (in_file > a.count)
      bad_arg(index, text, path + " holds " + std::to_string(in_file) + " elements, more than the " +
                               std::to_string(a.count) + " asked for");
    a.bytes.resize(a.count * es, 0); // a shorter file is padded with zeros
    return a;
  }
  if (!have_count) bad_arg(index, text, "buf needs an element count: buf:" + type + ":N:" + a.init);
  a.bytes.assign(a.count * es, 0);
  if (a.init == "zero") return a;
  if (a.init != "random") bad_arg(index, text, "unknown initial contents '" + a.init + "' (zero, random, file=PATH)");
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<uint32_t> integer(0, 255);
  for (uint64_t i = 0; i < a.count; ++i) {
    uint8_t* p = a.bytes.data() + i * es;
    if (a.type->is_float) {
      double d = real(rng);
      if (es == 4) {
        float f = float(d);
        if (f >= 1.0f) f = std::nextafter(1.0f, 0.0f);
        std::memcpy(p, &f, 4);
      } else {
        std::memcpy(p, &d, 8);
      }
    } else {
      uint64_t v = integer(rng);
      std::memcpy(p, &v, es);
    }
  }
  return a;
}

} // namespace isatune::cli

#include "isatune/gen/generator.h"

#include <cstring>

#include "isatune/error.h"

namespace isatune::gen {

namespace {

// Splits "a=1,b=2" words (several words and commas both separate) into key/value pairs.
std::vector<std::pair<std::string, std::string>> key_values(std::span<const std::string> words,
                                                            const char* what) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& word : words) {
    size_t start = 0;
    while (start <= word.size()) {
      size_t comma = word.find(',', start);
      if (comma == std::string::npos) comma = word.size();
      std::string item = word.substr(start, comma - start);
      start = comma + 1;
      if (item.empty()) continue;
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InputError(std::string(what) + ": '" + item + "' is not of the form name=value");
      out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

bool parse_int(const std::string& text, int64_t& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

} // namespace

Signature parse_signature(const Generator& g, std::span<const std::string> words) {
  const auto schema = g.signature_schema();
  Signature sig;
  for (const auto& f : schema) sig[f.name] = f.values.front();
  for (const auto& [k, v] : key_values(words, "--sig")) {
    const SignatureField* field = nullptr;
    std::vector<std::string> names;
    for (const auto& f : schema) {
      names.push_back(f.name);
      if (f.name == k) field = &f;
    }
    if (!field)
      throw InputError("--sig: " + g.name() + " has no signature field '" + k + "' (fields: " + join(names) + ")");
    bool ok = false;
    for (const auto& allowed : field->values) ok = ok || allowed == v;
    if (!ok)
      throw InputError("--sig: " + k + "=" + v + " is not allowed for " + g.name() + " (allowed: " +
                       join(field->values) + ")");
    sig[k] = v;
  }
  return sig;
}

Problem parse_problem(const Generator& g, std::span<const std::string> words) {
  const auto schema = g.problem_schema();
  Problem p;
  for (const auto& [k, v] : key_values(words, "--problem")) {
    const ProblemField* field = nullptr;
    std::vector<std::string> names;
    for (const auto& f : schema) {
      names.push_back(f.name);
      if (f.name == k) field = &f;
    }
    if (!field)
      throw InputError("--problem: " + g.name() + " has no problem dimension '" + k + "' (dimensions: " +
                       join(names) + ")");
    int64_t n = 0;
    if (!parse_int(v, n)) throw InputError("--problem: " + k + "=" + v + " is not an integer");
    if (n < field->min || n > field->max)
      throw InputError("--problem: " + k + "=" + v + " is outside [" + std::to_string(field->min) + ", " +
                       std::to_string(field->max) + "]");
    p[k] = n;
  }
  for (const auto& f : schema)
    if (f.required && !p.count(f.name))
      throw InputError("--problem: " + g.name() + " needs " + f.name + " (" + f.help + ")");
  return p;
}

Params params_of(const Space& space, const Config& config) {
  Params p;
  const auto& params = space.parameters();
  for (size_t i = 0; i < params.size(); ++i) p[params[i].name] = params[i].values.at(config.at(i));
  return p;
}

Config config_of(const Space& space, const Params& params) {
  const auto& ps = space.parameters();
  Config c(ps.size(), 0);
  for (size_t i = 0; i < ps.size(); ++i) {
    auto it = params.find(ps[i].name);
    if (it == params.end()) throw InputError("parameter " + ps[i].name + " has no value");
    bool found = false;
    for (size_t j = 0; j < ps[i].values.size(); ++j)
      if (ps[i].values[j] == it->second || ps[i].values[j].str() == it->second.str()) {
        c[i] = static_cast<uint32_t>(j);
        found = true;
        break;
      }
    if (!found) {
      std::vector<std::string> allowed;
      for (const auto& v : ps[i].values) allowed.push_back(v.str());
      throw InputError("parameter " + ps[i].name + "=" + it->second.str() + " is not in the space (values: " +
                       join(allowed) + ")");
    }
  }
  for (const auto& [k, v] : params) {
    bool known = false;
    for (const auto& p : ps) known = known || p.name == k;
    if (!known) {
      std::vector<std::string> names;
      for (const auto& p : ps) names.push_back(p.name);
      throw InputError("unknown parameter '" + k + "' (parameters: " + join(names) + ")");
    }
  }
  return c;
}

Params parse_params(const Space& space, std::span<const std::string> words) {
  const auto& ps = space.parameters();
  // Given values as indices; the first valid configuration that agrees with them fills the rest.
  std::vector<std::optional<uint32_t>> given(ps.size());
  for (const auto& [k, v] : key_values(words, "--param")) {
    size_t i = 0;
    while (i < ps.size() && ps[i].name != k) ++i;
    if (i == ps.size()) {
      std::vector<std::string> names;
      for (const auto& p : ps) names.push_back(p.name);
      throw InputError("--param: unknown parameter '" + k + "' (parameters: " + join(names) + ")");
    }
    std::vector<std::string> allowed;
    for (size_t j = 0; j < ps[i].values.size(); ++j) {
      allowed.push_back(ps[i].values[j].str());
      if (ps[i].values[j].str() == v) given[i] = static_cast<uint32_t>(j);
    }
    if (!given[i]) {
      // Numbers may be written differently ("64" vs "64.0").
      char* end = nullptr;
      const double d = std::strtod(v.c_str(), &end);
      if (end && *end == '\0')
        for (size_t j = 0; j < ps[i].values.size(); ++j)
          if (ps[i].values[j].is_number && ps[i].values[j].number == d) given[i] = static_cast<uint32_t>(j);
    }
    if (!given[i]) throw InputError("--param: " + k + "=" + v + " is not a value of the space (values: " + join(allowed) + ")");
  }
  for (size_t pos = 0; pos < space.size(); ++pos) {
    const Config c = space.valid_config(pos);
    bool agrees = true;
    for (size_t i = 0; i < ps.size() && agrees; ++i) agrees = !given[i] || *given[i] == c[i];
    if (agrees) return params_of(space, c);
  }
  std::string what;
  for (size_t i = 0; i < ps.size(); ++i)
    if (given[i]) what += (what.empty() ? "" : ",") + ps[i].name + "=" + ps[i].values[*given[i]].str();
  throw InputError("--param: no valid configuration has " + (what.empty() ? std::string("these values") : what) +
                   " (the constraints exclude it; see `isatune space`)");
}

std::string format(const Signature& sig) {
  std::string s;
  for (const auto& [k, v] : sig) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

std::string format(const Problem& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

std::string format(const Params& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : ",") + k + "=" + v.str();
  return s;
}

int64_t param_int(const Params& p, const std::string& name) {
  auto it = p.find(name);
  if (it == p.end()) throw InputError("parameter " + name + " has no value");
  if (!it->second.is_number) throw InputError("parameter " + name + "=" + it->second.text + " is not a number");
  return static_cast<int64_t>(it->second.number);
}

std::string param_str(const Params& p, const std::string& name) {
  auto it = p.find(name);
  if (it == p.end()) throw InputError("parameter " + name + " has no value");
  return it->second.str();
}

void KernargWriter::align(uint32_t a) {
  while (bytes_.size() % a) bytes_.push_back(0);
}

KernargWriter& KernargWriter::u32(uint32_t v) {
  align(4);
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

KernargWriter& KernargWriter::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return u32(bits);
}

KernargWriter& KernargWriter::u64(uint64_t v) {
  align(8);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return *this;
}

KernargWriter& KernargWriter::at(uint32_t offset) {
  if (bytes_.size() > offset) throw InputError("kernarg offset " + std::to_string(offset) + " is behind the end");
  bytes_.resize(offset, 0);
  return *this;
}

uint32_t KernargWriter::blank(uint32_t bytes, uint32_t a) {
  align(a);
  const uint32_t offset = uint32_t(bytes_.size());
  bytes_.resize(bytes_.size() + bytes, 0);
  return offset;
}

bool is_ptx_isa(std::string_view isa) {
  return isa.size() > 3 && isa.substr(0, 3) == "sm_";
}

} // namespace isatune::gen

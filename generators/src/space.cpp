#include "isatune/gen/space.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "isatune/error.h"

namespace isatune::gen {

std::string Value::str() const {
  if (!is_number)
    return text;
  if (number == std::floor(number) && std::fabs(number) < 1e15)
    return std::to_string(static_cast<long long>(number));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", number);
  return buf;
}

void Space::init_radix() {
  if (params_.empty())
    throw InputError("a search space needs at least one parameter");
  radix_.assign(params_.size(), 1);
  cartesian_ = 1;
  for (size_t i = params_.size(); i-- > 0;) {
    if (params_[i].values.empty())
      throw InputError("parameter '" + params_[i].name + "' has no values");
    radix_[i] = cartesian_;
    if (cartesian_ > UINT64_MAX / params_[i].values.size())
      throw InputError("search space too large");
    cartesian_ *= params_[i].values.size();
  }
}

void Space::index_valid() {
  position_.clear();
  position_.reserve(valid_.size() * 2);
  for (size_t i = 0; i < valid_.size(); ++i)
    position_.emplace(valid_[i], static_cast<uint32_t>(i));
}

Space::Space(std::vector<Parameter> params, std::vector<Constraint> constraints, uint64_t max_cartesian)
    : params_(std::move(params)) {
  init_radix();
  if (cartesian_ > max_cartesian)
    throw InputError("search space has " + std::to_string(cartesian_) +
                     " Cartesian points, more than the limit " + std::to_string(max_cartesian));
  for (uint64_t i = 0; i < cartesian_; ++i) {
    Config c = config_at(i);
    if (std::all_of(constraints.begin(), constraints.end(), [&](const Constraint& k) { return k(c); }))
      valid_.push_back(i);
  }
  index_valid();
}

Space::Space(std::vector<Parameter> params, std::vector<uint64_t> valid_indices)
    : params_(std::move(params)) {
  init_radix();
  std::sort(valid_indices.begin(), valid_indices.end());
  valid_indices.erase(std::unique(valid_indices.begin(), valid_indices.end()), valid_indices.end());
  for (uint64_t i : valid_indices)
    if (i >= cartesian_)
      throw InputError("configuration index outside the space");
  valid_ = std::move(valid_indices);
  index_valid();
}

uint64_t Space::index_of(const Config& c) const {
  uint64_t idx = 0;
  for (size_t i = 0; i < params_.size(); ++i)
    idx += radix_[i] * c[i];
  return idx;
}

Config Space::config_at(uint64_t index) const {
  Config c(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    c[i] = static_cast<uint32_t>(index / radix_[i]);
    index %= radix_[i];
  }
  return c;
}

int64_t Space::position_of(const Config& c) const {
  if (c.size() != params_.size())
    return -1;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i] >= params_[i].values.size())
      return -1;
  auto it = position_.find(index_of(c));
  return it == position_.end() ? -1 : static_cast<int64_t>(it->second);
}

std::vector<Config> Space::neighbours(const Config& c) const {
  std::vector<Config> out;
  for (size_t p = 0; p < params_.size(); ++p) {
    auto n = static_cast<uint32_t>(params_[p].values.size());
    auto try_value = [&](uint32_t v) {
      Config d = c;
      d[p] = v;
      if (is_valid(d))
        out.push_back(std::move(d));
    };
    if (params_[p].ordered) {
      if (c[p] > 0)
        try_value(c[p] - 1);
      if (c[p] + 1 < n)
        try_value(c[p] + 1);
    } else {
      for (uint32_t v = 0; v < n; ++v)
        if (v != c[p])
          try_value(v);
    }
  }
  return out;
}

std::vector<Config> Space::hamming_neighbours(const Config& c) const {
  std::vector<Config> out;
  for (size_t p = 0; p < params_.size(); ++p)
    for (uint32_t v = 0; v < params_[p].values.size(); ++v) {
      if (v == c[p])
        continue;
      Config d = c;
      d[p] = v;
      if (is_valid(d))
        out.push_back(std::move(d));
    }
  return out;
}

std::string Space::format(const Config& c) const {
  std::string s;
  for (size_t i = 0; i < params_.size(); ++i) {
    if (i)
      s += ", ";
    s += params_[i].name + "=" + params_[i].values[c[i]].str();
  }
  return s;
}

} // namespace isatune::gen

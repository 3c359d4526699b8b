#include "isatune/tune/transfer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <unordered_set>

namespace isatune::tune {

namespace {
// The source's valid entries mapped into `target`, fastest first: (entry index, configuration).
std::vector<std::pair<size_t, Config>> mapped_ok(const ReplayData& source, const Space& target, size_t k) {
  std::vector<size_t> ok;
  for (size_t i = 0; i < source.entries.size(); ++i)
    if (source.entries[i].status == Status::ok)
      ok.push_back(i);
  std::sort(ok.begin(), ok.end(),
            [&](size_t a, size_t b) { return source.entries[a].time_ms < source.entries[b].time_ms; });
  const auto& sp = source.parameters;
  const auto& tp = target.parameters();
  std::vector<std::pair<size_t, Config>> out;
  std::unordered_set<long long> taken; // target positions
  for (size_t i : ok) {
    if (out.size() >= k)
      break;
    // decode the Cartesian index (first parameter most significant)
    std::vector<size_t> sv(sp.size());
    uint64_t idx = source.indices[i];
    for (size_t p = sp.size(); p-- > 0;) {
      sv[p] = static_cast<size_t>(idx % sp[p].values.size());
      idx /= sp[p].values.size();
    }
    Config c(tp.size(), 0);
    bool mapped = true;
    for (size_t p = 0; p < tp.size() && mapped; ++p) {
      auto named = std::find_if(sp.begin(), sp.end(), [&](const Parameter& q) { return q.name == tp[p].name; });
      if (named == sp.end())
        continue; // not a parameter of the source: its first value
      const Value& v = named->values[sv[static_cast<size_t>(named - sp.begin())]];
      auto hit = std::find_if(tp[p].values.begin(), tp[p].values.end(), [&](const Value& w) {
        return w.is_number == v.is_number && (v.is_number ? w.number == v.number : w.text == v.text);
      });
      if (hit == tp[p].values.end())
        mapped = false;
      else
        c[p] = static_cast<uint32_t>(hit - tp[p].values.begin());
    }
    if (!mapped)
      continue;
    const long long pos = target.position_of(c);
    if (pos >= 0 && taken.insert(pos).second)
      out.emplace_back(i, c);
  }
  return out;
}
} // namespace

std::vector<Config> best_configs_in(const ReplayData& source, const Space& target, size_t k) {
  std::vector<Config> out;
  for (auto& [i, c] : mapped_ok(source, target, k))
    out.push_back(std::move(c));
  return out;
}

std::vector<PriorObservation> measurements_in(const ReplayData& source, const Space& target) {
  std::vector<PriorObservation> out;
  for (auto& [i, c] : mapped_ok(source, target, SIZE_MAX))
    out.push_back({std::move(c), source.entries[i].time_ms});
  return out;
}

std::vector<std::pair<size_t, long>> nearest_chain(const std::vector<std::vector<double>>& dist) {
  const size_t n = dist.size();
  std::vector<std::pair<size_t, long>> order;
  if (n == 0)
    return order;
  std::vector<char> done(n, 0);
  order.emplace_back(0, -1);
  done[0] = 1;
  while (order.size() < n) {
    double best = INFINITY;
    size_t next = n, from = 0;
    for (size_t j = 0; j < n; ++j) {
      if (done[j])
        continue;
      for (const auto& [i, src] : order)
        if (dist[i][j] < best || next == n)
          best = dist[i][j], next = j, from = i;
    }
    done[next] = 1;
    order.emplace_back(next, static_cast<long>(from));
  }
  return order;
}

size_t evaluations_to_within(const std::vector<Record>& history, double optimum_ms, double fraction) {
  for (size_t i = 0; i < history.size(); ++i)
    if (history[i].eval.status == Status::ok && history[i].eval.time_ms <= optimum_ms * (1 + fraction))
      return i + 1;
  return 0;
}

} // namespace isatune::tune

#include "isatune/tune/replay.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "isatune/error.h"

namespace isatune::tune {

size_t ReplayData::count(Status s) const {
  return static_cast<size_t>(
      std::count_if(entries.begin(), entries.end(), [&](const Evaluation& e) { return e.status == s; }));
}

ReplayData parse_replay_text(const std::string& text_in, const std::string& name) {
  std::string text = text_in;
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  bool repaired = false;
  if (doc.is_discarded()) {
    if (!repair_unclosed_json(text))
      throw InputError("'" + name + "' is not JSON and cannot be repaired");
    doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded())
      throw InputError("'" + name + "' is not JSON, even after repairing an unclosed end");
    repaired = true;
  }
  if (!doc.is_object())
    throw InputError("'" + name + "' is not a recorded tuning space");
  ReplayData d;
  try {
    if (doc.contains("cache"))
      d = read_kernel_tuner(doc);
    else if (doc.contains("results"))
      d = read_t4(doc);
    else if (doc.contains("Results"))
      d = read_ktt(doc);
    else
      throw InputError("'" + name + "': not a Kernel Tuner cache, T4 results or KTT output");
  } catch (const nlohmann::json::exception& e) {
    throw InputError("'" + name + "': " + e.what());
  } catch (const InputError& e) {
    // The readers' own messages ("unknown KTT status 'X'") do not name the file.
    if (std::string(e.what()).rfind("'" + name + "'", 0) == 0) throw;
    throw InputError("'" + name + "': " + e.what());
  }
  if (d.entries.empty())
    throw InputError("'" + name + "' holds no configurations");
  d.path = name;
  d.repaired = repaired;
  d.constraint_entries = d.count(Status::constraint);
  return d;
}

ReplayData read_replay(const std::string& path) {
  return parse_replay_text(read_maybe_gzip(path), path);
}

ReplayEvaluator::ReplayEvaluator(const ReplayData& data) : data_(data) {
  std::vector<std::pair<uint64_t, uint32_t>> keep;
  for (size_t i = 0; i < data.entries.size(); ++i)
    if (data.entries[i].status != Status::constraint)
      keep.emplace_back(data.indices[i], static_cast<uint32_t>(i));
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end(), [](auto& a, auto& b) { return a.first == b.first; }),
             keep.end());
  std::vector<uint64_t> idx;
  for (auto& k : keep) {
    idx.push_back(k.first);
    entry_of_position_.push_back(k.second);
  }
  space_ = std::make_unique<Space>(data.parameters, std::move(idx));
}

Evaluation ReplayEvaluator::evaluate(const Config& config) {
  int64_t pos = space_->position_of(config);
  if (pos < 0)
    return Evaluation{Status::constraint, 0, 0};
  return data_.entries[entry_of_position_[static_cast<size_t>(pos)]];
}

} // namespace isatune::tune

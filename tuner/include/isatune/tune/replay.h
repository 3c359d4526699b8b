#pragma once
// Recorded tuning spaces (brute-forced on real GPUs) played back as a device: the space comes from the file
// (parameters and the configurations present), each evaluation returns the recorded status and time, and
// charges the recorded compile + benchmark + verification + framework time to the budget.
//
// Readers: Kernel Tuner cache (.json or .json.gz; unclosed files from crashed runs are repaired; error
// strings in `time`; the old 1e20 convention), T4 results, KTT JSON (microseconds). Format is detected from
// content.
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "isatune/tune/evaluation.h"

namespace isatune::tune {

struct ReplayData {
  std::string path;
  std::string format; // "kernel-tuner", "t4", "ktt"
  std::string device;
  std::string kernel;
  bool repaired = false; // the file was unclosed JSON and was truncated after its last entry
  std::vector<Parameter> parameters;
  std::vector<uint64_t> indices;   // Cartesian index of each entry (in the parameters above)
  std::vector<Evaluation> entries; // same order as indices
  size_t constraint_entries = 0;   // entries recorded as constraint violations (not part of the space)

  size_t count(Status s) const;
};

// Reads any supported file (gzip detected by its magic bytes). Throws InputError.
ReplayData read_replay(const std::string& path);
ReplayData parse_replay_text(const std::string& text, const std::string& name);

// Reads a whole file, gunzipping when it starts with the gzip magic. Throws InputError.
std::string read_maybe_gzip(const std::string& path);
// Truncates JSON text after the last complete member of a second-level object and closes what is open.
// Returns false when no cut point exists.
bool repair_unclosed_json(std::string& text);

ReplayData read_kernel_tuner(const nlohmann::json& doc);
ReplayData read_t4(const nlohmann::json& doc);
ReplayData read_ktt(const nlohmann::json& doc);

class ReplayEvaluator : public Evaluator {
public:
  // The space holds every recorded configuration that is not a constraint violation.
  explicit ReplayEvaluator(const ReplayData& data);
  const Space& space() const { return *space_; }
  Evaluation evaluate(const Config& config) override;

private:
  const ReplayData& data_;
  std::unique_ptr<Space> space_;
  std::vector<uint32_t> entry_of_position_; // valid position -> entry index
};

} // namespace isatune::tune

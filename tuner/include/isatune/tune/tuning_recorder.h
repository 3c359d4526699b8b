#pragma once
// The tuning database side of a tuning job: every evaluation is committed as it finishes (code object, variant,
// one measurement per problem, all in one transaction), under a run row with start and end; and what earlier
// runs of the same job recorded (same device, generator, ISA, signature; per problem) is read back, so a rerun
// measures nothing twice.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isatune/db/database.h"
#include "isatune/loader/device.h"
#include "isatune/loader/vendor_gemm.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::tune {

struct TuningJob {
  const gen::Generator* generator = nullptr;
  std::string isa;
  gen::Signature sig;
  std::vector<gen::Problem> problems; // one or more
};

struct RecordedResult {
  Status status = Status::ok;
  std::optional<double> median_ms;
  std::string message;
};

class TuningRecorder {
public:
  // Records the device, toolchain and generator rows.
  TuningRecorder(db::Database& db, const TuningJob& job, const loader::DeviceProperties& device);

  // Canonical JSON keys of parameters and problems, as the database stores them.
  static std::string params_key(const gen::Params& p);
  static std::string problem_key(const gen::Problem& p);
  // The generator's version: a hash of what it generates for the first point of its space, so measurements of
  // a changed generator are not taken for this one's (the generators row's version_hash).
  static std::string generator_version(const TuningJob& job);
  // What this job's earlier runs recorded on this device: params key -> problem key -> the latest result.
  std::map<std::string, std::map<std::string, RecordedResult>> load_recorded();

  // The run row, with the device's physical identity and, for distributed tuning, the shard and job id.
  void start_run(const std::string& strategy, const std::string& budget, const std::string& shard = "",
                 const std::string& scheduler_job = "");
  void end_run();
  const std::string& run_guid() const { return guid_; }

  // One problem's outcome of a variant. `compiled` null: it did not compile (or was refused by the generator).
  struct Outcome {
    gen::Problem problem;
    Status status = Status::ok;
    std::string message;
    std::optional<Timing> timing;
  };
  // Commits the variant and one measurement per outcome in one transaction.
  void record(const gen::Params& params, const Compiled* compiled, const std::vector<Outcome>& outcomes);
  size_t recorded() const { return recorded_; } // measurements written by this recorder

  // The re-ranking's winner (tuner/rerank.h) for one problem of the job, under this run: the variant of
  // `params` with an ok measurement of the problem on this device. Throws InputError when there is none.
  struct RerankSummary {
    double median_ms = 0, lo_ms = 0, hi_ms = 0; // the winner's, of the job's time
    size_t candidates = 0, rounds = 0;
    bool separated = false;
    double flip_rate = 0;
  };
  void record_rerank_winner(const gen::Params& params, const gen::Problem& problem, const RerankSummary& summary);
  // The vendor library's time for one problem of the job, measured on this device (source "measured").
  void record_vendor_time(const gen::Problem& problem, const loader::VendorTiming& timing);

private:
  db::Database& db_;
  TuningJob job_;
  loader::DeviceProperties device_;
  int64_t device_id_ = 0, toolchain_id_ = 0, generator_id_ = 0;
  std::string sig_key_;
  std::string guid_;
  size_t recorded_ = 0;
};

} // namespace isatune::tune

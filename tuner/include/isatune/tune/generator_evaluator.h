#pragma once
// The evaluator of a generator's space on a device: for a configuration, compile it (generate + assemble, on
// the compile pool, ahead of time where the strategy's next requests can be guessed), prune it on the CPU before
// any device time (a point the generator refuses: constraint; a toolchain error: compile; limits read from the
// compiled code object's KernelInfo: LDS above the device's, scratch (spills), registers, an occupancy floor:
// resource), then run it on every problem of the job through a DeviceRunner (checked against the float64
// reference, then timed). The objective is the sum of the problems' median times. Every evaluation is committed
// to the tuning database as it finishes, and what earlier runs of the same job recorded is served from the
// database for free (cost 0, no device request): a rerun resumes.
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "isatune/db/database.h"
#include "isatune/tune/compile_pool.h"
#include "isatune/tune/device_runner.h"
#include "isatune/tune/evaluation.h"
#include "isatune/tune/rerank.h"
#include "isatune/tune/strategy.h"
#include "isatune/tune/tuning_recorder.h"

namespace isatune::tune {

struct ResourceLimits {
  std::optional<uint32_t> lds_bytes;  // default: the device's shared_bytes_per_workgroup
  bool allow_scratch = false;         // scratch memory means spilled registers: resource unless allowed
  std::optional<uint32_t> max_vgprs;  // registers per thread (AMD: VGPRs + AGPRs)
  uint32_t min_waves_per_simd = 0;    // occupancy floor (AMD); 0: none
};

struct GeneratorEvaluatorOptions {
  RunOptions run;
  ResourceLimits limits;
  // Watchdog per device request: timeout_s + timeout_factor x the slowest successful request so far.
  double timeout_s = 10;
  double timeout_factor = 10;
  unsigned compile_threads = std::thread::hardware_concurrency(); // 0: compile on the caller's thread only
  size_t compile_capacity = 256;
  size_t prefetch = 0; // configurations queued ahead per request; 0: 2 x compile_threads (at least 8)
  db::Database* db = nullptr; // record and resume; null: neither
  bool resume = true;         // serve what the database has for this job
  std::string strategy, budget; // for the run row
  // Distributed tuning (tuner/shard.h): the run row's shard ("I/N") and scheduler job id, and the slice of the
  // space this evaluator offers: the valid configurations at positions p with p % space_slices == space_slice.
  std::string shard, scheduler_job;
  uint32_t space_slice = 0, space_slices = 1;
};

struct EvaluationDetail {
  gen::Params params;
  Status status = Status::ok;
  double time_ms = 0;                 // sum over problems (ok only)
  std::vector<double> problem_ms;     // per problem (ok only)
  std::string message;
  bool from_db = false;               // recorded by an earlier run, not measured now
  double compile_s = 0, run_s = 0;
};

struct EvaluatorStats {
  size_t evaluated = 0;       // evaluate() calls
  size_t from_db = 0;         // served entirely from the database
  size_t pruned = 0;          // constraint, compile or resource: no device time
  size_t device_requests = 0; // runs sent to the device (one per problem)
  double compile_s = 0, device_s = 0;
  CompileStats compile;
};

// Distance between two problems of one generator: the sum of |log(a / b)| over the first one's sizes (infinite
// when a size is missing or not positive).
double problem_distance(const gen::Problem& a, const gen::Problem& b);

// What a new problem takes from a tuned one: its fastest configurations (seeds) and all its valid measurements
// (a bayes warm start), fastest first.
struct TransferSource {
  gen::Problem problem;
  double distance = std::numeric_limits<double>::infinity();
  std::vector<gen::Config> best;               // the k fastest
  std::vector<PriorObservation> measurements;  // every ok one
};

class GeneratorEvaluator : public Evaluator {
public:
  // Records the run start when options.db is set. The runner must outlive the evaluator.
  GeneratorEvaluator(TuningJob job, DeviceRunner& runner, GeneratorEvaluatorOptions options = {});
  ~GeneratorEvaluator() override;

  const gen::Space& space() const { return space_; }
  const TuningJob& job() const { return job_; }
  Evaluation evaluate(const gen::Config& config) override;
  // Ends the run row (also done by the destructor, unless an exception is unwinding: a run that failed did not
  // end, and distributed tuning counts its shard as unfinished).
  void finish();

  const EvaluationDetail* detail(const gen::Config& config) const;
  // Transfer: the `k` fastest configurations of the nearest other problem this database holds for the same
  // generator, signature and device (nearest: the smallest sum of |log(a / b)| over the problem's sizes), fastest
  // first, with that problem; empty when there is none.
  std::pair<std::vector<gen::Config>, gen::Problem> transfer_seeds(size_t k) const;
  // The same nearest problem with its measurements; best and measurements empty when there is none.
  TransferSource transfer_source(size_t k) const;
  // Times a configuration again on every problem (unchecked: it passed its check; not recorded): the sum of the
  // problems' median times, NaN when it does not run. For the final re-ranking (rerank.h).
  double remeasure(const gen::Config& config);
  // Writes the re-ranking's winner (`winner`, its RerankResult) for every problem of the job to the database, so
  // that `db best` and the loader use it rather than the fastest single median. Without a database: nothing.
  void record_rerank_winner(const gen::Config& winner, const RerankResult& result);
  // The vendor library's time (loader/vendor_gemm.h) for every problem of the job on `device` (the runner's
  // device or the same GPU opened in this process), with this evaluator's timing protocol, recorded in the
  // database when there is one. One entry per problem; an entry that is not timed() says why.
  std::vector<loader::VendorTiming> record_vendor_times(loader::Device& device);
  EvaluatorStats stats() const;
  const std::string& run_guid() const;
  size_t recorded_configurations() const { return recorded_.size(); } // in the database at the start

private:
  std::vector<gen::Params> likely_next(const gen::Config& c) const;
  std::string resource_problem(const Compiled& c) const;

  TuningJob job_;
  DeviceRunner& runner_;
  GeneratorEvaluatorOptions options_;
  gen::Space space_;
  std::unique_ptr<CompilePool> pool_;
  std::unique_ptr<TuningRecorder> recorder_;
  std::map<std::string, std::map<std::string, RecordedResult>> recorded_;
  std::map<uint64_t, EvaluationDetail> details_; // by Cartesian index
  EvaluatorStats stats_;
  double slowest_ok_s_ = 0;
  bool finished_ = false;
};

} // namespace isatune::tune

#pragma once
// Distributed tuning: which share of a tuning job one task of N takes (docs/distributed.md). The work is the
// problems of the job and, when there are fewer problems than shards, parts of each problem's space. The
// assignment is a pure function of (problem count, I, N), so every (problem, configuration) pair lands in
// exactly one shard for any N, and a resubmitted shard takes the same share again (and resumes from its
// database). I and N come from --shard I/N or from what the launcher sets: Slurm job arrays and steps,
// Kubernetes indexed jobs, mpirun.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace isatune::tune {

struct ShardSpec {
  uint32_t index = 0, count = 1;
  std::string source; // where I and N came from: "--shard", "SLURM_ARRAY_TASK_ID", ...
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// Looks an environment variable up (nullptr: unset); std::getenv by default, a map in tests.
using EnvLookup = std::function<const char*(const char*)>;
EnvLookup process_environment();

// "I/N" with 0 <= I < N. Throws InputError naming the option and the rule.
ShardSpec parse_shard(const std::string& text);

// I and N from the environment, first match wins:
//   ISATUNE_SHARD_COUNT=N with SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX: the id is the shard index itself
//     (what `isatune slurm submit` writes, so resubmitting one array id alone keeps its shard);
//   SLURM_ARRAY_TASK_ID (- SLURM_ARRAY_TASK_MIN, which need not be 0) of SLURM_ARRAY_TASK_COUNT, times
//     SLURM_NTASKS when the array task has several tasks (SLURM_PROCID);
//   SLURM_PROCID of SLURM_NTASKS (srun steps);
//   JOB_COMPLETION_INDEX (Kubernetes indexed jobs; they do not expose the count: ISATUNE_SHARD_COUNT);
//   OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE (Open MPI's mpirun).
// nullopt when none is set; InputError naming the variable when one is malformed.
std::optional<ShardSpec> shard_from_environment(const EnvLookup& env);

// The share of shard I of N of a job with `problem_count` problems. With at least N problems: problems j with
// j % N == I, each over its whole space. With fewer: every shard gets one problem, problem p the shards
// floor(p N / P) .. floor((p + 1) N / P) - 1, and each of those shards the slice (valid positions k with
// k % slices == slice) of that problem's space.
struct ShardWork {
  std::vector<size_t> problems;
  uint32_t slice = 0, slices = 1;
};
ShardWork shard_work(size_t problem_count, const ShardSpec& shard);

// The device of this task. Schedulers hide the other GPUs (CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES hold
// the physical ids, the process sees ordinals 0..k-1): a task given one GPU uses ordinal 0; a task that sees
// k GPUs uses ordinal (local rank % k), the local rank from SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK or 0.
struct TaskDevice {
  int ordinal = 0;
  std::string mask;   // "CUDA_VISIBLE_DEVICES=2", empty when no mask is set
  std::string physical; // the physical id the ordinal stands for ("2"), empty without a mask
};
TaskDevice task_device(const std::string& backend, const EnvLookup& env);

// The scheduler's id of this task for the run row ("slurm 1234_3", "k8s job-abc-2", "mpirun rank 3"), empty
// when none.
std::string scheduler_job_id(const EnvLookup& env);

} // namespace isatune::tune

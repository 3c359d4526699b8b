#include "isatune/tune/shard.h"

#include <cstdlib>
#include <sstream>

#include "isatune/error.h"

namespace isatune::tune {

namespace {

std::optional<uint64_t> env_number(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  if (!v || !*v) return std::nullopt;
  const std::string text = v;
  if (text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9)
    throw InputError(std::string(name) + "='" + text + "': expected a non-negative integer");
  return std::stoull(text);
}

ShardSpec checked(uint64_t index, uint64_t count, const std::string& source) {
  if (count == 0) throw InputError(source + ": the shard count is 0");
  if (index >= count)
    throw InputError(source + ": shard index " + std::to_string(index) + " is not below the count " +
                     std::to_string(count));
  return ShardSpec{uint32_t(index), uint32_t(count), source};
}

} // namespace

EnvLookup process_environment() {
  return [](const char* name) -> const char* { return std::getenv(name); };
}

ShardSpec parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash == std::string::npos || !digits(text.substr(0, slash)) || !digits(text.substr(slash + 1)))
    throw InputError("--shard '" + text + "': expected I/N (shard I of N, 0 <= I < N, e.g. 3/8) or auto");
  return checked(std::stoull(text.substr(0, slash)), std::stoull(text.substr(slash + 1)), "--shard " + text);
}

std::optional<ShardSpec> shard_from_environment(const EnvLookup& env) {
  const auto fixed_count = env_number(env, "ISATUNE_SHARD_COUNT");
  const auto array_id = env_number(env, "SLURM_ARRAY_TASK_ID");
  const auto k8s = env_number(env, "JOB_COMPLETION_INDEX");
  if (fixed_count && array_id) return checked(*array_id, *fixed_count, "SLURM_ARRAY_TASK_ID of ISATUNE_SHARD_COUNT");
  if (fixed_count && k8s) return checked(*k8s, *fixed_count, "JOB_COMPLETION_INDEX of ISATUNE_SHARD_COUNT");
  const auto procid = env_number(env, "SLURM_PROCID");
  const auto ntasks = env_number(env, "SLURM_NTASKS");
  if (array_id) {
    const uint64_t min = env_number(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
    const auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
    if (!count) throw InputError("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not; give --shard I/N");
    if (*array_id < min)
      throw InputError("SLURM_ARRAY_TASK_ID=" + std::to_string(*array_id) + " is below SLURM_ARRAY_TASK_MIN=" +
                       std::to_string(min));
    // Array ids may be sparse (--array=0,4,9): only a dense range maps onto 0..COUNT-1.
    if (const auto max = env_number(env, "SLURM_ARRAY_TASK_MAX"); max && *max - min + 1 != *count)
      throw InputError("the job array's ids " + std::to_string(min) + ".." + std::to_string(*max) + " are not a " +
                       "dense range of SLURM_ARRAY_TASK_COUNT=" + std::to_string(*count) +
                       " ids; give --shard I/N or ISATUNE_SHARD_COUNT=N (the array id is then the shard)");
    const uint64_t tasks = ntasks.value_or(1), rank = procid.value_or(0);
    return checked((*array_id - min) * tasks + rank, *count * tasks,
                   tasks > 1 ? "SLURM_ARRAY_TASK_ID x SLURM_NTASKS + SLURM_PROCID" : "SLURM_ARRAY_TASK_ID");
  }
  if (procid && ntasks) return checked(*procid, *ntasks, "SLURM_PROCID of SLURM_NTASKS");
  if (k8s)
    throw InputError("JOB_COMPLETION_INDEX is set (a Kubernetes indexed job) but the shard count is not: set "
                     "ISATUNE_SHARD_COUNT to the job's completions, or give --shard I/N");
  const auto rank = env_number(env, "OMPI_COMM_WORLD_RANK");
  const auto size = env_number(env, "OMPI_COMM_WORLD_SIZE");
  if (rank && size) return checked(*rank, *size, "OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE");
  return std::nullopt;
}

ShardWork shard_work(size_t problem_count, const ShardSpec& shard) {
  if (problem_count == 0) throw InputError("shard: the job has no problem");
  const uint64_t n = shard.count, i = shard.index, p = problem_count;
  ShardWork w;
  if (p >= n) {
    for (uint64_t j = i; j < p; j += n) w.problems.push_back(size_t(j));
    return w;
  }
  // Problem q owns shards [floor(q n / p), floor((q + 1) n / p)); each owns at least one since n > p.
  uint64_t q = (i * p) / n;
  while ((q + 1) * n / p <= i) ++q;
  while (q * n / p > i) --q;
  const uint64_t first = q * n / p, last = (q + 1) * n / p;
  w.problems.push_back(size_t(q));
  w.slice = uint32_t(i - first);
  w.slices = uint32_t(last - first);
  return w;
}

TaskDevice task_device(const std::string& backend, const EnvLookup& env) {
  TaskDevice d;
  const char* var = backend == "hip" ? "ROCR_VISIBLE_DEVICES" : backend == "cuda" ? "CUDA_VISIBLE_DEVICES" : nullptr;
  const char* mask = var ? env(var) : nullptr;
  // The emulator has no mask of its own; what the scheduler gave the task is still worth recording.
  if (!var)
    for (const char* v : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"})
      if (env(v) && *env(v)) {
        var = v, mask = env(v);
        break;
      }
  std::vector<std::string> ids;
  if (mask && *mask) {
    std::stringstream ss(mask);
    for (std::string id; std::getline(ss, id, ',');)
      if (!id.empty()) ids.push_back(id);
  }
  uint64_t local = 0;
  if (auto l = env_number(env, "SLURM_LOCALID")) local = *l;
  else if (auto o = env_number(env, "OMPI_COMM_WORLD_LOCAL_RANK")) local = *o;
  if (!ids.empty()) {
    d.ordinal = int(local % ids.size());
    d.physical = ids[size_t(d.ordinal)];
    d.mask = std::string(var) + "=" + mask;
  }
  return d;
}

std::string scheduler_job_id(const EnvLookup& env) {
  auto get = [&](const char* n) { const char* v = env(n); return std::string(v ? v : ""); };
  if (!get("SLURM_ARRAY_JOB_ID").empty())
    return "slurm " + get("SLURM_ARRAY_JOB_ID") + "_" + get("SLURM_ARRAY_TASK_ID") +
           (get("SLURM_PROCID").empty() ? "" : " task " + get("SLURM_PROCID"));
  if (!get("SLURM_JOB_ID").empty())
    return "slurm " + get("SLURM_JOB_ID") + (get("SLURM_PROCID").empty() ? "" : " task " + get("SLURM_PROCID"));
  if (!get("JOB_COMPLETION_INDEX").empty())
    return "k8s " + (get("HOSTNAME").empty() ? std::string("pod") : get("HOSTNAME")) + " index " +
           get("JOB_COMPLETION_INDEX");
  if (!get("OMPI_COMM_WORLD_RANK").empty()) return "mpirun rank " + get("OMPI_COMM_WORLD_RANK");
  return "";
}

} // namespace isatune::tune

// Shard assignment (tuner/shard.h): every (problem, configuration) pair in exactly one shard for any N, and I/N
// from the launchers' environment variables.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "isatune/error.h"
#include "isatune/tune/shard.h"

using namespace isatune::tune;

namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// How many shards of N cover configuration position k of problem p.
std::vector<std::vector<int>> coverage(size_t problems, size_t space, uint32_t n) {
  std::vector<std::vector<int>> covered(problems, std::vector<int>(space, 0));
  for (uint32_t i = 0; i < n; ++i) {
    const ShardWork w = shard_work(problems, ShardSpec{i, n, "test"});
    EXPECT_FALSE(w.problems.empty()) << "shard " << i << "/" << n << " has no work";
    EXPECT_LT(w.slice, w.slices);
    for (size_t p : w.problems)
      for (size_t k = w.slice; k < space; k += w.slices) covered.at(p).at(k)++;
  }
  return covered;
}

} // namespace

TEST(Shard, EveryProblemAndConfigurationIsInExactlyOneShardForAnyN) {
  std::mt19937 rng(std::random_device{}());
  for (size_t problems : {1u, 2u, 3u, 7u, 64u})
    for (uint32_t n = 1; n <= 70; ++n) {
      const size_t space = 1 + rng() % 300 + n; // at least one configuration per slice
      const auto covered = coverage(problems, space, n);
      for (size_t p = 0; p < problems; ++p)
        for (size_t k = 0; k < space; ++k)
          ASSERT_EQ(covered[p][k], 1) << "problem " << p << " configuration " << k << " with N=" << n << " and "
                                      << problems << " problems";
    }
}

TEST(Shard, SharesAreBalanced) {
  // With P >= N problems, shard sizes differ by at most one problem; with P < N, a problem's slice count by one.
  for (uint32_t n : {3u, 8u, 13u}) {
    size_t lo = SIZE_MAX, hi = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const size_t k = shard_work(41, ShardSpec{i, n, ""}).problems.size();
      lo = std::min(lo, k), hi = std::max(hi, k);
    }
    EXPECT_LE(hi - lo, 1u) << n;
  }
  std::map<size_t, uint32_t> slices;
  for (uint32_t i = 0; i < 10; ++i) {
    const auto w = shard_work(3, ShardSpec{i, 10, ""});
    slices[w.problems[0]] = w.slices;
  }
  ASSERT_EQ(slices.size(), 3u);
  for (auto& [p, s] : slices) EXPECT_TRUE(s == 3 || s == 4) << p << ": " << s;
}

TEST(Shard, ParsesTheOption) {
  const ShardSpec s = parse_shard("3/8");
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.text(), "3/8");
  for (const char* bad : {"8/8", "1/0", "x/2", "3", "-1/4", "1/4/2", ""})
    EXPECT_THROW(parse_shard(bad), isatune::InputError) << bad;
}

TEST(Shard, ReadsSlurmKubernetesAndMpirunVariables) {
  // A job array whose ids start at 5 (--array=5-8): the index counts from SLURM_ARRAY_TASK_MIN.
  auto s = shard_from_environment(env_of({{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_MIN", "5"},
                                          {"SLURM_ARRAY_TASK_MAX", "8"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "2/4");
  // Two tasks per array element: 3 elements x 2 tasks.
  s = shard_from_environment(env_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"},
                                     {"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "1"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "3/6");
  // A resubmitted single id with the count fixed by the script: the id is the shard.
  s = shard_from_environment(env_of({{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_MIN", "3"},
                                     {"SLURM_ARRAY_TASK_COUNT", "1"}, {"ISATUNE_SHARD_COUNT", "4"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "3/4");
  // Sparse ids without a fixed count cannot be mapped.
  EXPECT_THROW(shard_from_environment(env_of({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                              {"SLURM_ARRAY_TASK_MAX", "9"}, {"SLURM_ARRAY_TASK_COUNT", "3"}})),
               isatune::InputError);
  s = shard_from_environment(env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "5/6");
  s = shard_from_environment(env_of({{"JOB_COMPLETION_INDEX", "2"}, {"ISATUNE_SHARD_COUNT", "9"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "2/9");
  EXPECT_THROW(shard_from_environment(env_of({{"JOB_COMPLETION_INDEX", "2"}})), isatune::InputError);
  s = shard_from_environment(env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->text(), "1/2");
  EXPECT_FALSE(shard_from_environment(env_of({{"HOME", "/root"}})));
  EXPECT_THROW(shard_from_environment(env_of({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}})), isatune::InputError);
  EXPECT_THROW(shard_from_environment(env_of({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "2"}})), isatune::InputError);
}

TEST(Shard, OneDevicePerTaskFromTheVisibleDevices) {
  // One GPU given: ordinal 0 is physical GPU 2.
  auto d = task_device("cuda", env_of({{"CUDA_VISIBLE_DEVICES", "2"}}));
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_EQ(d.physical, "2");
  EXPECT_EQ(d.mask, "CUDA_VISIBLE_DEVICES=2");
  // Four visible, local rank 3: the fourth.
  d = task_device("hip", env_of({{"ROCR_VISIBLE_DEVICES", "4,5,6,7"}, {"SLURM_LOCALID", "3"},
                                 {"CUDA_VISIBLE_DEVICES", "0"}}));
  EXPECT_EQ(d.ordinal, 3);
  EXPECT_EQ(d.physical, "7");
  d = task_device("cuda", env_of({{"CUDA_VISIBLE_DEVICES", "0,1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}));
  EXPECT_EQ(d.ordinal, 1);
  // The emulator records what the scheduler gave the task.
  d = task_device("emu", env_of({{"CUDA_VISIBLE_DEVICES", "1"}}));
  EXPECT_EQ(d.mask, "CUDA_VISIBLE_DEVICES=1");
  d = task_device("cuda", env_of({}));
  EXPECT_EQ(d.ordinal, 0);
  EXPECT_TRUE(d.mask.empty());
  EXPECT_EQ(scheduler_job_id(env_of({{"SLURM_ARRAY_JOB_ID", "12"}, {"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_JOB_ID", "15"}})),
            "slurm 12_3");
  EXPECT_EQ(scheduler_job_id(env_of({{"OMPI_COMM_WORLD_RANK", "2"}})), "mpirun rank 2");
  EXPECT_EQ(scheduler_job_id(env_of({})), "");
}

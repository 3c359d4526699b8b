// NVIDIA occupancy against hand-computed cuda_occupancy.h results.
#include <gtest/gtest.h>

#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/error.h"

using namespace isatune::codeobj;

TEST(NvidiaOccupancy, RegistersLimitAWarpSpecializedKernel) {
  // 168 registers x 384 threads on sm_90: 5376 registers per warp, 3 warps per sub-partition, 12 per SM.
  auto o = nvidia_occupancy(nvidia_sm_limits("sm_90a"), 168, 0, 384);
  EXPECT_EQ(o.by_registers, 1u);
  EXPECT_EQ(o.blocks_per_sm, 1u);
  EXPECT_EQ(o.warps_per_sm, 12u);
  EXPECT_EQ(o.limiter, "registers");
}

TEST(NvidiaOccupancy, FullOccupancyAndSharedMemoryLimit) {
  auto full = nvidia_occupancy(nvidia_sm_limits("sm_80"), 32, 0, 256);
  EXPECT_EQ(full.blocks_per_sm, 8u);
  EXPECT_DOUBLE_EQ(full.occupancy, 1.0);
  EXPECT_EQ(full.limiter, "threads");
  // 48 KB + 1 KB reserved per block against 164 KB.
  auto smem = nvidia_occupancy(nvidia_sm_limits("sm_80"), 32, 48 * 1024, 256);
  EXPECT_EQ(smem.by_shared, 3u);
  EXPECT_EQ(smem.blocks_per_sm, 3u);
  EXPECT_EQ(smem.limiter, "shared");
  // Beyond the opt-in maximum nothing fits.
  EXPECT_EQ(nvidia_occupancy(nvidia_sm_limits("sm_90"), 32, 228 * 1024, 128).blocks_per_sm, 0u);
  // 256 registers per thread is above the 255 limit.
  EXPECT_EQ(nvidia_occupancy(nvidia_sm_limits("sm_90"), 256, 0, 128).blocks_per_sm, 0u);
  EXPECT_THROW(nvidia_sm_limits("sm_75"), isatune::InputError);
}

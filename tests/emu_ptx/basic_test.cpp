// First end-to-end checks: a vector add over a ragged size, and the kernel information from the parameters.
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

const char* kVecAdd = R"(
.visible .entry vadd(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pb];
  ld.param.u64 %rd3, [pc];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.u32 %p1, %r5, %r1;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd4, %r5, 4;
  add.s64 %rd5, %rd1, %rd4;
  add.s64 %rd6, %rd2, %rd4;
  add.s64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.global.f32 %f2, [%rd6];
  add.f32 %f3, %f1, %f2;
  st.global.f32 [%rd7], %f3;
DONE:
  ret;
}
)";

TEST(EmuPtxBasic, VectorAddRaggedSize) {
  Runner r;
  r.load(header() + kVecAdd);
  const uint32_t n = 1000 + rand_u32() % 3000;
  std::vector<float> a(n), b(n);
  for (auto& x : a)
    x = rand_float();
  for (auto& x : b)
    x = rand_float();
  uint64_t pa = r.upload(a), pb = r.upload(b), pc = r.upload(std::vector<float>(n));
  const uint32_t block = 128;
  r.launch("vadd", {(n + block - 1) / block, 1, 1}, {block, 1, 1},
           Runner::Args().add(pa).add(pb).add(pc).add(n));
  auto c = r.download<float>(pc, n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << i;
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  EXPECT_EQ(r.dev->last_launch().ctas, (n + block - 1) / block);
  EXPECT_GT(r.dev->last_launch().estimated_ms, 0);
}

TEST(EmuPtxBasic, KernelInfoFromParams) {
  auto code = eptx::ptx_code_object(header() + kVecAdd);
  ASSERT_EQ(code.kernels.size(), 1u);
  const auto& k = code.kernels[0];
  EXPECT_EQ(k.name, "vadd");
  EXPECT_EQ(k.kernarg_size, 28u);
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[3].offset, 24u);
  EXPECT_EQ(k.args[3].size, 4u);
  EXPECT_EQ(k.wave_size, 32u);
  EXPECT_EQ(code.format, isatune::CodeFormat::ptx);
}

} // namespace

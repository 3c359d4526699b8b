// PTX emulator throughput: thread instructions per second of host time on scalar code (integer and f32
// arithmetic, compare, branch), on a tensor-core loop (ldmatrix + mma.sync) and on a wgmma loop (m64n128k16
// bf16 -> f32 from shared memory + commit + wait), on one host thread and on all of them. Reported counters:
// thread_inst/s (and mma/s: warp-level mma.sync per second; wgmma/s: warpgroup mma_async per second).
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "isatune/emu/ptx/device.h"

namespace {

namespace eptx = isatune::emu::ptx;

const char* kLoop = R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry loop(.param .u64 out, .param .u32 iters)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  ld.param.u32 %r4, [iters];
  mov.u32 %r3, 0;
  cvt.rn.f32.u32 %f1, %r1;
  mov.f32 %f2, 0f3F7FF000;
  mov.f32 %f3, 0f3C000000;
LOOP:
  mad.lo.u32 %r1, %r1, 1664525, 1013904223;
  xor.b32 %r2, %r2, %r1;
  shr.u32 %r5, %r2, 7;
  fma.rn.f32 %f1, %f1, %f2, %f3;
  add.u32 %r2, %r2, %r5;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, %r4;
  @%p1 bra LOOP;
  mov.b32 %r6, %f1;
  xor.b32 %r2, %r2, %r6;
  ld.param.u64 %rd1, [out];
  mov.u32 %r7, %tid.x;
  mul.wide.u32 %rd2, %r7, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";

void BM_ScalarLoop(benchmark::State& state) {
  eptx::PtxEmuOptions o;
  o.threads = unsigned(state.range(0));
  auto dev = eptx::make_ptx_emu_device(o);
  auto module = dev->load(eptx::ptx_code_object(kLoop));
  auto f = module->function("loop");
  const uint32_t block = 256, grid = 64, iters = 200;
  uint64_t out = dev->alloc(block * 4);
  std::vector<uint8_t> args(12);
  std::memcpy(args.data(), &out, 8);
  std::memcpy(args.data() + 8, &iters, 4);
  isatune::loader::LaunchConfig c;
  c.grid = {grid, 1, 1};
  c.block = {block, 1, 1};
  uint64_t thread_inst = 0;
  double host = 0;
  for (auto _ : state) {
    dev->launch(*f, c, args);
    thread_inst += dev->last_launch().thread_instructions;
    host += dev->last_launch().host_seconds;
  }
  state.counters["thread_inst/s"] = benchmark::Counter(double(thread_inst) / host);
  state.counters["thread_inst/s/core"] = benchmark::Counter(double(thread_inst) / host / double(o.threads));
}
BENCHMARK(BM_ScalarLoop)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Per iteration and warp: ldmatrix.x4 (A), ldmatrix.x2.trans (B), mma.sync.m16n8k16 bf16 -> f32, and the
// loop's add/setp/bra. The 1 KiB shared tile is written once, before a barrier.
const char* kMma = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry mma_loop(.param .u64 out, .param .u32 iters)
{
  .reg .pred %p<2>;
  .reg .b32 %r<16>, %a<4>, %b<2>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b8 tile[1024];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 31;
  mov.u32 %r8, tile;
  shl.b32 %r3, %r1, 3;
  add.u32 %r9, %r8, %r3;
  mad.lo.u32 %r4, %r1, 1664525, 1013904223;
  and.b32 %r4, %r4, 0x3f7f3f7f;
  st.shared.v2.b32 [%r9], {%r4, %r4};
  bar.sync 0;
  shl.b32 %r5, %r2, 4;
  add.u32 %r10, %r8, %r5;
  add.u32 %r11, %r10, 512;
  ld.param.u32 %r6, [iters];
  mov.u32 %r7, 0;
  mov.f32 %f0, 0f00000000;
  mov.f32 %f1, 0f00000000;
  mov.f32 %f2, 0f00000000;
  mov.f32 %f3, 0f00000000;
LOOP:
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%a0, %a1, %a2, %a3}, [%r10];
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%b0, %b1}, [%r11];
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0, %f1, %f2, %f3}, {%a0, %a1, %a2, %a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3};
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p1, %r7, %r6;
  @%p1 bra LOOP;
  add.f32 %f0, %f0, %f1;
  add.f32 %f2, %f2, %f3;
  add.f32 %f0, %f0, %f2;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f32 [%rd3], %f0;
  ret;
}
)";

// Runs `kernel(out, iters)` of `ptx` on grid x block threads per benchmark iteration; reports thread
// instructions per second and `ops_per_cta` x CTAs per second as counter `op`.
void run_loop(benchmark::State& state, const std::string& ptx, const char* kernel, const char* target,
              uint32_t grid, uint32_t block, uint32_t iters, uint64_t ops_per_cta, const char* op) {
  eptx::PtxEmuOptions o;
  o.target = target;
  o.threads = unsigned(state.range(0));
  auto dev = eptx::make_ptx_emu_device(o);
  auto module = dev->load(eptx::ptx_code_object(ptx));
  auto f = module->function(kernel);
  uint64_t out = dev->alloc(block * 4);
  std::vector<uint8_t> args(12);
  std::memcpy(args.data(), &out, 8);
  std::memcpy(args.data() + 8, &iters, 4);
  isatune::loader::LaunchConfig c;
  c.grid = {grid, 1, 1};
  c.block = {block, 1, 1};
  uint64_t thread_inst = 0, ops = 0;
  double host = 0;
  for (auto _ : state) {
    dev->launch(*f, c, args);
    if (!dev->reports().empty())
      state.SkipWithError("the benchmark kernel has hazard reports");
    thread_inst += dev->last_launch().thread_instructions;
    host += dev->last_launch().host_seconds;
    ops += uint64_t(grid) * ops_per_cta;
  }
  state.counters["thread_inst/s"] = benchmark::Counter(double(thread_inst) / host);
  state.counters["thread_inst/s/core"] = benchmark::Counter(double(thread_inst) / host / double(o.threads));
  state.counters[op] = benchmark::Counter(double(ops) / host);
}

void BM_MmaLoop(benchmark::State& state) {
  const uint32_t block = 128, iters = 200; // 4 warps, one mma.sync each per iteration
  run_loop(state, kMma, "mma_loop", "sm_80", 64, block, iters, uint64_t(block / 32) * iters, "mma/s");
}
BENCHMARK(BM_MmaLoop)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// One warpgroup per CTA: fills A (64x16) and B (128x16) bf16 tiles, K-major with the 128B swizzle (the nvcc
// fixture's descriptors), then `iters` times wgmma.fence + mma_async m64n128k16 + commit + wait_group 0.
std::string wgmma_loop() {
  std::string d;
  for (int i = 0; i < 64; ++i)
    d += (i ? ", %d" : "%d") + std::to_string(i);
  return R"(
.version 8.0
.target sm_90a
.address_size 64
.visible .entry wg(.param .u64 out, .param .u32 iters)
{
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .f32 %d<64>;
  .reg .b64 %rd<8>;
  .shared .align 1024 .b8 smem[24576];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, smem;
  shl.b32 %r3, %r1, 4;
  add.s32 %r3, %r3, %r2;
  add.s32 %r4, %r2, 24576;
  mov.u32 %r5, 0x3b803b80;
FILL:
  st.shared.v4.b32 [%r3], {%r5, %r5, %r5, %r5};
  add.s32 %r3, %r3, 2048;
  setp.lt.u32 %p1, %r3, %r4;
  @%p1 bra FILL;
  fence.proxy.async.shared::cta;
  bar.sync 0;
  cvt.u64.u32 %rd1, %r2;
  shr.u64 %rd1, %rd1, 4;
  or.b64 %rd2, %rd1, 0x4000004000000000;
  add.s64 %rd3, %rd2, 512;
  ld.param.u32 %r6, [iters];
  mov.u32 %r7, 0;
LOOP:
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {)" +
         d + R"(}, %rd2, %rd3, 1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  add.u32 %r7, %r7, 1;
  setp.lt.u32 %p1, %r7, %r6;
  @%p1 bra LOOP;
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd4, %rd4, %rd5;
  st.global.f32 [%rd4], %d0;
  ret;
}
)";
}

void BM_WgmmaLoop(benchmark::State& state) {
  const uint32_t iters = 32; // one warpgroup, one mma_async per iteration
  run_loop(state, wgmma_loop(), "wg", "sm_90a", 16, 128, iters, iters, "wgmma/s");
}
BENCHMARK(BM_WgmmaLoop)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();

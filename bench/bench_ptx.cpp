// PTX -> cubin for a generated mma.sync GEMM-sized kernel: nvJitLink in process vs the ptxas program, and a
// cache hit. The PTX is generated here as text (bench links no isatune_ptx): a 128x128x32 block tile, 8 warps,
// each warp 64x32 (4x4 m16n8k16 bf16 mma per k16 step, 64 f32 accumulators), cp.async double buffering, K loop.
#include <benchmark/benchmark.h>

#include <string>

#include "isatune/toolchain/ptx_cache.h"
#include "isatune/toolchain/ptx_compiler.h"

using namespace isatune::toolchain;

namespace {

std::string gemm_ptx() {
  std::string s = ".version 7.0\n.target sm_80\n.address_size 64\n\n"
                  ".visible .entry gemm(.param .u64 pA, .param .u64 pB, .param .u64 pC, .param .u32 K)\n"
                  ".maxntid 256, 1, 1\n{\n"
                  "  .reg .pred %p<4>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<80>;\n"
                  "  .shared .align 128 .b8 sA[16384];\n  .shared .align 128 .b8 sB[16384];\n";
  s += "  ld.param.u64 %rd1, [pA];\n  ld.param.u64 %rd2, [pB];\n  ld.param.u64 %rd3, [pC];\n  ld.param.u32 %r1, [K];\n"
       "  cvta.to.global.u64 %rd1, %rd1;\n  cvta.to.global.u64 %rd2, %rd2;\n  cvta.to.global.u64 %rd3, %rd3;\n"
       "  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, sA;\n  mov.u32 %r4, sB;\n  shl.b32 %r5, %r2, 4;\n"
       "  add.u32 %r6, %r3, %r5;\n  add.u32 %r7, %r4, %r5;\n  mul.wide.u32 %rd4, %r5, 1;\n"
       "  add.u64 %rd5, %rd1, %rd4;\n  add.u64 %rd6, %rd2, %rd4;\n";
  for (int i = 0; i < 64; ++i) s += "  mov.f32 %f" + std::to_string(i) + ", 0f00000000;\n";
  s += "  mov.u32 %r8, 0;\nLOOP:\n";
  for (int i = 0; i < 4; ++i) {
    const std::string off = std::to_string(i * 4096);
    s += "  cp.async.cg.shared.global [%r6+" + off + "], [%rd5+" + off + "], 16;\n";
    s += "  cp.async.cg.shared.global [%r7+" + off + "], [%rd6+" + off + "], 16;\n";
  }
  s += "  cp.async.commit_group;\n  cp.async.wait_group 0;\n  bar.sync 0;\n";
  for (int k16 = 0; k16 < 2; ++k16) {
    for (int m = 0; m < 4; ++m) {
      const int a = 16 + m * 4;
      s += "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r" + std::to_string(a) + ", %r" + std::to_string(a + 1) +
           ", %r" + std::to_string(a + 2) + ", %r" + std::to_string(a + 3) + "}, [%r6+" +
           std::to_string(k16 * 32 + m * 1024) + "];\n";
    }
    for (int n = 0; n < 4; ++n) {
      const int b = 40 + n * 2;
      s += "  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r" + std::to_string(b) + ", %r" + std::to_string(b + 1) +
           "}, [%r7+" + std::to_string(k16 * 512 + n * 16) + "];\n";
    }
    for (int m = 0; m < 4; ++m)
      for (int n = 0; n < 4; ++n) {
        const int a = 16 + m * 4, b = 40 + n * 2, c = (m * 4 + n) * 4;
        auto f = [](int i) { return "%f" + std::to_string(i); };
        auto r = [](int i) { return "%r" + std::to_string(i); };
        const std::string acc = "{" + f(c) + ", " + f(c + 1) + ", " + f(c + 2) + ", " + f(c + 3) + "}";
        s += "  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 " + acc + ", {" + r(a) + ", " + r(a + 1) + ", " +
             r(a + 2) + ", " + r(a + 3) + "}, {" + r(b) + ", " + r(b + 1) + "}, " + acc + ";\n";
      }
  }
  s += "  bar.sync 0;\n  add.u64 %rd5, %rd5, 64;\n  add.u64 %rd6, %rd6, 64;\n  add.u32 %r8, %r8, 32;\n"
       "  setp.lt.u32 %p1, %r8, %r1;\n  @%p1 bra LOOP;\n";
  s += "  mul.wide.u32 %rd7, %r2, 256;\n  add.u64 %rd8, %rd3, %rd7;\n";
  for (int i = 0; i < 64; i += 4)
    s += "  st.global.v4.f32 [%rd8+" + std::to_string(i * 4) + "], {%f" + std::to_string(i) + ", %f" +
         std::to_string(i + 1) + ", %f" + std::to_string(i + 2) + ", %f" + std::to_string(i + 3) + "};\n";
  s += "  ret;\n}\n";
  return s;
}

void compile_with(benchmark::State& state, PtxBackend backend) {
  const std::string why = ptx_backend_unavailable_reason(backend);
  if (!why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::string ptx = gemm_ptx();
  PtxCompileOptions o;
  o.target = state.range(0) == 80 ? "sm_80" : "sm_90a";
  o.backend = backend;
  uint32_t regs = 0;
  for (auto _ : state) {
    PtxCompiled c = compile_ptx(ptx, o);
    regs = c.code.kernels.at(0).vgprs;
    benchmark::DoNotOptimize(c.code.bytes.data());
  }
  state.counters["registers"] = regs;
  state.counters["ptx_bytes"] = double(ptx.size());
}

void BM_PtxNvJitLink(benchmark::State& state) { compile_with(state, PtxBackend::nvjitlink); }
void BM_PtxPtxasProgram(benchmark::State& state) { compile_with(state, PtxBackend::ptxas); }

void BM_PtxCacheHit(benchmark::State& state) {
  const std::string why = ptx_backend_unavailable_reason(PtxBackend::automatic);
  if (!why.empty()) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::string ptx = gemm_ptx();
  PtxCompileOptions o;
  o.target = "sm_90a";
  PtxCompileCache cache;
  cache.compile(ptx, o);
  for (auto _ : state) benchmark::DoNotOptimize(cache.compile(ptx, o).get());
  state.counters["hits"] = double(cache.hits());
}

} // namespace

BENCHMARK(BM_PtxNvJitLink)->Arg(80)->Arg(90)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_PtxPtxasProgram)->Arg(80)->Arg(90)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_PtxCacheHit)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();

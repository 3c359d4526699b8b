#pragma once
// PTX emission of the mma.sync GEMM (sm_80, and sm_90 as the portable path): a cp.async multi-stage pipeline
// from global to (optionally XOR-swizzled) shared memory, ldmatrix fragments, mma.sync.m16n8k16 with f32
// accumulation, warp tiling, an alpha/beta epilogue with predicated stores, and split-K through the f32
// workspace with a second (reduce) kernel. Fragment layouts: shared/notes/ptx.md section 3.
#include <string>

#include "gemm_params.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::gemm {

struct Sm80Config {
  int tile_m = 64, tile_n = 64, tile_k = 32;
  int warps_m = 2, warps_n = 2;
  int stages = 3;
  bool swizzle = true;
  int split_k = 1;
};

// What the configuration implies: per-warp tiles, registers, shared memory.
struct Sm80Plan {
  int threads = 0;
  int warp_m = 0, warp_n = 0; // warp tile
  int mma_m = 0, mma_n = 0;   // m16n8 tiles per warp
  int accumulators = 0;       // f32 registers per thread
  int fragments = 0;          // A and B fragment registers per thread
  int est_registers = 0;      // accumulators + fragments + addressing and epilogue estimate
  int a_tile_bytes = 0, b_tile_bytes = 0, stage_bytes = 0, shared_bytes = 0;
};

// Kernel arguments of the main kernel, in order (launches() packs the same).
//   A, B, C, D, W: u64; M, N, K, lda, ldb, ldc, ldd: u32; alpha, beta: f32; fast_a, fast_b (the copy path
//   per operand: 2 = 16-byte cp.async, 1 = 4-byte cp.async, 0 = element by element), tiles_m, kchunk: u32
// Reduce kernel (split_k > 1): W, C, D: u64; M, N, ldc, ldd, split: u32; alpha, beta: f32.
constexpr int kSm80ReduceThreads = 256;
constexpr int kSm80MaxAccumulators = 128;
constexpr int kSm80MaxRegisters = 255;
constexpr int kSm80MaxThreads = 256;

std::vector<Parameter> sm80_parameters();
Sm80Config sm80_decode(const Params& p);
Sm80Plan sm80_plan(const Sm80Config& c);
// Shared memory per CTA the target allows with opt-in: 163 KiB (sm_80), 227 KiB (sm_90).
int sm80_shared_limit(const std::string& isa);
// Empty when valid, else the first broken rule.
std::string sm80_why_invalid(const std::string& isa, const Sm80Config& c);

std::string sm80_kernel_name(const GemmSig& sig, const Sm80Config& c);
std::string sm80_reduce_kernel_name(const GemmSig& sig, const Sm80Config& c);
// The PTX module text: the main kernel, plus the reduce kernel when split_k > 1.
std::string emit_sm80_module(const std::string& isa, const GemmSig& sig, const Sm80Config& c);

} // namespace isatune::gen::gemm

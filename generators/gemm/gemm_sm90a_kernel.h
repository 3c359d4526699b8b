#pragma once
// The sm_90a GEMM kernel (wgmma + TMA, warp-specialised; shared/notes/ptx.md section 4): its configuration,
// the plan derived from it (threads, shared-memory layout, register split, descriptors) and the PTX emission.
// Shared by the backend's constraints (gemm_sm90a.cpp) and the emission, so every valid point generates.
//
//   warpgroup 0        producer: setmaxnreg.dec, one thread issues the TMA loads of A and B (2D tensor maps,
//                      128B swizzle, OOB zero fill) into a ring of `stages` stages guarded by full/empty
//                      mbarriers.
//   warpgroups 1..c    consumers: setmaxnreg.inc, each owns tile_m / c rows of the CTA tile, issues
//                      wgmma.mma_async m64nNk16 (N = tile_n) from swizzled shared-memory descriptors, f32
//                      accumulators, keeps one wgmma group in flight, and stores alpha*acc + beta*C directly.
// Layouts: an operand whose K is the stored contiguous dimension (A 'T', B 'N') is K-major (imm-trans 0,
// boxes {64 k, rows}); otherwise MN-major (imm-trans 1, boxes {64 mn, 64 k}, one per 64 rows).
// Tiles are visited in grouped raster order; a persistent grid loops over them.
#include <cstdint>
#include <string>

#include "gemm_params.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::gemm {

struct Sm90aConfig {
  int tile_m = 128, tile_n = 128, tile_k = 64;
  int stages = 4;
  int consumers = 2;
  int producer_regs = 40, consumer_regs = 232; // setmaxnreg counts
  bool persistent = false;
  int group_m = 8; // tiles of M per group in the grouped raster order (1: row by row)
  int cluster = 1; // CTAs per cluster along M sharing B through TMA multicast
  bool tma = true; // producer: TMA tensor loads (lda, ldb multiples of 8), or ld.global + st.shared (any)
  bool tma_store = false; // epilogue: staged in shared memory and stored with TMA (ldd * cd bytes % 16 == 0)
  DType cd = DType::f32;  // the output type (the staging size)
  int in_bytes = 2;       // A and B element bytes: 2 (f16, bf16) or 1 (fp8_e4m3, fp8_e5m2)
  bool tn_layout = false; // layout TN: both operands K-major in memory
};

// Derived numbers (the constraints and the emission read the same ones).
struct Sm90aPlan {
  int threads = 384;          // 128 per warpgroup
  int rows_per_consumer = 64; // tile_m / consumers
  int subtiles = 1;           // m64 wgmma blocks per consumer
  int accumulators = 64;      // f32 registers per consumer thread
  uint32_t a_stage_bytes = 0, b_stage_bytes = 0, stage_bytes = 0;
  uint32_t barrier_offset = 0;                    // full[s] then empty[s], 8 bytes each, after the stages
  uint32_t staging_offset = 0, staging_bytes = 0; // TMA-store epilogue: per consumer, after the barriers
  uint32_t dynamic_shared_bytes = 0; // + 1024 slack: the base is rounded up to the 128B swizzle repeat
  uint32_t tx_bytes = 0; // bytes TMA writes per stage (whole boxes, out-of-bound elements included)
  int entry_regs = 168;  // .maxnreg at entry: threads * entry_regs <= 65536
};

// Registers a consumer thread needs besides its accumulators (descriptors, addresses, loop state, epilogue):
// ptxas 13.0 spills a 128x192 tile in one consumer (192 accumulators) under 232 registers, not 128 + 56.
constexpr int kSm90aConsumerOverheadRegs = 56;
// The shared memory one CTA may use on sm_90 (227 KiB opt-in).
constexpr uint32_t kSm90aMaxSharedBytes = 227 * 1024;
// Columns of D per TMA store of the TMA-store epilogue (a 64 x 32 box).
constexpr int kSm90aStoreColumns = 32;
// SMs of an H100/H200: the persistent grid size.
constexpr int kSm90aPersistentCtas = 132;

// InputError naming a missing or malformed parameter.
Sm90aConfig decode_sm90a(const Params& p, const GemmSig& sig);
Sm90aPlan plan_sm90a(const Sm90aConfig& c);
// "" when valid, else the rule the point breaks (the constraint descriptions' words).
std::string why_invalid_sm90a(const Sm90aConfig& c);
std::string sm90a_kernel_name(const GemmSig& s, const Sm90aConfig& c);
// The PTX module text of one kernel.
std::string emit_sm90a_gemm(const GemmSig& s, const Sm90aConfig& c);

} // namespace isatune::gen::gemm

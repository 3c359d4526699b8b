#pragma once
// The PTX row kernels (softmax, rmsnorm, layernorm) for sm_80 / sm_90a: the parameters of one point, their
// constraints and the emitter (docs/row-kernels.md, "NVIDIA (PTX)").
#include <cstdint>
#include <string>

#include "isatune/gen/generator.h"
#include "row_common.h"

namespace isatune::gen::rows {

// How a row that does not stay in registers is re-read: from global memory (none), or staged once into shared
// memory: by cp.async (each thread copies and later reads back its own chunks), or (sm_90a) by one
// cp.async.bulk of the row's 16-byte aligned middle completing on an mbarrier, the ragged head and tail
// copied by threads.
enum class RowStaging { none, cp_async, bulk };

struct RowPtxParams {
  DType dtype = DType::f32;
  int vec = 1;           // elements per thread per load (vec * size = 4, 8 or 16 bytes)
  int rows_per_cta = 1;  // rows a CTA processes, one warp group each
  int warps_per_row = 1; // warps sharing a row (cross-warp reduction through shared memory when > 1)
  int chunks = 1;        // loads per thread per step: in flight per loop iteration, or the resident capacity
  bool resident = false; // hold the row in registers when N <= 32 * warps_per_row * vec * chunks
  RowStaging staging = RowStaging::none;
};

// Shared memory a CTA may use to stage its rows (48 KiB: no opt-in needed on any target).
constexpr uint32_t kRowStageLimit = 48 * 1024;

int threads_per_cta(const RowPtxParams& p);
// Upper estimate of the 32-bit registers per thread: 32 + 2 per value in flight (measured with ptxas 13.0).
int ptx_register_estimate(RowOp op, const RowPtxParams& p);
// The constraints on one point; `why` gets the first broken rule.
bool ptx_row_valid(RowOp op, const RowPtxParams& p, std::string* why = nullptr);
// Bytes of one staged row in shared memory (N elements rounded up to 16 bytes, + 16 for bulk: the row keeps
// its global address modulo 16 there) and the dynamic shared memory a launch needs (0 when the point does not
// stage or the CTA's rows do not fit kRowStageLimit).
uint32_t ptx_stage_row_bytes(const RowPtxParams& p, int64_t n);
uint32_t ptx_stage_cta_bytes(const RowPtxParams& p, int64_t n);
// Static shared bytes of the cross-warp reductions.
uint32_t ptx_reduction_bytes(RowOp op, const RowPtxParams& p);
const char* staging_name(RowStaging s); // "none", "cp.async", "tma-bulk"

std::string ptx_row_kernel_name(RowOp op, const RowPtxParams& p);
// The PTX module text of one valid point (InputError for an invalid one).
std::string emit_row_ptx(RowOp op, const std::string& isa, const RowPtxParams& p);

} // namespace isatune::gen::rows

#pragma once
// Shared parts of the memory-bound row kernels (softmax, rmsnorm, layernorm; docs/row-kernels.md): the
// parameters and their space, the kernel emitter (row addressing, vector loads with masked ragged tails,
// register-resident and looped forms, wave and workgroup reductions) and the Generator plumbing (schemas,
// buffers, launches). Each family file adds its description and float64 reference.
#include <cstdint>
#include <string>
#include <vector>

#include "isatune/cdna/kernel.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::rows {

enum class RowOp { softmax, rmsnorm, layernorm };
class RowPtxBackend; // row_ptx_backend.h

// One point of a row kernel's space.
struct RowParams {
  DType dtype = DType::f32;
  int vec = 1;           // elements per lane per load (one dword-multiple load: 4, 8 or 16 bytes)
  int rows_per_wg = 1;   // rows a workgroup processes (one wave group each)
  int waves_per_row = 1; // waves sharing a row (cross-wave reduction through LDS)
  int unroll = 1;        // chunks (loads) per group: loads in flight in the looped form and the output phase
  int row_chunk = 0;     // elements per lane held in registers (0: always looped)
};

// Upper bound of the arch VGPRs a variant uses (checked against the emitted kernel by the tests).
int vgpr_estimate(RowOp op, const RowParams& p);
// The space for a dtype: vec, rows_per_wg, waves_per_row, unroll, row_chunk with the constraints.
Space row_space(RowOp op, DType dtype);
RowParams row_params(DType dtype, const Params& params);
bool row_valid(RowOp op, const RowParams& p); // the constraints, on one point

// Emits the kernel (waits inserted). Throws InputError for an invalid point.
cdna::Kernel emit_row_kernel(RowOp op, const std::string& isa, const RowParams& p, const std::string& name);

// The Generator implementation shared by the three families.
class RowGenerator : public Generator {
public:
  explicit RowGenerator(RowOp op) : op_(op) {}
  std::string name() const override;
  std::vector<std::string> targets() const override; // CDNA, then the PTX backends' (row_ptx_backend.h)
  std::vector<SignatureField> signature_schema() const override;
  std::vector<ProblemField> problem_schema() const override;
  Space space(const std::string& isa, const Signature& sig) const override;
  std::vector<std::string> constraint_descriptions(const std::string& isa, const Signature& sig) const override;
  Generated generate(const std::string& isa, const Signature& sig, const Params& params) const override;
  std::vector<BufferSpec> buffers(const Signature& sig, const Problem& problem) const override;
  std::map<std::string, std::pair<double, double>> scalars(const Signature&) const override;
  std::vector<Launch> launches(const std::string& isa, const Signature& sig, const Params& params, const Problem& problem,
                               std::span<const uint64_t> addresses,
                               const std::map<std::string, double>& scalars) const override;
  Work work(const Signature& sig, const Problem& problem) const override;
  DType output_dtype(const Signature& sig) const override;

protected:
  const RowPtxBackend& ptx_backend(const std::string& isa) const; // InputError naming the targets
  RowOp op_;
};

DType row_dtype(const Signature& sig); // the `dtype` field
// rows, N, ld (0/absent = N), ldy (0/absent = N); InputError when ld < N.
struct RowShape {
  int64_t rows = 1, n = 1, ld = 1, ldy = 1;
};
RowShape row_shape(const Problem& problem);

} // namespace isatune::gen::rows

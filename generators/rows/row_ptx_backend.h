#pragma once
// The NVIDIA half of the row kernels (softmax, rmsnorm, layernorm). Schemas, buffers, scalars, the kernel
// argument layout (buffer pointers, then rows, N, ld, ldy as u32, then eps as f32 for the norms) and the
// float64 references are the same for every target (row_generator.cpp and the family files); what differs per
// ISA family is here: the space, the emitted PTX and the launch geometry.
#include <memory>
#include <string>
#include <vector>

#include "isatune/gen/generator.h"
#include "row_common.h"

namespace isatune::gen::rows {

class RowPtxBackend {
public:
  virtual ~RowPtxBackend() = default;
  virtual std::vector<std::string> targets() const = 0; // "sm_80", "sm_90a"
  virtual Space space(RowOp op, const std::string& isa, DType dtype) const = 0;
  virtual std::vector<std::string> constraint_descriptions(RowOp op, const std::string& isa) const = 0;
  // Throws InputError naming the parameter or the rule when the point is outside the space.
  virtual Generated generate(RowOp op, const std::string& isa, DType dtype, const Params& params) const = 0;
  // `kernargs` is packed by the caller in the layout above; the backend sets kernel, geometry and shared
  // memory (and may append arguments of its own after the common ones).
  virtual Launch launch(RowOp op, const std::string& isa, DType dtype, const Params& params, const RowShape& shape,
                        std::vector<uint8_t> kernargs) const = 0;
};

// Each family adds its factory to row_ptx_backends() in row_generator.cpp.
std::vector<const RowPtxBackend*> row_ptx_backends();
const RowPtxBackend* row_ptx_backend(const std::string& isa); // nullptr when none serves it

std::unique_ptr<RowPtxBackend> make_row_ptx_backend(); // sm_80, sm_90a (row_ptx.cpp)

} // namespace isatune::gen::rows

#pragma once
// Host copies of a problem's buffers: random inputs drawn in their data type, the values a reference reads, and
// the comparison of a kernel's outputs with the reference (relative error of the row norm).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isatune/gen/generator.h"

namespace isatune::gen {

struct HostBuffers {
  std::vector<std::vector<uint8_t>> bytes;  // as the device stores them
  std::vector<std::vector<double>> values;  // the same, decoded
};

// Inputs: uniform in [init_lo, init_hi], rounded to the type. Outputs: other random values (a kernel that
// writes nothing fails the check). Workspaces: zero. Deterministic in `seed`.
HostBuffers make_buffers(std::span<const BufferSpec> specs, uint64_t seed);
std::vector<double> decode_all(DType t, std::span<const uint8_t> bytes);

struct Mismatch {
  std::string buffer;
  double max_rel_error = 0; // max over checked elements of |got - want| / max(inf-norm of want, 1e-30), the
                            // norm of the element's row (of the whole matrix with BufferSpec::matrix_norm)
  uint64_t row = 0, col = 0; // where the worst one is
  double got = 0, want = 0;
  uint64_t gap_writes = 0; // elements outside the rows x cols matrix (between rows at row_stride) that changed
};

// Compares an output buffer over its rows x cols. A non-finite value where the reference is finite counts as
// an infinite error. Elements between the rows (row_stride > cols) must keep their values (`want` holds them as
// the buffer started): each one changed is a gap write, and any makes the error infinite (at the first one).
Mismatch compare_output(const BufferSpec& spec, std::span<const double> got, std::span<const double> want);

} // namespace isatune::gen

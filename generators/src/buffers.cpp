#include "isatune/gen/buffers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace isatune::gen {

namespace {

void store(std::vector<uint8_t>& bytes, uint64_t i, DType t, uint32_t bits) {
  const uint32_t n = size_of(t);
  std::memcpy(bytes.data() + i * n, &bits, n); // little-endian host
}

} // namespace

HostBuffers make_buffers(std::span<const BufferSpec> specs, uint64_t seed) {
  HostBuffers h;
  std::mt19937_64 rng(seed);
  for (const BufferSpec& s : specs) {
    std::vector<uint8_t> bytes(s.elements * size_of(s.dtype), 0);
    std::vector<double> values(s.elements, 0.0);
    if (s.role != BufferRole::workspace) {
      const double lo = s.role == BufferRole::input ? s.init_lo : -7.0;
      const double hi = s.role == BufferRole::input ? s.init_hi : 7.0;
      std::uniform_real_distribution<double> dist(lo, hi);
      for (uint64_t i = 0; i < s.elements; ++i) {
        const uint32_t bits = encode(s.dtype, dist(rng));
        store(bytes, i, s.dtype, bits);
        values[i] = decode(s.dtype, bits);
      }
    }
    h.bytes.push_back(std::move(bytes));
    h.values.push_back(std::move(values));
  }
  return h;
}

std::vector<double> decode_all(DType t, std::span<const uint8_t> bytes) {
  const uint32_t n = size_of(t);
  std::vector<double> out(bytes.size() / n);
  for (size_t i = 0; i < out.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * n, n);
    out[i] = decode(t, bits);
  }
  return out;
}

Mismatch compare_output(const BufferSpec& spec, std::span<const double> got, std::span<const double> want) {
  Mismatch m;
  m.buffer = spec.name;
  const uint64_t stride = spec.row_stride ? spec.row_stride : spec.cols;
  auto row_norm = [&](uint64_t r) {
    double norm = 0;
    for (uint64_t c = 0; c < spec.cols; ++c) norm = std::max(norm, std::fabs(want[r * stride + c]));
    return norm;
  };
  double matrix_norm = 0;
  if (spec.matrix_norm)
    for (uint64_t r = 0; r < spec.rows; ++r) matrix_norm = std::max(matrix_norm, row_norm(r));
  for (uint64_t r = 0; r < spec.rows; ++r) {
    const double norm = std::max(spec.matrix_norm ? matrix_norm : row_norm(r), 1e-30);
    for (uint64_t c = 0; c < spec.cols; ++c) {
      const uint64_t i = r * stride + c;
      const double g = got[i], w = want[i];
      double e = std::fabs(g - w) / norm;
      if (!std::isfinite(g) && std::isfinite(w)) e = std::numeric_limits<double>::infinity();
      if (std::isnan(e)) e = std::numeric_limits<double>::infinity();
      if (e > m.max_rel_error || (r == 0 && c == 0)) {
        if (e >= m.max_rel_error) {
          m.max_rel_error = e;
          m.row = r;
          m.col = c;
          m.got = g;
          m.want = w;
        }
      }
    }
    // The gap after this row, up to the next one (none after the last row).
    for (uint64_t c = spec.cols; r + 1 < spec.rows && c < stride; ++c) {
      const uint64_t i = r * stride + c;
      if (i >= got.size() || i >= want.size()) break;
      const bool same = got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]));
      if (same) continue;
      if (m.gap_writes++ == 0 && std::isfinite(m.max_rel_error)) {
        m.max_rel_error = std::numeric_limits<double>::infinity();
        m.row = r, m.col = c, m.got = got[i], m.want = want[i];
      }
    }
  }
  return m;
}

} // namespace isatune::gen

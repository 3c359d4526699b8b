#pragma once
// Element types of kernel buffers, and exact conversion between their bit patterns and double (round to nearest
// even on the way in, saturating to the largest finite value for the fp8 formats, as the hardware's
// conversions do with saturation on).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isatune::gen {

enum class DType { f16, bf16, f32, fp8_e4m3, fp8_e5m2 };

std::string_view to_string(DType t);                  // "f16", "bf16", "f32", "fp8_e4m3", "fp8_e5m2"
std::optional<DType> parse_dtype(std::string_view s); // also accepts "fp8" (e4m3), "e4m3", "e5m2"
uint32_t size_of(DType t);                            // bytes per element

// Bits of the nearest representable value (little-endian in the low size_of(t) bytes).
uint32_t encode(DType t, double value);
double decode(DType t, uint32_t bits);
// Rounds through the type: decode(t, encode(t, v)).
inline double round_to(DType t, double v) { return decode(t, encode(t, v)); }

// Relative error allowed for an output of this type, of the row norm (the tolerances): bf16 1e-2,
// f16 2e-3, f32 1e-5, fp8 e4m3 1.25e-1, fp8 e5m2 2.5e-1.
double tolerance(DType t);

} // namespace isatune::gen

#pragma once
// Element types of kernel buffers, and exact conversion between their bit patterns and double (round to nearest
// even on the way in, saturating to the largest finite value for the fp8 formats, as the hardware's
// conversions do with saturation on).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace isatune::gen {

// fp8_e4m3 / fp8_e5m2: the OCP encodings (E4M3FN bias 7, max 448, NaN S.1111.111, +-0; E5M2 bias 15, max 57344,
// inf and NaN), what gfx950's fp8 MFMAs and conversions read. fp8_e4m3_fnuz / fp8_e5m2_fnuz: the FNUZ encodings
// gfx942 reads (E4M3 bias 8, max 240; E5M2 bias 16, max 57344; no infinity, no negative zero, 0x80 = NaN).
enum class DType { f16, bf16, f32, fp8_e4m3, fp8_e5m2, fp8_e4m3_fnuz, fp8_e5m2_fnuz };

// "f16", "bf16", "f32", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3_fnuz", "fp8_e5m2_fnuz"
std::string_view to_string(DType t);
// Also accepts "fp8" (e4m3), "e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz".
std::optional<DType> parse_dtype(std::string_view s);
bool is_fp8(DType t);        // any of the four 8-bit float types
bool is_fp8_e5m2(DType t);   // fp8_e5m2 or fp8_e5m2_fnuz (the MFMA's "bf8")
bool is_fnuz(DType t);
uint32_t size_of(DType t);                            // bytes per element

// Bits of the nearest representable value (little-endian in the low size_of(t) bytes).
uint32_t encode(DType t, double value);
double decode(DType t, uint32_t bits);
// Rounds through the type: decode(t, encode(t, v)).
inline double round_to(DType t, double v) { return decode(t, encode(t, v)); }

// Relative error allowed for an output of this type, of the row norm (the tolerances): bf16 1e-2,
// f16 2e-3, f32 1e-5, fp8 e4m3 1.25e-1, fp8 e5m2 2.5e-1 (FNUZ the same as OCP).
double tolerance(DType t);

} // namespace isatune::gen

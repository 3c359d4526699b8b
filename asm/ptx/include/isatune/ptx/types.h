#pragma once
// PTX fundamental types used in instruction suffixes.
#include <cstdint>

#include "isatune/ptx/registers.h"

namespace isatune::ptx {

enum class Type { pred, b8, b16, b32, b64, u8, u16, u32, u64, s8, s16, s32, s64, f16, f16x2, bf16, bf16x2, f32, f64 };

const char* type_name(Type t); // "u32" (no dot)
uint32_t type_bits(Type t);    // 32
// The register class that holds a value of the type (pred, b16, b32, b64, f32; f16x2/bf16x2 live in .b32).
RegClass reg_class_for(Type t);

// Memory spaces of ld/st/red/atom.
enum class Space { global, shared, param, local };
const char* space_name(Space s); // "shared"

} // namespace isatune::ptx

#pragma once
// `isatune run --arg tmap:...`: a TMA tensor map over one of the launch's buffers, described on the command line
// with the arguments of cuTensorMapEncodeTiled and encoded by the device (the driver on a GPU, the PTX emulator
// on the CPU) once the buffer has its device address.
//
//   tmap:BUF:TYPE:DIMS:box=BOX[:strides=S][:swizzle=none|32B|64B|128B][:elemstrides=E]
//        [:interleave=none|16B|32B][:oob=zero|nan][:l2=none|64B|128B|256B]
//
// BUF: the buffer argument the map covers, by index (0-based) or by name. TYPE: u8 u16 u32 i32 u64 i64 f16 bf16
// f32 f64 tf32. DIMS, BOX, S, E: lists joined by 'x', innermost dimension first (DIMS 64x128: 64 elements per
// row, 128 rows); S: bytes between consecutive indices of dimensions 1..rank-1 (default: packed rows);
// E: element strides (default all 1).
#include <string>

#include "isatune/tensor_map_args.h"

namespace isatune::cli {

struct TensorMapArg {
  std::string buffer;       // index or name, as written
  TensorMapTiledArgs args;  // global_address 0 until the buffer is allocated
  std::string type_name;    // TYPE as written, for output
};

// True when `text` starts with "tmap:".
bool is_tensor_map_arg(const std::string& text);
// Throws InputError "--arg INDEX 'TEXT': why" for anything malformed.
TensorMapArg parse_tensor_map_arg(size_t index, const std::string& text);

} // namespace isatune::cli

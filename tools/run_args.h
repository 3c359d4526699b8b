#pragma once
// `isatune run --arg` values: TYPE:VALUE scalars, buf:TYPE:N:zero|random|file=PATH[:out=PATH] buffers, and
// tmap:... tensor maps (tensor_map_arg.h). Apart from cmd_run.cpp so the parser can be fuzzed and tested on
// its own (tests/fuzz/fuzz_run_args.cpp).
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "isatune/loader/device.h"
#include "tensor_map_arg.h"

namespace isatune::cli {

struct ElemType {
  std::string name;
  size_t size;
  bool is_float, is_signed;
};

// u8 u16 u32 i32 u64 i64 f32 f64; nullptr for anything else.
const ElemType* find_type(const std::string& name);

// One --arg: a scalar (bytes) or a buffer (element type, count, initial bytes, optional output path).
struct ParsedArg {
  std::string text;
  bool buffer = false;
  std::vector<uint8_t> bytes; // scalar value, or the buffer's initial contents
  const ElemType* type = nullptr;
  uint64_t count = 0;
  std::string init; // zero | random | file=PATH
  std::string out;  // path to write the buffer to after the run
  loader::DevicePtr ptr = 0;
  bool tensor_map = false; // tmap:...: encoded by the device once its buffer has an address
  TensorMapArg tmap;
  size_t tmap_buffer = 0; // the argument index of that buffer
};

// The largest buffer --arg makes (the emulators' whole memory); the host holds a copy of it too.
inline constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 36;

// Throws InputError "--arg INDEX 'TEXT': why".
[[noreturn]] void bad_arg(size_t index, const std::string& text, const std::string& why);
// The whole file; InputError when it cannot be opened.
std::vector<uint8_t> read_binary(const std::string& path);
// One --arg (the INDEXth); random buffers draw from `rng`. Throws InputError (bad_arg) for anything malformed.
ParsedArg parse_arg(size_t index, const std::string& text, std::mt19937_64& rng);

} // namespace isatune::cli

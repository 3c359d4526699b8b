// libFuzzer target: any bytes through read_code_object, then each kernel through the disassembler and the
// occupancy calculator. Only FormatError (bad code object) and InputError (unusable target) may escape the
// library; anything else, a crash or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <span>

#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/occupancy.h"
#include "isatune/codeobj/reader.h"
#include "last_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace isatune;
  fuzz::keep_last_input(data, size);
  CodeObject co;
  try {
    co = codeobj::read_code_object(std::span<const uint8_t>(data, size), "fuzz-input");
  } catch (const codeobj::FormatError&) {
    return 0;
  }
  for (const KernelInfo& k : co.kernels) {
    try {
      (void)codeobj::amd_occupancy(co, k);
    } catch (const InputError&) {
    }
    if (k.code_offset == 0) continue;
    try {
      (void)codeobj::disassemble_kernel(co, k);
    } catch (const InputError&) {
    }
  }
  return 0;
}

#pragma once
// Reading NVIDIA cubins (ELF, e_machine EM_CUDA = 190) through LLVM's Object library: kernels (entry functions),
// parameter layout from .nv.info.<kernel> (EIATTR_KPARAM_INFO, EIATTR_CBANK_PARAM_SIZE), registers
// (EIATTR_REGCOUNT), stack (EIATTR_FRAME_SIZE), static shared memory (.nv.shared.<kernel>), thread limits
// (EIATTR_MAX_THREADS / EIATTR_REQNTID), cluster dimensions (EIATTR_CTA_PER_CLUSTER), max registers
// (EIATTR_MAXREG_COUNT).
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/code_object.h"

namespace isatune::codeobj {

// NVIDIA facts a KernelInfo has no field for.
struct CubinKernelExtra {
  std::string name;
  std::array<uint32_t, 3> max_threads{0, 0, 0};   // .maxntid (0: not stated)
  std::array<uint32_t, 3> req_threads{0, 0, 0};   // .reqntid
  std::array<uint32_t, 3> cluster_dims{0, 0, 0};  // .reqnctapercluster (0: none)
  uint32_t max_registers = 0;                     // EIATTR_MAXREG_COUNT (.maxnreg / -maxrregcount)
  uint32_t param_cbank_offset = 0;                // where parameters start in constant bank 0
};

struct Cubin {
  CodeObject code;
  std::vector<CubinKernelExtra> extra; // one per code.kernels entry, same order
  uint32_t sm = 0;                     // 80, 90 (from e_flags)
};

// Throws FormatError (from reader.h) when the bytes are not a cubin. isa is "sm_XX", "sm_XXa" when ptxas
// recorded an arch-specific target; sha256 is filled.
CodeObject read_cubin(std::span<const uint8_t> bytes, std::string_view source_name = "<memory>");
Cubin read_cubin_full(std::span<const uint8_t> bytes, std::string_view source_name = "<memory>");
CodeObject read_cubin_file(const std::string& path);

// True when the bytes start with an ELF header whose e_machine is EM_CUDA.
bool is_cubin(std::span<const uint8_t> bytes);

} // namespace isatune::codeobj

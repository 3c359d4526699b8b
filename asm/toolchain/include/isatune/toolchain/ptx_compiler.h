#pragma once
// PTX -> cubin. Two backends:
//   ptxas      the CUDA toolkit's ptxas program, whole-program compilation: the reference
//   nvjitlink  libnvJitLink.so.13 opened with dlopen, in process; compiles PTX as relocatable code, so it
//              drops setmaxnreg and ignores .maxnreg (shared/notes/ptx.md section 5)
// Backend::automatic takes nvJitLink when present and the PTX has neither setmaxnreg nor .maxnreg, else ptxas.
// Asking for nvjitlink explicitly with such PTX is an InputError, never a silently different kernel.
// Thread-safe: any number of compiles may run at once.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/toolchain/diagnostic.h"
#include "isatune/toolchain/ptx_report.h"

namespace isatune::toolchain {

enum class PtxBackend { automatic, ptxas, nvjitlink };
const char* ptx_backend_name(PtxBackend b);        // "auto", "ptxas", "nvjitlink"
PtxBackend parse_ptx_backend(std::string_view s); // InputError on an unknown name

struct PtxCompileOptions {
  std::string target = "sm_90a";         // sm_80, sm_90, sm_90a
  PtxBackend backend = PtxBackend::automatic;
  std::string file_name = "<input>.ptx"; // shown in diagnostics
  int opt_level = 3;                      // nvJitLink accepts 0 or 3
  uint32_t max_registers = 0;             // -maxrregcount; 0: none
};

struct PtxCompiled {
  CodeObject code;          // the cubin, read back by codeobj::read_cubin; isa = options.target
  PtxReport report;         // registers, spills, stack, smem, warnings, issues
  PtxBackend backend = PtxBackend::ptxas; // the backend that ran
  std::string log;          // the compiler's raw log
};

// Throws AssemblyError (ptxas's messages, with PTX line numbers) on bad PTX, UnavailableError when the chosen
// backend is absent, InputError on an unknown target or PTX that nvJitLink would change.
PtxCompiled compile_ptx(std::string_view ptx, const PtxCompileOptions& options);

// True when the PTX uses setmaxnreg or .maxnreg, which only whole-program compilation honours.
bool ptx_needs_whole_program(std::string_view ptx);

// The ptxas program found ($ISATUNE_PTXAS, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, PATH), or "".
std::string find_ptxas();
// Whether libnvJitLink can be opened ($ISATUNE_NVJITLINK, $CUDA_HOME/lib64, /usr/local/cuda/lib64, the loader's path).
bool nvjitlink_available();
// Why a backend is unavailable ("" when it is available).
std::string ptx_backend_unavailable_reason(PtxBackend b);
// "ptxas 13.0.88", "nvJitLink 13.0"; "" when absent.
std::string ptx_backend_version(PtxBackend b);

// The PTX targets and the backends that serve them in this process.
struct PtxTargetInfo {
  std::string name;                 // sm_90a
  std::vector<PtxBackend> backends; // available now, preferred first
  std::string note;
};
std::vector<PtxTargetInfo> ptx_targets();

} // namespace isatune::toolchain

#pragma once
// What ptxas (the program, or inside nvJitLink) says about a PTX compile, as structured data: per-kernel
// resources from the -v lines and the warnings the tuner rejects on (spills, stack, wgmma serialisation,
// setmaxnreg ignored). Message forms: shared/notes/ptx.md section 5.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/toolchain/diagnostic.h"

namespace isatune::toolchain {

struct PtxKernelReport {
  std::string name;
  uint32_t registers = 0;
  uint32_t barriers = 0;
  uint32_t stack_bytes = 0;        // stack frame
  uint32_t spill_store_bytes = 0;
  uint32_t spill_load_bytes = 0;
  uint32_t shared_bytes = 0;       // static shared memory ("N bytes smem")
  uint32_t cmem0_bytes = 0;
  uint32_t local_bytes = 0;        // nvJitLink's "N bytes lmem"
};

// A finding the tuner can reject a variant on.
enum class PtxIssueKind {
  wgmma_serialized,   // C7510, C7511, C7515 and other "wgmma ... serialized" notes
  wgmma_wait_injected,// C7517 (warpgroup.wait injected), C7519 (warpgroup.arrive injected)
  setmaxnreg_ignored, // C7504, C7508 and other "'setmaxnreg' ignored" notes
  register_spill,     // spill stores or loads > 0
  stack_frame,        // stack frame > 0
  other_code,         // any other C-coded advisory
};
const char* ptx_issue_kind_name(PtxIssueKind k); // "wgmma_serialized"

struct PtxIssue {
  PtxIssueKind kind = PtxIssueKind::other_code;
  std::string code;    // "C7511"; empty for spills and stack
  std::string kernel;  // when the message names one
  std::string message; // as the compiler wrote it
};

struct PtxReport {
  std::vector<PtxKernelReport> kernels;
  std::vector<Diagnostic> warnings; // "warning" lines, with the PTX line when given
  std::vector<Diagnostic> errors;   // "error"/"fatal" lines
  std::vector<PtxIssue> issues;

  const PtxKernelReport* find(std::string_view kernel) const;
  bool has(PtxIssueKind k) const;
  // True when any issue is one the tuner rejects on (every kind but other_code).
  bool rejectable() const;
};

// Parses a ptxas -v log (stderr of the program, or nvJitLink's info + error logs). file_name is put into the
// diagnostics in place of whatever name the compiler used.
PtxReport parse_ptx_log(std::string_view log, std::string_view file_name = "<input>.ptx");

} // namespace isatune::toolchain

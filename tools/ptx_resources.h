#pragma once
// The resources ptxas gives a PTX module's kernels, recorded in its code object so that the PTX emulator
// launches what the GPU would: registers per thread (KernelInfo::vgprs, 0 until then) for the register-file
// limit and setmaxnreg's starting count, and stack bytes.
#include <string>

#include "isatune/code_object.h"

namespace isatune::cli {

// Compiles the code object's PTX with ptxas (whole program) when ptxas is present and records each kernel's
// registers and stack. Returns "" or why it could not (ptxas absent, or its error). About 0.1 s of ptxas.
std::string read_cubin_resources(CodeObject& code);

} // namespace isatune::cli

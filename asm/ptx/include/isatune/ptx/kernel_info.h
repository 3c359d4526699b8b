#pragma once
// What a PTX entry's declaration says about it as a kernel: name, kernel-argument layout, warp size and the
// thread limit of .reqntid/.maxntid. Shared memory, local memory and registers are the caller's (the emulator
// lays memory out itself; a PTX code object takes ptxas's counts).
#include "isatune/code_object.h"
#include "isatune/ptx/ast.h"

namespace isatune::ptx {

KernelInfo entry_kernel_info(const ast::Function& entry);

} // namespace isatune::ptx

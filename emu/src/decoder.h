#pragma once
// Machine code -> Program, once per kernel at load: LLVM's MC disassembler decodes, the result is copied into
// compact Inst records so that execution never calls LLVM.
#include "inst.h"
#include "isatune/cdna/target.h"
#include "isatune/code_object.h"

namespace isatune::emu {

Program decode_kernel(const CodeObject& code, const KernelInfo& kernel, cdna::Gfx gfx);

} // namespace isatune::emu

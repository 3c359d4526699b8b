#pragma once
// A CodeObject holding PTX text (CodeFormat::ptx): what the PTX emulator runs and what the CUDA driver compiles at
// load. Its KernelInfo comes from the parsed module (names, kernel argument layout, static shared memory, the
// thread limit of .reqntid/.maxntid); registers per thread stay 0 (unknown) until ptxas has compiled it
// (compile_ptx, or with_ptxas_resources below).
#include <string>
#include <string_view>

#include "isatune/code_object.h"
#include "isatune/toolchain/ptx_report.h"

namespace isatune::toolchain {

// Throws isatune::ptx::ParseError (an InputError naming the line) on malformed PTX. target: the .target when
// empty.
CodeObject ptx_text_object(std::string_view text, const std::string& target = "", const std::string& file = "");

// Copies what ptxas reported per kernel into the PTX object's KernelInfo: registers (vgprs), static shared
// memory, local memory and stack (scratch_bytes, which the tuner rejects as spills).
void apply_ptxas_resources(CodeObject& ptx_object, const PtxReport& report);

} // namespace isatune::toolchain

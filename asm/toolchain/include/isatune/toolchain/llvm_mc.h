#pragma once
// The two stages of the LLVM backend, exposed for tests and benchmarks that compare them with the
// llvm-mc and ld.lld programs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/toolchain/assembler.h"

namespace isatune::toolchain {

// The LLVM version linked in ("22.1.8").
std::string llvm_version();
// Whether the linked LLVM knows this ISA as an AMDGPU processor.
bool llvm_supports(std::string_view isa);
// Assembly -> relocatable ELF object, through LLVM MC in memory. Throws AssemblyError / InputError.
std::vector<uint8_t> llvm_assemble_object(std::string_view text, const AssembleOptions& options,
                                          std::vector<Diagnostic>* warnings = nullptr);
// Relocatable object(s) -> shared object (the .hsaco), through lld in process. Throws AssemblyError.
std::vector<uint8_t> lld_link_shared(const std::vector<std::vector<uint8_t>>& objects);

} // namespace isatune::toolchain

#pragma once
// cdna::Kernel -> code object without parsing its instructions as text: the fast path of the "llvm" backend for
// kernels made with the builder. The small non-instruction part (target, symbol, .amdhsa_kernel descriptor,
// .amdgpu_metadata) is printed and parsed as usual; the instructions are handed to LLVM's object streamer as
// MCInsts. Each instruction "shape" (form, operand kinds and widths, which operands are equal, value classes
// of constants, modifiers other than offsets) is parsed once through LLVM's assembly parser with two sets of
// probe registers and constants; what differs between the two probes locates each operand in the MCInst. The
// template is kept for the life of the process (per target) and cloned with the instruction's registers,
// constants and labels filled in. An instruction whose shape cannot be learned unambiguously is parsed from its
// text, in place (counted in KernelAssembleStats::fallback). The result is byte-identical to assembling
// cdna::print(kernel) with the "llvm" backend; tests/toolchain/test_kernel_assembler.cpp checks every form.
// Thread-safe: any number of calls may run at once (links are serialised inside lld_link_shared).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "isatune/cdna/kernel.h"
#include "isatune/toolchain/assembler.h"

namespace isatune::toolchain {

struct KernelAssembleStats {
  size_t instructions = 0;     // instructions in the kernel body
  size_t fast = 0;             // emitted as MCInsts from a template
  size_t fallback = 0;         // parsed from their text
  size_t templates_learned = 0; // shapes parsed for the first time by this call
  std::vector<std::string> fallback_forms; // "form: reason", one entry per distinct form and reason
};

// options.target: empty = the kernel's target id; options.file_name "<input>" = "<kernel name>.s".
// Throws like Assembler::assemble (InputError for a kernel that fails validation).
Assembled assemble_kernel(const cdna::Kernel& kernel, const AssembleOptions& options = {},
                          KernelAssembleStats* stats = nullptr);

// The MC stage alone: the relocatable object (what llvm_assemble_object returns for cdna::print(kernel)).
std::vector<uint8_t> assemble_kernel_object(const cdna::Kernel& kernel, const AssembleOptions& options = {},
                                            std::vector<Diagnostic>* warnings = nullptr,
                                            KernelAssembleStats* stats = nullptr);

// Shapes learned so far in this process (all targets).
size_t kernel_template_count();

} // namespace isatune::toolchain

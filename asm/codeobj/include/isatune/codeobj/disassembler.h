#pragma once
// Disassembly through LLVM's MC disassembler and instruction printer.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/code_object.h"

namespace isatune::codeobj {

struct DisassembledInstruction {
  uint64_t address = 0;       // offset from the kernel entry
  std::vector<uint8_t> bytes;
  std::string text;           // as llvm-objdump prints it, without the trailing comment
  bool valid = true;          // false when the bytes do not decode
};

// Decodes machine code for an AMD target id or ISA.
std::vector<DisassembledInstruction> disassemble_bytes(std::string_view target, std::span<const uint8_t> code);
// Decodes one kernel of a code object (from its entry to the end of its symbol).
std::vector<DisassembledInstruction> disassemble_kernel(const CodeObject& code, const KernelInfo& kernel);

} // namespace isatune::codeobj

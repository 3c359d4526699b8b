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

// Whether LLVM 22's AMDGPU decoder is known to crash on the instruction starting at `bytes` (it needs the
// next 8 bytes): MUBUF/MTBUF with soffset 0xff, VOP3P (MFMA included) with a literal source, and the 16-bit
// KImm VOP2 forms (GFX9 v_madmk/madak_f16, GFX10+ v_fmamk/fmaak_f16: `gfx10_plus` says which opcodes) whose
// constant is 0xff, and SDWA forms with the undefined selector 7 (`sdwa`: the target has SDWA, GFX8-GFX10).
// Callers of LLVM's decoder (this disassembler, the emulator) report such words undecodable instead of
// decoding them.
bool llvm_decoder_crashes_on(std::span<const uint8_t> bytes, bool gfx10_plus = false, bool sdwa = true);

// Decodes machine code for an AMD target id or ISA.
std::vector<DisassembledInstruction> disassemble_bytes(std::string_view target, std::span<const uint8_t> code);
// Decodes one kernel of a code object (from its entry to the end of its symbol).
std::vector<DisassembledInstruction> disassemble_kernel(const CodeObject& code, const KernelInfo& kernel);

} // namespace isatune::codeobj

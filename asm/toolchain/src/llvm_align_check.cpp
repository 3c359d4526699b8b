// The code alignments LLVM 22's layout never finishes. An alignment padded with nops (`.p2align`, `.balign`,
// `.align` without a fill value in a code section) gets its size in MCAssembler as
//   while (Size % MinNopSize) Size += Alignment;
// and AMDGPU's smallest nop is 4 bytes, so when the offset before it is not a multiple of 4 (`.byte 1` then
// `.p2align 3` in .text) and the padding is not either, the loop never ends: llvm-mc-22 hangs too (found by
// fuzz_asm_text, tests/fuzz/regressions/asm_text/llvm22-only/). Instructions are multiples of 4
// bytes, so only data directives get there. Before layout, this follows each section's offset modulo 4 through
// its fragments and refuses a nop alignment reached at an offset that is not (or not known to be) a multiple of
// 4. LLVM 19 keeps its fragments differently; there the check does nothing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <llvm/MC/MCAssembler.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSection.h>
#include <llvm/MC/MCStreamer.h>

#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {

void check_code_alignment(llvm::MCStreamer& streamer, const std::string& file) {
#if ISATUNE_LLVM_MAJOR >= 22
  const llvm::MCAssembler* assembler = streamer.getAssemblerPtr();
  if (!assembler) return;
  std::vector<Diagnostic> bad;
  for (const llvm::MCSection& section : *assembler) {
    std::optional<uint64_t> mod4 = 0; // the offset modulo 4; nullopt: not known before layout
    for (const llvm::MCFragment& f : section) {
      if (mod4) *mod4 = (*mod4 + f.getFixedSize()) % 4;
      switch (f.getKind()) {
      case llvm::MCFragment::FT_Data:
      case llvm::MCFragment::FT_Relaxable: // an instruction: a multiple of 4 bytes, relaxed or not
        if (mod4 && f.getKind() == llvm::MCFragment::FT_Data) *mod4 = (*mod4 + f.getVarSize()) % 4;
        break;
      case llvm::MCFragment::FT_Align: {
        const uint64_t align = f.getAlignment().value();
        if (align < 2) break;
        if (f.hasAlignEmitNops() && (!mod4 || *mod4 % (align < 4 ? align : 4) != 0)) {
          Diagnostic d;
          d.file = file;
          d.message = "a code alignment to " + std::to_string(align) + " bytes in section '" +
                      section.getName().str() + "' comes after " +
                      (mod4 ? "an offset that is not a multiple of 4" : "data of a size not known before layout") +
                      ": LLVM 22's layout never ends on it (AMDGPU's nops are 4 bytes); pad the data to a multiple "
                      "of 4 bytes or give the alignment a fill value (.p2align N, 0)";
          bad.push_back(std::move(d));
          mod4.reset();
          break;
        }
        // Aligned: a multiple of the alignment, unless a byte limit may skip it (then the offset may stay).
        const bool always = f.getAlignMaxBytesToEmit() >= align - 1;
        if (mod4 && align >= 4 && (always || *mod4 == 0)) *mod4 = 0;
        else if (mod4 && align == 2 && (always || *mod4 % 2 == 0)) mod4 = *mod4 % 2 == 0 ? mod4 : std::nullopt;
        else mod4.reset();
        break;
      }
      case llvm::MCFragment::FT_Fill: {
        const auto& fill = static_cast<const llvm::MCFillFragment&>(f);
        int64_t n = 0;
        if (mod4 && fill.getNumValues().evaluateAsAbsolute(n))
          *mod4 = (*mod4 + uint64_t(n > 0 ? n : 0) * fill.getValueSize()) % 4;
        else
          mod4.reset();
        break;
      }
      case llvm::MCFragment::FT_Org: {
        int64_t at = 0;
        if (static_cast<const llvm::MCOrgFragment&>(f).getOffset().evaluateAsAbsolute(at)) mod4 = uint64_t(at) % 4;
        else mod4.reset();
        break;
      }
      default: mod4.reset(); break; // LEB, DWARF, nops, ...: sizes known at layout only
      }
    }
  }
  if (!bad.empty()) throw AssemblyError(std::move(bad));
#else
  (void)streamer;
  (void)file;
#endif
}

} // namespace isatune::toolchain::detail

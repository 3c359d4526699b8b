// The alignments LLVM's layout never finishes or its writer aborts on, refused before layout.
//
// An alignment padded with nops (`.p2align`, `.balign`, `.align` without a fill value in a code section; in
// LLVM 19 also with the fill value 0) gets its size in MCAssembler as
//   while (Size % MinNopSize) Size += Alignment;
// and AMDGPU's smallest nop is 4 bytes, so when the offset before it is not a multiple of 4 (`.byte 1` then
// `.p2align 3` in .text) and the padding is not either, the loop never ends; llvm-mc-19 and llvm-mc-22 hang too
// (found by fuzz_asm_text, tests/fuzz/regressions/asm_text/llvm22-only/). Instructions are multiples of 4 bytes,
// so only data directives get there. LLVM 19 alone also aborts the process when the padding of an alignment with
// a 2- or 4-byte fill value (`.byte 1` then `.p2alignl 3, 5`, in any section) is not a multiple of that size.
//
// Before layout, this follows each section's offset modulo 4 through its fragments (llvm_compat.h reads them in
// both versions) and refuses such an alignment reached at an offset that is not, or not known to be, a multiple
// of 4 (or of the fill size). At parse time LLVM 19 lists only the fragments of the subsection each section was
// last in, so there a section switched with `.subsection` is checked in part.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <llvm/MC/MCAssembler.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSection.h>
#include <llvm/MC/MCStreamer.h>

#include "llvm_compat.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

#if ISATUNE_LLVM_MAJOR >= 22
const char* const kFillAdvice = "(.p2align N, 0)";
constexpr bool kFillSizeAborts = false;
#else
// LLVM 19's parser pads `.p2align N, 0` in code with nops too (0 is AMDGPU's text fill value).
const char* const kFillAdvice = "other than 0 (.p2align N, 0x80; LLVM 19 pads .p2align N, 0 in code with nops)";
constexpr bool kFillSizeAborts = true;
#endif

} // namespace

void check_code_alignment(llvm::MCStreamer& streamer, const std::string& file) {
  const llvm::MCAssembler* assembler = streamer.getAssemblerPtr();
  if (!assembler) return;
  std::vector<Diagnostic> bad;
  for (const llvm::MCSection& section : *assembler) {
    std::optional<uint64_t> mod4 = 0; // the offset modulo 4; nullopt: not known before layout
    for (const llvm::MCFragment& f : section) {
      if (mod4) *mod4 = (*mod4 + llvm_compat::fixed_bytes(f)) % 4;
      switch (f.getKind()) {
      case llvm::MCFragment::FT_Data:
      case llvm::MCFragment::FT_Relaxable: // an instruction: a multiple of 4 bytes, relaxed or not
        if (mod4) *mod4 = (*mod4 + llvm_compat::data_tail_bytes(f)) % 4;
        break;
      case llvm::MCFragment::FT_Align: {
        const llvm_compat::AlignFields fields = llvm_compat::align_fields(f);
        const uint64_t align = fields.alignment;
        if (align < 2) break;
        if (fields.emit_nops && (!mod4 || *mod4 % (align < 4 ? align : 4) != 0)) {
          Diagnostic d;
          d.file = file;
          d.message = "a code alignment to " + std::to_string(align) + " bytes in section '" +
                      section.getName().str() + "' comes after " +
                      (mod4 ? "an offset that is not a multiple of 4" : "data of a size not known before layout") +
                      ": LLVM's layout never ends on it (AMDGPU's nops are 4 bytes); pad the data to a multiple "
                      "of 4 bytes or give the alignment a fill value " + kFillAdvice;
          bad.push_back(std::move(d));
          mod4.reset();
          break;
        }
        // LLVM 19's writer aborts the process (report_fatal_error "undefined .align directive") when the padding
        // of a .p2alignw/.p2alignl is not a multiple of its fill value's size; LLVM 22 pads the rest with zeros.
        // The padding is that multiple when the offset is a multiple of min(alignment, fill size) <= 4.
        const uint64_t unit = align < fields.fill_bytes ? align : fields.fill_bytes;
        if (kFillSizeAborts && !fields.emit_nops && unit > 1 && (!mod4 || *mod4 % unit != 0)) {
          Diagnostic d;
          d.file = file;
          d.message = "an alignment to " + std::to_string(align) + " bytes with a " +
                      std::to_string(fields.fill_bytes) + "-byte fill value in section '" +
                      section.getName().str() + "' comes after " +
                      (mod4 ? "an offset that is not a multiple of " + std::to_string(unit)
                            : std::string("data of a size not known before layout")) +
                      ": LLVM " + std::to_string(ISATUNE_LLVM_MAJOR) +
                      " would abort the process on it (undefined .align directive: the padding is not a multiple of "
                      "the fill value's size); pad the data first or use a 1-byte fill (.p2align N, V)";
          bad.push_back(std::move(d));
          mod4.reset();
          break;
        }
        // Aligned: a multiple of the alignment, unless a byte limit may skip it (then the offset may stay).
        const bool always = fields.max_bytes_to_emit >= align - 1;
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
}

} // namespace isatune::toolchain::detail

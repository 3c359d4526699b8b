// A bound on the object LLVM writes in memory. Alignment costs LLVM nothing while it parses and lays out, but
// its ELF writer then writes the padding: `.p2align 30` makes a 1 GiB object, and `.p2align -8` (a negative
// power LLVM shifts by) a 4 GiB one, which llvm-mc-22 writes in 7 s and isatune held in memory until the fuzzer's
// malloc limit stopped it (regressions/asm_text/p2align-negative-oom.s). Two guards:
// - before the object is written, every section's alignment must be at most 1 MiB (a kernel's is 256 bytes),
//   which keeps the padding LLVM writes to about 1 MiB per alignment directive;
// - the stream the writer writes to keeps at most 256 MiB and only counts what comes after, so an object made
//   large some other way (`.org`, many sections) is refused when it is done instead of filling memory.
#include <cstring>
#include <string>

#include <llvm/MC/MCAssembler.h>
#include <llvm/MC/MCSection.h>
#include <llvm/MC/MCStreamer.h>

#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {

constexpr uint64_t kMaxSectionAlign = uint64_t(1) << 20;

BoundedObjectStream::BoundedObjectStream(uint64_t limit) : raw_pwrite_stream(/*Unbuffered=*/true), limit_(limit) {}

void BoundedObjectStream::write_impl(const char* ptr, size_t size) {
  if (!overflow_ && bytes_.size() + size <= limit_)
    bytes_.insert(bytes_.end(), reinterpret_cast<const uint8_t*>(ptr), reinterpret_cast<const uint8_t*>(ptr) + size);
  else
    overflow_ = true;
  pos_ += size;
}

void BoundedObjectStream::pwrite_impl(const char* ptr, size_t size, uint64_t offset) {
  if (!overflow_ && offset + size <= bytes_.size()) std::memcpy(bytes_.data() + offset, ptr, size);
}

void check_section_alignment(llvm::MCStreamer& streamer, const std::string& file) {
  const llvm::MCAssembler* assembler = streamer.getAssemblerPtr();
  if (!assembler) return;
  std::vector<Diagnostic> bad;
  for (const llvm::MCSection& section : *assembler) {
    const uint64_t align = section.getAlign().value();
    if (align <= kMaxSectionAlign) continue;
    Diagnostic d;
    d.file = file;
    d.message = "section '" + section.getName().str() + "' is aligned to " + std::to_string(align) +
                " bytes: isatune refuses alignments past 1 MiB (LLVM would write the padding into the object; a "
                "negative .p2align is a huge one to LLVM)";
    bad.push_back(std::move(d));
  }
  if (!bad.empty()) throw AssemblyError(std::move(bad));
}

} // namespace isatune::toolchain::detail

// `.org N` and `. = N` move the location counter of a section to N, and LLVM (19 and 22) writes every byte up to it:
// `.=976976776` (11 bytes, found by fuzz_asm_text) made isatune's release build write 977 MB into its bounded
// object stream (refused only afterwards, past 256 MiB, in 6-7 s; 22 s under ASan, a fuzzer timeout). This
// refuses, after parsing and before layout, an offset whose constant part is past 64 MiB (the `.fill` guard's
// bound; a kernel's code object needs a tiny fraction of it), whether it is a number or a label plus a number
// (`. = f + N`). An offset LLVM cannot evaluate is left to LLVM's own error. LLVM 19 writes the bytes too
// (llvm-mc-19: 977 MB for the same line); at parse time it lists only the fragments of the subsection each section
// was last in, so there a `.org` in another subsection goes unchecked.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <llvm/MC/MCAssembler.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCSection.h>
#include <llvm/MC/MCStreamer.h>

#include "llvm_expr_value.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {

void check_org_offsets(llvm::MCStreamer& streamer, const llvm::SourceMgr& src, const std::string& file) {
  constexpr uint64_t kOrgLimitBytes = uint64_t(64) << 20;
  const llvm::MCAssembler* assembler = streamer.getAssemblerPtr();
  if (!assembler) return;
  ExprEvaluator ev(streamer.getContext(), /*undefined_symbols=*/true);
  std::vector<Diagnostic> bad;
  for (const llvm::MCSection& section : *assembler)
    for (const llvm::MCFragment& f : section) {
      if (f.getKind() != llvm::MCFragment::FT_Org) continue;
      const auto& org = static_cast<const llvm::MCOrgFragment&>(f);
      const std::optional<ExprValue> v = ev.evaluate(org.getOffset());
      // Negative: LLVM's own error (an offset before the start).
      if (!v || v->constant < 0 || uint64_t(v->constant) <= kOrgLimitBytes) continue;
      bad.push_back(diagnostic_at(src, org.getLoc(), file,
                                  "the location counter of section '" + section.getName().str() + "' is moved to " +
                                      std::string(v->absolute() ? "" : "a label plus ") +
                                      std::to_string(uint64_t(v->constant)) +
                                      " bytes (.org or . =): isatune refuses offsets past 64 MiB, since LLVM writes "
                                      "every byte up to the offset (a kernel's code object is a few KiB to MiB)"));
    }
  throw_in_text_order(std::move(bad));
}

} // namespace isatune::toolchain::detail

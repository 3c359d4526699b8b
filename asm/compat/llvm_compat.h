#pragma once
// Differences between the LLVM versions isatune builds with (19 and newer); not installed. Reached through the
// include directory of the isatune_llvm interface target, which also defines ISATUNE_LLVM_MAJOR.
#include <string>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCSection.h" // MCFragment too (LLVM 22 merged MCFragment.h into it)
#if ISATUNE_LLVM_MAJOR < 22
#include "llvm/MC/MCFragment.h"
#endif
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

namespace isatune::llvm_compat {

// The triple argument of TargetRegistry::lookupTarget and Target::createMCRegInfo / createMCAsmInfo /
// createMCSubtargetInfo. LLVM 22 takes an llvm::Triple (its StringRef overloads are deprecated); LLVM 19 only has
// the StringRef overloads, which every version before 22 keeps. The string lives until the end of the call.
#if ISATUNE_LLVM_MAJOR >= 22
inline const llvm::Triple& triple_arg(const llvm::Triple& triple) { return triple; }
#else
inline std::string triple_arg(const llvm::Triple& triple) { return triple.str(); }
#endif

// Whether a symbol reference carries a relocation specifier (`f@rel32@lo`): LLVM 21 renamed the variant kind
// (getKind, VK_None) to a specifier (getSpecifier, 0).
inline bool has_specifier(const llvm::MCSymbolRefExpr& ref) {
#if ISATUNE_LLVM_MAJOR >= 21
  return ref.getSpecifier() != 0;
#else
  return ref.getKind() != llvm::MCSymbolRefExpr::VK_None;
#endif
}

// An expression as assembly text: LLVM 21 moved the printing into MCAsmInfo (MCExpr::print is private in 22).
inline void print_expr(llvm::raw_ostream& os, const llvm::MCExpr& e, const llvm::MCAsmInfo& mai) {
#if ISATUNE_LLVM_MAJOR >= 21
  mai.printExpr(os, e);
#else
  e.print(os, &mai);
#endif
}

// What the alignment and org checks read of a fragment before layout. LLVM 22 gives every fragment a fixed part
// (the bytes written before it, getFixedSize) and a data fragment a variable tail; an alignment's fields are on
// MCFragment itself. In LLVM 19 only data and instruction fragments hold bytes (their contents), and the
// alignment's fields are on MCAlignFragment.
inline uint64_t fixed_bytes(const llvm::MCFragment& f) {
#if ISATUNE_LLVM_MAJOR >= 22
  return f.getFixedSize();
#else
  if (const auto* data = llvm::dyn_cast<llvm::MCDataFragment>(&f)) return data->getContents().size();
  if (const auto* inst = llvm::dyn_cast<llvm::MCRelaxableFragment>(&f)) return inst->getContents().size();
  return 0;
#endif
}
// The bytes of a data fragment after its fixed part (LLVM 22 only; 0 before).
inline uint64_t data_tail_bytes(const llvm::MCFragment& f) {
#if ISATUNE_LLVM_MAJOR >= 22
  return f.getKind() == llvm::MCFragment::FT_Data ? f.getVarSize() : 0;
#else
  (void)f;
  return 0;
#endif
}
struct AlignFields {
  uint64_t alignment = 1;
  bool emit_nops = false;
  uint64_t fill_bytes = 1; // the size of the fill value: 1 (.p2align), 2 (.p2alignw) or 4 (.p2alignl)
  uint64_t max_bytes_to_emit = 0;
};
// The fields of an FT_Align fragment.
inline AlignFields align_fields(const llvm::MCFragment& f) {
#if ISATUNE_LLVM_MAJOR >= 22
  return {f.getAlignment().value(), f.hasAlignEmitNops(), f.getAlignFillLen(), f.getAlignMaxBytesToEmit()};
#else
  const auto& a = llvm::cast<llvm::MCAlignFragment>(f);
  return {a.getAlignment().value(), a.hasEmitNops(), a.getValueSize(), a.getMaxBytesToEmit()};
#endif
}

} // namespace isatune::llvm_compat

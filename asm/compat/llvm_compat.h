#pragma once
// Differences between the LLVM versions isatune builds with (19 and newer); not installed. Reached through the
// include directory of the isatune_llvm interface target, which also defines ISATUNE_LLVM_MAJOR.
#include <string>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCExpr.h"
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

} // namespace isatune::llvm_compat

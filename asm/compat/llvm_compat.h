#pragma once
// Differences between the LLVM versions isatune builds with (19 and newer); not installed. Reached through the
// include directory of the isatune_llvm interface target, which also defines ISATUNE_LLVM_MAJOR.
#include <string>

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

} // namespace isatune::llvm_compat

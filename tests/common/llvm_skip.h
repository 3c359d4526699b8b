#pragma once
// Skipping a test case on a CDNA target that the linked LLVM does not know (gfx950 before LLVM 20), with the
// reason printed: DESIGN.md's rule for an absent toolkit. Only for test programs linking isatune_toolchain.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <string_view>

#include "isatune/cdna/target.h"
#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"
#include "skip_part.h"

namespace isatune::test {

// Why the linked LLVM cannot assemble for `target` (an ISA name or a target id such as
// "amdgcn-amd-amdhsa--gfx950:xnack-"), e.g. "gfx950 needs LLVM >= 20; this build uses LLVM 19.1.7"; "" when it can.
inline std::string llvm_lacks(std::string_view target) {
  constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
  if (target.substr(0, prefix.size()) == prefix)
    target.remove_prefix(prefix.size());
  const std::string isa(target.substr(0, target.find(':')));
  if (toolchain::llvm_supports(isa))
    return "";
  const std::string version = toolchain::llvm_version();
  if (const cdna::TargetInfo* info = cdna::find_target(isa)) {
    try {
      cdna::check_llvm_knows(*info, cdna::llvm_major_of(version), version);
    } catch (const InputError& e) {
      return e.what();
    }
  }
  return isa + " is not known to LLVM " + version;
}

// Whether the linked LLVM is older than the one that knows `isa` (gfx950 on LLVM 19): the cases that must fail
// with the "needs LLVM >= N" message.
inline bool llvm_too_old_for(std::string_view isa) {
  const cdna::TargetInfo* info = cdna::find_target(isa);
  return info && cdna::llvm_major_of(toolchain::llvm_version()) < info->min_llvm_major;
}

} // namespace isatune::test

// GTEST_SKIP() with the reason when the linked LLVM does not know `target`.
#define ISATUNE_SKIP_IF_LLVM_LACKS(target)                                                                      \
  do {                                                                                                         \
    if (const std::string isatune_llvm_lacks_ = ::isatune::test::llvm_lacks(target); !isatune_llvm_lacks_.empty()) \
      GTEST_SKIP() << isatune_llvm_lacks_;                                                                     \
  } while (0)

// Inside a loop over targets in one test: moves on to the next target when the linked LLVM does not know `target`,
// printing the reason (the loop's other targets still run; GTEST_SKIP would end the whole test).
#define ISATUNE_CONTINUE_IF_LLVM_LACKS(target)                                                                  \
  if (const std::string isatune_llvm_lacks_ = ::isatune::test::llvm_lacks(target); !isatune_llvm_lacks_.empty()) { \
    ::isatune::test::print_skipped_part(target, isatune_llvm_lacks_);                                           \
    continue;                                                                                                  \
  }

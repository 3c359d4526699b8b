// Symbol assignments: those LLVM's ELF writer would abort the process on ("cannot evaluate equated symbol") are
// refused with their place and the reason; those it writes, or reports an error for itself, are left to it.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

// f is 8 bytes in .text; .Ld is in another section; c is a number, u is never defined.
const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n"
                          ".data\n.Ld:\n  .long 1\n"
                          ".text\n.globl f\n.p2align 8\n.type f,@function\nf:\n  s_nop 0\n.Lmid:\n  s_endpgm\n.Lend:\n"
                          ".set c, 8\n";
constexpr int kSetLine = 15; // the line of the assignment after kHead
// LLVM's abort message for such a symbol: LLVM 19 says it in other words.
const char* const kLlvmAbort =
    std::stoi(llvm_version()) >= 22 ? "cannot evaluate equated symbol" : "unable to evaluate offset for variable";

std::string llvm_log(const std::string& text) {
  std::string log;
  testing::assemble_with_programs(text, "gfx942", &log);
  return log;
}

TEST(LlvmVariableCheck, AssignmentsLlvmWouldAbortOnAreRefusedAtTheirPlace) {
  struct Case {
    std::string line;
    std::string why;
    bool llvm_aborts = true; // false: refused although LLVM would write it (the divisor needs the layout)
  };
  const std::vector<Case> cases = {
      {"e=rG!Lxgf2-H", "an operator other than + and - has a symbol"}, // the fuzzer's
      {"e = a + b - u", "two symbols that do not cancel"},
      {"e = u - (a + b)", "two symbols that do not cancel"},
      {"e = (.Ld - f) * 2", "an operator other than + and - has a symbol"},
      {".set e, max(u, 1)", "names 'u', which is never defined"}, // ROCm 7.2's .num_named_barrier kind
      {".set e, or(c, u)", "names 'u', which is never defined"},
      {".set e, max(f, 4)", "names the label 'f'"},
      {".set e, 16 / (.Lend - f)", "its divisor depends on where labels land", false},
      {".equ e, (u*2) - f", "an operator other than + and - has a symbol"},
  };
  const bool programs = testing::have_llvm_programs();
  if (!programs)
    std::printf("llvm-mc/ld.lld not found in %s: not checking what LLVM does\n", ISATUNE_TEST_LLVM_TOOLS_DIR);
  for (const Case& c : cases) {
    const std::string text = kHead + c.line + "\n";
    try {
      llvm_assemble_object(text, {"gfx942", "f.s"});
      ADD_FAILURE() << "accepted: " << c.line;
    } catch (const AssemblyError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      const Diagnostic& d = e.diagnostics().front();
      EXPECT_NE(d.message.find("the value of 'e'"), std::string::npos) << e.what();
      EXPECT_NE(d.message.find(c.why), std::string::npos) << e.what();
      EXPECT_NE(d.message.find(kLlvmAbort), std::string::npos) << e.what();
      // LLVM keeps no place for a target expression; every other one is placed on its line.
      if (d.line != 0) {
        EXPECT_EQ(d.line, kSetLine) << e.what();
        EXPECT_EQ(d.source_line, c.line);
      } else {
        EXPECT_NE(c.line.find('('), std::string::npos) << e.what();
      }
    }
    if (!programs) continue;
    const std::string log = llvm_log(text);
    if (c.llvm_aborts)
      EXPECT_NE(log.find(std::string("LLVM ERROR: ") + kLlvmAbort), std::string::npos)
          << "llvm-mc did not abort on " << c.line << ":\n" << log;
    else
      EXPECT_EQ(log.find("LLVM ERROR"), std::string::npos) << "llvm-mc aborted on " << c.line << ":\n" << log;
  }
}

TEST(LlvmVariableCheck, EveryBadAssignmentIsReportedInOrder) {
  const std::string text = kHead + "e1 = a + b - u\n.set e2, (.Ld - f) * 2\n";
  try {
    llvm_assemble_object(text, {"gfx942", "f.s"});
    FAIL() << "accepted";
  } catch (const AssemblyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, kSetLine);
    EXPECT_NE(e.diagnostics()[0].message.find("'e1'"), std::string::npos);
    EXPECT_EQ(e.diagnostics()[1].line, kSetLine + 1);
    EXPECT_NE(e.diagnostics()[1].message.find("'e2'"), std::string::npos);
  }
}

// Written, or refused by LLVM's own error (not an abort): the check leaves each as it was.
TEST(LlvmVariableCheck, AssignmentsLlvmWritesOrReportsAreLeftToIt) {
  struct Case {
    std::string line;
    bool written;
  };
  const std::vector<Case> cases = {
      {"e = .Lend - f", true},
      {"e = (.Lend - f) * 2 + c", true},
      {"e = f + 4", true},
      {"e = u + 1", true},             // a relocation against u
      {".set e, max(c, 3)", true},
      {".set e, max(z, 1)\n.set z, 7", true}, // defined after its use
      {".set .Le, a + b - u", true},  // a temporary is not in the symbol table
      {".set e, a * u", false},       // LLVM's error: e starts with an undefined symbol, so it is undefined
      {"e = u - u", false},           // LLVM's error on the subtraction
  };
  for (const Case& c : cases) {
    const std::string text = kHead + c.line + "\n";
    try {
      llvm_assemble_object(text, {"gfx942", "f.s"});
      EXPECT_TRUE(c.written) << "written: " << c.line;
    } catch (const AssemblyError& e) {
      EXPECT_FALSE(c.written) << c.line << ": " << e.what();
      EXPECT_EQ(std::string(e.what()).find("the value of"), std::string::npos) << c.line << ": " << e.what();
    }
    if (testing::have_llvm_programs())
      EXPECT_EQ(llvm_log(text).find("LLVM ERROR"), std::string::npos) << "llvm-mc aborted on " << c.line;
  }
}

} // namespace
} // namespace isatune::toolchain

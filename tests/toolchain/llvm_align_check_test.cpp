// A code alignment (nops) after an offset that is not a multiple of 4 never finishes LLVM 22's layout
// (llvm-mc-22 hangs too): it is refused before layout. Data padded to 4 bytes, a fill value, or a data section
// assemble as before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n";

bool guarded() { return std::stoi(llvm_version()) >= 22; }

TEST(LlvmAlignCheck, NopAlignmentAfterAnOddOffsetIsRefused) {
  if (!guarded()) GTEST_SKIP() << "LLVM " << llvm_version() << " keeps its fragments differently (needs 22)";
  for (const std::string body : {".byte 1\n.p2align 3\n", ".short 1\n.balign 8\n", ".byte 1\n.p2align 1\n",
                                 "s_nop 0\n.byte 1, 2, 3\n.p2align 4\n", ".fill 25\n.p2align 8\n",
                                 ".byte 1\n.align 8\n", "s_nop 0\n.p2align 3\n.byte 1\n.p2align 2\n"}) {
    try {
      llvm_assemble_object(kHead + body, {"gfx942", "f.s"});
      ADD_FAILURE() << "accepted:\n" << body;
    } catch (const AssemblyError& e) {
      EXPECT_NE(e.diagnostics().front().message.find("LLVM 22's layout never ends on it"), std::string::npos)
          << e.what();
      EXPECT_NE(e.diagnostics().front().message.find("section '.text'"), std::string::npos) << e.what();
    }
  }
}

TEST(LlvmAlignCheck, AlignmentsLlvmFinishesAssemble) {
  for (const std::string body : {".long 1\n.p2align 3\n", ".byte 1\n.p2align 3, 0\n", ".short 1\n.p2align 1\n",
                                 "s_nop 0\n.fill 3, 1, 0\n.fill 1\n.p2align 4\ns_nop 0\n",
                                 ".byte 1\n.p2alignl 3, 0xbf800000\n", ".data\n.byte 1\n.p2align 8\n",
                                 ".byte 1\n.p2align 4, 0\n.p2align 5\n", "v_mov_b32 v0, 0x12345\n.p2align 6\n"}) {
    EXPECT_NO_THROW(llvm_assemble_object(kHead + body, {"gfx942", "f.s"})) << body;
  }
}

} // namespace
} // namespace isatune::toolchain

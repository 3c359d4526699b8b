// A code alignment (nops) after an offset that is not a multiple of 4 never finishes LLVM's layout (llvm-mc-19
// and llvm-mc-22 hang too): it is refused before layout. LLVM 19 also aborts on a 2- or 4-byte fill whose padding
// is not a multiple of it; that is refused there. Data padded to 4 bytes, a fill value, or a data section
// assemble as before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n";

bool llvm19() { return std::stoi(llvm_version()) < 22; }

void expect_refused(const std::string& body, const std::string& why) {
  try {
    llvm_assemble_object(kHead + body, {"gfx942", "f.s"});
    ADD_FAILURE() << "accepted:\n" << body;
  } catch (const AssemblyError& e) {
    EXPECT_NE(e.diagnostics().front().message.find(why), std::string::npos) << e.what();
  }
}

TEST(LlvmAlignCheck, NopAlignmentAfterAnOddOffsetIsRefused) {
  for (const std::string body : {".byte 1\n.p2align 3\n", ".short 1\n.balign 8\n", ".byte 1\n.p2align 1\n",
                                 "s_nop 0\n.byte 1, 2, 3\n.p2align 4\n", ".fill 25\n.p2align 8\n",
                                 ".byte 1\n.align 8\n", "s_nop 0\n.p2align 3\n.byte 1\n.p2align 2\n"}) {
    try {
      llvm_assemble_object(kHead + body, {"gfx942", "f.s"});
      ADD_FAILURE() << "accepted:\n" << body;
    } catch (const AssemblyError& e) {
      EXPECT_NE(e.diagnostics().front().message.find("LLVM's layout never ends on it"), std::string::npos)
          << e.what();
      EXPECT_NE(e.diagnostics().front().message.find("section '.text'"), std::string::npos) << e.what();
    }
  }
}

TEST(LlvmAlignCheck, AlignmentsLlvmFinishesAssemble) {
  for (const std::string body : {".long 1\n.p2align 3\n", ".short 1\n.p2align 1\n",
                                 "s_nop 0\n.fill 3, 1, 0\n.fill 1\n.p2align 4\ns_nop 0\n",
                                 ".byte 1\n.p2align 3, 0x80\n", ".data\n.byte 1\n.p2align 8\n",
                                 ".short 1\n.p2alignw 3, 5\n", ".long 1\n.p2alignl 4, 0xbf800000\n",
                                 "v_mov_b32 v0, 0x12345\n.p2align 6\n"}) {
    EXPECT_NO_THROW(llvm_assemble_object(kHead + body, {"gfx942", "f.s"})) << body;
  }
}

// LLVM 22 finishes these; LLVM 19 pads `.p2align N, 0` in code with nops (a hang after an odd offset) and aborts
// on the fill sizes (llvm-mc-19 does both), so there they are refused.
TEST(LlvmAlignCheck, AlignmentsOnlyLlvm22Finishes) {
  for (const std::string body : {".byte 1\n.p2align 3, 0\n", ".byte 1\n.p2align 4, 0\n.p2align 5\n"}) {
    if (llvm19()) expect_refused(body, "LLVM's layout never ends on it");
    else EXPECT_NO_THROW(llvm_assemble_object(kHead + body, {"gfx942", "f.s"})) << body;
  }
  for (const std::string body : {".byte 1\n.p2alignl 3, 0xbf800000\n", ".byte 1\n.p2alignw 3, 0x1234\n",
                                 ".byte 1\n.p2alignl 1, 5\n", ".short 1\n.p2alignl 3, 5\n",
                                 ".data\n.byte 1\n.p2alignl 3, 5\n"}) {
    if (llvm19()) expect_refused(body, "LLVM 19 would abort the process on it (undefined .align directive");
    else EXPECT_NO_THROW(llvm_assemble_object(kHead + body, {"gfx942", "f.s"})) << body;
  }
}

} // namespace
} // namespace isatune::toolchain

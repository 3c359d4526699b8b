// The object LLVM writes is bounded: a section aligned past 1 MiB is refused before LLVM writes its padding
// (`.p2align 30` made a 1 GiB object, `.p2align -8` a 4 GiB one), and an object past 256 MiB made another way
// (`.org` in several sections, each within the 64 MiB of llvm_org_check.cpp) is refused when it is done, having
// been counted, not kept.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\ns_nop 0\n";

std::string refusal(const std::string& text) {
  try {
    llvm_assemble_object(text, {"gfx942", "f.s"});
  } catch (const AssemblyError& e) {
    return e.diagnostics().empty() ? std::string("no diagnostic") : e.diagnostics().front().message;
  }
  return "accepted";
}

TEST(LlvmObjectBound, AlignmentsPast1MiBAreRefusedBySection) {
  struct Case {
    std::string text;
    std::string section;
  };
  const std::vector<Case> cases = {
      {".p2align -8\n", ".text"}, // the fuzzer's
      {".p2align 21\n", ".text"},
      {".p2align 31\n", ".text"},
      {".data\n.balign 0x40000000\n.byte 1\n", ".data"},
      {".section .mine,\"a\"\n.p2alignl 25, 0xbf800000\n", ".mine"},
  };
  for (const Case& c : cases) {
    const std::string message = refusal(kHead + c.text);
    EXPECT_EQ(message.rfind("section '" + c.section + "' is aligned to ", 0), 0u) << c.text << ": " << message;
    EXPECT_NE(message.find("isatune refuses alignments past 1 MiB"), std::string::npos) << message;
  }
}

TEST(LlvmObjectBound, OneMiBAlignmentIsWritten) {
  const std::vector<uint8_t> object = llvm_assemble_object(kHead + ".p2align 20\ns_endpgm\n", {"gfx942", "f.s"});
  EXPECT_GT(object.size(), size_t(1) << 20); // the padding is in the object
  EXPECT_LT(object.size(), size_t(3) << 20);
}

TEST(LlvmObjectBound, ObjectsPast256MiBAreRefusedWithTheirSize) {
  // Five sections of 63 MiB each: every .org is within llvm_org_check.cpp's 64 MiB, the object is 315 MiB.
  std::string text = kHead + ".org 0x3f00000\n";
  for (const char* section : {".data", ".section .a1,\"a\"", ".section .a2,\"a\"", ".section .a3,\"a\""})
    text += std::string(section) + "\n.byte 1\n.org 0x3f00000\n";
  const std::string message = refusal(text);
  EXPECT_EQ(message.rfind("the object would be 330", 0), 0u) << message;
  EXPECT_NE(message.find("isatune refuses objects past 256 MiB"), std::string::npos) << message;
}

} // namespace
} // namespace isatune::toolchain

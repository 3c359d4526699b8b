// `.org` and `. =` past 64 MiB are refused at the directive before LLVM writes every byte up to them (found by
// fuzz_asm_text: `.=976976776` took 22 s under ASan); offsets up to the bound, and ones LLVM refuses itself, are
// left to LLVM.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

TEST(LlvmOrgCheck, OffsetsPast64MiBAreRefusedAtTheDirective) {
  struct Case {
    std::string text;
    int line, column;
    std::string what;
  };
  const std::vector<Case> cases = {
      {".=976976776\n", 1, 3, "moved to 976976776 bytes"}, // the fuzzer's
      {"  s_nop 0\n  .org 67108865\n", 2, 8, "moved to 67108865 bytes"},
      {"f:\n  . = f + 0x50000000\n", 2, 7, "moved to a label plus 1342177280 bytes"},
      {".data\n.org 1 << 40, 0xff\n", 2, 6, "section '.data'"},
  };
  for (const Case& c : cases) {
    try {
      llvm_assemble_object(c.text, {"gfx942", "o.s"});
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const AssemblyError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      const Diagnostic& d = e.diagnostics().front();
      EXPECT_EQ(d.line, c.line) << e.what();
      EXPECT_EQ(d.column, c.column) << e.what();
      EXPECT_NE(d.message.find(c.what), std::string::npos) << e.what();
      EXPECT_NE(d.message.find("past 64 MiB"), std::string::npos) << e.what();
    }
  }
}

// The check walks the sections in the order they were made; its diagnostics come in the order of the text.
TEST(LlvmOrgCheck, DiagnosticsFromSeveralSectionsComeInTextOrder) {
  const std::string text = ".text\n  s_nop 0\n.data\n  .org 0x5000000\n.text\n  .org 0x6000000\n";
  try {
    llvm_assemble_object(text, {"gfx942", "o.s"});
    ADD_FAILURE() << "accepted";
  } catch (const AssemblyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, 4) << e.what();
    EXPECT_NE(e.diagnostics()[0].message.find("'.data'"), std::string::npos) << e.what();
    EXPECT_EQ(e.diagnostics()[1].line, 6) << e.what();
    EXPECT_NE(e.diagnostics()[1].message.find("'.text'"), std::string::npos) << e.what();
  }
}

TEST(LlvmOrgCheck, OffsetsUpToTheBoundAreWritten) {
  const std::vector<uint8_t> small = llvm_assemble_object("  s_nop 0\n  .org 0x1000\n  s_endpgm\n", {"gfx942", "o.s"});
  EXPECT_GT(small.size(), 0x1000u);
  // A move back is LLVM's own error, not this check's.
  try {
    llvm_assemble_object("  s_nop 0\n  s_nop 0\n  .org 4\n", {"gfx942", "o.s"});
    ADD_FAILURE() << "a move back was accepted";
  } catch (const AssemblyError& e) {
    EXPECT_EQ(std::string(e.what()).find("past 64 MiB"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace isatune::toolchain

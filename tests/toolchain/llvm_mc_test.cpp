// LLVM MC in memory: objects, diagnostics, targets.
#include <gtest/gtest.h>

#include <regex>

#include "isatune/error.h"

#include "isatune/toolchain/llvm_mc.h"
#include "llvm_skip.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

using testing::elf_header;
using testing::elf_section;
using testing::vadd_kernel;

class LlvmMcIsa : public ::testing::TestWithParam<const char*> {};

TEST_P(LlvmMcIsa, AssemblesRelocatableObject) {
  const std::string isa = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(isa);
  ASSERT_TRUE(llvm_supports(isa)) << isa;
  std::vector<Diagnostic> warnings;
  std::vector<uint8_t> obj = llvm_assemble_object(vadd_kernel(isa), {isa, "vadd.s"}, &warnings);
  auto h = elf_header(obj);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->type, ET_REL);
  EXPECT_EQ(h->machine, EM_AMDGPU);
  EXPECT_EQ(h->abi_version, 3) << "code object v5";
  auto text = elf_section(obj, ".text");
  ASSERT_TRUE(text);
  // 16 instructions + s_endpgm, padded to 64 bytes, then 256 s_nop.
  EXPECT_GE(text->size(), 1024u + 64u);
  // Last word of .text is s_nop 0 (0xbf800000), first instruction s_load_dwordx4 (SMEM, 0xc00a...).
  uint32_t last;
  std::memcpy(&last, text->data() + text->size() - 4, 4);
  EXPECT_EQ(last, 0xbf800000u);
  EXPECT_TRUE(warnings.empty()) << warnings.front().str();
}

INSTANTIATE_TEST_SUITE_P(Cdna, LlvmMcIsa, ::testing::Values("gfx90a", "gfx942", "gfx950"));

TEST(LlvmMc, VersionIsLinkedLlvm) {
  EXPECT_TRUE(std::regex_match(llvm_version(), std::regex(R"(\d+\.\d+\.\d+)"))) << llvm_version();
  // The programs of the same installation report the same version.
  if (!testing::have_llvm_programs()) GTEST_SKIP() << "llvm-mc not found in " << ISATUNE_TEST_LLVM_TOOLS_DIR;
  FILE* p = ::popen((testing::llvm_tool("llvm-mc") + " --version").c_str(), "r");
  ASSERT_TRUE(p);
  std::string out;
  char buf[256];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  ::pclose(p);
  EXPECT_NE(out.find("version " + llvm_version()), std::string::npos) << out;
}

// gfx950 came with LLVM 20: known from there on, and on LLVM 19 refused with the version it needs.
TEST(LlvmMc, Gfx950NeedsLlvm20) {
  EXPECT_FALSE(llvm_supports("gfx999"));
  EXPECT_FALSE(llvm_supports(""));
  if (std::stoi(llvm_version()) >= 20) {
    EXPECT_TRUE(llvm_supports("gfx950"));
    return;
  }
  EXPECT_FALSE(llvm_supports("gfx950"));
  try {
    llvm_assemble_object(vadd_kernel("gfx950"), {"gfx950", "vadd.s"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "gfx950 needs LLVM >= 20; this build uses LLVM " + llvm_version());
  }
}

TEST(LlvmMc, MalformedInstructionHasPlace) {
  std::string text = vadd_kernel("gfx942");
  // Line 8 is "  s_load_dwordx4 ..."; replace with an unknown mnemonic at column 3.
  size_t at = text.find("  s_load_dwordx4");
  text.replace(at, std::string("  s_load_dwordx4").size(), "  v_bogus_op_b32");
  try {
    llvm_assemble_object(text, {"gfx942", "kernels/vadd.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.severity, Diagnostic::Severity::error);
    EXPECT_EQ(d.file, "kernels/vadd.s");
    EXPECT_EQ(d.line, 8);
    EXPECT_EQ(d.column, 3);
    EXPECT_NE(d.message.find("invalid instruction"), std::string::npos) << d.message;
    EXPECT_NE(d.source_line.find("v_bogus_op_b32"), std::string::npos) << d.source_line;
    EXPECT_EQ(std::string(e.what()).rfind("kernels/vadd.s:8:3: error: ", 0), 0u) << e.what();
  }
}

TEST(LlvmMc, BadOperandColumn) {
  const std::string text = ".text\nk:\n  s_mov_b32 s0, s1\n  v_mov_b32 v1, s[0:3]\n  s_endpgm\n";
  try {
    llvm_assemble_object(text, {"gfx942", "op.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.line, 4);
    EXPECT_EQ(d.column, 17) << e.what(); // the offending operand s[0:3]
    EXPECT_EQ(d.file, "op.s");
  }
}

TEST(LlvmMc, SeveralErrorsAllCollected) {
  const std::string text = ".text\nk:\n  v_nope v0\n  s_nope s0\n  s_endpgm\n";
  try {
    llvm_assemble_object(text, {"gfx90a", "two.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].line, 3);
    EXPECT_EQ(e.diagnostics()[1].line, 4);
  }
}

TEST(LlvmMc, WarningsAreReturnedNotPrinted) {
  // A too-large immediate for .byte is a warning-free error; a `.warning` directive is a plain warning.
  const std::string text = ".text\nk:\n  .warning \"careful\"\n  s_endpgm\n";
  std::vector<Diagnostic> warnings;
  auto obj = llvm_assemble_object(text, {"gfx942", "w.s"}, &warnings);
  EXPECT_FALSE(obj.empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].severity, Diagnostic::Severity::warning);
  EXPECT_EQ(warnings[0].line, 3);
  EXPECT_NE(warnings[0].message.find("careful"), std::string::npos);
}

TEST(LlvmMc, UnknownTargetNamesLlvmVersion) {
  try {
    llvm_assemble_object(".text\n s_endpgm\n", {"gfx999", "x.s"});
    FAIL() << "no error";
  } catch (const AssemblyError&) {
    FAIL() << "an unknown target is an InputError, not an AssemblyError";
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("gfx999"), std::string::npos) << what;
    EXPECT_NE(what.find("LLVM " + llvm_version()), std::string::npos) << what;
  }
}

TEST(LlvmMc, NonCdnaProcessorKnownToLlvmIsAccepted) {
  auto obj = llvm_assemble_object(".text\nk:\n s_endpgm\n", {"amdgcn-amd-amdhsa--gfx1100", "x.s"});
  EXPECT_TRUE(elf_header(obj));
}

TEST(LlvmMc, BadFeatureIsInputError) {
  EXPECT_THROW(llvm_assemble_object(".text\n", {"gfx942:bogus+", "x.s"}), InputError);
}

TEST(LlvmMc, TargetDirectiveMustAgree) {
  // Source says gfx942, options say gfx90a: LLVM's own message is kept, with its place.
  try {
    llvm_assemble_object(vadd_kernel("gfx942"), {"gfx90a", "mismatch.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.line, 1);
    EXPECT_NE(d.message.find("does not match the specified target id amdgcn-amd-amdhsa--gfx90a"), std::string::npos) << d.message;
  }
  // Features must agree too.
  EXPECT_THROW(llvm_assemble_object(vadd_kernel("gfx942"), {"gfx942:sramecc+:xnack-", "m.s"}), AssemblyError);
  std::string with_features = vadd_kernel("gfx942");
  with_features.replace(with_features.find("gfx942\""), 7, "gfx942:sramecc+:xnack-\"");
  EXPECT_NO_THROW(llvm_assemble_object(with_features, {"amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "m.s"}));
}

TEST(LlvmMc, LayoutErrorFromMcContextIsCollected) {
  // A branch target that does not exist is found only when the object is written (MCContext::reportError).
  const std::string text = ".text\nk:\n  s_branch .Lnowhere\n  s_endpgm\n";
  try {
    llvm_assemble_object(text, {"gfx942", "late.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    EXPECT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics().front().file, "late.s");
  }
}

} // namespace
} // namespace isatune::toolchain

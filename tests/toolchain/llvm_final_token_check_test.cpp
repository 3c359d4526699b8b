// The backstop behind the lexer check (asm/toolchain/src/llvm_final_token_check.cpp), white box: LLVM's own
// lexer is asked whether an error token comes right before the last end of statement, the one place LLVM 22's
// AMDGPU parser loops forever after a bad statement. The texts that reach it through llvm_assemble_object are
// the ones the lexer check misreads, and none is known, so it is called directly here.
#include <gtest/gtest.h>

#include <string>

#include "internal.h"
#include "isatune/error.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

const llvm::MCAsmInfo& gfx942() {
  init_llvm_amdgpu();
  return *mc_target(resolve_target("gfx942"), "t.s").mai;
}

Diagnostic refusal(const std::string& text, size_t from = 0) {
  try {
    check_llvm_final_token(text, from, gfx942(), "t.s");
  } catch (const AssemblyError& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u) << e.what();
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

TEST(LlvmFinalToken, ErrorTokenBeforeTheLastEndOfStatementIsRefused) {
  // Each of these hangs llvm-mc-22 -mcpu=gfx942 (the 0x8b byte is an error token to LLVM's lexer).
  Diagnostic d = refusal("a \"\" \"\"\x8b\n");
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.column, 8);
  EXPECT_NE(d.message.find("invalid character in input (LLVM's lexer)"), std::string::npos) << d.str();
  EXPECT_NE(d.message.find("loop forever"), std::string::npos) << d.str();
  d = refusal("a \"\" \"\n; \"\x8b\n"); // a string over two lines, then the byte: line 2 in LLVM's reading
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 4);
  d = refusal("s_nop 0\na /* c */ \x8b /* d */ ; e\n"); // comments in between change nothing
  EXPECT_EQ(d.line, 2);
  EXPECT_EQ(d.column, 11);
  d = refusal("a \"\n"); // an unterminated string runs to the end
  EXPECT_NE(d.message.find("unterminated string constant"), std::string::npos) << d.str();
}

TEST(LlvmFinalToken, ErrorTokensElsewhereAreLeftToTheLexerCheck) {
  // Not before the last end of statement: LLVM stops at the next one (and reports the error).
  EXPECT_NO_THROW(check_llvm_final_token("a \"\" \"\"\x8b\n\n", 0, gfx942(), "t.s"));
  EXPECT_NO_THROW(check_llvm_final_token("a \x8b\ns_nop 0\n", 0, gfx942(), "t.s"));
  EXPECT_NO_THROW(check_llvm_final_token("s_nop 0 ; \x8b\n", 0, gfx942(), "t.s"));
  EXPECT_NO_THROW(check_llvm_final_token("", 0, gfx942(), "t.s"));
}

TEST(LlvmFinalToken, ReadsFromWhereTheLexerCheckLexesTheTail) {
  // Before `from` is YAML that LLVM reads raw; here a quote that LLVM's lexer would run to the end of the
  // text.
  const std::string text = "\"\n.end_amdgpu_metadata\ns_nop 0\n";
  EXPECT_NO_THROW(check_llvm_final_token(text, 2, gfx942(), "t.s"));
  EXPECT_NE(refusal(text).message.find("unterminated string constant"), std::string::npos);
}

} // namespace
} // namespace isatune::toolchain::detail

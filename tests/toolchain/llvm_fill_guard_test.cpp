// .fill, .space, .skip and .zero through LLVM: what they make is bounded (64 MiB in one object), since LLVM 22
// builds it all in memory (`.fill 37e` took llvm-mc-22 to 23 GB); below the bound they make what LLVM makes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.data\n";

TEST(LlvmFillGuard, HugeCountsAreRefusedAtTheCount) {
  struct Case {
    std::string line;
    int column;
  };
  const std::vector<Case> cases = {
      {".fill 37e", 7},                 // the fuzzer's: a count LLVM reads as a huge number
      {".fill 1<<40, 4, 0", 7},         // an expression
      {".fill 16777217, 4", 7},         // just past 64 MiB in 4-byte values
      {".fill 9000000, 16, 1", 7},      // size 16 counts as 8, as LLVM truncates it
      {"  .space 0x4000001", 10},       // 64 MiB + 1
      {".skip 1<<62, 0xff", 7},
      {".zero 100000000000", 7},
      {"n = 1 << 30\n.zero n", 7},      // a symbol's value
      {".fill 2e56,00000", 7},          // size 0: no bytes, but LLVM loops once per value (a fuzzer's timeout)
      {".fIll 0xbf800000", 7},          // LLVM takes its directives in any case (a fuzzer's out-of-memory)
      {".SPACE 0x4000001", 8},
      {".Skip 1<<62", 7},
      {".zerO 100000000000", 7},
  };
  for (const Case& c : cases) {
    const std::string text = kHead + c.line + "\n";
    const int line = 1 + int(std::count(text.begin(), text.end(), '\n')) - 1;
    try {
      llvm_assemble_object(text, {"gfx942", "f.s"});
      FAIL() << "accepted: " << c.line;
    } catch (const AssemblyError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      const Diagnostic& d = e.diagnostics().front();
      EXPECT_EQ(d.line, line) << e.what();
      EXPECT_EQ(d.column, c.column) << e.what();
      EXPECT_NE(d.message.find("more than 64 MiB"), std::string::npos) << e.what();
    }
  }
}

// Values of size 0 and a count known only at layout: LLVM 22's writer divides by the size (SIGFPE; llvm-mc-22
// dies on `.fill q, 0` too). The fuzzer's was `.FILL 5<<qgfx95044, 0`. A known count of size 0 still assembles.
TEST(LlvmFillGuard, SizeZeroWithACountNotKnownYetIsRefused) {
  for (const std::string line : {".fill q, 0", ".FILL 5<<qgfx95044, 0", ".fill .Lx - 4, 0, 1"}) {
    const std::string text = kHead + line + "\n";
    try {
      llvm_assemble_object(text, {"gfx942", "f.s"});
      FAIL() << "accepted: " << line;
    } catch (const AssemblyError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      EXPECT_EQ(e.diagnostics().front().column, 7) << e.what();
      EXPECT_NE(e.diagnostics().front().message.find("values of size 0 and a count that is not a number yet"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(llvm_assemble_object(kHead + ".fill 3, 0\n", {"gfx942", "f.s"}));
}

TEST(LlvmFillGuard, TheBoundCountsEveryDirectiveOfTheObject) {
  // 40 MiB and 30 MiB: each fits, not both.
  try {
    llvm_assemble_object(kHead + ".zero 41943040\n.fill 7864320, 4, 0\n", {"gfx942", "f.s"});
    FAIL() << "accepted 70 MiB";
  } catch (const AssemblyError& e) {
    EXPECT_EQ(e.diagnostics().front().line, 4) << e.what();
  }
}

TEST(LlvmFillGuard, SmallFillsMakeWhatLlvmMakes) {
  // The fixtures' padding (.fill 256, 4, s_code_end), and each directive's forms with a value, in .data.
  const std::string text = testing::vadd_kernel("gfx942") + ".data\nbegin:\n.fill 3, 2, 0x1234\n.fill 2\n"
                           ".fill 1, 8, 0x1122334455667788\n.space 3, 0xab\n.skip 2\n.zero 2, 7\n.fill -1\n"
                           ".fill 1, -2\nend:\n.long end - begin\n";
  std::vector<Diagnostic> warnings;
  const std::vector<uint8_t> object = llvm_assemble_object(text, {"gfx942", "f.s"}, &warnings);
  const std::vector<uint8_t> want = {0x34, 0x12, 0x34, 0x12, 0x34, 0x12, 0, 0, 0x88, 0x77, 0x66, 0x55, 0,
                                     0,    0,    0,    0xab, 0xab, 0xab, 0, 0, 7,    7,    23,   0,    0,
                                     0};
  EXPECT_NE(std::search(object.begin(), object.end(), want.begin(), want.end()), object.end())
      << "the .data bytes are not in the object";
  bool negative_size = false;
  for (const Diagnostic& d : warnings) negative_size |= d.message.find("negative size") != std::string::npos;
  EXPECT_TRUE(negative_size) << "LLVM's warning for '.fill 1, -2' is missing";
}

TEST(LlvmFillGuard, AnyCaseMakesWhatLlvmMakes) {
  // Upper and mixed case reach the guard's handlers, which make the same bytes as LLVM's own.
  const std::string text = kHead + "begin:\n.FILL 2, 2, 0x5a6b\n.Space 1, 0xcd\n.sKIP 1, 0xef\n.ZERO 1\nend:\n"
                           ".long end - begin\n";
  const std::vector<uint8_t> object = llvm_assemble_object(text, {"gfx942", "f.s"});
  const std::vector<uint8_t> want = {0x6b, 0x5a, 0x6b, 0x5a, 0xcd, 0xef, 0, 7, 0, 0, 0};
  EXPECT_NE(std::search(object.begin(), object.end(), want.begin(), want.end()), object.end())
      << "the .data bytes are not in the object";
}

} // namespace
} // namespace isatune::toolchain

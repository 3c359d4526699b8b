// `.size` expressions: those LLVM's ELF writer would abort the process on ("size expression must be absolute")
// are refused with their place and the reason; those it writes are written with the same st_size.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "isatune/toolchain/llvm_mc.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

// f is 20 bytes: s_nop (4), padding to 16, .Lmid, s_endpgm (4), .Lend. .Ld is in another section.
const std::string kHead = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n"
                          ".data\n.Ld:\n  .long 1\n"
                          ".text\n.globl f\n.p2align 8\n.type f,@function\nf:\n  s_nop 0\n  .p2align 4\n"
                          ".Lmid:\n  s_endpgm\n.Lend:\n"
                          ".set x, .Lend - f\n.set y, .Lmid\n.set c, 8\n";
constexpr int kSizeLine = 18; // the line of the .size after kHead

// st_size of the symbol `name` in an ELF64 image, from its .symtab and .strtab.
std::optional<uint64_t> symbol_size(const std::vector<uint8_t>& elf, const std::string& name) {
  const auto symtab = testing::elf_section(elf, ".symtab");
  const auto strtab = testing::elf_section(elf, ".strtab");
  if (!symtab || !strtab) return std::nullopt;
  for (size_t off = 0; off + sizeof(Elf64_Sym) <= symtab->size(); off += sizeof(Elf64_Sym)) {
    Elf64_Sym s;
    std::memcpy(&s, symtab->data() + off, sizeof s);
    if (s.st_name < strtab->size() && name == reinterpret_cast<const char*>(strtab->data() + s.st_name))
      return s.st_size;
  }
  return std::nullopt;
}

TEST(LlvmSizeCheck, SizesLlvmWouldAbortOnAreRefusedAtTheirPlace) {
  struct Case {
    std::string expr;
    std::string why;
    bool llvm_aborts; // false: refused although LLVM would write it (the divisor needs the layout)
  };
  const std::vector<Case> cases = {
      {".Lend&-f", "it negates the symbol 'f'", true}, // the fuzzer's, from `.Lend-f`
      {".Lend & f", "an operator other than + and - has a symbol", true},
      {".Lend", "it is the address of '.Lend'", true},
      {"-(.Lend) + 20", "it negates the symbol '.Lend'", true},
      {".Ld - f", "'.Ld' and 'f' are not in one section", true},
      {"y", "it is the address of '.Lmid'", true},
      {".Lend - f + .Lmid", "it is the address of '.Lmid'", true},
      {"u - f", "it uses 'u', which is never defined", true},
      {"(.Lend - f) / 0", "it divides by zero", true},
      {"(.Lend - f) % (c - 8)", "it divides by zero", true},
      {"~.Lend - f", "it applies '~' or '!' to a symbol", true},
      {".Lend + .Lmid - f", "two symbols that do not cancel", true},
      {"16 / x", "its divisor depends on where labels land", false},
  };
  const bool programs = testing::have_llvm_programs();
  if (!programs)
    std::printf("llvm-mc/ld.lld not found in %s: not checking what LLVM does\n", ISATUNE_TEST_LLVM_TOOLS_DIR);
  for (const Case& c : cases) {
    const std::string text = kHead + ".size f, " + c.expr + "\n";
    try {
      llvm_assemble_object(text, {"gfx942", "f.s"});
      ADD_FAILURE() << "accepted: .size f, " << c.expr;
    } catch (const AssemblyError& e) {
      ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
      const Diagnostic& d = e.diagnostics().front();
      EXPECT_EQ(d.line, kSizeLine) << e.what();
      // The expression's first token: a parenthesis is none.
      EXPECT_EQ(d.column, int(10 + c.expr.find_first_not_of('('))) << e.what();
      EXPECT_NE(d.message.find("the .size of 'f'"), std::string::npos) << e.what();
      EXPECT_NE(d.message.find(c.why), std::string::npos) << e.what();
      EXPECT_EQ(d.source_line, ".size f, " + c.expr);
    }
    if (!programs) continue;
    std::string log;
    const bool written = !testing::assemble_with_programs(text, "gfx942", &log).empty();
    for (char& ch : log) ch = char(std::tolower(static_cast<unsigned char>(ch))); // LLVM 22: "Size ... absolute."
    if (c.llvm_aborts)
      EXPECT_NE(log.find("size expression must be absolute"), std::string::npos)
          << "llvm-mc did not abort on .size f, " << c.expr << ":\n" << log;
    else
      EXPECT_TRUE(written) << c.expr << ":\n" << log;
  }
}

TEST(LlvmSizeCheck, EverySizeOfTheTextIsReportedInOrder) {
  const std::string text = kHead + ".globl g\ng:\n  s_endpgm\n.size g, .Ld\n.size f, .Lend & f\n";
  try {
    llvm_assemble_object(text, {"gfx942", "f.s"});
    FAIL() << "accepted";
  } catch (const AssemblyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].line, kSizeLine + 3);
    EXPECT_NE(e.diagnostics()[0].message.find("the .size of 'g'"), std::string::npos);
    EXPECT_EQ(e.diagnostics()[1].line, kSizeLine + 4);
    EXPECT_NE(e.diagnostics()[1].message.find("the .size of 'f'"), std::string::npos);
  }
}

TEST(LlvmSizeCheck, SizesLlvmWritesAreWrittenAsLlvmWritesThem) {
  struct Case {
    std::string expr;
    uint64_t size;
  };
  const std::vector<Case> cases = {
      {".Lend - f", 20},
      {". - f", 20},
      {"x", 20},
      {"-(f - .Lend)", 20},
      {"(.Lend - f) * 2 - 4", 36},
      {"(.Lend - f) & 0xc", 4},
      {"(.Lend - f) / 4", 5},
      {"(.Lend - f) % 3", 2},
      {"y - f", 16},
      {".Lend - .Lmid + c", 12},
      {"f - .Lend + 2 * (.Lend - f)", 20},
      {".Lend - f + .Lmid - .Lmid", 20},
      {"(.Lend - f) >> 2 << 1", 10},
      {"c", 8},
      {"((.Lend - f) > 8) & 7", 7}, // a true comparison is -1
  };
  const bool programs = testing::have_llvm_programs();
  for (const Case& c : cases) {
    const std::string text = kHead + ".size f, " + c.expr + "\n";
    std::vector<uint8_t> object;
    try {
      object = llvm_assemble_object(text, {"gfx942", "f.s"});
    } catch (const AssemblyError& e) {
      ADD_FAILURE() << ".size f, " << c.expr << ": " << e.what();
      continue;
    }
    EXPECT_EQ(symbol_size(object, "f"), std::optional<uint64_t>(c.size)) << c.expr;
    if (!programs) continue;
    std::string log;
    const std::vector<uint8_t> theirs = testing::assemble_with_programs(text, "gfx942", &log);
    ASSERT_FALSE(theirs.empty()) << c.expr << ":\n" << log;
    EXPECT_EQ(symbol_size(theirs, "f"), std::optional<uint64_t>(c.size)) << "llvm-mc: " << c.expr;
  }
}

} // namespace
} // namespace isatune::toolchain

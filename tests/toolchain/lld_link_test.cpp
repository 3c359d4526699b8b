// lld in process: shared objects from memory, link errors, repeated and large links.
#include <gtest/gtest.h>

#include "isatune/toolchain/llvm_mc.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

using testing::elf_header;
using testing::elf_section;
using testing::vadd_kernel;

TEST(LldLink, LinksSharedObjectInMemory) {
  auto obj = llvm_assemble_object(vadd_kernel("gfx942"), {"gfx942", "vadd.s"});
  auto so = lld_link_shared({obj});
  auto h = elf_header(so);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->type, ET_DYN);
  EXPECT_EQ(h->machine, EM_AMDGPU);
  EXPECT_EQ(elf_section(so, ".text"), elf_section(obj, ".text")) << "no relocations in vadd: code unchanged";
  EXPECT_TRUE(elf_section(so, ".dynsym"));
  EXPECT_TRUE(elf_section(so, ".note"));
}

TEST(LldLink, RepeatedLinksGiveSameBytes) {
  auto obj = llvm_assemble_object(vadd_kernel("gfx90a"), {"gfx90a", "vadd.s"});
  auto first = lld_link_shared({obj});
  for (int i = 0; i < 20; ++i) ASSERT_EQ(lld_link_shared({obj}), first) << "link " << i;
}

TEST(LldLink, TwoObjectsTwoKernels) {
  auto a = llvm_assemble_object(vadd_kernel("gfx942", "ka"), {"gfx942", "a.s"});
  auto b = llvm_assemble_object(vadd_kernel("gfx942", "kb"), {"gfx942", "b.s"});
  auto so = lld_link_shared({a, b});
  auto text = elf_section(so, ".text");
  ASSERT_TRUE(text);
  EXPECT_GE(text->size(), 2 * elf_section(a, ".text")->size());
}

TEST(LldLink, OutputLargerThanPipeBuffer) {
  // ~1 MiB of code: much more than the 64 KiB a pipe holds, so the reader thread must drain while lld writes.
  std::string text = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n.globl big\n.p2align 8\nbig:\n"
                     ".fill 262144, 4, 0xbf800000\n  s_endpgm\n";
  auto obj = llvm_assemble_object(text, {"gfx942", "big.s"});
  auto so = lld_link_shared({obj});
  auto t = elf_section(so, ".text");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->size(), 262144u * 4 + 4);
}

TEST(LldLink, UndefinedSymbolIsAssemblyError) {
  const std::string text = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n.globl k\nk:\n"
                           "  s_getpc_b64 s[0:1]\n  s_add_u32 s0, s0, missing_function@rel32@lo+4\n"
                           "  s_addc_u32 s1, s1, missing_function@rel32@hi+12\n  s_endpgm\n";
  auto obj = llvm_assemble_object(text, {"gfx942", "u.s"});
  try {
    lld_link_shared({obj});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    ASSERT_FALSE(e.diagnostics().empty());
    EXPECT_EQ(e.diagnostics().front().severity, Diagnostic::Severity::error);
    EXPECT_NE(e.diagnostics().front().message.find("undefined symbol: missing_function"), std::string::npos)
        << e.what();
  }
  // lld recovered: the next link works.
  EXPECT_NO_THROW(lld_link_shared({llvm_assemble_object(vadd_kernel("gfx942"), {"gfx942", "v.s"})}));
}

TEST(LldLink, GarbageInputIsAnError) {
  std::vector<uint8_t> junk(100, 0x42);
  EXPECT_THROW(lld_link_shared({junk}), Error);
  EXPECT_THROW(lld_link_shared({}), InputError);
  EXPECT_NO_THROW(lld_link_shared({llvm_assemble_object(vadd_kernel("gfx942"), {"gfx942", "v.s"})}));
}

TEST(LldLink, NoFileDescriptorsLeak) {
  auto obj = llvm_assemble_object(vadd_kernel("gfx942"), {"gfx942", "vadd.s"});
  lld_link_shared({obj});
  auto count_fds = [] {
    int n = 0;
    for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
    return n;
  };
  int before = count_fds();
  for (int i = 0; i < 10; ++i) lld_link_shared({obj});
  EXPECT_EQ(count_fds(), before);
}

} // namespace
} // namespace isatune::toolchain

namespace isatune::toolchain {
namespace {

// lld stops with a fatal error on a malformed ELF file and then cannot run again in the process, so inputs are
// checked before lld sees them: a truncated object is an InputError and lld keeps working.
TEST(LldLink, TruncatedObjectRejectedBeforeLld) {
  auto obj = llvm_assemble_object(testing::vadd_kernel("gfx942"), {"gfx942", "v.s"});
  std::vector<uint8_t> truncated(obj.begin(), obj.begin() + 80); // ELF header kept, section table cut off
  try {
    lld_link_shared({obj, truncated});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    FAIL() << "reached lld: " << e.what();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("object 1"), std::string::npos) << e.what();
  }
  std::vector<uint8_t> not_amdgpu = obj;
  not_amdgpu[18] = 62; // e_machine = x86-64
  EXPECT_THROW(lld_link_shared({not_amdgpu}), InputError);
  EXPECT_NO_THROW(lld_link_shared({obj}));
}

TEST(LldLink, MessagesNameObjectsNotDescriptors) {
  const std::string text = ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.text\n.globl k\nk:\n  s_endpgm\n";
  auto a = llvm_assemble_object(text, {"gfx942", "a.s"});
  try {
    lld_link_shared({a, a}); // duplicate symbol k
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    std::string all;
    for (const auto& d : e.diagnostics()) all += d.message + "\n";
    EXPECT_NE(all.find("duplicate symbol: k"), std::string::npos) << all;
    EXPECT_EQ(all.find("/proc/self/fd"), std::string::npos) << all;
    EXPECT_NE(all.find("object 1"), std::string::npos) << all;
  }
}

} // namespace
} // namespace isatune::toolchain

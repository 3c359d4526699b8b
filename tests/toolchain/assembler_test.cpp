// The Assembler interface, "llvm" backend: text -> code object with KernelInfo, and agreement with the
// llvm-mc and ld.lld programs.
#include <gtest/gtest.h>

#include "isatune/codeobj/reader.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/llvm_mc.h"
#include "llvm_skip.h"
#include "toolchain_test_util.h"

namespace isatune::toolchain {
namespace {

using testing::elf_section;
using testing::vadd_kernel;

class LlvmAssemblerIsa : public ::testing::TestWithParam<const char*> {};

TEST_P(LlvmAssemblerIsa, VaddKernelInfo) {
  const std::string isa = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(isa);
  auto as = make_assembler("llvm");
  ASSERT_TRUE(as->supports(isa));
  Assembled out = as->assemble(vadd_kernel(isa), {isa, "vadd.s"});
  EXPECT_TRUE(out.warnings.empty());
  const CodeObject& co = out.code;
  EXPECT_EQ(co.vendor, Vendor::amd);
  EXPECT_EQ(co.isa, isa);
  EXPECT_EQ(co.sha256.size(), 64u);
  EXPECT_EQ(co.sha256, codeobj::sha256_hex(co.bytes));
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& k = co.kernels[0];
  EXPECT_EQ(k.name, "vadd");
  EXPECT_EQ(k.symbol, "vadd.kd");
  EXPECT_EQ(k.kernarg_size, 28u);
  EXPECT_EQ(k.kernarg_align, 8u);
  EXPECT_EQ(k.lds_bytes, 0u);
  EXPECT_EQ(k.wave_size, 64u);
  EXPECT_EQ(k.max_workgroup_size, 256u);
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[3].name, "count");
  EXPECT_EQ(k.args[3].offset, 24u);
  EXPECT_EQ(k.args[2].access, "write_only");
  ASSERT_TRUE(k.descriptor);
  const KernelDescriptor& d = *k.descriptor;
  EXPECT_EQ(d.kernarg_size, 28u);
  EXPECT_EQ(d.compute_pgm_rsrc2, 0x84u);
  EXPECT_EQ(d.compute_pgm_rsrc3, 0x1u);
  EXPECT_EQ(d.kernel_code_properties, 0x8u);
  if (isa == "gfx942") {
    EXPECT_EQ(d.compute_pgm_rsrc1, 0x00af0080u);
  }
  EXPECT_EQ(d.accum_offset, 8u);
  EXPECT_TRUE(d.user_sgpr_kernarg_segment_ptr);
  EXPECT_TRUE(d.workgroup_id_x);
  // The code begins at a 256-byte boundary and ends with the s_nop padding.
  EXPECT_EQ(k.code_offset % 256, 0u);
  EXPECT_EQ(co.find_kernel("vadd"), &co.kernels[0]);
}

INSTANTIATE_TEST_SUITE_P(Cdna, LlvmAssemblerIsa, ::testing::Values("gfx90a", "gfx942", "gfx950"));

TEST(LlvmAssembler, NameAndVersion) {
  auto as = make_assembler("llvm");
  EXPECT_EQ(as->name(), "llvm");
  EXPECT_EQ(as->version(), "LLVM " + llvm_version());
  EXPECT_FALSE(as->supports("gfx999"));
  EXPECT_EQ(as->supports("gfx950"), !isatune::test::llvm_too_old_for("gfx950")) << as->version();
}

TEST(LlvmAssembler, Registry) {
  auto names = available_assemblers();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "llvm");
  EXPECT_THROW(make_assembler("gas"), InputError);
}

TEST(LlvmAssembler, MalformedSourceThroughInterface) {
  std::string text = vadd_kernel("gfx90a");
  text.replace(text.find("v_add_f32      v3, v3, v4"), 25, "v_add_f32      v3, v3,, v4");
  try {
    make_assembler("llvm")->assemble(text, {"gfx90a", "my/kernel.s"});
    FAIL() << "no error";
  } catch (const AssemblyError& e) {
    const Diagnostic& d = e.diagnostics().front();
    EXPECT_EQ(d.file, "my/kernel.s");
    EXPECT_EQ(d.line, 22);
    EXPECT_EQ(d.column, 25) << e.what(); // the second comma
  }
}

// The in-process result equals what the llvm-mc and ld.lld programs of the same installation produce.
class MatchesPrograms : public ::testing::TestWithParam<const char*> {};

TEST_P(MatchesPrograms, SameTextAndImage) {
  if (!testing::have_llvm_programs())
    GTEST_SKIP() << "llvm-mc / ld.lld not found in " << ISATUNE_TEST_LLVM_TOOLS_DIR;
  const std::string isa = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(isa);
  const std::string text = vadd_kernel(isa);
  std::string log;
  std::vector<uint8_t> expected = testing::assemble_with_programs(text, isa, &log);
  ASSERT_FALSE(expected.empty()) << log;
  std::vector<uint8_t> ours = make_assembler("llvm")->assemble(text, {isa, "k.s"}).code.bytes;
  auto t_expected = elf_section(expected, ".text"), t_ours = elf_section(ours, ".text");
  ASSERT_TRUE(t_expected && t_ours);
  EXPECT_EQ(*t_ours, *t_expected);
  EXPECT_EQ(elf_section(ours, ".rodata"), elf_section(expected, ".rodata")) << "kernel descriptor";
  EXPECT_EQ(elf_section(ours, ".note"), elf_section(expected, ".note")) << "metadata note";
  // The whole image differs only if lld was given different options; note it rather than hide it.
  if (ours != expected) ADD_FAILURE() << "linked images differ (" << ours.size() << " vs " << expected.size() << " bytes)";
}

INSTANTIATE_TEST_SUITE_P(Cdna, MatchesPrograms, ::testing::Values("gfx90a", "gfx942", "gfx950"));

} // namespace
} // namespace isatune::toolchain

// Static coverage (emu/include/isatune/emu/coverage.h) on the AITER fixtures and on a kernel with an
// instruction the emulator has no handler for.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <string>

#include "isatune/codeobj/reader.h"
#include "isatune/emu/coverage.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

const InstructionUse* find(const CoverageReport& r, const std::string& m) {
  auto it =
      std::find_if(r.uses.begin(), r.uses.end(), [&](const InstructionUse& u) { return u.mnemonic == m; });
  return it == r.uses.end() ? nullptr : &*it;
}

} // namespace

TEST(AiterCoverage, FixturesAndHandlers) {
  const std::string dir = std::string(ISATUNE_FIXTURES_DIR) + "/aiter/";
  CoverageCounter c;
  for (const char* f : {"gfx942/bf16gemm_fp32bf16_tn_32x64_pf3_splitk.co", "gfx942/topksoftmax_4x128x4.co",
                        "gfx950/bwd_hd128_dq_convert_bf16.co"})
    c.add(codeobj::read_code_object_file(dir + f), f);
  CoverageReport r = c.report();
  // On LLVM 19 the gfx950 code object cannot be disassembled: it is one error naming why, the others count.
  const std::string lacks950 = test::llvm_lacks("gfx950");
  const size_t kernels = lacks950.empty() ? 3u : 2u;
  EXPECT_EQ(r.code_objects, 3u);
  EXPECT_EQ(r.kernels, kernels);
  if (lacks950.empty()) {
    EXPECT_TRUE(r.errors.empty());
  } else {
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].find(lacks950), std::string::npos) << r.errors[0];
  }
  // LDS-DMA and the AGPR MFMA: only the GEMM, supported.
  const InstructionUse* dma = find(r, "buffer_load_dword_lds");
  ASSERT_NE(dma, nullptr);
  EXPECT_EQ(dma->kernels, 1u);
  EXPECT_TRUE(dma->supported);
  // The split-K path's atomics: only the GEMM.
  const InstructionUse* atomic = find(r, "global_atomic_add_f32");
  ASSERT_NE(atomic, nullptr);
  EXPECT_EQ(atomic->kernels, 1u);
  EXPECT_TRUE(atomic->supported);
  EXPECT_EQ(r.unsupported(), 0u);
  EXPECT_EQ(r.fully_supported_kernels, kernels);
  const InstructionUse* gpr = find(r, "s_set_gpr_idx_on");
  ASSERT_NE(gpr, nullptr);
  EXPECT_TRUE(gpr->supported);
  if (lacks950.empty()) { // gfx950's
    const InstructionUse* swap = find(r, "v_permlane16_swap_b32");
    ASSERT_NE(swap, nullptr);
    EXPECT_TRUE(swap->supported);
  } else {
    test::print_skipped_part("the gfx950 kernel's instructions", lacks950);
  }
  // Instructions after the last s_endpgm (ELF data decoded as code) are not counted.
  EXPECT_EQ(find(r, "v_dot2c_f32_f16"), nullptr);
  // DPP is its own entry (topksoftmax's reductions).
  const InstructionUse* dpp = find(r, "v_max_f32_dpp");
  ASSERT_NE(dpp, nullptr);
  EXPECT_GE(dpp->count, 1u);
}

TEST(AiterCoverage, UnsupportedInstructionAndErrors) {
  const std::string text =
      ".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.amdhsa_code_object_version 5\n.text\n"
      ".globl k\n.p2align 8\n.type k,@function\nk:\n  s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0\n"
      "  s_endpgm\n.Lk_end:\n.size k, .Lk_end-k\n.rodata\n.p2align 6\n.amdhsa_kernel k\n"
      "  .amdhsa_next_free_vgpr 1\n  .amdhsa_next_free_sgpr 1\n  .amdhsa_accum_offset 4\n"
      ".end_amdhsa_kernel\n";
  CodeObject code = toolchain::make_assembler("llvm")->assemble(text, {"gfx942", "k.s"}).code;
  CoverageCounter c;
  c.add(code, "k.s");
  CodeObject other = code;
  other.isa = "gfx1100";
  c.add(other, "other");
  CoverageReport r = c.report();
  EXPECT_EQ(r.kernels, 1u);
  EXPECT_EQ(r.fully_supported_kernels, 0u);
  const InstructionUse* setreg = find(r, "s_setreg_b32");
  ASSERT_NE(setreg, nullptr);
  EXPECT_FALSE(setreg->supported);
  EXPECT_EQ(setreg->kernels, 1u);
  const InstructionUse* end = find(r, "s_endpgm");
  ASSERT_NE(end, nullptr);
  EXPECT_TRUE(end->supported);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("gfx1100"), std::string::npos) << r.errors[0];
}

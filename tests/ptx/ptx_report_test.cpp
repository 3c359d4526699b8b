// The ptxas log parser on seeded logs (the forms of shared/notes/ptx.md section 5), no toolkit needed.
#include <gtest/gtest.h>

#include "isatune/toolchain/ptx_report.h"

using namespace isatune::toolchain;

TEST(PtxReport, ParsesSpillsAndResources) {
  const char* log =
      "ptxas warning : Registers are spilled to local memory in function 'ks', 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'ks' for 'sm_80'\n"
      "ptxas info    : Function properties for ks\n"
      "    272 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 24 registers, used 1 barriers, 272 bytes cumulative stack size, 2048 bytes smem, 364 bytes cmem[0]\n"
      "ptxas info    : Compile time = 20.064 ms\n";
  PtxReport r = parse_ptx_log(log, "k.ptx");
  ASSERT_EQ(r.kernels.size(), 1u);
  const PtxKernelReport& k = r.kernels[0];
  EXPECT_EQ(k.name, "ks");
  EXPECT_EQ(k.registers, 24u);
  EXPECT_EQ(k.barriers, 1u);
  EXPECT_EQ(k.stack_bytes, 272u);
  EXPECT_EQ(k.spill_store_bytes, 4u);
  EXPECT_EQ(k.spill_load_bytes, 4u);
  EXPECT_EQ(k.shared_bytes, 2048u);
  EXPECT_EQ(k.cmem0_bytes, 364u);
  EXPECT_TRUE(r.has(PtxIssueKind::register_spill));
  EXPECT_TRUE(r.has(PtxIssueKind::stack_frame));
  EXPECT_TRUE(r.rejectable());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].file, "k.ptx");
}

TEST(PtxReport, ClassifiesWgmmaAndSetmaxnregCodes) {
  const char* log =
      "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
      "insufficient register resources for the wgmma pipeline in the function 'gemm'\n"
      "ptxas info    : (C7504) 'setmaxnreg' ignored to maintain compatibility across compilation units in the function 'ws'\n"
      "ptxas info    : (C7517) warpgroup.wait is injected in around line 40 by compiler to allow use of registers "
      "defined by GMMA in function 'gemm'\n"
      "ptxas info    : (C7599) something new\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers\n";
  PtxReport r = parse_ptx_log(log);
  ASSERT_EQ(r.issues.size(), 4u);
  EXPECT_EQ(r.issues[0].kind, PtxIssueKind::wgmma_serialized);
  EXPECT_EQ(r.issues[0].code, "C7511");
  EXPECT_EQ(r.issues[0].kernel, "gemm");
  EXPECT_EQ(r.issues[1].kind, PtxIssueKind::setmaxnreg_ignored);
  EXPECT_EQ(r.issues[1].kernel, "ws");
  EXPECT_EQ(r.issues[2].kind, PtxIssueKind::wgmma_wait_injected);
  EXPECT_EQ(r.issues[3].kind, PtxIssueKind::other_code);
  ASSERT_NE(r.find("gemm"), nullptr);
  EXPECT_EQ(r.find("gemm")->registers, 168u);
}

TEST(PtxReport, ParsesNvJitLinkInfoAndErrorsWithLines) {
  const char* log =
      "info    : Function properties for k\n"
      "info    : used 90 registers, used 2 barriers, 0 stack, 1024 bytes smem, 840 bytes cmem[0], 0 bytes lmem\n"
      "ptxas bad.ptx, line 6; error   : Unknown modifier '.bar'\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n";
  PtxReport r = parse_ptx_log(log, "mine.ptx");
  ASSERT_NE(r.find("k"), nullptr);
  EXPECT_EQ(r.find("k")->registers, 90u);
  EXPECT_EQ(r.find("k")->shared_bytes, 1024u);
  EXPECT_EQ(r.find("k")->barriers, 2u);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].line, 6);
  EXPECT_EQ(r.errors[0].message, "Unknown modifier '.bar'");
  EXPECT_EQ(r.errors[0].str(), "mine.ptx:6: error: Unknown modifier '.bar'");
  EXPECT_FALSE(r.rejectable());
}

// Code objects whose kernel symbols have size 0 (AMD's hand-written AITER kernels, tests/fixtures/aiter): the
// reader derives the code's size from .text (to the next symbol or the section's end), and the AGPR count from
// the descriptor when the metadata gives none.
#include <gtest/gtest.h>

#include <filesystem>

#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/reader.h"
#include "llvm_skip.h"

namespace {

namespace fs = std::filesystem;
using namespace isatune;

TEST(SizeZeroSymbols, AiterKernelsGetTheirCodeSizeFromText) {
  const fs::path dir = fs::path(ISATUNE_FIXTURES_DIR) / "aiter";
  int kernels = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().extension() != ".co") continue;
    CodeObject co = codeobj::read_code_object_file(e.path().string());
    ASSERT_FALSE(co.kernels.empty()) << e.path();
    ISATUNE_CONTINUE_IF_LLVM_LACKS(co.isa); // the disassembler needs it (gfx950 on LLVM 19)
    for (const auto& k : co.kernels) {
      ++kernels;
      SCOPED_TRACE(e.path().string() + " " + k.name);
      ASSERT_GT(k.code_size, 0u);
      ASSERT_LE(k.code_offset + k.code_size, co.bytes.size());
      // The derived range holds the whole kernel: it disassembles to the end without invalid words, and it has
      // an s_endpgm.
      auto insts = codeobj::disassemble_kernel(co, k);
      ASSERT_FALSE(insts.empty());
      bool endpgm = false;
      for (const auto& i : insts) endpgm = endpgm || i.text.rfind("s_endpgm", 0) == 0;
      EXPECT_TRUE(endpgm);
      // AGPRs: from the metadata when it has .agpr_count, else from the descriptor.
      ASSERT_FALSE(k.agprs_source.empty());
      if (k.agprs_source == "descriptor") {
        ASSERT_TRUE(k.descriptor);
        EXPECT_EQ(k.agprs, k.descriptor->vgprs_allocated > k.descriptor->accum_offset
                               ? k.descriptor->vgprs_allocated - k.descriptor->accum_offset
                               : 0u);
      }
      EXPECT_LE(k.agprs, k.vgprs ? k.vgprs : 512u);
    }
  }
  EXPECT_GE(kernels, test::llvm_lacks("gfx950").empty() ? 8 : 4);
}

} // namespace

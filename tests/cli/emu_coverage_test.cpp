// `isatune emu-coverage`: the AITER fixtures folder, text and JSON, and a missing path.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "llvm_skip.h"
#include "run_cli.h"

TEST(CliEmuCoverage, AiterFixturesJsonAndText) {
  const std::string dir = std::string(ISATUNE_FIXTURES_DIR) + "/aiter";
  CliResult r = run_isatune("emu-coverage --json '" + dir + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  // One kernel per AITER code object; the count follows the fixtures folder (tests/fixtures/aiter/README.md).
  // On LLVM 19 each gfx950 code object is an error naming why (it cannot be disassembled there).
  const std::string lacks950 = isatune::test::llvm_lacks("gfx950");
  size_t files = 0, gfx950 = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    files += e.path().extension() == ".co";
    gfx950 += e.path().extension() == ".co" && e.path().parent_path().filename() == "gfx950";
  }
  ASSERT_GE(files, 8u);
  const size_t unread = lacks950.empty() ? 0 : gfx950;
  EXPECT_EQ(j["code_objects"].get<size_t>(), files);
  EXPECT_EQ(j["kernels"].get<size_t>(), files - unread);
  ASSERT_EQ(j["errors"].size(), unread) << r.out;
  for (const auto& e : j["errors"]) EXPECT_NE(e.get<std::string>().find(lacks950), std::string::npos) << e;
  bool dma = false;
  for (const auto& u : j["uses"])
    if (u["mnemonic"] == "buffer_load_dword_lds") {
      dma = true;
      EXPECT_GE(u["kernels"].get<int>(), lacks950.empty() ? 2 : 1); // the bf16 GEMM on gfx942 and gfx950
      EXPECT_EQ(u["supported"], true);
    }
  EXPECT_TRUE(dma) << r.out;
  EXPECT_EQ(j["distinct"].get<size_t>(), j["uses"].size());

  CliResult t = run_isatune("emu-coverage '" + dir + "/gfx942/topksoftmax_4x128x4.co'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("1 code objects, 1 kernels"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("s_set_gpr_idx_on"), std::string::npos) << t.out;
}

TEST(CliEmuCoverage, MissingPathIsAnInputError) {
  CliResult r = run_isatune("emu-coverage /no/such/folder");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/no/such/folder"), std::string::npos) << r.err;
}

// `isatune model check` on the timing model's calibration rows (tests/fixtures/aiter): AITER's measured times
// of its gfx950 asm bf16 GEMMs against the emulator's predictions, and the command's input errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "run_cli.h"

TEST(CliModelCheck, AiterCalibrationRows) {
  const std::string fx = ISATUNE_FIXTURES_DIR;
  CliResult r = run_isatune("model check --json --threads 2 --aiter-csv '" + fx +
                            "/aiter/bf16_tuned_gemm_gfx950_asm.csv' --co-dir '" + fx + "/aiter_timing'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["compared"], 12) << r.out;
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(row.contains("predicted_us")) << row.dump();
    EXPECT_GT(row["predicted_us"].get<double>(), 0);
    EXPECT_NEAR(row["rel_error"].get<double>(),
                (row["predicted_us"].get<double>() - row["measured_us"].get<double>()) / row["measured_us"].get<double>(),
                1e-9);
  }
  // The goal figures of issue 14, here on the calibration data the two calibrated constants were fitted to.
  EXPECT_LE(j["median_abs_rel_error"].get<double>(), 0.25) << r.out;
  EXPECT_GE(j["spearman"].get<double>(), 0.8) << r.out;

  CliResult t = run_isatune("model check --threads 2 --max-rows 2 --aiter-csv '" + fx +
                            "/aiter/bf16_tuned_gemm_gfx950_asm.csv' --co-dir '" + fx + "/aiter_timing'");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("2 rows compared"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("not a measurement"), std::string::npos) << t.out;

  CliResult bad = run_isatune("model check --aiter-csv /nonexistent.csv --co-dir '" + fx + "'");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--aiter-csv"), std::string::npos) << bad.err;
}

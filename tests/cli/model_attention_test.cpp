// `isatune model attention`: AITER's fmha_v3_fwd forward kernels (tests/fixtures/aiter) and our attention
// generator through the same timing-model path, on a small launch: the CU-subset figures against the full
// simulation, ours checked against the float64 reference when every workgroup runs, and the input errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <string>

#include "llvm_skip.h"
#include "run_cli.h"

namespace {

nlohmann::json model_attention(const std::string& args) {
  CliResult r = run_isatune("model attention --json --threads 2 --co-dir '" + std::string(ISATUNE_FIXTURES_DIR) +
                            "/aiter' " + args);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

} // namespace

TEST(CliModelAttention, CuSubsetAgreesWithFullSimulation) {
  // 1 head x 512 queries x 1024 keys: ours 4 workgroups of 128 queries, AITER's 2 of 256 (gfx942, 304 CUs). On
  // one CU (CU 0) one workgroup of each is simulated, the rest taken by symmetry.
  const std::string args = "--target gfx942 --problem B=1,Hq=1,Sq=512,Sk=1024 "
                           "--point waves=4,block_n=64,mfma=32x32x8,p_round=rtne";
  const nlohmann::json full = model_attention(args + " --cu-subset 0");
  const nlohmann::json sub = model_attention(args + " --cu-subset 1");
  ASSERT_TRUE(full.contains("rows") && sub.contains("rows"));
  ASSERT_EQ(full["rows"].size(), 3u) << full.dump(); // AITER rtne and rtz (non-causal gfx942 fixtures), ours
  ASSERT_EQ(sub["rows"].size(), 3u) << sub.dump();
  const double flop = 4.0 * 512 * 1024 * 128;
  EXPECT_DOUBLE_EQ(full["flop"].get<double>(), flop);
  std::map<std::string, int> sources;
  for (size_t i = 0; i < 3; ++i) {
    const auto &f = full["rows"][i], &s = sub["rows"][i];
    ++sources[f["source"].get<std::string>()];
    ASSERT_EQ(f["kernel"], s["kernel"]);
    ASSERT_EQ(f["status"], "ok") << f.dump();
    ASSERT_EQ(s["status"], "ok") << s.dump();
    EXPECT_EQ(f["simulated_workgroups"], f["workgroups"]) << f.dump();
    EXPECT_EQ(s["simulated_workgroups"], 1) << s.dump();
    EXPECT_EQ(s["simulated_cus"], 1) << s.dump();
    const double fm = f["modelled_ms"], sm = s["modelled_ms"];
    EXPECT_GT(fm, 0);
    EXPECT_EQ(f["limiter"], "cu") << f.dump(); // the CU time, not the launch constant, is what is compared
    EXPECT_GT(f["cycles"]["cu"].get<double>(), f["cycles"]["launch"].get<double>()) << f.dump();
    EXPECT_NEAR(sm, fm, 0.10 * fm) << f["kernel"] << ": CU subset " << sm << " ms, full " << fm << " ms";
    EXPECT_NEAR(f["modelled_tflops"].get<double>(), flop / (fm * 1e-3) / 1e12, 1e-9 * flop / (fm * 1e-3) / 1e12);
    EXPECT_LT(f["modelled_tflops"].get<double>(), 1307.4) << f.dump(); // MI300X dense bf16 peak (notes/cdna.md)
    EXPECT_NEAR(s["dram_bytes"].get<double>(), f["dram_bytes"].get<double>(), 0.10 * f["dram_bytes"].get<double>());
    // Ours is checked on the full simulation only (the subset's other workgroups compute nothing).
    if (f["source"] == "isatune") {
      EXPECT_EQ(f["checked"], true) << f.dump();
      EXPECT_LE(f["max_rel_error"].get<double>(), f["tolerance"].get<double>());
      EXPECT_EQ(s["checked"], false);
    }
  }
  EXPECT_EQ(sources["aiter"], 2);
  EXPECT_EQ(sources["isatune"], 1);
}

TEST(CliModelAttention, CausalTextAndErrors) {
  const std::string fx = ISATUNE_FIXTURES_DIR;
  CliResult t = run_isatune("model attention --threads 2 --target gfx950 --sig mask=causal --cu-subset 1 "
                            "--problem B=1,Hq=1,Sq=512 --co-dir '" + fx + "/aiter' --point waves=4,block_n=64");
  if (const std::string lacks = isatune::test::llvm_lacks("gfx950"); !lacks.empty()) {
    EXPECT_EQ(t.exit_code, 1) << t.out;
    EXPECT_NE(t.err.find(lacks), std::string::npos) << t.err;
    isatune::test::print_skipped_part("the gfx950 causal kernel's figures", lacks);
  } else {
    ASSERT_EQ(t.exit_code, 0) << t.err << t.out;
    for (const char* s : {"not a measurement", "_ZN5aiter26fmha_fwd_hd128_bf16_causalE", "p_round=rtne,",
                          "waves=4", "halved: causal", "CU subset: only the workgroups of 1 of 256 CUs"})
      EXPECT_NE(t.out.find(s), std::string::npos) << s << "\n" << t.out;
  }

  CliResult f16 = run_isatune("model attention --target gfx942 --sig dtype=f16 --problem B=1,Hq=1,Sq=256 --co-dir '" +
                              fx + "/aiter'");
  EXPECT_NE(f16.exit_code, 0);
  EXPECT_NE(f16.err.find("dtype=bf16, head_dim=128"), std::string::npos) << f16.err;
  CliResult none = run_isatune("model attention --target gfx942 --problem B=1,Hq=1,Sq=256");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("--point"), std::string::npos) << none.err;
  CliResult ptx = run_isatune("model attention --target sm_80 --problem B=1,Hq=1,Sq=256 --point block_n=64");
  EXPECT_NE(ptx.exit_code, 0);
  EXPECT_NE(ptx.err.find("not a CDNA target"), std::string::npos) << ptx.err;
}

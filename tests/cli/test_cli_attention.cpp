// `isatune space/gen/run/tune attention` end to end, on the CDNA and PTX emulators.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_cli.h"

TEST(CliAttention, SpaceGenRunTune) {
  CliResult space = run_isatune("space attention --target gfx950 --sig dtype=bf16,head_dim=128 --json");
  ASSERT_EQ(space.exit_code, 0) << space.err;
  auto s = nlohmann::json::parse(space.out);
  EXPECT_GT(s.at("size").get<size_t>(), 0u);
  EXPECT_FALSE(s.at("constraints").empty());

  CliResult gen = run_isatune("gen attention --target gfx942 --sig mask=causal --param waves=4");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_NE(gen.out.find("v_mfma_f32_32x32x8_bf16"), std::string::npos);
  EXPECT_NE(gen.out.find("v_exp_f32"), std::string::npos);
  CliResult ptx = run_isatune("gen attention --target sm_80 --sig dtype=f16,head_dim=64");
  ASSERT_EQ(ptx.exit_code, 0) << ptx.err;
  EXPECT_NE(ptx.out.find("mma.sync.aligned.m16n8k16"), std::string::npos);

  for (const char* cmd :
       {"run attention --target gfx942 --sig head_dim=64,mask=causal,layout=bhsd --param waves=2 "
        "--problem B=2,Hq=4,Hkv=2,Sq=37,Sk=70 --json",
        "run attention --target sm_80 --sig head_dim=64,dtype=f16 --param warps=2 "
        "--problem B=1,Hq=3,Hkv=1,Sq=20,Sk=45,pad=8 --json"}) {
    CliResult run = run_isatune(cmd);
    ASSERT_EQ(run.exit_code, 0) << cmd << "\n" << run.err << run.out;
    auto j = nlohmann::json::parse(run.out);
    EXPECT_EQ(j.at("status"), "ok") << run.out;
  }
  // GQA rule broken: an input error naming the rule
  CliResult bad = run_isatune("run attention --target gfx942 --problem B=1,Hq=6,Hkv=4,Sq=8");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("multiple of Hkv"), std::string::npos) << bad.err;

  const std::string dir = make_temp_dir();
  CliResult tune =
      run_isatune("tune attention --target gfx942 --sig head_dim=64 --problem B=1,Hq=2,Sq=40,Sk=50 --db " +
                  dir + "/t.db --budget 4 --strategy random --seed 3 -j 1 --json");
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  auto t = nlohmann::json::parse(tune.out);
  EXPECT_FALSE(t.dump().find("\"ok\"") == std::string::npos) << tune.out;
}

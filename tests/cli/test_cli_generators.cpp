// `isatune gen`, `isatune space` and `isatune run KERNEL` end to end.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "isatune/gen/generator.h"
#include "run_cli.h"

TEST(CliGenerators, SpaceListsGeneratorsAndCountsAgree) {
  CliResult list = run_isatune("space --json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  auto gens = nlohmann::json::parse(list.out);
  std::vector<std::string> names;
  for (const auto& g : gens) names.push_back(g.at("name"));
  for (const char* n : {"gemm", "softmax", "rmsnorm", "layernorm"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;

  for (const auto& [name, sig] : std::vector<std::pair<std::string, std::string>>{
           {"gemm", "a=bf16,b=bf16,cd=f32,layout=NT"}, {"softmax", "dtype=f16"}, {"layernorm", "dtype=bf16"}}) {
    CliResult r = run_isatune("space " + name + " --target gfx90a --sig " + sig + " --json --list 3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    const auto& g = isatune::gen::find_generator(name);
    const std::vector<std::string> words{sig};
    const auto space = g.space("gfx90a", isatune::gen::parse_signature(g, words));
    EXPECT_EQ(j.at("size").get<size_t>(), space.size()) << name;
    EXPECT_EQ(j.at("cartesian_size").get<uint64_t>(), space.cartesian_size()) << name;
    EXPECT_EQ(j.at("parameters").size(), space.parameters().size());
    EXPECT_FALSE(j.at("constraints").empty()) << name;
    EXPECT_EQ(j.at("first_configurations").size(), 3u);
  }
  CliResult text = run_isatune("space gemm --target gfx942");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("valid of"), std::string::npos) << text.out;
  CliResult bad = run_isatune("space gemm --target gfx908");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("gfx908"), std::string::npos) << bad.err;
}

TEST(CliGenerators, GenWritesTextAndCodeObjects) {
  const std::string dir = make_temp_dir();
  CliResult text = run_isatune("gen softmax --target gfx942 --sig dtype=f32 --param vec=4");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(".amdhsa_kernel"), std::string::npos);
  // Pure: the same inputs give the same text.
  EXPECT_EQ(run_isatune("gen softmax --target gfx942 --sig dtype=f32 --param vec=4").out, text.out);

  CliResult co = run_isatune("gen gemm --target gfx90a --sig a=bf16,b=bf16 -o " + dir + "/g.hsaco --problem M=4096,N=4096,K=4096 --json");
  ASSERT_EQ(co.exit_code, 0) << co.err;
  auto j = nlohmann::json::parse(co.out);
  EXPECT_EQ(j.at("target"), "gfx90a");
  EXPECT_GT(j.at("estimate").at("bound_ms").get<double>(), 0);
  CliResult inspect = run_isatune("inspect " + dir + "/g.hsaco --json");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;

  CliResult bad = run_isatune("gen gemm --param tile_m=48");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("tile_m=48"), std::string::npos) << bad.err;
  CliResult unknown = run_isatune("gen convolution");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("generators: gemm"), std::string::npos) << unknown.err;
}

TEST(CliGenerators, RunKernelChecksAgainstTheReference) {
  CliResult r = run_isatune("run rmsnorm --target gfx90a --sig dtype=bf16 --problem rows=3,N=777 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("status"), "ok");
  EXPECT_LE(j.at("max_rel_error").get<double>(), 1e-2);
  EXPECT_EQ(j.at("tolerance").get<double>(), 1e-2);
  EXPECT_TRUE(j.at("emulated").get<bool>());
  EXPECT_TRUE(j.at("diagnostics").empty());
  CliResult text = run_isatune("run gemm --target gfx942 --problem M=33,N=17,K=9");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("emulated"), std::string::npos);
  EXPECT_NE(text.out.find("status   ok"), std::string::npos) << text.out;
  CliResult wrong = run_isatune("run selftest --target gfx942 --param behaviour=wrong --problem N=100");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.out.find("wrong-answer"), std::string::npos) << wrong.out;
  CliResult missing = run_isatune("run gemm --target gfx942 --problem M=3");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("needs N"), std::string::npos) << missing.err;
}

// Command-line conventions (docs/cli.md): NVIDIA JSON speaks of registers and shared_bytes, AMD JSON keeps
// vgprs and lds_bytes; every command's --help ends with a worked example; exit codes as documented.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "run_cli.h"

namespace {

// The subcommands `--help` lists (CLI11's "Subcommands:" block), under `prefix` ("" or "db").
std::vector<std::string> subcommands(const std::string& prefix) {
  CliResult r = run_isatune(prefix + " --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out;
  const auto at = r.out.find("Subcommands:");
  if (at == std::string::npos) return out;
  std::regex line("\\n  ([a-z][a-z-]*) ");
  for (auto it = std::sregex_iterator(r.out.begin() + long(at), r.out.end(), line); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(CliConventions, EveryCommandsHelpShowsAWorkedExample) {
  const auto top = subcommands("");
  ASSERT_GE(top.size(), 12u);
  std::vector<std::string> all = top;
  for (const auto& sub : subcommands("db")) all.push_back("db " + sub);
  EXPECT_GE(all.size(), top.size() + 9);
  for (const auto& cmd : all) {
    CliResult r = run_isatune(cmd + " --help");
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    const auto at = r.out.find("\nExample:\n  isatune " + cmd.substr(0, cmd.find(' ')));
    EXPECT_NE(at, std::string::npos) << "isatune " << cmd << " --help has no worked example:\n" << r.out;
  }
}

TEST(CliConventions, NvidiaJsonSaysRegistersAndSharedBytes) {
  CliResult nv = run_isatune("gen softmax --target sm_80 --problem rows=3,N=77 --json");
  ASSERT_EQ(nv.exit_code, 0) << nv.err;
  const auto e = nlohmann::json::parse(nv.out).at("estimate");
  for (const char* key : {"registers", "shared_bytes", "local_bytes", "blocks_per_sm", "warps_per_scheduler"})
    EXPECT_TRUE(e.contains(key)) << key << " missing: " << e.dump();
  for (const char* key : {"vgprs", "agprs", "sgprs", "lds_bytes", "scratch_bytes", "waves_per_simd"})
    EXPECT_FALSE(e.contains(key)) << key << " is AMD's word: " << e.dump();
  EXPECT_GT(e["blocks_per_sm"].get<int>(), 0);
  EXPECT_NE(e["occupancy_limiter"], "vgprs");
  EXPECT_NE(e["occupancy_limiter"], "lds");

  CliResult amd = run_isatune("gen softmax --target gfx942 --problem rows=3,N=77 --json");
  ASSERT_EQ(amd.exit_code, 0) << amd.err;
  const auto a = nlohmann::json::parse(amd.out).at("estimate");
  for (const char* key : {"vgprs", "agprs", "sgprs", "lds_bytes", "scratch_bytes", "waves_per_simd"})
    EXPECT_TRUE(a.contains(key)) << key << " missing: " << a.dump();
  for (const char* key : {"registers", "shared_bytes", "local_bytes"})
    EXPECT_FALSE(a.contains(key)) << key << " is NVIDIA's word: " << a.dump();
  EXPECT_GT(a["vgprs"].get<int>(), 0);

  // `run KERNEL` on the PTX emulator: the same words in its estimate.
  CliResult run = run_isatune("run softmax --target sm_80 --problem rows=3,N=77 --device emu:sm_80 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto r = nlohmann::json::parse(run.out);
  EXPECT_TRUE(r.at("estimate").contains("shared_bytes"));
  EXPECT_FALSE(r.at("estimate").contains("lds_bytes"));
  if (r.contains("ptxas") && r["ptxas"].contains("registers")) {
    EXPECT_FALSE(r["ptxas"].contains("scratch_bytes"));
  }
}

TEST(CliConventions, ExitCodesAsDocumented) {
  EXPECT_EQ(run_isatune("nosuchcommand").exit_code, 2);           // bad command line
  EXPECT_EQ(run_isatune("report -o x.html").exit_code, 2);         // --db is required
  EXPECT_EQ(run_isatune("gen softmax --target gfx1234").exit_code, 1); // bad input: unknown target
  EXPECT_EQ(run_isatune("targets --help").exit_code, 0);
}

} // namespace

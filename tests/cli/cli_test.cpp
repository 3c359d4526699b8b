// End-to-end tests of the isatune command: run the binary, check exit codes and what it prints.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "run_cli.h"

namespace {

const std::string kFixtures = ISATUNE_FIXTURES_DIR;

// What a fixture's source declares: its .amdhsa_* directives and its metadata scalars and arguments, read
// from the text so that the test compares with the source, not with numbers copied into the test.
struct Declared {
  std::map<std::string, long> amdhsa;   // "next_free_vgpr" -> 5
  std::map<std::string, long> metadata; // "vgpr_count" -> 5
  struct Arg {
    std::string name, kind;
    long offset = 0, size = 0;
  };
  std::vector<Arg> args;
  std::string kernel_name; // metadata `- .name:`
};

std::string field(const std::string& line, const std::string& key) {
  auto p = line.find(key + ":");
  if (p == std::string::npos) return "";
  p += key.size() + 1;
  while (p < line.size() && line[p] == ' ') ++p;
  auto e = line.find_first_of(",}", p);
  std::string v = line.substr(p, e - p);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  if (v.rfind("!str ", 0) == 0) v.erase(0, 5); // a string tag (`.name: !str n`: LLVM 19 reads a bare n as a bool)
  return v;
}

Declared read_declared(const std::string& path) {
  Declared d;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    auto s = line.find_first_not_of(" \t");
    if (s == std::string::npos) continue;
    line = line.substr(s);
    if (line.rfind(".amdhsa_", 0) == 0 && line.find("kernel") != 8 && line.find("code_object") == std::string::npos) {
      std::istringstream words(line);
      std::string key;
      long value;
      if (words >> key >> value) d.amdhsa[key.substr(8)] = value;
    } else if (line.rfind("- {", 0) == 0) {
      Declared::Arg a{field(line, ".name"), field(line, ".value_kind"), std::stol(field(line, ".offset")),
                      std::stol(field(line, ".size"))};
      d.args.push_back(a);
    } else if (line[0] == '.' || line.rfind("- .", 0) == 0) {
      if (line.rfind("- .name:", 0) == 0) d.kernel_name = field(line, ".name");
      if (line[0] == '-') line = line.substr(2);
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(1, colon - 1), value = line.substr(colon + 1);
      try {
        size_t used = 0;
        long v = std::stol(value, &used);
        d.metadata[key] = v;
      } catch (...) {
      }
    }
  }
  return d;
}

long align_to(long v, long a) { return (v + a - 1) / a * a; }

class FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, AssemblesAndInspectReportsDeclaredValues) {
  std::string name = GetParam();
  std::string dir = make_temp_dir();
  std::string hsaco = dir + "/" + name + ".hsaco";
  auto as = run_isatune("asm " + kFixtures + "/" + name + ".s -o " + hsaco);
  ASSERT_EQ(as.exit_code, 0) << as.err;
  EXPECT_NE(as.out.find(read_declared(kFixtures + "/" + name + ".s").kernel_name), std::string::npos) << as.out;

  auto r = run_isatune("inspect " + hsaco + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  Declared d = read_declared(kFixtures + "/" + name + ".s");
  ASSERT_FALSE(d.amdhsa.empty());
  ASSERT_EQ(j["kernels"].size(), 1u);
  const auto& k = j["kernels"][0];
  const auto& desc = k["descriptor"];
  EXPECT_EQ(k["name"], d.kernel_name);
  EXPECT_EQ(j["isa"], "gfx942");
  EXPECT_EQ(desc["accum_offset"], d.amdhsa.at("accum_offset"));
  EXPECT_EQ(desc["vgprs_allocated"], align_to(d.amdhsa.at("next_free_vgpr"), 8));
  EXPECT_EQ(desc["group_segment_fixed_size"], d.amdhsa.at("group_segment_fixed_size"));
  EXPECT_EQ(desc["kernarg_size"], d.amdhsa.at("kernarg_size"));
  EXPECT_EQ(desc["user_sgpr_count"], d.amdhsa.at("user_sgpr_count"));
  EXPECT_EQ(desc["user_sgpr_kernarg_segment_ptr"], d.amdhsa.at("user_sgpr_kernarg_segment_ptr") == 1);
  EXPECT_EQ(desc["workgroup_id"][0], d.amdhsa.at("system_sgpr_workgroup_id_x") == 1);
  EXPECT_EQ(desc["workitem_id_vgprs"], d.amdhsa.at("system_vgpr_workitem_id"));
  EXPECT_EQ(desc["float_denorm_mode_32"], d.amdhsa.at("float_denorm_mode_32"));
  EXPECT_EQ(desc["float_denorm_mode_16_64"], d.amdhsa.at("float_denorm_mode_16_64"));
  // gfx942 always adds 6 SGPRs (VCC, FLAT_SCRATCH, XNACK_MASK); the descriptor encodes in granules of 8.
  EXPECT_EQ(desc["sgprs_allocated"], align_to(d.amdhsa.at("next_free_sgpr") + 6, 8));

  EXPECT_EQ(k["vgprs"], d.metadata.at("vgpr_count"));
  EXPECT_EQ(k["agprs"], d.metadata.at("agpr_count"));
  EXPECT_EQ(k["sgprs"], d.metadata.at("sgpr_count"));
  EXPECT_EQ(k["lds_bytes"], d.metadata.at("group_segment_fixed_size"));
  EXPECT_EQ(k["kernarg_size"], d.metadata.at("kernarg_segment_size"));
  EXPECT_EQ(k["kernarg_align"], d.metadata.at("kernarg_segment_align"));
  EXPECT_EQ(k["max_workgroup_size"], d.metadata.at("max_flat_workgroup_size"));
  EXPECT_EQ(k["wave_size"], d.metadata.at("wavefront_size"));
  ASSERT_EQ(k["args"].size(), d.args.size());
  for (size_t i = 0; i < d.args.size(); ++i) {
    EXPECT_EQ(k["args"][i]["name"], d.args[i].name);
    EXPECT_EQ(k["args"][i]["offset"], d.args[i].offset);
    EXPECT_EQ(k["args"][i]["size"], d.args[i].size);
    EXPECT_EQ(k["args"][i]["value_kind"], d.args[i].kind);
  }
  EXPECT_GT(k["occupancy"]["waves_per_simd"].get<int>(), 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FixtureTest, ::testing::Values("vector_add", "lds_reduce", "mfma_tile"));

TEST(Cli, TargetsListsAllCdnaTargetsWithTheLlvmBackend) {
  auto r = run_isatune("targets --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::map<std::string, bool> llvm_serves;
  for (const auto& t : j)
    for (const auto& b : t["backends"])
      if (b["name"] == "llvm") llvm_serves[t["target"]] = true;
  EXPECT_TRUE(llvm_serves["gfx90a"]);
  EXPECT_TRUE(llvm_serves["gfx942"]);
  // gfx950 needs LLVM >= 20: served by the default build (LLVM 22), listed without the llvm backend on LLVM 19.
  std::string llvm_version;
  bool gfx950_has_backend = false;
  for (const auto& t : j) {
    for (const auto& b : t["backends"])
      if (t["target"] == "gfx942" && b["name"] == "llvm") llvm_version = b["version"];
    if (t["target"] == "gfx950") gfx950_has_backend = !t["backends"].empty();
  }
  ASSERT_EQ(llvm_version.rfind("LLVM ", 0), 0u) << llvm_version;
  const int llvm_major = std::stoi(llvm_version.substr(5));
  EXPECT_EQ(llvm_serves["gfx950"], llvm_major >= 20) << llvm_version;
  auto text = run_isatune("targets");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("gfx942"), std::string::npos);
  if (!gfx950_has_backend) {
    EXPECT_NE(text.out.find("none (needs LLVM >= 20)"), std::string::npos) << text.out;
  }
}

TEST(Cli, MalformedAssemblyGivesLineAndColumn) {
  auto r = run_isatune("asm " + kFixtures + "/bad_syntax.s -o /dev/null");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("bad_syntax.s:8:25: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("v_add_f32 v1, v2, v3, v4"), std::string::npos) << r.err;
}

TEST(Cli, TargetMismatchIsAnError) {
  std::string dir = make_temp_dir();
  auto r = run_isatune("asm " + kFixtures + "/vector_add.s --target gfx90a -o " + dir + "/x.hsaco");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(r.err.empty());
}

TEST(Cli, MissingTargetIsAnError) {
  std::string dir = make_temp_dir();
  write_file(dir + "/k.s", "s_endpgm\n");
  auto r = run_isatune("asm " + dir + "/k.s");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no --target"), std::string::npos) << r.err;
}

TEST(Cli, UnknownTargetIsAnError) {
  auto r = run_isatune("asm " + kFixtures + "/vector_add.s --target gfx1234 -o /dev/null");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gfx1234"), std::string::npos) << r.err;
}

// Every unusable file gets one line on stderr and exit code 1, never a crash.
TEST(Cli, InspectRejectsBadFilesWithOneLine) {
  std::string dir = make_temp_dir();
  auto as = run_isatune("asm " + kFixtures + "/vector_add.s -o " + dir + "/good.hsaco");
  ASSERT_EQ(as.exit_code, 0) << as.err;
  std::string good = read_file(dir + "/good.hsaco");
  write_file(dir + "/empty.hsaco", "");
  write_file(dir + "/text.hsaco", "this is not a code object\n");
  write_file(dir + "/trunc64.hsaco", good.substr(0, 64));
  write_file(dir + "/trunc_half.hsaco", good.substr(0, good.size() / 2));
  for (std::string f : {dir + "/missing.hsaco", dir + "/empty.hsaco", dir + "/text.hsaco", dir + "/trunc64.hsaco",
                        dir + "/trunc_half.hsaco", std::string("/bin/true"), dir}) {
    auto r = run_isatune("inspect " + f);
    EXPECT_EQ(r.exit_code, 1) << f << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << f << ": " << r.err;
    EXPECT_EQ(r.err.rfind("isatune: ", 0), 0u) << r.err;
  }
}

TEST(Cli, InspectDisassembles) {
  std::string dir = make_temp_dir();
  ASSERT_EQ(run_isatune("asm " + kFixtures + "/vector_add.s -o " + dir + "/v.hsaco").exit_code, 0);
  auto r = run_isatune("inspect " + dir + "/v.hsaco --disasm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("global_load_dword v3, v2, s[4:5]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s_endpgm"), std::string::npos);
  EXPECT_NE(r.out.find("occupancy"), std::string::npos);
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(run_isatune("").exit_code, 2);
  EXPECT_EQ(run_isatune("no-such-command").exit_code, 2);
  EXPECT_EQ(run_isatune("asm").exit_code, 2);
  EXPECT_EQ(run_isatune("asm x.s --backend nope").exit_code, 2);
  auto help = run_isatune("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("inspect"), std::string::npos);
}

} // namespace

namespace {

bool ptx_toolkit_present() {
  auto r = run_isatune("targets --json");
  if (r.exit_code != 0) return false;
  for (const auto& t : nlohmann::json::parse(r.out))
    if (t["target"] == "sm_80" && !t["backends"].empty()) return true;
  return false;
}

TEST(CliPtx, CompilesAndInspectsACubinWithEachBackend) {
  if (!ptx_toolkit_present()) GTEST_SKIP() << "no CUDA toolkit (ptxas or nvJitLink) found";
  std::string dir = make_temp_dir();
  for (std::string backend : {"ptxas", "nvjitlink"}) {
    std::string cubin = dir + "/add_one." + backend + ".cubin";
    auto as = run_isatune("asm " + kFixtures + "/add_one.ptx --backend " + backend + " -o " + cubin + " --json");
    ASSERT_EQ(as.exit_code, 0) << as.err;
    auto aj = nlohmann::json::parse(as.out);
    EXPECT_EQ(aj["backend"], backend);
    ASSERT_EQ(aj["kernels"].size(), 1u);
    auto r = run_isatune("inspect " + cubin + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["vendor"], "nvidia");
    EXPECT_EQ(j["isa"], "sm_80");
    ASSERT_EQ(j["kernels"].size(), 1u);
    const auto& k = j["kernels"][0];
    EXPECT_EQ(k["name"], "addone");
    // The registers the compiler reported are the ones the cubin records.
    EXPECT_EQ(k["registers"], aj["kernels"][0]["registers"]);
    EXPECT_FALSE(k.contains("vgprs")) << "NVIDIA JSON speaks of registers, not VGPRs";
    ASSERT_EQ(k["args"].size(), 2u); // .param .u64 p, .param .u32 n
    EXPECT_EQ(k["args"][0]["size"], 8);
    EXPECT_EQ(k["args"][1]["offset"], 8);
    EXPECT_EQ(k["args"][1]["size"], 4);
    EXPECT_GT(k["occupancy"]["blocks_per_sm"].get<int>(), 0);
  }
}

TEST(CliPtx, MalformedPtxGivesTheLine) {
  if (!ptx_toolkit_present()) GTEST_SKIP() << "no CUDA toolkit (ptxas or nvJitLink) found";
  for (std::string backend : {"ptxas", "nvjitlink"}) {
    auto r = run_isatune("asm " + kFixtures + "/bad_syntax.ptx --backend " + backend + " -o /dev/null");
    EXPECT_EQ(r.exit_code, 1) << backend;
    EXPECT_NE(r.err.find("bad_syntax.ptx:16: error:"), std::string::npos) << backend << ": " << r.err;
  }
}

} // namespace

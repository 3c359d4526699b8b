// End-to-end tests of `isatune run`: the vector_add fixture on the emulator with a ragged count and random
// inputs from files (output compared with the CPU), a hazard the emulator must report, --strict, and bad
// arguments that must give one clear line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "run_cli.h"

namespace {

const std::string kFixtures = ISATUNE_FIXTURES_DIR;

std::string floats_to_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), v.data(), s.size());
  return s;
}
std::vector<float> bytes_to_floats(const std::string& s) {
  std::vector<float> v(s.size() / 4);
  std::memcpy(v.data(), s.data(), v.size() * 4);
  return v;
}

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

class RunCommand : public ::testing::Test {
protected:
  void SetUp() override {
    dir = make_temp_dir();
    hsaco = dir + "/vadd.hsaco";
    auto as = run_isatune("asm " + kFixtures + "/vector_add.s -o " + hsaco);
    ASSERT_EQ(as.exit_code, 0) << as.err;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> u(-100.0f, 100.0f);
    a.resize(n), b.resize(n);
    for (int i = 0; i < n; ++i) a[size_t(i)] = u(rng), b[size_t(i)] = u(rng);
    write_file(dir + "/a.bin", floats_to_bytes(a));
    write_file(dir + "/b.bin", floats_to_bytes(b));
  }
  // The fixture with the wait for its two loads removed: v_add_f32 reads v3 and v4 before they are waited for.
  std::string hazard_source() {
    std::string s = read_file(kFixtures + "/vector_add.s");
    const std::string wait = "  s_waitcnt      vmcnt(0)\n";
    auto p = s.find(wait);
    EXPECT_NE(p, std::string::npos);
    if (p != std::string::npos) s.erase(p, wait.size());
    std::string path = dir + "/hazard.s";
    write_file(path, s);
    return path;
  }
  std::string vadd_args(const std::string& c) {
    return " --arg buf:f32:" + std::to_string(n) + ":file=" + dir + "/a.bin --arg buf:f32:file=" + dir +
           "/b.bin --arg " + c + " --arg u32:" + std::to_string(n);
  }
  void expect_sum(const std::string& path) {
    auto c = bytes_to_floats(read_file(path));
    ASSERT_EQ(c.size(), size_t(n));
    int wrong = 0;
    for (int i = 0; i < n; ++i)
      if (c[size_t(i)] != a[size_t(i)] + b[size_t(i)]) ++wrong;
    EXPECT_EQ(wrong, 0) << "first: c[0] = " << c[0] << ", expected " << a[0] + b[0];
  }

  const int n = 1000; // 4 workgroups of 256, the last one ragged
  std::string dir, hsaco;
  std::vector<float> a, b;
};

TEST_F(RunCommand, VectorAddMatchesTheCpu) {
  auto r = run_isatune("run " + hsaco + " --grid 4 --block 256" + vadd_args("buf:f32:1000:zero:out=" + dir + "/c.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("vadd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("emulated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("grid 4,1,1 x block 256,1,1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lane instructions"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hazards  0"), std::string::npos) << r.out;
  expect_sum(dir + "/c.bin");
}

TEST_F(RunCommand, JsonAndOutOption) {
  auto r = run_isatune("run " + hsaco + " --json --kernel vadd --device emu:gfx942 --grid 4 --block 256" +
                       vadd_args("buf:f32:1000:random") + " --out 2=" + dir + "/c2.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "vadd");
  EXPECT_EQ(j["device"]["isa"], "gfx942");
  EXPECT_EQ(j["device"]["emulated"], true);
  EXPECT_EQ(j["time_kind"], "emulated");
  EXPECT_EQ(j["launch"]["grid"], nlohmann::json({4, 1, 1}));
  EXPECT_EQ(j["stats"]["workgroups"], 4);
  EXPECT_EQ(j["stats"]["waves"], 16);
  EXPECT_GT(j["stats"]["lane_instructions"].get<uint64_t>(), j["stats"]["instructions"].get<uint64_t>());
  EXPECT_GT(j["time_ms"].get<double>(), 0);
  EXPECT_TRUE(j["reports"].empty()) << j["reports"].dump();
  ASSERT_EQ(j["outputs"].size(), 1u);
  expect_sum(dir + "/c2.bin");
}

TEST_F(RunCommand, MissingWaitIsReported) {
  std::string src = hazard_source();
  auto as = run_isatune("asm " + src + " -o " + dir + "/hazard.hsaco");
  ASSERT_EQ(as.exit_code, 0) << as.err;
  auto r = run_isatune("run " + dir + "/hazard.hsaco --grid 4 --block 256" + vadd_args("buf:f32:1000:zero"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("hazard: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pending_read"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("v_add_f32"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0x"), std::string::npos) << r.err;

  // The assembly itself runs too (assembled in process), and --json carries the reports.
  auto j = run_isatune("run " + src + " --json --grid 4 --block 256" + vadd_args("buf:f32:1000:zero"));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_FALSE(doc["reports"].empty()) << j.out;
  bool found = false;
  for (const auto& rep : doc["reports"])
    if (rep["kind"] == "pending_read" && rep["disassembly"].get<std::string>().find("v_add_f32") != std::string::npos) {
      found = true;
      EXPECT_GT(rep["address"].get<uint64_t>(), 0u);
    }
  EXPECT_TRUE(found) << j.out;
}

TEST_F(RunCommand, StrictStopsAtTheFirstHazard) {
  std::string src = hazard_source();
  auto r = run_isatune("run " + src + " --strict --grid 4 --block 256" + vadd_args("buf:f32:1000:zero"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("--strict"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pending_read"), std::string::npos) << r.err;
  auto j = run_isatune("run " + src + " --strict --json --grid 4 --block 256" + vadd_args("buf:f32:1000:zero"));
  EXPECT_EQ(j.exit_code, 1);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["stopped"], true);
  // The correct kernel passes --strict.
  auto ok = run_isatune("run " + hsaco + " --strict --grid 4 --block 256" + vadd_args("buf:f32:1000:zero"));
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST_F(RunCommand, BadArgumentsGiveOneClearLine) {
  struct Case {
    std::string args, expect;
  };
  const std::string c = " --arg buf:f32:1000:zero";
  std::vector<Case> cases = {
      {" --grid 4 --block 256 --arg buf:f32:1000:zero --arg buf:f32:1000:zero --arg u32:1000",
       "takes 4 arguments [a (buffer), b (buffer), c (buffer), count (4 bytes)], got 3"},
      {" --grid 4 --block 256 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg q32:5", "unknown type 'q32'"},
      {" --grid 4 --block 256 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u64:5",
       "argument 3 (count) is 4 bytes; u64 is 8"},
      {" --grid 4 --block 256 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:x", "is not an unsigned"},
      {" --grid 4 --block 256 --arg u32:1 --arg buf:f32:10:zero" + c + " --arg u32:5", "is a buffer"},
      {" --grid 4 --block 256 --arg buf:f32:10:zero --arg buf:f32:10:bogus" + c + " --arg u32:5",
       "unknown initial contents 'bogus'"},
      {" --grid 4 --block 256 --arg buf:f32:10:zero --arg buf:f32:file=/nonexistent/x.bin" + c + " --arg u32:5",
       "cannot open"},
      {" --grid 1 --block 1024 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:5",
       "1024 threads per workgroup; kernel 'vadd' allows at most 256"},
      {" --grid 0 --block 256 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:5", "--grid '0'"},
      {" --kernel nope --arg u32:1", "no kernel 'nope'"},
      {" --device emu:gfx90a --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:5", "gfx90a"},
      {" --device nosuch --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:5", "no backend named"},
      {" --block 256 --arg buf:f32:10:zero --arg buf:f32:10:zero" + c + " --arg u32:5 --out 3=x.bin",
       "argument 3 is not a buffer"},
  };
  for (const auto& k : cases) {
    auto r = run_isatune("run " + hsaco + k.args);
    EXPECT_EQ(r.exit_code, 1) << k.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << k.args << "\n" << r.err;
    EXPECT_NE(r.err.find(k.expect), std::string::npos) << k.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("isatune: ", 0), 0u) << r.err;
  }
  auto missing = run_isatune("run " + dir + "/none.hsaco --arg u32:1");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(lines(missing.err), 1u) << missing.err;
}

TEST(RunCommandCli, MissingFileIsAUsageError) {
  auto r = run_isatune("run");
  EXPECT_EQ(r.exit_code, 2);
}

} // namespace

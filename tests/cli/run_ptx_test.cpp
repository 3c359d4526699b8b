// End-to-end tests of `isatune run FILE.ptx` on the PTX emulator: nvcc's row softmax on a ragged shape with
// random inputs, compared with the float64 reference; JSON output; a LayerNorm with a bar.sync removed, whose
// race must be reported (and stop a --strict run); and bad input that must give one clear line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../fixtures/ptx/cuda/references.h"
#include "run_cli.h"

namespace {

const std::string kCuda = std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda";

class RunPtx : public ::testing::Test {
protected:
  void SetUp() override {
    dir = make_temp_dir();
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> u(-8.0f, 8.0f);
    in.resize(size_t(rows) * cols);
    for (auto& x : in) x = u(rng);
    std::string bytes(in.size() * 4, '\0');
    std::memcpy(bytes.data(), in.data(), bytes.size());
    write_file(dir + "/in.bin", bytes);
  }
  std::string softmax_args(const std::string& out) const {
    const size_t n = size_t(rows) * cols;
    return " --grid " + std::to_string((rows + 3) / 4) + " --block 128 --arg buf:f32:" + std::to_string(n) +
           ":file=" + dir + "/in.bin --arg buf:f32:" + std::to_string(n) + ":zero" + out + " --arg i32:" +
           std::to_string(rows) + " --arg i32:" + std::to_string(cols);
  }
  void expect_softmax(const std::string& path) const {
    const std::string bytes = read_file(path);
    ASSERT_EQ(bytes.size(), in.size() * 4);
    std::vector<float> out(in.size());
    std::memcpy(out.data(), bytes.data(), bytes.size());
    const auto ref = isatune::fixtures::softmax_rows_reference(in.data(), rows, cols);
    double worst = 0;
    for (size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(out[i] - ref[i]) / (ref[i] + 1e-30));
    EXPECT_LT(worst, 1e-5) << "worst relative error of the softmax";
  }

  const int rows = 37, cols = 203; // ragged: rows not a multiple of 4 warps, cols not of 32 lanes
  std::string dir;
  std::vector<float> in;
};

TEST_F(RunPtx, SoftmaxMatchesTheReference) {
  auto r = run_isatune("run " + kCuda + "/softmax_rows.sm_80.ptx" + softmax_args(":out=" + dir + "/out.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("softmax_rows on emu:sm_80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("emulated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10 CTAs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hazards  0"), std::string::npos) << r.out;
  expect_softmax(dir + "/out.bin");
}

TEST_F(RunPtx, JsonOnSm90aWithTheAdversarialScheduler) {
  auto r = run_isatune("run " + kCuda + "/softmax_rows.sm_80.ptx --json --device emu:sm_90a --scheduler adversarial" +
                       softmax_args("") + " --out 1=" + dir + "/out2.bin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kernel"], "softmax_rows");
  EXPECT_EQ(j["device"]["isa"], "sm_90a");
  EXPECT_EQ(j["device"]["emulated"], true);
  EXPECT_EQ(j["time_kind"], "emulated");
  EXPECT_EQ(j["stats"]["ctas"], 10);
  // One lane at a time: about one thread instruction per warp instruction (lockstep would give ~32).
  EXPECT_GT(j["stats"]["thread_instructions"].get<uint64_t>(), uint64_t(rows) * cols);
  EXPECT_TRUE(j["reports"].empty()) << j["reports"].dump();
  expect_softmax(dir + "/out2.bin");
}

// nvcc's LayerNorm with its first bar.sync (between the per-warp partial sums in shared memory and their
// reduction) removed: the race must be reported with the PTX line, on the text path and in JSON.
TEST_F(RunPtx, RemovedBarrierIsReportedAsARace) {
  std::string ptx = read_file(kCuda + "/layernorm_rows.sm_80.ptx");
  const auto at = ptx.find("bar.sync");
  ASSERT_NE(at, std::string::npos);
  const auto line_start = ptx.rfind('\n', at) + 1, line_end = ptx.find('\n', at);
  ptx.erase(line_start, line_end - line_start);
  write_file(dir + "/ln.ptx", ptx);
  const int r_rows = 5, r_cols = 300;
  const std::string n = std::to_string(r_rows * r_cols);
  const std::string args = " --grid " + std::to_string(r_rows) + " --block 128 --arg buf:f32:" + n +
                           ":random --arg buf:f32:" + std::to_string(r_cols) + ":random --arg buf:f32:" +
                           std::to_string(r_cols) + ":random --arg buf:f32:" + n + ":zero --arg buf:f32:" +
                           std::to_string(r_rows) + ":zero --arg buf:f32:" + std::to_string(r_rows) +
                           ":zero --arg i32:" + std::to_string(r_rows) + " --arg i32:" + std::to_string(r_cols) +
                           " --arg f32:1e-5";
  auto r = run_isatune("run " + dir + "/ln.ptx" + args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("race"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line "), std::string::npos) << r.err;
  auto j = run_isatune("run " + dir + "/ln.ptx --json" + args);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto jj = nlohmann::json::parse(j.out);
  bool race = false;
  for (const auto& rep : jj["reports"]) race = race || (rep["kind"] == "race" && rep["line"].get<int>() > 0);
  EXPECT_TRUE(race) << jj["reports"].dump();
  auto strict = run_isatune("run " + dir + "/ln.ptx --strict" + args);
  EXPECT_EQ(strict.exit_code, 1) << strict.out;
  EXPECT_NE(strict.err.find("stopped at the first hazard"), std::string::npos) << strict.err;
  // The unmutated kernel reports nothing.
  auto clean = run_isatune("run " + kCuda + "/layernorm_rows.sm_80.ptx" + args);
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_NE(clean.out.find("hazards  0"), std::string::npos) << clean.out << clean.err;
}

TEST_F(RunPtx, BadInputGivesOneClearLine) {
  const std::string k = kCuda + "/softmax_rows.sm_80.ptx";
  auto few = run_isatune("run " + k + " --arg i32:1");
  EXPECT_EQ(few.exit_code, 1);
  EXPECT_NE(few.err.find("takes 4 arguments"), std::string::npos) << few.err;
  auto sched = run_isatune("run " + k + softmax_args("") + " --scheduler random");
  EXPECT_EQ(sched.exit_code, 1);
  EXPECT_NE(sched.err.find("--scheduler 'random'"), std::string::npos) << sched.err;
  auto cluster = run_isatune("run " + k + softmax_args("") + " --cluster 0");
  EXPECT_EQ(cluster.exit_code, 1);
  EXPECT_NE(cluster.err.find("--cluster"), std::string::npos) << cluster.err;
  write_file(dir + "/bad.ptx", ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                               "  frobnicate.u32 %r1, 2;\n  ret;\n}\n");
  auto bad = run_isatune("run " + dir + "/bad.ptx");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("bad.ptx:6:"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("frobnicate"), std::string::npos) << bad.err;
}

} // namespace

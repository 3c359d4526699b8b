// GEMM sweep on the emulator: for each target, deterministic samples of the valid space across all signatures,
// each run on ragged problem sizes; every output within the output type's tolerance and zero emulator reports.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "isatune/toolchain/llvm_mc.h"
#include "test_gemm_harness.h"

using namespace isatune;
using namespace gemm_test;

namespace {

std::vector<gen::Signature> all_signatures() {
  std::vector<gen::Signature> v;
  for (const char* ab : {"f16", "bf16"})
    for (const char* cd : {"f32", "f16", "bf16"})
      for (const char* lay : {"NN", "NT", "TN", "TT"})
        v.push_back({{"a", ab}, {"b", ab}, {"cd", cd}, {"layout", lay}});
  return v;
}

// fp8 signatures of a target (its MFMAs' encodings: FNUZ on gfx942, OCP on gfx950; none on gfx90a): the four
// a x b combinations x 3 output types x 4 layouts.
std::vector<gen::Signature> fp8_signatures(const std::string& isa) {
  std::vector<gen::Signature> v;
  if (isa != "gfx942" && isa != "gfx950")
    return v;
  const std::string sfx = isa == "gfx942" ? "_fnuz" : "";
  for (const char* a : {"fp8_e4m3", "fp8_e5m2"})
    for (const char* b : {"fp8_e4m3", "fp8_e5m2"})
      for (const char* cd : {"f32", "f16", "bf16"})
        for (const char* lay : {"NN", "NT", "TN", "TT"})
          v.push_back({{"a", a + sfx}, {"b", b + sfx}, {"cd", cd}, {"layout", lay}});
  return v;
}

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

void sweep(const std::string& isa) {
  if (!toolchain::llvm_supports(isa))
    GTEST_SKIP() << "this LLVM cannot assemble " << isa;
  const int points = env_int("ISATUNE_GEMM_SWEEP_POINTS", 204);
  const gen::Generator& g = gemm();
  auto sigs = all_signatures();
  auto sigs8 = fp8_signatures(isa); // with fp8: odd points take the fp8 signatures, even ones the 16-bit ones
  auto dev = emu::make_emu_device({.target = isa, .threads = 2});
  std::mt19937_64 rng(0x5eed + isa.size() * 131 + uint64_t(isa.back()));
  double worst[2][3] = {}; // by input (16-bit, fp8) and output type f32, f16, bf16
  int runs = 0, runs8 = 0, failures = 0;
  auto t0 = std::chrono::steady_clock::now();
  std::map<std::string, gen::Space> spaces;
  for (int i = 0; i < points; ++i) {
    const bool fp8 = !sigs8.empty() && i % 2 == 1;
    const gen::Signature& sig = sigs8.empty() ? sigs[size_t(i) % sigs.size()]
                                : fp8         ? sigs8[size_t(i / 2) % sigs8.size()]
                                              : sigs[size_t(i / 2) % sigs.size()];
    const std::string key = gen::format(sig);
    auto it = spaces.find(key);
    if (it == spaces.end())
      it = spaces.emplace(key, g.space(isa, sig)).first;
    const gen::Space& space = it->second;
    ASSERT_GT(space.size(), 0u) << key;
    // stratified: point i takes the i-th of `points` equal strides through the valid list, jittered
    const size_t n = space.size();
    size_t pos = (size_t(i) * n / size_t(points) + rng() % std::max<size_t>(1, n / size_t(points))) % n;
    gen::Params params = gen::params_of(space, space.valid_config(pos));
    SCOPED_TRACE(isa + " " + key + " " + gen::format(params));
    gen::Generated gd = g.generate(isa, sig, params);
    CodeObject code = assemble(isa, gd);
    // problem sizes: ragged, some tiny; a leading dimension larger than tight now and then
    auto draw = [&](int hi) { return int64_t(1 + rng() % uint64_t(hi)); };
    gen::Problem prob{{"M", draw(i % 7 == 0 ? 4 : 100)}, {"N", draw(i % 5 == 0 ? 4 : 100)},
                      {"K", draw(i % 9 == 0 ? 3 : 64)}};
    if (i % 4 == 3) {
      prob["lda"] = (gemm_test::gemm().buffers(sig, prob)[0].cols) + int64_t(rng() % 9);
      prob["ldd"] = prob["M"] + int64_t(rng() % 5);
    }
    std::map<std::string, double> sc{{"alpha", 0.5 + double(rng() % 1000) / 666.0},
                                     {"beta", i % 6 == 0 ? 0.0 : -1.0 + double(rng() % 1000) / 500.0}};
    RunOutcome r = run_problem(*dev, code, sig, params, prob, 1000 + uint64_t(i), sc);
    ++runs;
    runs8 += fp8;
    const gen::DType out = g.output_dtype(sig);
    const double tol = gen::tolerance(out);
    int slot = out == gen::DType::f32 ? 0 : out == gen::DType::f16 ? 1 : 2;
    worst[fp8][slot] = std::max(worst[fp8][slot], r.max_rel_error);
    bool bad = r.max_rel_error > tol || !r.reports.empty();
    failures += bad;
    EXPECT_LE(r.max_rel_error, tol) << gen::format(prob) << " " << r.where;
    EXPECT_TRUE(r.reports.empty()) << gen::format(prob) << "\n" << (r.reports.empty() ? "" : r.reports[0]);
    if (bad && failures > 5)
      FAIL() << "too many failures";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[gemm sweep %s] %d points (%d fp8), max rel error f32 %.3g f16 %.3g bf16 %.3g; fp8 inputs: f32 %.3g "
              "f16 %.3g bf16 %.3g, %.1f s\n",
              isa.c_str(), runs, runs8, worst[0][0], worst[0][1], worst[0][2], worst[1][0], worst[1][1], worst[1][2],
              secs);
}

} // namespace

TEST(GemmSweep, Gfx90a) { sweep("gfx90a"); }
TEST(GemmSweep, Gfx942) { sweep("gfx942"); }
TEST(GemmSweep, Gfx950) { sweep("gfx950"); }

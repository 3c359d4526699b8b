// The sm_80 (mma.sync) attention kernel on the PTX emulator (emu:sm_80; every fourth point for sm_90 on
// emu:sm_90a): random valid points with random B, Hq/Hkv, Sq and Sk (ragged tails, causal with Sq <= Sk),
// both layouts, padded rows and both masks; o within bf16 2e-2 / f16 4e-3 of the row norm of the float64
// reference, lse within 1e-3, no writes between rows, zero emulator reports, and ptxas (when present) reports
// no spills and no stack.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "../gen/attention_run.h"
#include "ptx_sweep.h"

using namespace isatune;

namespace {

using attention_test::attn;

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

TEST(AttentionSm80, Sweep) {
  const int points = env_int("ISATUNE_ATTENTION_SWEEP_POINTS", 100);
  const bool ptxas = gen_ptx_test::have_ptxas();
  std::vector<gen::Signature> sigs;
  for (const char* dt : {"bf16", "f16"})
    for (const char* hd : {"64", "128", "256", "192x128"})
      for (const char* mask : {"none", "causal"})
        for (const char* layout : {"bshd", "bhsd"})
          for (const char* lse : {"yes", "no"})
            sigs.push_back(
                {{"dtype", dt}, {"head_dim", hd}, {"mask", mask}, {"layout", layout}, {"lse", lse}});
  std::mt19937_64 rng(0x5a80);
  double worst_o[2] = {}, worst_lse = 0;
  int failures = 0, causal = 0, gqa = 0, ptxas_checked = 0, max_regs = 0;
  std::map<std::string, int> dims; // points per head_dim
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < points; ++i) {
    tune::VariantSpec spec;
    spec.generator = &attn();
    spec.isa = i % 4 == 3 ? "sm_90" : "sm_80"; // sm_90: the same portable kernel (on the sm_90a emulator)
    for (int draw = 0; draw < 100 && (spec.sig.empty() || attn().space(spec.isa, spec.sig).size() == 0);
         ++draw)
      spec.sig =
          gen::parse_signature(attn(), std::vector<std::string>{gen::format(sigs[rng() % sigs.size()])});
    const gen::Space space = attn().space(spec.isa, spec.sig); // redrawn where a head dim has no valid point
    ASSERT_GT(space.size(), 0u);
    ++dims[spec.sig.at("head_dim")];
    // head dims 192 and 256 cost 2-4x as much per key and query: half the lengths
    const int64_t shrink = std::stoi(spec.sig.at("head_dim")) >= 192 ? 2 : 1; // stoi("192x128") = d_qk
    spec.params = gen::params_of(space, space.valid_config(rng() % space.size()));
    const bool is_causal = spec.sig.at("mask") == "causal";
    const int64_t hkv = 1 + int64_t(rng() % 3), group = 1 + int64_t(rng() % 3);
    const int64_t sq = 1 + int64_t(rng() % (i % 5 == 0 ? 8 : 80 / shrink));
    const int64_t sk = is_causal ? sq + int64_t(rng() % (40 / shrink))
                                 : 1 + int64_t(rng() % (i % 7 == 0 ? 5 : 110 / shrink));
    gen::Problem prob{
        {"B", 1 + int64_t(rng() % 2)}, {"Hq", hkv * group}, {"Hkv", hkv}, {"Sq", sq}, {"Sk", sk}};
    if (i % 3 == 2)
      prob["pad"] = 8 * int64_t(1 + rng() % 2);
    const double scale = (0.5 + double(rng() % 1000) / 666.0) / std::sqrt(std::stod(spec.sig.at("head_dim"))); // d_qk
    SCOPED_TRACE(spec.isa + " " + gen::format(spec.sig) + " " + gen::format(spec.params) + " " +
                 gen::format(prob));
    // ptxas on a third of the points (the distinct kernels are few: 32 signatures x the space)
    const tune::Compiled compiled = tune::compile_variant(spec, {.ptxas = ptxas && i % 3 == 0});
    if (compiled.ptx_report) {
      ++ptxas_checked;
      ASSERT_EQ(compiled.code.kernels.size(), 1u);
      EXPECT_EQ(compiled.code.kernels[0].scratch_bytes, 0u) << "ptxas: spills or a stack frame";
      max_regs = std::max(max_regs, int(compiled.code.kernels[0].vgprs));
    }
    const attention_test::AttnOutcome r =
        attention_test::run_attention(gen_ptx_test::emu_device(spec.isa), compiled.code, spec.sig,
                                      spec.params, prob, 300 + uint64_t(i), scale);
    const bool bf16 = spec.sig.at("dtype") == "bf16";
    const double tol = bf16 ? 2e-2 : 4e-3;
    worst_o[bf16] = std::max(worst_o[bf16], r.o_error);
    worst_lse = std::max(worst_lse, r.lse_error);
    causal += is_causal;
    gqa += group > 1;
    const bool bad = !(r.o_error <= tol) || !(r.lse_error <= 1e-3) || r.gap_writes || !r.reports.empty();
    failures += bad;
    EXPECT_LE(r.o_error, tol) << r.where;
    EXPECT_LE(r.lse_error, 1e-3);
    EXPECT_EQ(r.gap_writes, 0u);
    EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
    if (bad && failures > 5)
      FAIL() << "too many failures";
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string per_dim;
  for (const auto& [k, n] : dims)
    per_dim += " " + k + ":" + std::to_string(n);
  std::printf("[attention sweep] head_dim%s\n", per_dim.c_str());
  std::printf("[attention sweep sm_80/sm_90] %d points (%d causal, %d GQA/MQA), max o error f16 %.3g bf16 "
              "%.3g, max lse "
              "error %.3g; ptxas on %d (max %d registers), %.1f s\n",
              points, causal, gqa, worst_o[0], worst_o[1], worst_lse, ptxas_checked, max_regs, secs);
}

// Head dims past 128: 192x128 only at block_n 16, 256 refused with the reason (ptxas 13 spills; the limits
// come from ptxas -v on every block_n, see attention_sm80.cpp).
TEST(AttentionSm80, HeadDimLimits) {
  for (const char* isa : {"sm_80", "sm_90"}) {
    const gen::Signature mla = gen::parse_signature(attn(), std::vector<std::string>{"head_dim=192x128"});
    const gen::Space s = attn().space(isa, mla);
    ASSERT_GT(s.size(), 0u) << isa;
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_EQ(gen::param_int(gen::params_of(s, s.valid_config(i)), "block_n"), 16) << isa;
    const gen::Signature d256 = gen::parse_signature(attn(), std::vector<std::string>{"head_dim=256"});
    EXPECT_EQ(attn().space(isa, d256).size(), 0u) << isa;
    try {
      attn().generate(isa, d256, gen::params_of(s, s.valid_config(0)));
      ADD_FAILURE() << isa << " accepted head_dim=256";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("head_dim=256"), std::string::npos) << e.what();
    }
  }
}

} // namespace

// fp8 element types (OCP and FNUZ encodings) and the GEMM generator's fp8 inputs: exact known encodings, round
// trips over every bit pattern, target checks (gfx942 FNUZ, gfx950 OCP, gfx90a none) and runs on the emulator.
#include <gtest/gtest.h>

#include <cmath>

#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"
#include "test_gemm_harness.h"

using namespace isatune;
using namespace gemm_test;
using gen::DType;

TEST(Fp8DType, FnuzKnownEncodings) {
  // e4m3fnuz: bias 8, max 240, 0x80 NaN, no negative zero (notes section 4; emu fp8_to_f32 with fnuz)
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, 1.0), 0x40u);
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, -1.0), 0xc0u);
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, 240.0), 0x7fu);
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, 1000.0), 0x7fu); // saturates
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, -INFINITY), 0xffu);
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, -0.0), 0x00u);    // no negative zero
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, -std::ldexp(1.0, -13)), 0x00u); // rounds to zero: +0
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, NAN), 0x80u);
  EXPECT_EQ(gen::decode(DType::fp8_e4m3_fnuz, 0x7fu), 240.0);
  EXPECT_EQ(gen::decode(DType::fp8_e4m3_fnuz, 0x08u), std::ldexp(1.0, -7));  // smallest normal
  EXPECT_EQ(gen::decode(DType::fp8_e4m3_fnuz, 0x01u), std::ldexp(1.0, -10)); // smallest subnormal
  EXPECT_TRUE(std::isnan(gen::decode(DType::fp8_e4m3_fnuz, 0x80u)));
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, 1.0 + 1.0 / 16), 0x40u); // tie to even
  EXPECT_EQ(gen::encode(DType::fp8_e4m3_fnuz, 1.0 + 3.0 / 16), 0x42u);
  // e5m2fnuz: bias 16, max 57344
  EXPECT_EQ(gen::encode(DType::fp8_e5m2_fnuz, 1.0), 0x40u);
  EXPECT_EQ(gen::encode(DType::fp8_e5m2_fnuz, -2.0), 0xc4u);
  EXPECT_EQ(gen::encode(DType::fp8_e5m2_fnuz, 57344.0), 0x7fu);
  EXPECT_EQ(gen::encode(DType::fp8_e5m2_fnuz, 1e9), 0x7fu);
  EXPECT_EQ(gen::decode(DType::fp8_e5m2_fnuz, 0x01u), std::ldexp(1.0, -17));
  EXPECT_EQ(gen::encode(DType::fp8_e5m2_fnuz, -0.0), 0x00u);
  EXPECT_TRUE(std::isnan(gen::decode(DType::fp8_e5m2_fnuz, 0x80u)));
  // OCP for contrast
  EXPECT_EQ(gen::encode(DType::fp8_e4m3, 1.0), 0x38u);
  EXPECT_EQ(gen::encode(DType::fp8_e5m2, 1.0), 0x3cu);
  EXPECT_EQ(gen::encode(DType::fp8_e4m3, -0.0), 0x80u);
  EXPECT_EQ(gen::parse_dtype("fp8_e4m3_fnuz"), DType::fp8_e4m3_fnuz);
  EXPECT_EQ(gen::parse_dtype("e5m2fnuz"), DType::fp8_e5m2_fnuz);
  EXPECT_EQ(gen::to_string(DType::fp8_e5m2_fnuz), "fp8_e5m2_fnuz");
  EXPECT_EQ(gen::size_of(DType::fp8_e4m3_fnuz), 1u);
}

TEST(Fp8DType, EveryPatternRoundTrips) {
  for (uint32_t x = 0; x < 256; ++x) {
    // FNUZ: every pattern but 0x80 is finite, the same bits as OCP with the exponent one lower
    for (auto [fnuz, ocp] : {std::pair{DType::fp8_e4m3_fnuz, DType::fp8_e4m3}, {DType::fp8_e5m2_fnuz, DType::fp8_e5m2}}) {
      if (x == 0x80)
        continue;
      const double v = gen::decode(fnuz, x);
      ASSERT_TRUE(std::isfinite(v)) << x;
      EXPECT_EQ(gen::encode(fnuz, v), x) << gen::to_string(fnuz) << " " << x;
      const double o = gen::decode(ocp, x);
      if (std::isfinite(o)) {
        EXPECT_EQ(v, o / 2) << gen::to_string(fnuz) << " " << x;
      }
    }
    for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      const double v = gen::decode(t, x);
      if (std::isfinite(v)) {
        EXPECT_EQ(gen::encode(t, v), x) << gen::to_string(t) << " " << x;
      }
    }
  }
}

namespace {

gen::Signature sig8(const char* a, const char* b, const char* cd, const char* layout) {
  return {{"a", a}, {"b", b}, {"cd", cd}, {"layout", layout}};
}

gen::Params params(int tm, int tn, int depth, int wm, int wn, const char* mfma, int vw, int pad, int pgr, int plr,
                   int split) {
  return {{"tile_m", gen::Value::num(tm)},           {"tile_n", gen::Value::num(tn)},
          {"depth", gen::Value::num(depth)},         {"waves_m", gen::Value::num(wm)},
          {"waves_n", gen::Value::num(wn)},          {"mfma", gen::Value::str(mfma)},
          {"vw", gen::Value::num(vw)},               {"lds_pad", gen::Value::num(pad)},
          {"prefetch_global", gen::Value::num(pgr)}, {"prefetch_local", gen::Value::num(plr)},
          {"split_k", gen::Value::num(split)},       {"wg_order", gen::Value::str("row")}};
}

} // namespace

TEST(GemmFp8, TargetsAndSignatures) {
  const gen::Generator& g = gemm();
  // gfx90a: no fp8 MFMA; gfx942 reads FNUZ only; gfx950 OCP only
  EXPECT_THROW(g.space("gfx90a", sig8("fp8_e4m3", "fp8_e4m3", "f32", "NN")), InputError);
  EXPECT_THROW(g.space("gfx90a", sig8("fp8_e4m3_fnuz", "fp8_e4m3_fnuz", "f32", "NN")), InputError);
  EXPECT_THROW(g.space("gfx942", sig8("fp8_e4m3", "fp8_e4m3", "f32", "NN")), InputError);
  EXPECT_THROW(g.space("gfx950", sig8("fp8_e5m2_fnuz", "fp8_e4m3_fnuz", "f32", "NN")), InputError);
  EXPECT_THROW(g.space("gfx950", sig8("fp8_e4m3", "fp8_e5m2_fnuz", "f32", "NN")), InputError); // mixed families
  EXPECT_THROW(g.space("gfx950", sig8("fp8_e4m3", "f16", "f32", "NN")), InputError);
  EXPECT_GT(g.space("gfx942", sig8("fp8_e4m3_fnuz", "fp8_e5m2_fnuz", "bf16", "TN")).size(), 200u);
  EXPECT_GT(g.space("gfx950", sig8("fp8_e5m2", "fp8_e4m3", "f16", "NT")).size(), 200u);
  // a generate() for the wrong target is refused as well
  gen::Params p = params(32, 32, 32, 1, 1, "32x32x16", 1, 0, 0, 0, 1);
  EXPECT_THROW(g.generate("gfx942", sig8("fp8_e4m3", "fp8_e4m3", "f32", "NN"), p), InputError);
  EXPECT_NO_THROW(g.generate("gfx942", sig8("fp8_e4m3_fnuz", "fp8_e4m3_fnuz", "f32", "NN"), p));
  // the buffers hold the signature's encodings; the form is chosen per operand
  auto specs = g.buffers(sig8("fp8_e4m3_fnuz", "fp8_e5m2_fnuz", "f32", "NN"), {{"M", 4}, {"N", 4}, {"K", 4}});
  EXPECT_EQ(specs[0].dtype, DType::fp8_e4m3_fnuz);
  EXPECT_EQ(specs[1].dtype, DType::fp8_e5m2_fnuz);
  gen::Generated gd = g.generate("gfx950", sig8("fp8_e5m2", "fp8_e4m3", "f32", "NN"),
                                 params(32, 32, 32, 1, 1, "16x16x32", 1, 0, 0, 0, 1));
  EXPECT_NE(gd.text.find("v_mfma_f32_16x16x32_bf8_fp8"), std::string::npos);
  EXPECT_NE(gd.kernel_name.find("gemm_fp8_e5m2_fp8_e4m3_f32"), std::string::npos);
}

// Fixed configurations through every load path (fast and byte-wise, K contiguous or transposed on the way to
// LDS), both shapes, split-K and prefetching, on ragged and aligned sizes.
TEST(GemmFp8, RunsOnTheEmulator) {
  const gen::Generator& g = gemm();
  struct Case {
    const char *a, *b, *cd, *layout;
    gen::Params p;
  };
  for (std::string isa : {"gfx942", "gfx950"}) {
    if (!toolchain::llvm_supports(isa))
      continue;
    const bool fnuz = isa == "gfx942";
    const char* e4 = fnuz ? "fp8_e4m3_fnuz" : "fp8_e4m3";
    const char* e5 = fnuz ? "fp8_e5m2_fnuz" : "fp8_e5m2";
    std::vector<Case> cases{
        {e4, e4, "f32", "NN", params(32, 32, 32, 1, 1, "32x32x16", 1, 0, 0, 0, 1)},
        {e4, e5, "f16", "TN", params(64, 32, 64, 2, 1, "16x16x32", 4, 8, 1, 1, 1)},
        {e5, e4, "bf16", "NT", params(32, 64, 32, 1, 2, "32x32x16", 2, 8, 0, 1, 2)},
        {e5, e5, "f32", "TT", params(64, 64, 64, 2, 2, "16x16x32", 4, 0, 1, 0, 4)},
    };
    auto dev = emu::make_emu_device({.target = isa, .threads = 2});
    for (const Case& c : cases) {
      gen::Signature sig = sig8(c.a, c.b, c.cd, c.layout);
      gen::Generated gd = g.generate(isa, sig, c.p);
      CodeObject code = assemble(isa, gd);
      for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {33, 17, 5}, {64, 64, 64}, {48, 80, 96}}) {
        gen::Problem prob{{"M", m}, {"N", n}, {"K", k}};
        RunOutcome r = run_problem(*dev, code, sig, c.p, prob, 11, {{"alpha", 1.5}, {"beta", 0.5}});
        SCOPED_TRACE(isa + " " + gen::format(sig) + " " + gen::format(c.p) + " " + gen::format(prob));
        EXPECT_LE(r.max_rel_error, gen::tolerance(g.output_dtype(sig))) << r.where;
        EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
      }
    }
  }
}

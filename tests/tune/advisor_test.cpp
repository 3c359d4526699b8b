// The shape advisor (tune/advisor.h) against fits computed by hand, per target, and `isatune advise`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "isatune/error.h"
#include "isatune/tune/advisor.h"
#include "selftest_fixture.h"

using namespace isatune;
using namespace isatune::tune;

namespace {
const TileFit& fit_of(const std::vector<TileFit>& fits, int tm, int tn) {
  for (const auto& f : fits)
    if (f.tile_m == tm && f.tile_n == tn) return f;
  throw std::runtime_error("no fit for tile " + std::to_string(tm) + "x" + std::to_string(tn));
}
const AttentionFit& attention_fit_of(const std::vector<AttentionFit>& fits, int bm, int bn) {
  for (const auto& f : fits)
    if (f.block_m == bm && f.block_n == bn) return f;
  throw std::runtime_error("no attention fit for " + std::to_string(bm) + "x" + std::to_string(bn));
}
// The roofline of docs/advisor.md with an efficiency: compute / max(compute / eff, memory).
double roofline(double flops, double bytes, double eff, const TargetPeaks& t) {
  const double compute = flops / (t.matrix_tflops * 1e12), memory = bytes / (t.hbm_tbps * 1e12);
  return compute / std::max(compute / eff, memory);
}
bool has_tile(const std::vector<std::pair<int, int>>& tiles, int tm, int tn) {
  return std::find(tiles.begin(), tiles.end(), std::pair{tm, tn}) != tiles.end();
}
} // namespace

TEST(Advisor, Gfx942LlamaQkvTilesAndWavesByHand) {
  const TargetPeaks t = target_peaks("gfx942");
  EXPECT_EQ(t.units, 304u);
  // Llama-3-8B QKV at 4096 tokens: N = (32 + 2*8) * 128 = 6144, K = 4096.
  const auto fits = fit_gemm(4096, 6144, 4096, t, {{256, 256}, {128, 128}});
  // 128x128: 32 x 48 = 1536 tiles, no padding; ceil(1536 / 304) = 6 waves, 1536 / 1824 = 0.8421 busy.
  const TileFit& a = fit_of(fits, 128, 128);
  EXPECT_EQ(a.tiles, 1536u);
  EXPECT_DOUBLE_EQ(a.padding_waste, 0);
  EXPECT_EQ(a.waves, 6u);
  EXPECT_NEAR(a.wave_efficiency, 0.842105, 1e-6);
  // 256x256: 16 x 24 = 384 tiles, 2 waves, 384 / 608 = 0.6316: the smaller tile fits the 304 CUs better.
  const TileFit& b = fit_of(fits, 256, 256);
  EXPECT_EQ(b.tiles, 384u);
  EXPECT_EQ(b.waves, 2u);
  EXPECT_NEAR(b.wave_efficiency, 0.631579, 1e-6);
  EXPECT_EQ(fits.front().tile_m, 128); // best first
  // fed: 128*128 / (128+128) = 64; 64 * 64 B/clk / 2048 FLOP/clk = 2, capped at 1; compute-bound, so the fraction of
  // peak is the wave efficiency
  EXPECT_DOUBLE_EQ(a.feed_efficiency, 1);
  EXPECT_NEAR(a.fraction_of_peak, 0.842105, 1e-6);
  // 32x32 on gfx942: 32*32/64 = 16; 16 * 64 / 2048 = 0.5 fed; 24576 tiles = 81 waves (24576 / 24624 busy)
  const TileFit small = fit_gemm(4096, 6144, 4096, t, {{32, 32}}).front(); // a copy: the vector is a temporary
  EXPECT_EQ(small.waves, 81u);
  EXPECT_DOUBLE_EQ(small.feed_efficiency, 0.5);
  EXPECT_NEAR(small.fraction_of_peak, 0.5 * 24576.0 / 24624.0, 1e-9);
  const auto tiles = gemm_tile_shapes("gfx942");
  EXPECT_TRUE(has_tile(tiles, 128, 128));
  EXPECT_TRUE(has_tile(tiles, 32, 32));
}

TEST(Advisor, Sm90aRaggedPaddingAndMemoryBoundDecodeByHand) {
  const TargetPeaks t = target_peaks("sm_90a");
  EXPECT_EQ(t.units, 132u);
  // 4000 x 4096 with 128x192 tiles: ceil(4000/128) = 32, ceil(4096/192) = 22: 704 tiles covering
  // 4096 x 4224 for 4000 x 4096 useful, 5.30% padding; ceil(704 / 132) = 6 waves, 704 / 792 = 0.8889.
  const auto fits = fit_gemm(4000, 4096, 4096, t, {{128, 192}, {128, 256}});
  const TileFit& f = fit_of(fits, 128, 192);
  EXPECT_EQ(f.tiles, 704u);
  EXPECT_NEAR(f.padding_waste, 0.0530303, 1e-6);
  EXPECT_EQ(f.waves, 6u);
  EXPECT_NEAR(f.wave_efficiency, 0.888889, 1e-6);
  EXPECT_NEAR(f.fraction_of_peak, (1 - 0.0530303) * 0.888889, 1e-5);
  // Decode, 16 tokens x 4096 x 4096 with 64x64 tiles: 16 of 64 rows used (75% padding), 64 tiles on 132 SMs
  // (0.4848), fed at 64*64/128 * 64 / 4096 = 0.5: 0.25 * 0.4848 * 0.5 = 0.0606 of the tensor peak; the compute
  // side (0.542 us / 0.0606 = 8.95 us) is above the memory side (2*(2*16*4096 + 4096^2) B / 4.8 TB/s = 7.05 us).
  const auto decode = fit_gemm(16, 4096, 4096, t, {{64, 64}});
  EXPECT_NEAR(decode.front().padding_waste, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(decode.front().feed_efficiency, 0.5);
  EXPECT_NEAR(decode.front().fraction_of_peak, 0.25 * 64.0 / 132.0 * 0.5, 1e-9);
  // 256 x 256 x 65536 with 128x128 tiles: 4 tiles on 132 SMs, compute / (4/132) = 286 us, well above memory
  // (2*(2*256*65536 + 256^2) B / 4.8 TB/s = 14.0 us): 4/132 of peak
  EXPECT_NEAR(fit_gemm(256, 256, 65536, t, {{128, 128}}).front().fraction_of_peak, 4.0 / 132.0, 1e-9);
  EXPECT_TRUE(has_tile(gemm_tile_shapes("sm_90a"), 128, 256));
}

TEST(Advisor, Gfx950AndSm80FitsByHand) {
  // gfx950 (256 CUs), Llama-3-8B gate/up: N = 2 * 14336 = 28672; 256x128 tiles: 16 x 224 = 3584 = 14 waves exactly.
  const auto g = fit_gemm(4096, 28672, 4096, target_peaks("gfx950"), {{256, 128}});
  EXPECT_EQ(g.front().tiles, 3584u);
  EXPECT_EQ(g.front().waves, 14u);
  EXPECT_DOUBLE_EQ(g.front().wave_efficiency, 1.0);
  // sm_80 (108 SMs), Qwen2-7B LM head: N = 152064 = 1188 * 128; 32 * 1188 = 38016 tiles = 352 waves exactly.
  const auto l = fit_gemm(4096, 152064, 3584, target_peaks("sm_80"), {{128, 128}});
  EXPECT_EQ(l.front().tiles, 38016u);
  EXPECT_EQ(l.front().waves, 352u);
  EXPECT_DOUBLE_EQ(l.front().padding_waste, 0);
  EXPECT_THROW(target_peaks("gfx1100"), InputError);
}

// Causal prefill attention (Sq = Sk = T, B = 1) with query x key blocks, by hand: a block of queries i*bm ..
// (i+1)*bm - 1 runs ceil(min((i+1) bm, T) / bn) key blocks; waste = 1 - T (T + 1) / 2 / computed pairs.
TEST(Advisor, AttentionBlocksByHandCdna) {
  const TargetPeaks g942 = target_peaks("gfx942"); // 304 CUs, 2048 FLOPs per clock per CU
  // Llama-3-8B's attention at 4096 tokens: 32 heads (8 kv) of 128
  const AttentionAdvice a = fit_attention(1, 4096, 32, 8, 128, true, g942, {{128, 64}, {16, 64}, {256, 32}});
  const double flops = 2.0 * 32 * 4096 * 2048 * 2 * 128; // 2 B Hq Sq avg_Sk (2 d), avg_Sk = 4096 / 2
  const double bytes = 2.0 * 4096 * 128 * (2 * 32 + 2 * 8);
  EXPECT_DOUBLE_EQ(a.flops, flops);
  EXPECT_DOUBLE_EQ(a.bytes, bytes);
  EXPECT_DOUBLE_EQ(a.visible_pairs, 4096.0 * 4097 / 2);
  ASSERT_EQ(a.fits.size(), 3u);
  // 128 x 64: 32 query blocks x 32 heads = 1024 workgroups in 4 waves of 304; key blocks 2 (i + 1), sum 1056
  const AttentionFit& b128 = attention_fit_of(a.fits, 128, 64);
  EXPECT_EQ(b128.workgroups, 1024u);
  EXPECT_EQ(b128.waves, 4u);
  EXPECT_DOUBLE_EQ(b128.wave_efficiency, 1024.0 / 1216);
  EXPECT_DOUBLE_EQ(b128.computed_pairs, 128.0 * 64 * 1056);
  EXPECT_DOUBLE_EQ(b128.padding_waste, 1 - 8390656.0 / 8650752);
  EXPECT_DOUBLE_EQ(b128.feed_efficiency, 1); // 128 x 64 / 2048 = 4, capped
  EXPECT_NEAR(b128.fraction_of_peak, roofline(flops, bytes, 8390656.0 / 8650752 * 1024 / 1216, g942), 1e-12);
  // 16 x 64: 8192 workgroups, 27 waves (8208 slots); key blocks ceil(j / 4) for j = 1..256, sum 4 x 2080;
  // fed at 16 x 64 / 2048 = 0.5
  const AttentionFit& b16 = attention_fit_of(a.fits, 16, 64);
  EXPECT_EQ(b16.workgroups, 8192u);
  EXPECT_EQ(b16.waves, 27u);
  EXPECT_DOUBLE_EQ(b16.computed_pairs, 16.0 * 64 * 8320);
  EXPECT_DOUBLE_EQ(b16.feed_efficiency, 0.5);
  EXPECT_NEAR(b16.fraction_of_peak, roofline(flops, bytes, 8390656.0 / 8519680 * 8192 / 8208 * 0.5, g942), 1e-12);
  // 256 x 32: 512 workgroups in 2 waves; key blocks 8 (i + 1), sum 1088
  const AttentionFit& b256 = attention_fit_of(a.fits, 256, 32);
  EXPECT_EQ(b256.waves, 2u);
  EXPECT_DOUBLE_EQ(b256.computed_pairs, 256.0 * 32 * 1088);
  EXPECT_NEAR(b256.fraction_of_peak, roofline(flops, bytes, 8390656.0 / 8912896 * 512 / 608, g942), 1e-12);
  EXPECT_EQ(a.best().block_m, 128); // 0.817 against 0.793 (256 x 32) and 0.492 (16 x 64)

  // gfx950 (256 CUs, 4096 FLOPs per clock): a ragged 1000 tokens, 8 heads of 64
  const TargetPeaks g950 = target_peaks("gfx950");
  const AttentionAdvice r = fit_attention(1, 1000, 8, 8, 64, true, g950, {{64, 32}, {32, 64}});
  const double rflops = 2.0 * 8 * 1000 * 500 * 2 * 64, rbytes = 2.0 * 1000 * 64 * 32;
  // 64 x 32: 16 query blocks, 128 workgroups in one wave (0.5); key blocks 2 (i + 1) for i < 15, then
  // ceil(1000 / 32) = 32: 272
  const AttentionFit& r64 = attention_fit_of(r.fits, 64, 32);
  EXPECT_EQ(r64.workgroups, 128u);
  EXPECT_EQ(r64.waves, 1u);
  EXPECT_DOUBLE_EQ(r64.wave_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(r64.computed_pairs, 64.0 * 32 * 272);
  EXPECT_DOUBLE_EQ(r64.padding_waste, 1 - 500500.0 / 557056);
  EXPECT_DOUBLE_EQ(r64.feed_efficiency, 1); // 64 x 64 / 4096
  EXPECT_NEAR(r64.fraction_of_peak, roofline(rflops, rbytes, 500500.0 / 557056 * 0.5, g950), 1e-12);
  // 32 x 64: 32 query blocks fill the 256 CUs once; key blocks ceil(j / 2), j = 1..31 (256), then
  // ceil(1000 / 64) = 16: 272; fed at 32 x 64 / 4096 = 0.5
  const AttentionFit& r32 = attention_fit_of(r.fits, 32, 64);
  EXPECT_EQ(r32.workgroups, 256u);
  EXPECT_DOUBLE_EQ(r32.wave_efficiency, 1);
  EXPECT_DOUBLE_EQ(r32.computed_pairs, 32.0 * 64 * 272);
  EXPECT_DOUBLE_EQ(r32.feed_efficiency, 0.5);
  EXPECT_NEAR(r32.fraction_of_peak, roofline(rflops, rbytes, 500500.0 / 557056 * 0.5, g950), 1e-12);

  // The generator's block shapes: waves (1, 2, 4, 8) x the MFMA's M (32, 16), block_n 32 or 64
  for (const char* isa : {"gfx942", "gfx950"}) {
    std::string used;
    const auto shapes = attention_tile_shapes(isa, 128, &used);
    EXPECT_EQ(used, isa);
    ASSERT_FALSE(shapes.empty()) << isa;
    for (const auto& [bm, bn] : shapes) {
      EXPECT_TRUE(bm == 16 || bm == 32 || bm == 64 || bm == 128 || bm == 256) << isa << " " << bm;
      EXPECT_TRUE(bn == 32 || bn == 64) << isa << " " << bn;
    }
    EXPECT_TRUE(has_tile(shapes, 128, 64)) << isa; // 4 waves of 32x32 MFMAs
  }
  EXPECT_TRUE(attention_tile_shapes("gfx90a", 128).empty()); // no attention kernel for gfx90a
  EXPECT_TRUE(attention_tile_shapes("gfx942", 96).empty());  // nor for head_dim 96
  // head_dim 256: CDNA only on 16x16 MFMAs (block_m = 16 x waves, at most 128); sm_80 has no valid point
  const auto d256 = attention_tile_shapes("gfx942", 256);
  EXPECT_FALSE(d256.empty());
  for (const auto& [bm, bn] : d256)
    EXPECT_TRUE(bm % 16 == 0 && bm <= 128 && bn == 32) << bm << " x " << bn;
  std::string none = "unset";
  EXPECT_TRUE(attention_tile_shapes("sm_80", 256, &none).empty());
  EXPECT_EQ(none, "unset");
  const Advice old = advise(parse_model("Llama-3-8B"), "gfx90a", {});
  EXPECT_FALSE(old.attention.generator);
  ASSERT_EQ(old.attention.fits.size(), 1u);
  EXPECT_EQ(old.attention.best().block_m, 128);
  EXPECT_EQ(old.attention.best().block_n, 64);
}

TEST(Advisor, AttentionBlocksByHandPtx) {
  // sm_90a (H200: 132 SMs, 4096 FLOPs per clock per SM), Llama-3-8B's attention at 4096 tokens
  const TargetPeaks h = target_peaks("sm_90a");
  const AttentionAdvice a = fit_attention(1, 4096, 32, 8, 128, true, h, {{128, 16}, {64, 16}});
  const double flops = 2.0 * 32 * 4096 * 2048 * 2 * 128, bytes = 2.0 * 4096 * 128 * 80;
  // 128 x 16: 1024 workgroups, 8 waves of 132 (1056 slots); key blocks 8 (i + 1), sum 4224
  const AttentionFit& b128 = attention_fit_of(a.fits, 128, 16);
  EXPECT_EQ(b128.workgroups, 1024u);
  EXPECT_EQ(b128.waves, 8u);
  EXPECT_DOUBLE_EQ(b128.computed_pairs, 128.0 * 16 * 4224);
  EXPECT_DOUBLE_EQ(b128.feed_efficiency, 1); // 128 x 64 / 4096 = 2
  EXPECT_NEAR(b128.fraction_of_peak, roofline(flops, bytes, 8390656.0 / 8650752 * 1024 / 1056, h), 1e-12);
  // 64 x 16: 2048 workgroups, 16 waves (2112 slots); key blocks 4 (i + 1), sum 8320; fed exactly (64 x 64 / 4096)
  const AttentionFit& b64 = attention_fit_of(a.fits, 64, 16);
  EXPECT_EQ(b64.workgroups, 2048u);
  EXPECT_EQ(b64.waves, 16u);
  EXPECT_DOUBLE_EQ(b64.computed_pairs, 64.0 * 16 * 8320);
  EXPECT_DOUBLE_EQ(b64.feed_efficiency, 1);
  EXPECT_NEAR(b64.fraction_of_peak, roofline(flops, bytes, 8390656.0 / 8519680 * 2048 / 2112, h), 1e-12);
  EXPECT_EQ(a.best().block_m, 64); // 0.955 against 0.941 (128 x 16)

  // sm_80 (A100: 108 SMs, 2048 FLOPs per clock): 77 tokens, 4 heads (1 kv) of 64
  const TargetPeaks am = target_peaks("sm_80");
  const AttentionAdvice r = fit_attention(1, 77, 4, 1, 64, true, am, {{32, 64}, {16, 16}});
  const double rflops = 2.0 * 4 * 77 * 38.5 * 2 * 64, rbytes = 2.0 * 77 * 64 * (8 + 2);
  EXPECT_DOUBLE_EQ(r.flops, rflops);
  EXPECT_DOUBLE_EQ(r.visible_pairs, 3003);
  // 32 x 64: 3 query blocks x 4 heads = 12 workgroups (12 / 108); key blocks 1, 1, ceil(77 / 64) = 2
  const AttentionFit& r32 = attention_fit_of(r.fits, 32, 64);
  EXPECT_EQ(r32.workgroups, 12u);
  EXPECT_EQ(r32.waves, 1u);
  EXPECT_DOUBLE_EQ(r32.computed_pairs, 32.0 * 64 * 4);
  EXPECT_DOUBLE_EQ(r32.padding_waste, 1 - 3003.0 / 8192);
  EXPECT_DOUBLE_EQ(r32.feed_efficiency, 1);
  EXPECT_NEAR(r32.fraction_of_peak, roofline(rflops, rbytes, 3003.0 / 8192 * 12 / 108, am), 1e-12);
  // 16 x 16: 5 query blocks, 20 workgroups; key blocks 1, 2, 3, 4, ceil(77 / 16) = 5; fed at 16 x 64 / 2048
  const AttentionFit& r16 = attention_fit_of(r.fits, 16, 16);
  EXPECT_EQ(r16.workgroups, 20u);
  EXPECT_DOUBLE_EQ(r16.computed_pairs, 16.0 * 16 * 15);
  EXPECT_DOUBLE_EQ(r16.feed_efficiency, 0.5);
  EXPECT_NEAR(r16.fraction_of_peak, roofline(rflops, rbytes, 3003.0 / 3840 * 20 / 108 * 0.5, am), 1e-12);

  // The generator's shapes: on sm_90a the wgmma kernel, 64 query rows per consumer warpgroup (1 or 2) and key
  // blocks of 32, 64 or 128; on sm_90 16 x warps (1, 2, 4, 8) query rows with block_n x head_dim at most 2048
  // (the portable mma.sync kernel), on sm_80 at most 4096
  std::string used;
  const auto h_shapes = attention_tile_shapes("sm_90a", 128, &used);
  EXPECT_EQ(used, "sm_90a");
  ASSERT_FALSE(h_shapes.empty());
  EXPECT_TRUE(has_tile(h_shapes, 128, 64));
  for (const auto& [bm, bn] : h_shapes) {
    EXPECT_TRUE(bm == 64 || bm == 128) << bm;
    EXPECT_TRUE(bn == 32 || bn == 64 || bn == 128) << bn;
  }
  const auto p_shapes = attention_tile_shapes("sm_90", 128, &used);
  EXPECT_EQ(used, "sm_90");
  ASSERT_FALSE(p_shapes.empty());
  for (const auto& [bm, bn] : p_shapes) {
    EXPECT_TRUE(bm == 16 || bm == 32 || bm == 64 || bm == 128) << bm;
    EXPECT_EQ(bn, 16);
  }
  const auto a_shapes = attention_tile_shapes("sm_80", 128);
  EXPECT_TRUE(has_tile(a_shapes, 64, 32));
  for (const auto& [bm, bn] : a_shapes) EXPECT_LE(bn * 128, 4096);
  const Advice l = advise(parse_model("Llama-3-8B"), "sm_90a", {});
  EXPECT_TRUE(l.attention.generator);
  EXPECT_EQ(l.attention.fits.size(), h_shapes.size());
  // the layer fraction counts the attention at its best block: recompute it from the parts
  double f = 0, time = 0;
  for (const auto& g : l.gemms)
    if (g.name != "lm_head") f += g.flops, time += g.flops / g.best().fraction_of_peak;
  f += l.attention.flops, time += l.attention.flops / l.attention.best().fraction_of_peak;
  EXPECT_NEAR(l.layer_fraction, f / time, 1e-12);
}

TEST(Advisor, LayerOfAPresetAndNearbyDimensionsThatFitBetter) {
  const ModelDims m = parse_model("llama-3-8b");
  EXPECT_EQ(m.hidden, 4096);
  AdviseOptions o;
  o.tolerance = 0.03;
  const Advice a = advise(m, "gfx942", o);
  ASSERT_EQ(a.gemms.size(), 5u);
  EXPECT_EQ(a.gemms[0].name, "qkv");
  EXPECT_EQ(a.gemms[0].n, 6144);
  EXPECT_EQ(a.gemms[2].n, 28672);  // gate/up
  EXPECT_EQ(a.gemms[3].k, 14336);  // down
  EXPECT_EQ(a.gemms[4].n, 128256); // LM head
  // attention: the generator's block shapes for gfx942; with 128 x 64 blocks 32 heads x ceil(4096 / 128) = 1024
  // workgroups, 4 waves on 304 CUs, 1024 / 1216 = 0.8421; the best block is the best of its fits
  EXPECT_TRUE(a.attention.generator);
  EXPECT_EQ(a.attention.space_isa, "gfx942");
  EXPECT_EQ(a.attention.fits.size(), attention_tile_shapes("gfx942", 128).size());
  const AttentionFit& a128 = attention_fit_of(a.attention.fits, 128, 64);
  EXPECT_EQ(a128.workgroups, 1024u);
  EXPECT_EQ(a128.waves, 4u);
  EXPECT_NEAR(a128.wave_efficiency, 0.842105, 1e-6);
  for (const auto& f : a.attention.fits) EXPECT_LE(f.fraction_of_peak, a.attention.best().fraction_of_peak);
  EXPECT_GT(a.layer_fraction, 0);
  EXPECT_LE(a.layer_fraction, 1);
  for (const auto& g : a.gemms)
    for (size_t i = 1; i < g.fits.size(); ++i) EXPECT_GE(g.fits[i - 1].fraction_of_peak, g.fits[i].fraction_of_peak);
  for (const auto& s : a.suggestions) {
    EXPECT_GT(s.fraction_after, s.fraction_before) << s.dimension;
    EXPECT_EQ(s.to % 64, 0) << s.dimension;
    EXPECT_LE(std::llabs(s.to - s.from), int64_t(0.03 * double(s.from)) + 1) << s.dimension;
    // the suggestion's own fit, recomputed, gives what it says
    ModelDims d = m;
    (s.dimension == "hidden" ? d.hidden : s.dimension == "ffn" ? d.ffn : d.vocab) = s.to;
    const Advice b = advise(d, "gfx942", {});
    EXPECT_NEAR(s.dimension == "vocab" ? b.gemms.back().best().fraction_of_peak : b.layer_fraction, s.fraction_after,
                1e-12);
  }
  // 2000 tokens on sm_90a leave the last wave of the QKV GEMM part-empty: a nearby ffn or hidden should help.
  ModelDims odd = m;
  odd.tokens = 2000;
  odd.ffn = 14000;
  const Advice c = advise(odd, "sm_90a", {});
  EXPECT_FALSE(c.suggestions.empty());
}

TEST(Advisor, ModelFilesOursAndHuggingFaceConfigs) {
  const std::string path = test::temp_path("config.json");
  std::ofstream(path) << R"({"hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4,
                             "intermediate_size": 18944, "vocab_size": 152064, "_name_or_path": "qwen"})";
  const ModelDims m = parse_model(path);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.tokens, 4096);
  const std::string bad = test::temp_path("bad.json");
  std::ofstream(bad) << R"({"hidden": 4096, "heads": 32, "ffn": 11008})";
  try {
    parse_model(bad);
    FAIL() << "a model without a vocabulary was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_model("no-such-model"), InputError);
}

TEST(Advisor, CliJsonAndText) {
  if (!std::filesystem::exists(ISATUNE_CLI_PATH)) GTEST_SKIP() << "isatune not built: " << ISATUNE_CLI_PATH;
  auto run = [](const std::string& args, int& code) {
    std::string out;
    FILE* p = popen((std::string(ISATUNE_CLI_PATH) + " advise " + args + " 2>&1 </dev/null").c_str(), "r");
    char buf[4096];
    size_t n;
    while (p && (n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int st = p ? pclose(p) : -1;
    code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
  };
  int code = -1;
  const auto j = nlohmann::json::parse(run("--target sm_80 --model Mistral-7B --tokens 1000 --json", code));
  EXPECT_EQ(code, 0);
  EXPECT_EQ(j["target"]["units"], 108);
  EXPECT_EQ(j["gemms"][4]["N"], 32000);
  EXPECT_EQ(j["gemms"][0]["M"], 1000);
  EXPECT_TRUE(j["attention"]["generator"].get<bool>());
  EXPECT_EQ(j["attention"]["space_isa"], "sm_80");
  EXPECT_EQ(j["attention"]["tiles"].size(), attention_tile_shapes("sm_80", 128).size());
  EXPECT_EQ(j["attention"]["best"]["fraction_of_peak"], j["attention"]["tiles"][0]["fraction_of_peak"]);
  EXPECT_EQ(j["attention"]["best"]["workgroups"].get<int>(),
            32 * ((1000 + j["attention"]["best"]["block_m"].get<int>() - 1) / j["attention"]["best"]["block_m"].get<int>()));
  const std::string text = run("--target gfx950 --model Qwen2-7B", code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("gate_up"), std::string::npos);
  EXPECT_NE(text.find("block shapes of the attention generator's space for gfx950"), std::string::npos) << text;
  run("--target gfx1100 --model Qwen2-7B", code);
  EXPECT_EQ(code, 1);
}

TEST(Advisor, DbShowsTheBestRecordedVariantLabelledByDeviceKind) {
  // A tiny model whose O projection (64 x 64 x 64) is tuned on the gfx942 emulator.
  ModelDims m{"tiny", 64, 1, 1, 64, 128, 64, 64, "test"};
  const std::string path = test::temp_path("advise.db");
  const gen::Generator& g = gen::find_generator("gemm");
  const gen::Signature sig = gen::parse_signature(g, std::vector<std::string>{"a=bf16", "b=bf16"});
  const gen::Params params = gen::parse_params(g.space("gfx942", sig), std::vector<std::string>{"tile_m=64", "tile_n=64"});
  const gen::Problem problem{{"M", 64}, {"N", 64}, {"K", 64}};
  auto device = test::quick_emulator();
  const VariantSpec spec{&g, "gfx942", sig, params};
  const Compiled c = compile_variant(spec);
  const RunResult r = run_variant(*device, c, spec, problem);
  ASSERT_EQ(r.status, Status::ok) << r.message;
  {
    auto db = db::Database::open(path);
    TuningRecorder rec(db, {&g, "gfx942", sig, {problem}}, device->properties());
    rec.record(params, &c, {{problem, r.status, r.message, r.timing}});
  }
  AdviseOptions o;
  o.db_path = path;
  const Advice a = advise(m, "gfx942", o);
  ASSERT_EQ(a.gemms[1].name, "o");
  ASSERT_TRUE(a.gemms[1].recorded.has_value());
  EXPECT_EQ(a.gemms[1].recorded->device_kind, "emulated");
  EXPECT_DOUBLE_EQ(a.gemms[1].recorded->median_ms, r.timing->median_ms);
  EXPECT_NEAR(a.gemms[1].recorded->fraction_of_peak,
              2.0 * 64 * 64 * 64 / (a.target.matrix_tflops * 1e12) / (r.timing->median_ms * 1e-3), 1e-12);
  EXPECT_FALSE(a.gemms[0].recorded.has_value()); // QKV (64 x 192 x 64) was not tuned
  EXPECT_FALSE(a.attention.recorded.has_value());

  // Its attention (1 head of 64, 64 tokens, causal) run on the emulator and recorded: shown with the layer's
  // FLOPs (2 x 64 x 32 x 2 x 64) over its time; an unmasked record of the same shape is not taken for it.
  const gen::Generator& ag = gen::find_generator("attention");
  for (const char* mask : {"none", "causal"}) {
    const gen::Signature asig =
        gen::parse_signature(ag, std::vector<std::string>{"head_dim=64", std::string("mask=") + mask});
    const gen::Params ap = gen::parse_params(ag.space("gfx942", asig), std::vector<std::string>{"waves=2"});
    const gen::Problem aprob{{"B", 1}, {"Hq", 1}, {"Sq", 64}};
    const VariantSpec aspec{&ag, "gfx942", asig, ap};
    const Compiled ac = compile_variant(aspec);
    const RunResult ar = run_variant(*device, ac, aspec, aprob);
    ASSERT_EQ(ar.status, Status::ok) << ar.message;
    {
      auto db = db::Database::open(path);
      TuningRecorder rec(db, {&ag, "gfx942", asig, {aprob}}, device->properties());
      rec.record(ap, &ac, {{aprob, ar.status, ar.message, ar.timing}});
    }
    const Advice b = advise(m, "gfx942", o);
    if (std::string(mask) == "none") {
      EXPECT_FALSE(b.attention.recorded.has_value());
      continue;
    }
    ASSERT_TRUE(b.attention.recorded.has_value());
    EXPECT_EQ(b.attention.recorded->device_kind, "emulated");
    EXPECT_DOUBLE_EQ(b.attention.recorded->median_ms, ar.timing->median_ms);
    EXPECT_NEAR(b.attention.recorded->fraction_of_peak,
                2.0 * 64 * 32 * 2 * 64 / (b.target.matrix_tflops * 1e12) / (ar.timing->median_ms * 1e-3), 1e-12);
    EXPECT_EQ(nlohmann::json::parse(b.attention.recorded->parameters)["waves"].get<double>(), 2)
        << b.attention.recorded->parameters;
  }
}

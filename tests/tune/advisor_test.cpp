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
  // attention: 32 heads x ceil(4096 / 128) = 1024 workgroups, 4 waves on 304 CUs, 1024 / 1216 = 0.8421
  EXPECT_EQ(a.attention.workgroups, 1024u);
  EXPECT_EQ(a.attention.waves, 4u);
  EXPECT_NEAR(a.attention.wave_efficiency, 0.842105, 1e-6);
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
  const std::string text = run("--target gfx950 --model Qwen2-7B", code);
  EXPECT_EQ(code, 0);
  EXPECT_NE(text.find("gate_up"), std::string::npos);
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
}

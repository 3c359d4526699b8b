// The attention generator on the CDNA emulator: its contract (problem rules, space constraints, FLOP
// convention), and sweeps over random valid points of gfx942 and gfx950 with random B, Hq/Hkv, Sq and Sk
// (ragged tails, causal with Sq <= Sk), both layouts, padded rows and both masks. Every output within bf16
// 2e-2 / f16 4e-3 of the row norm of the float64 reference, LSE within 1e-3 (absolute), no writes between
// rows, zero emulator reports.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>

#include "attention_run.h"
#include "emu_run.h"
#include "isatune/cdna/printer.h"
#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"

using namespace isatune;

namespace {

using attention_test::attn;
using attention_test::AttnOutcome;
using attention_test::run_attention;

std::vector<gen::Signature> signatures() {
  std::vector<gen::Signature> v;
  for (const char* dt : {"bf16", "f16"})
    for (const char* hd : {"64", "128", "256", "192x128"})
      for (const char* mask : {"none", "causal"})
        for (const char* layout : {"bshd", "bhsd"})
          for (const char* lse : {"yes", "no"})
            v.push_back({{"dtype", dt}, {"head_dim", hd}, {"mask", mask}, {"layout", layout}, {"lse", lse}});
  return v;
}

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

void sweep(const std::string& isa, int default_points) {
  if (!toolchain::llvm_supports(isa))
    GTEST_SKIP() << "this LLVM cannot assemble " << isa;
  const int points = env_int("ISATUNE_ATTENTION_SWEEP_POINTS", default_points);
  const auto sigs = signatures();
  auto dev = emu::make_emu_device({.target = isa, .threads = 1});
  std::mt19937_64 rng(0xa77e + uint64_t(isa.back()));
  double worst_o[2] = {}, worst_lse = 0;
  int failures = 0, causal = 0, gqa = 0, pingpong = 0, agpr = 0;
  std::map<std::string, int> shapes, dims; // points per MFMA shape, per head_dim
  std::map<std::string, int> dmas;         // points per lds_dma value
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < points; ++i) {
    gen::Signature full;
    for (int draw = 0; draw < 100 && (full.empty() || attn().space(isa, full).size() == 0); ++draw)
      full = gen::parse_signature(attn(), std::vector<std::string>{gen::format(sigs[rng() % sigs.size()])});
    const gen::Space space = attn().space(isa, full); // redrawn above where a head dim has no valid point
    ASSERT_GT(space.size(), 0u);
    ++dims[full.at("head_dim")];
    // head dims 192 and 256 cost 2-4x as much per key and query: half the lengths
    const int64_t shrink = std::stoi(full.at("head_dim")) >= 192 ? 2 : 1; // stoi("192x128") = d_qk
    gen::Params params = gen::params_of(space, space.valid_config(rng() % space.size()));
    // every eighth point is a pingpong one where the signature has any (pingpong needs waves=8 and lds_dma=none,
    // so plain random draws find few)
    for (int tries = 0; i % 8 == 3 && gen::param_int(params, "pingpong") == 0 && tries < 200; ++tries)
      params = gen::params_of(space, space.valid_config(rng() % space.size()));
    const bool is_causal = full.at("mask") == "causal";
    ++shapes[gen::param_str(params, "mfma")];
    pingpong += gen::param_int(params, "pingpong") == 1;
    agpr += gen::param_str(params, "o_regs") == "agpr";
    ++dmas[gen::param_str(params, "lds_dma")];
    const int64_t hkv = 1 + int64_t(rng() % 3), group = 1 + int64_t(rng() % 3);
    const int64_t sq = 1 + int64_t(rng() % (i % 5 == 0 ? 8 : 96 / shrink));
    const int64_t sk = is_causal ? sq + int64_t(rng() % (40 / shrink))
                                 : 1 + int64_t(rng() % (i % 7 == 0 ? 5 : 130 / shrink));
    gen::Problem prob{
        {"B", 1 + int64_t(rng() % 2)}, {"Hq", hkv * group}, {"Hkv", hkv}, {"Sq", sq}, {"Sk", sk}};
    if (i % 3 == 2)
      prob["pad"] = 8 * int64_t(1 + rng() % 2);
    const double d = std::stod(full.at("head_dim")); // d_qk (192 of 192x128)
    const double scale = (0.5 + double(rng() % 1000) / 666.0) / std::sqrt(d);
    SCOPED_TRACE(isa + " " + gen::format(full) + " " + gen::format(params) + " " + gen::format(prob));
    const gen::Generated gd = attn().generate(isa, full, params);
    { // the space's register rule holds for the kernel as built: a workgroup's waves fit the unified file
      const uint32_t waves = uint32_t(gen::param_int(params, "waves"));
      EXPECT_LE(gd.cdna->arch_vgprs, 256u);
      EXPECT_LE((gd.cdna->vgpr_total() + 7) / 8 * 8 * ((waves + 3) / 4), 512u) << gd.cdna->vgpr_total();
    }
    const AttnOutcome r =
        run_attention(*dev, gen_test::assemble(isa, gd), full, params, prob, 77 + uint64_t(i), scale);
    const bool bf16 = full.at("dtype") == "bf16";
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
  std::string per_shape, per_dma;
  for (const auto& [k, n] : shapes)
    per_shape += " " + k + ":" + std::to_string(n);
  for (const auto& [k, n] : dmas)
    per_dma += " " + k + ":" + std::to_string(n);
  per_shape += "; head_dim";
  for (const auto& [k, n] : dims)
    per_shape += " " + k + ":" + std::to_string(n);
  std::printf(
      "[attention sweep %s] %d points (%d causal, %d GQA/MQA, %d pingpong, %d O in AGPRs; mfma%s; lds_dma%s), "
      "max o error f16 %.3g bf16 %.3g, max lse error %.3g, %.1f s\n",
      isa.c_str(), points, causal, gqa, pingpong, agpr, per_shape.c_str(), per_dma.c_str(), worst_o[0],
      worst_o[1], worst_lse, secs);
  if (points >= 40) { // every shape of the target, both schedules, both O register files, every lds_dma
    EXPECT_EQ(shapes.size(), isa == "gfx950" ? 4u : 2u);
    EXPECT_GT(pingpong, 0);
    EXPECT_GT(agpr, 0);
    EXPECT_EQ(dmas.size(), 4u);
  }
}

gen::Signature sig_of(const std::string& words) {
  return gen::parse_signature(attn(), std::vector<std::string>{words});
}

} // namespace

TEST(Attention, ProblemRules) {
  const gen::Signature causal = sig_of("mask=causal");
  EXPECT_THROW(attn().buffers(sig_of(""), {{"B", 1}, {"Hq", 6}, {"Hkv", 4}, {"Sq", 8}}), InputError);
  EXPECT_THROW(attn().buffers(causal, {{"B", 1}, {"Hq", 2}, {"Sq", 9}, {"Sk", 8}}), InputError);
  EXPECT_THROW(attn().buffers(sig_of(""), {{"B", 1}, {"Hq", 2}, {"Sq", 9}, {"pad", 4}}), InputError);
  EXPECT_NO_THROW(attn().buffers(causal, {{"B", 1}, {"Hq", 8}, {"Hkv", 1}, {"Sq", 8}, {"Sk", 9}}));
  // strides: bshd rows are (b, s, h), bhsd rows (b, h, s); pad adds a gap after each head vector
  auto b = attn().buffers(sig_of("layout=bhsd,head_dim=64"),
                          {{"B", 2}, {"Hq", 4}, {"Hkv", 2}, {"Sq", 5}, {"Sk", 7}, {"pad", 8}});
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b[1].rows, 2u * 2 * 7);
  EXPECT_EQ(b[1].row_stride, 72u);
  EXPECT_EQ(b[1].elements, 2u * 2 * 7 * 72 - 8);
  EXPECT_EQ(b[4].elements, 2u * 4 * 5);
}

TEST(Attention, FlopConvention) {
  const gen::Problem p{{"B", 2}, {"Hq", 8}, {"Hkv", 2}, {"Sq", 256}, {"Sk", 256}};
  const double full = 4.0 * 2 * 8 * 256 * 256 * 128;
  EXPECT_DOUBLE_EQ(attn().work(sig_of(""), p).flops, full);
  EXPECT_DOUBLE_EQ(attn().work(sig_of("mask=causal"), p).flops, full / 2);
  // bottom-right causal with Sk > Sq: the mean visible key count is (Sk - Sq + Sk) / 2
  const gen::Problem q{{"B", 1}, {"Hq", 1}, {"Sq", 100}, {"Sk", 300}};
  EXPECT_DOUBLE_EQ(attn().work(sig_of("mask=causal,head_dim=64"), q).flops, 2.0 * 100 * 250 * 128);
}

TEST(Attention, SpaceConstraints) {
  const gen::Signature f16 = sig_of("dtype=f16,head_dim=64");
  const gen::Space s942 = attn().space("gfx942", f16), s950 = attn().space("gfx950", sig_of(""));
  EXPECT_GT(s942.size(), 0u);
  for (size_t i = 0; i < s942.size(); ++i) {
    const gen::Params p = gen::params_of(s942, s942.valid_config(i));
    const std::string mfma = gen::param_str(p, "mfma"); // 32x32x16 and 16x16x32 are gfx950's
    EXPECT_TRUE(mfma == "32x32x8" || mfma == "16x16x16") << mfma;
    EXPECT_EQ(gen::param_str(p, "p_round"), "rtne"); // rtz is for bf16
  }
  std::set<std::string> shapes;
  for (size_t i = 0; i < s950.size(); ++i)
    shapes.insert(gen::param_str(gen::params_of(s950, s950.valid_config(i)), "mfma"));
  EXPECT_EQ(shapes.size(), 4u);
  EXPECT_THROW(attn().generate("gfx942", sig_of(""),
                               {{"waves", gen::Value::num(4)},
                                {"block_n", gen::Value::num(32)},
                                {"mfma", gen::Value::str("32x32x16")},
                                {"p_round", gen::Value::str("rtne")}}),
               InputError);
  EXPECT_THROW(attn().space("gfx90a", sig_of("")), InputError);
}

// The check can fail: a causal kernel compared with the unmasked reference is wrong by far more than the
// tolerance (so the sweep's masks are really exercised).
TEST(Attention, MaskMatters) {
  if (!toolchain::llvm_supports("gfx942"))
    GTEST_SKIP() << "this LLVM cannot assemble gfx942";
  auto dev = emu::make_emu_device({.target = "gfx942", .threads = 1});
  const gen::Signature causal = sig_of("mask=causal,head_dim=64");
  const gen::Params params = gen::parse_params(attn().space("gfx942", causal), {});
  const gen::Problem prob{{"B", 1}, {"Hq", 2}, {"Hkv", 1}, {"Sq", 40}, {"Sk", 50}};
  const CodeObject code = gen_test::assemble("gfx942", attn().generate("gfx942", causal, params));
  const AttnOutcome ok = run_attention(*dev, code, causal, params, prob, 5, 0.15);
  EXPECT_LE(ok.o_error, 2e-2) << ok.where;
  const gen::Signature none = sig_of("mask=none,head_dim=64");
  const AttnOutcome wrong = run_attention(*dev, code, causal, params, prob, 5, 0.15, &none);
  EXPECT_GT(wrong.o_error, 0.1);
}

// lds_dma=kv: K and V go straight into LDS (buffer_load_dword{,x4} ... lds) and insert_waits puts the vmcnt
// wait for them before the barrier that precedes the LDS reads. The kernel is right and clean; without that
// wait (a mutant of the emitted text) the emulator reports the reads of LDS-DMA data that has not landed.
TEST(Attention, LdsDmaNeedsItsWait) {
  for (const std::string isa : {"gfx942", "gfx950"}) {
    if (!toolchain::llvm_supports(isa))
      GTEST_SKIP() << "this LLVM cannot assemble " << isa;
    SCOPED_TRACE(isa);
    auto dev = emu::make_emu_device({.target = isa, .threads = 1});
    const gen::Signature sig = sig_of("head_dim=64,mask=causal");
    const gen::Params params = gen::parse_params(
        attn().space(isa, sig), std::vector<std::string>{"waves=2", "block_n=32", "lds_dma=kv"});
    const gen::Problem prob{{"B", 1}, {"Hq", 2}, {"Hkv", 1}, {"Sq", 37}, {"Sk", 70}};
    const gen::Generated gd = attn().generate(isa, sig, params);
    const std::string dma = isa == "gfx950" ? "buffer_load_dwordx4" : "buffer_load_dword ";
    ASSERT_NE(gd.text.find(dma), std::string::npos);
    ASSERT_NE(gd.text.find(" lds\n"), std::string::npos);
    const AttnOutcome ok = run_attention(*dev, gen_test::assemble(isa, gd), sig, params, prob, 9, 0.13);
    EXPECT_LE(ok.o_error, 2e-2) << ok.where;
    EXPECT_LE(ok.lse_error, 1e-3);
    EXPECT_TRUE(ok.reports.empty()) << (ok.reports.empty() ? "" : ok.reports[0]);
    // the mutant: drop the s_waitcnt between the block's last LDS-DMA and the barrier before the reads
    gen::Generated bad = gd;
    const size_t last = bad.text.find("s_barrier", bad.text.rfind(" lds\n"));
    const size_t wait = bad.text.rfind("s_waitcnt", last);
    ASSERT_NE(last, std::string::npos);
    ASSERT_GT(wait, bad.text.rfind(" lds\n"));
    const size_t bol = bad.text.rfind('\n', wait) + 1;
    bad.text.erase(bol, bad.text.find('\n', wait) + 1 - bol);
    const AttnOutcome racy = run_attention(*dev, gen_test::assemble(isa, bad), sig, params, prob, 9, 0.13);
    ASSERT_FALSE(racy.reports.empty());
    bool timing = false;
    for (const auto& r : racy.reports)
      timing = timing || r.find("race") != std::string::npos || r.find("pending_read") != std::string::npos;
    EXPECT_TRUE(timing) << racy.reports[0];
  }
}

TEST(AttentionSweep, Gfx942) {
  sweep("gfx942", 100);
}
TEST(AttentionSweep, Gfx950) {
  sweep("gfx950", 100);
}

namespace {

gen::Params pingpong_params(const gen::Signature& sig, const std::string& isa, const std::string& extra) {
  return gen::parse_params(attn().space(isa, sig), std::vector<std::string>{"waves=8,pingpong=1" + extra});
}

} // namespace

// pingpong=1 on 8 waves with a ragged causal problem (Sk - Sq not a block multiple, the last block partial),
// with O in VGPRs and in AGPRs, in the timed wave order and in both schedule-check orders (each wave to its
// next barrier, by index and reversed): a write of one group racing a read of the other between two barriers
// would give a different result in one of them.
TEST(AttentionPingPong, RaggedCausalEightWaves) {
  if (!toolchain::llvm_supports("gfx942"))
    GTEST_SKIP() << "this LLVM cannot assemble gfx942";
  const gen::Signature sig = sig_of("mask=causal,head_dim=64,layout=bhsd");
  const gen::Problem prob{{"B", 1}, {"Hq", 2}, {"Hkv", 1}, {"Sq", 45}, {"Sk", 203}};
  for (const char* regs : {"", ",o_regs=agpr"}) {
    const gen::Params params = pingpong_params(sig, "gfx942", std::string(",block_n=64") + regs);
    const gen::Generated gd = attn().generate("gfx942", sig, params);
    EXPECT_NE(gd.text.find("pp_stagger_start"), std::string::npos);
    EXPECT_EQ(gd.cdna->lds_bytes, 2u * (64 * (64 * 2 + 16) + 64 * (64 * 2 + 16))); // two K and two Vt
    EXPECT_EQ(gd.cdna->agprs, *regs ? 32u : 0u);                                   // O: 64 x 32 / 64
    const CodeObject code = gen_test::assemble("gfx942", gd);
    for (auto order : {emu::WaveOrder::timed, emu::WaveOrder::index, emu::WaveOrder::reverse}) {
      SCOPED_TRACE(std::string(regs) + " order " + std::to_string(int(order)));
      auto dev = emu::make_emu_device({.target = "gfx942", .threads = 1, .wave_order = order});
      const AttnOutcome r = run_attention(*dev, code, sig, params, prob, 21, 0.11);
      EXPECT_LE(r.o_error, 2e-2) << r.where;
      EXPECT_LE(r.lse_error, 1e-3);
      EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
    }
  }
}

// A mutant without the first group's closing barrier: its waves end one s_barrier short, so the second
// group's last barrier is released without them, which the emulator reports (barrier_count).
TEST(AttentionPingPong, UnmatchedBarrierIsReported) {
  if (!toolchain::llvm_supports("gfx942"))
    GTEST_SKIP() << "this LLVM cannot assemble gfx942";
  const gen::Signature sig = sig_of("head_dim=64");
  const gen::Params params = pingpong_params(sig, "gfx942", ",block_n=64");
  gen::Generated gd = attn().generate("gfx942", sig, params);
  auto& body = gd.cdna->body;
  auto last = body.end();
  for (auto it = body.begin(); it != body.end(); ++it)
    if (const auto* in = std::get_if<cdna::Instruction>(&*it); in && in->mnemonic() == "s_barrier")
      last = it;
  ASSERT_NE(last, body.end());
  body.erase(last);
  gd.text = cdna::print(*gd.cdna);
  auto dev = emu::make_emu_device({.target = "gfx942", .threads = 1});
  const gen::Problem prob{{"B", 1}, {"Hq", 1}, {"Sq", 40}, {"Sk", 150}};
  const AttnOutcome r = run_attention(*dev, gen_test::assemble("gfx942", gd), sig, params, prob, 3, 0.12);
  ASSERT_EQ(r.reports.size(), 1u);
  EXPECT_NE(r.reports[0].find("barrier_count"), std::string::npos) << r.reports[0];
}

// head_dim=192x128 (d_qk 192 for q and k, d_v 128 for v and o) and 256: buffers, strides, FLOPs, the scale's
// range over d_qk; a kernel that needs d_qk = d_v refuses 192x128 with a constraint naming it.
TEST(Attention, HeadDims) {
  const gen::Problem p{{"B", 2}, {"Hq", 4}, {"Hkv", 2}, {"Sq", 5}, {"Sk", 7}, {"pad", 8}};
  const auto b = attn().buffers(sig_of("head_dim=192x128,layout=bhsd"), p);
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(b[0].cols, 192u); // q
  EXPECT_EQ(b[1].row_stride, 200u);
  EXPECT_EQ(b[1].elements, 2u * 2 * 7 * 200 - 8);
  EXPECT_EQ(b[2].cols, 128u); // v
  EXPECT_EQ(b[2].row_stride, 136u);
  EXPECT_EQ(b[2].elements, 2u * 2 * 7 * 136 - 8);
  EXPECT_EQ(b[3].cols, 128u); // o
  EXPECT_EQ(b[3].elements, 2u * 4 * 5 * 136 - 8);
  const gen::Problem q{{"B", 1}, {"Hq", 2}, {"Sq", 64}, {"Sk", 96}};
  EXPECT_DOUBLE_EQ(attn().work(sig_of("head_dim=192x128"), q).flops, 2.0 * 2 * 64 * 96 * (192 + 128));
  EXPECT_DOUBLE_EQ(attn().work(sig_of("head_dim=256"), q).flops, 2.0 * 2 * 64 * 96 * 512);
  const auto sc = attn().scalars(sig_of("head_dim=192x128")).at("scale");
  EXPECT_DOUBLE_EQ(sc.first, 0.5 / std::sqrt(192.0));
  EXPECT_THROW(sig_of("head_dim=96"), InputError);
  EXPECT_THROW(sig_of("head_dim=128x192"), InputError);
  // old signatures keep their meaning: head_dim=128 is d_qk = d_v = 128
  EXPECT_EQ(attn().buffers(sig_of("head_dim=128"), p)[2].cols, 128u);
  // 256 on CDNA: with O in VGPRs only 16x16 tiles fit 256 VGPRs (32x32: Q fragments 128 + O 128 alone); with
  // o_regs=agpr O moves to AGPRs and 32x32 fits; gfx942's 256-byte LDS-DMA instruction is half a 512-byte row
  int agpr_32x32 = 0;
  for (const char* isa : {"gfx942", "gfx950"}) {
    const gen::Space s = attn().space(isa, sig_of("head_dim=256"));
    EXPECT_GT(s.size(), 0u) << isa;
    for (size_t i = 0; i < s.size(); ++i) {
      const gen::Params pi = gen::params_of(s, s.valid_config(i));
      const bool t32 = gen::param_str(pi, "mfma").substr(0, 5) == "32x32";
      EXPECT_TRUE(!t32 || gen::param_str(pi, "o_regs") == "agpr") << isa;
      agpr_32x32 += t32;
      if (std::string(isa) == "gfx942") {
        EXPECT_EQ(gen::param_str(pi, "lds_dma"), "none");
      }
    }
    std::printf("[head_dim=256] %s: %zu valid points of %zu\n", isa, size_t(s.size()),
                size_t(attn().space(isa, sig_of("head_dim=256")).cartesian_size()));
  }
  EXPECT_GT(agpr_32x32, 0);
  // 192x128 on CDNA: K loads as column segments 128 + 64, so LDS-DMA of K (384-byte rows) is refused with the
  // row rule and V (256-byte rows) may still use it
  const gen::Signature mla = sig_of("head_dim=192x128");
  for (const char* isa : {"gfx942", "gfx950"}) {
    const gen::Space s = attn().space(isa, mla);
    EXPECT_GT(s.size(), 0u) << isa;
    std::set<std::string> dma;
    for (size_t i = 0; i < s.size(); ++i)
      dma.insert(gen::param_str(gen::params_of(s, s.valid_config(i)), "lds_dma"));
    EXPECT_EQ(dma.count("k") + dma.count("kv"), 0u) << isa;
    EXPECT_EQ(dma.count("v"), 1u) << isa;
    try {
      attn().generate(isa, mla, gen::parse_params(s, std::vector<std::string>{"lds_dma=k"}));
      ADD_FAILURE() << isa << " accepted lds_dma=k with head_dim=192x128";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("lds_dma=k"), std::string::npos) << e.what();
    }
    // every valid point builds within the register file (the space's estimate is an upper bound)
    for (size_t i = 0; i < s.size(); ++i) {
      const gen::Params pi = gen::params_of(s, s.valid_config(i));
      const gen::Generated gd = attn().generate(isa, mla, pi);
      const uint32_t waves = uint32_t(gen::param_int(pi, "waves"));
      EXPECT_LE(gd.cdna->arch_vgprs, 256u) << gen::format(pi);
      EXPECT_LE((gd.cdna->vgpr_total() + 7) / 8 * 8 * ((waves + 3) / 4), 512u) << gen::format(pi);
    }
    bool rule_named = false; // the space's description says why (K's 384-byte rows)
    for (const std::string& c : attn().constraint_descriptions(isa, mla))
      rule_named |= c.find("192x128: 384-byte rows") != std::string::npos;
    EXPECT_TRUE(rule_named) << isa;
    std::printf("[head_dim=192x128] %s: %zu valid points of %zu\n", isa, size_t(s.size()),
                size_t(s.cartesian_size()));
  }
}

// head_dim=192x128 on the CDNA emulator: one point of every (mfma, waves, block_n, pingpong, o_regs, lds_dma)
// class of each target, on ragged causal GQA and unmasked problems with padded rows in both layouts. K's
// 64-column segment and Q's last 64 dims enter S; a kernel that dropped either, or stored O past 128
// columns, fails the float64 check or the gap-write check.
TEST(Attention, HeadDim192x128OnTheEmulator) {
  int runs = 0;
  for (const char* isa : {"gfx942", "gfx950"}) {
    if (!toolchain::llvm_supports(isa)) {
      std::printf("[192x128] skipped %s: this LLVM cannot assemble it\n", isa);
      continue;
    }
    auto dev = emu::make_emu_device({.target = isa, .threads = 1});
    std::set<std::string> classes;
    int n = 0;
    for (const char* words : {"head_dim=192x128,mask=causal,layout=bshd,dtype=bf16",
                              "head_dim=192x128,mask=none,layout=bhsd,dtype=f16,lse=no"}) {
      const gen::Signature sig = sig_of(words);
      const gen::Space s = attn().space(isa, sig);
      for (size_t i = 0; i < s.size(); ++i) {
        const gen::Params params = gen::params_of(s, s.valid_config(i));
        std::string cls;
        for (const char* k : {"mfma", "waves", "block_n", "pingpong", "o_regs", "lds_dma"})
          cls += gen::param_str(params, k) + ",";
        if (!classes.insert(cls).second)
          continue;
        const bool causal = sig.at("mask") == "causal";
        const int64_t sq = 3 + 11 * (n % 4), sk = causal ? sq + 5 + 9 * (n % 3) : 1 + 23 * (n % 4);
        const gen::Problem prob{{"B", 1 + n % 2}, {"Hq", 4}, {"Hkv", n % 2 ? 2 : 1}, {"Sq", sq}, {"Sk", sk},
                                {"pad", 8}};
        SCOPED_TRACE(std::string(isa) + " " + words + " " + gen::format(params) + " " + gen::format(prob));
        const gen::Generated gd = attn().generate(isa, sig, params);
        EXPECT_LE(gd.cdna->arch_vgprs, 256u);
        const AttnOutcome r =
            run_attention(*dev, gen_test::assemble(isa, gd), sig, params, prob, 500 + uint64_t(n), 0.09);
        EXPECT_LE(r.o_error, sig.at("dtype") == "bf16" ? 2e-2 : 4e-3) << r.where;
        EXPECT_LE(r.lse_error, 1e-3);
        EXPECT_EQ(r.gap_writes, 0u);
        EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
        ++n;
      }
    }
    std::printf("[192x128] %s: %d points, one per (mfma, waves, block_n, pingpong, o_regs, lds_dma) class\n",
                isa, n);
    EXPECT_GE(n, 4) << isa;
    runs += n;
  }
  if (runs == 0)
    GTEST_SKIP() << "this LLVM assembles neither gfx942 nor gfx950";
}

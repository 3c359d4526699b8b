// The sm_90a attention kernel (wgmma + TMA + mbarrier, producer/consumer warpgroups, setmaxnreg:
// generators/attention/attention_sm90a.cpp) on the PTX emulator emu:sm_90a: random valid points with random
// B, Hq/Hkv, Sq and Sk (ragged tails, causal with Sq <= Sk), both layouts, padded rows and both masks; o
// within bf16 2e-2 / f16 4e-3 of the row norm of the float64 reference, lse within 1e-3, no writes between
// rows, zero emulator reports; ptxas (when present) on a sample: no spills, no stack, no wgmma serialisation.
// Broken variants (a missing mbarrier wait, wgmma wait or wgmma fence; a ping-pong named barrier skipped or
// with the wrong thread count) are reported by the emulator.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "../gen/attention_run.h"
#include "isatune/toolchain/ptx_text_object.h"
#include "ptx_sweep.h"

using namespace isatune;

namespace {

using attention_test::attn;

int env_int(const char* name, int dflt) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : dflt;
}

gen::Params words_of(const gen::Space& space, const std::vector<std::string>& words) {
  return gen::parse_params(space, words);
}

std::vector<gen::Signature> all_signatures() {
  std::vector<gen::Signature> sigs;
  for (const char* dt : {"bf16", "f16"})
    for (const char* hd : {"64", "128", "256", "192x128"})
      for (const char* mask : {"none", "causal"})
        for (const char* layout : {"bshd", "bhsd"})
          for (const char* lse : {"yes", "no"})
            sigs.push_back(
                {{"dtype", dt}, {"head_dim", hd}, {"mask", mask}, {"layout", layout}, {"lse", lse}});
  return sigs;
}

TEST(AttentionSm90a, SpaceAndConstraints) {
  const gen::Signature big{{"dtype", "bf16"}, {"head_dim", "128"}};
  const gen::Space space = attn().space("sm_90a", big);
  EXPECT_GT(space.size(), 0u);
  // 128 x 128 tiles, 3 stages: 32 KiB Q + 3 x 64 KiB K/V fit in 227 KiB; block_n 128 with 40/232 fits too
  EXPECT_NO_THROW(attn().generate(
      "sm_90a", big,
      words_of(space, {"consumers=2", "block_n=128", "stages=3", "overlap=1", "reg_split=24/240"})));
  // a value outside the space is refused, naming it
  gen::Params bad = words_of(space, {"consumers=1", "block_n=64"});
  bad["block_n"] = gen::Value::num(48);
  try {
    attn().generate("sm_90a", big, bad);
    ADD_FAILURE() << "block_n=48 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("block_n"), std::string::npos) << e.what();
  }
  const gen::Params p = words_of(space, {"consumers=1", "block_n=64", "stages=2"});
  const gen::Generated g = attn().generate("sm_90a", big, p);
  for (const char* must :
       {"wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "cp.async.bulk.tensor.4d",
        "mbarrier.try_wait.parity", "setmaxnreg.dec", "setmaxnreg.inc", "m64n128k16.f32.bf16.bf16 {"})
    EXPECT_NE(g.text.find(must), std::string::npos) << must;
  // misaligned q is refused at launch (TMA global addresses are multiples of 16 bytes)
  const gen::Problem prob{{"B", 1}, {"Hq", 2}, {"Sq", 10}, {"Sk", 20}};
  const uint64_t addrs[5] = {0x1008, 0x2000, 0x3000, 0x4000, 0x5000};
  EXPECT_THROW(attn().launches("sm_90a", big, p, prob, addrs, {}), InputError);
  const uint64_t ok[5] = {0x1000, 0x2000, 0x3000, 0x4000, 0x5000};
  const auto l = attn().launches("sm_90a", big, p, prob, ok, {});
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].tensor_maps.size(), 3u);
  EXPECT_EQ(l[0].block.x, 256u);
  EXPECT_EQ(l[0].tensor_maps[1].map.rank, 4u);
  EXPECT_EQ(l[0].tensor_maps[1].map.box_dim[1], 64u);
}

TEST(AttentionSm90a, Sweep) {
  const int points = env_int("ISATUNE_ATTENTION_SWEEP_POINTS", 100);
  const bool ptxas = gen_ptx_test::have_ptxas();
  const auto sigs = all_signatures();
  std::mt19937_64 rng(0x5a90a);
  double worst_o[2] = {}, worst_lse = 0;
  int failures = 0, causal = 0, gqa = 0, ptxas_checked = 0, max_regs = 0, overlap = 0, two = 0, pingpong = 0;
  std::map<std::string, int> dims; // points per head_dim
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < points; ++i) {
    tune::VariantSpec spec;
    spec.generator = &attn();
    spec.isa = "sm_90a";
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
    const int64_t hkv = 1 + int64_t(rng() % 2), group = 1 + int64_t(rng() % 3);
    const int64_t sq = 1 + int64_t(rng() % (i % 5 == 0 ? 8 : 70 / shrink));
    const int64_t sk = is_causal ? sq + int64_t(rng() % (50 / shrink))
                                 : 1 + int64_t(rng() % (i % 7 == 0 ? 5 : 150 / shrink));
    gen::Problem prob{
        {"B", 1 + int64_t(rng() % 2)}, {"Hq", hkv * group}, {"Hkv", hkv}, {"Sq", sq}, {"Sk", sk}};
    if (i % 3 == 2)
      prob["pad"] = 8 * int64_t(1 + rng() % 2);
    const double scale = (0.5 + double(rng() % 1000) / 666.0) / std::sqrt(std::stod(spec.sig.at("head_dim"))); // d_qk
    SCOPED_TRACE(spec.isa + " " + gen::format(spec.sig) + " " + gen::format(spec.params) + " " +
                 gen::format(prob));
    const tune::Compiled compiled = tune::compile_variant(spec, {.ptxas = ptxas && i % 4 == 0});
    if (compiled.ptx_report) {
      ++ptxas_checked;
      EXPECT_TRUE(compiled.prune_reasons.empty()) << compiled.prune_reasons.front();
      ASSERT_EQ(compiled.ptx_report->kernels.size(), 1u);
      const auto& k = compiled.ptx_report->kernels[0];
      EXPECT_EQ(k.spill_store_bytes + k.spill_load_bytes + k.stack_bytes, 0u)
          << "ptxas: spills or a stack frame";
      max_regs = std::max(max_regs, int(k.registers));
    }
    const attention_test::AttnOutcome r =
        attention_test::run_attention(gen_ptx_test::emu_device(spec.isa), compiled.code, spec.sig,
                                      spec.params, prob, 900 + uint64_t(i), scale);
    const bool bf16 = spec.sig.at("dtype") == "bf16";
    const double tol = bf16 ? 2e-2 : 4e-3;
    worst_o[bf16] = std::max(worst_o[bf16], r.o_error);
    worst_lse = std::max(worst_lse, r.lse_error);
    causal += is_causal;
    gqa += group > 1;
    overlap += gen::param_int(spec.params, "overlap") == 1;
    two += gen::param_int(spec.params, "consumers") == 2;
    pingpong += gen::param_int(spec.params, "pingpong") == 1;
    const bool bad = !(r.o_error <= tol) || !(r.lse_error <= 1e-3) || r.gap_writes || !r.reports.empty();
    failures += bad;
    EXPECT_LE(r.o_error, tol) << r.where;
    EXPECT_LE(r.lse_error, 1e-3);
    EXPECT_EQ(r.gap_writes, 0u);
    EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
    if (bad && failures > 5)
      FAIL() << "too many failures";
  }
  if (points >= 50) { // both ping-pong settings are drawn (about a third of the valid points have pingpong=1)
    EXPECT_GT(pingpong, 0);
    EXPECT_LT(pingpong, two);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string per_dim;
  for (const auto& [k, n] : dims)
    per_dim += " " + k + ":" + std::to_string(n);
  std::printf("[attention sweep] head_dim%s\n", per_dim.c_str());
  std::printf("[attention sweep sm_90a] %d points (%d causal, %d GQA/MQA, %d overlap, %d two consumers, %d "
              "ping-pong), "
              "max o error f16 %.3g bf16 %.3g, max lse error %.3g; ptxas on %d (max %d registers), %.1f s\n",
              points, causal, gqa, overlap, two, pingpong, worst_o[0], worst_o[1], worst_lse, ptxas_checked,
              max_regs, secs);
}

// Broken variants: each mutation of a correct kernel's text must make the emulator report (and the output
// may be wrong too).
TEST(AttentionSm90a, BrokenVariantsAreReported) {
  const gen::Signature sig{{"dtype", "bf16"}, {"head_dim", "64"}, {"mask", "causal"}};
  const gen::Space space = attn().space("sm_90a", sig);
  const gen::Params params =
      words_of(space, {"consumers=2", "block_n=32", "stages=2", "overlap=1", "reg_split=24/240"});
  const gen::Problem prob{{"B", 1}, {"Hq", 2}, {"Hkv", 1}, {"Sq", 70}, {"Sk", 100}};
  tune::VariantSpec spec{&attn(), "sm_90a", sig, params};
  const tune::Compiled good = tune::compile_variant(spec, {.ptxas = false});
  auto& dev = gen_ptx_test::emu_device("sm_90a");
  // the adversarial scheduler runs the last warp (a consumer) first, as far as it may go: a consumer that
  // does not wait reads a stage before the producer has filled it
  static auto adversarial =
      emu::ptx::make_ptx_emu_device({.target = "sm_90a", .scheduler = emu::ptx::Scheduler::adversarial});
  const double scale = 0.125;
  const auto ok = attention_test::run_attention(dev, good.code, sig, params, prob, 5, scale);
  EXPECT_TRUE(ok.reports.empty()) << ok.reports.front();
  EXPECT_LE(ok.o_error, 2e-2);
  // the n-th occurrence of `from` replaced by `to`
  auto mutant = [&](const std::string& from, const std::string& to, int nth) {
    std::string text = good.generated.text;
    size_t at = std::string::npos;
    for (int i = 0; i <= nth; ++i) {
      at = text.find(from, at == std::string::npos ? 0 : at + 1);
      if (at == std::string::npos)
        break;
    }
    EXPECT_NE(at, std::string::npos) << from << " #" << nth;
    if (at == std::string::npos)
      return attention_test::AttnOutcome{};
    // drop the whole line of the occurrence (of an mbarrier try_wait, the retry branch after it too: the
    // emulator's try_wait suspends until the phase completes, as the ISA allows)
    size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
    if (from.starts_with("mbarrier.try_wait"))
      end = text.find('\n', end + 1);
    text.replace(begin, end - begin, "  // removed: " + to);
    CodeObject code = toolchain::ptx_text_object(text, "sm_90a", "mutant.ptx");
    return attention_test::run_attention(from.starts_with("mbarrier") ? *adversarial : dev, code, sig, params,
                                         prob, 5, scale);
  };
  struct Case {
    const char* what;
    std::string from;
    int nth;
  };
  const std::vector<Case> cases{
      // the producer's wait for a released stage: it refills a stage twice, the phases run ahead (deadlock)
      {"producer empty wait", "mbarrier.try_wait.parity", 0},
      // the consumers' wait for Q, then for block j's K and block j-1's V in the loop: wgmma reads a stage
      // TMA has not written yet
      {"consumer qfull wait", "mbarrier.try_wait.parity", 3},
      {"consumer kfull wait", "mbarrier.try_wait.parity", 5},
      {"consumer vfull wait", "mbarrier.try_wait.parity", 6},
      // the wait_group 1 before the softmax reads S (the accumulator of an in-flight wgmma)
      {"wgmma.wait_group 1", "wgmma.wait_group.sync.aligned 1;", 0},
      // the fence between O's rescale (register writes) and the P V wgmma that accumulates into O
      {"wgmma.fence before P V", "wgmma.fence.sync.aligned;", 2},
      // the final wait_group 0: the epilogue reads O in flight
      {"last wgmma.wait_group 0", "wgmma.wait_group.sync.aligned 0;", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto r = mutant(c.from, c.what, c.nth);
    EXPECT_FALSE(r.reports.empty()) << c.what << ": no emulator report (o error " << r.o_error << ")";
    if (!r.reports.empty())
      std::printf("[mutant %s] %s\n", c.what, r.reports[0].substr(0, 160).c_str());
  }

  // The ping-pong (pingpong=1, overlap 0 and 1): consumer 1 skips its first bar.arrive on barrier 1, or
  // consumer 0 skips its arrival on barrier 2 after the loop's GEMM section: the other warpgroup waits
  // forever at its bar.sync (deadlock); a bar.sync with 128 threads where the arrivals count 256 is a
  // thread-count mismatch or, when it completes alone, a warp arriving twice at the other barrier (both
  // divergence).
  for (const char* ov : {"overlap=0", "overlap=1"}) {
    const gen::Params pp =
        words_of(space, {"consumers=2", "block_n=32", "stages=2", ov, "reg_split=24/240", "pingpong=1"});
    const tune::Compiled ppgood = tune::compile_variant({&attn(), "sm_90a", sig, pp}, {.ptxas = false});
    const auto ppok = attention_test::run_attention(dev, ppgood.code, sig, pp, prob, 6, scale);
    EXPECT_TRUE(ppok.reports.empty()) << ov << ": " << ppok.reports.front();
    EXPECT_LE(ppok.o_error, 2e-2) << ov;
    // the nth occurrence of `from`: its whole line removed (to empty) or its ", 256;" replaced by `to`
    auto pp_mutant = [&](const std::string& from, const std::string& to, int nth) {
      std::string text = ppgood.generated.text;
      size_t at = std::string::npos;
      for (int i = 0; i <= nth; ++i) {
        at = text.find(from, at == std::string::npos ? 0 : at + 1);
        if (at == std::string::npos)
          break;
      }
      EXPECT_NE(at, std::string::npos) << from << " #" << nth;
      if (at == std::string::npos)
        return attention_test::AttnOutcome{};
      if (to.empty()) {
        const size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
        text.replace(begin, end - begin, "  // removed");
      } else { // the thread count of that instruction
        const size_t count = text.find(", 256;", at);
        text.replace(count, 6, to);
      }
      CodeObject code = toolchain::ptx_text_object(text, "sm_90a", "mutant.ptx");
      return attention_test::run_attention(dev, code, sig, pp, prob, 6, scale);
    };
    struct PpCase {
      const char* what;
      std::string from, to, expect;
      int nth;
    };
    const std::vector<PpCase> pp_cases{
        {"consumer 1's first bar.arrive", "bar.arrive 1, 256;", "", "deadlock", 0},
        // overlap=1: block 0's section arrives first, then the loop's; overlap=0: the loop's S section
        {"consumer 0's bar.arrive in the loop", "bar.arrive 2, 256;", "", "deadlock", ov[8] == '1' ? 1 : 0},
        {"bar.sync with 128 threads", "bar.sync 1, 256;", ", 128;", "divergence", 0},
    };
    for (const PpCase& c : pp_cases) {
      SCOPED_TRACE(std::string(ov) + " " + c.what);
      const auto r = pp_mutant(c.from, c.to, c.nth);
      ASSERT_FALSE(r.reports.empty()) << c.what << ": no emulator report (o error " << r.o_error << ")";
      bool named = false;
      for (const std::string& rep : r.reports)
        named |= rep.find(c.expect) != std::string::npos;
      EXPECT_TRUE(named) << c.what << ": no '" << c.expect << "' report: " << r.reports[0];
      std::printf("[mutant %s %s] %s\n", ov, c.what, r.reports[0].substr(0, 240).c_str());
    }
  }
}

} // namespace

namespace {

// ptxas on the valid points with block_n 128 (the most registers: S and P) and two consumers for head_dim
// 128, bf16, causal with LSE (the most code): no spill, no stack frame, no wgmma serialisation.
// ISATUNE_ATTENTION_PTXAS_ALL=1: every point of that signature (48, 28 s here); =2: every point of all 32
// signatures.
TEST(AttentionSm90a, PtxasHeaviestPoints) {
  if (!gen_ptx_test::have_ptxas())
    GTEST_SKIP() << "ptxas not found: " << tune::ptxas_unavailable_reason();
  const int all = env_int("ISATUNE_ATTENTION_PTXAS_ALL", 0);
  std::vector<gen::Signature> sigs{
      {{"dtype", "bf16"}, {"head_dim", "128"}, {"mask", "causal"}, {"lse", "yes"}}};
  if (all >= 2)
    sigs = all_signatures();
  int compiled = 0, max_regs = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const gen::Signature& sig : sigs) {
    const gen::Space space = attn().space("sm_90a", sig);
    for (uint64_t i = 0; i < space.size(); ++i) {
      tune::VariantSpec spec{&attn(), "sm_90a", sig, gen::params_of(space, space.valid_config(i))};
      if (!all &&
          (gen::param_int(spec.params, "block_n") != 128 || gen::param_int(spec.params, "consumers") != 2))
        continue;
      SCOPED_TRACE(gen::format(sig) + " " + gen::format(spec.params));
      const tune::Compiled c = tune::compile_variant(spec, {.ptxas = true});
      ASSERT_TRUE(c.ptx_report.has_value());
      EXPECT_TRUE(c.prune_reasons.empty()) << c.prune_reasons.front();
      const auto& k = c.ptx_report->kernels.at(0);
      EXPECT_EQ(k.spill_store_bytes + k.spill_load_bytes + k.stack_bytes, 0u)
          << "ptxas: spills or a stack frame";
      max_regs = std::max(max_regs, int(k.registers));
      ++compiled;
    }
  }
  std::printf("[attention sm_90a ptxas] %d kernels without spills, max %d registers, %.1f s\n", compiled,
              max_regs, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

// Head dims 256 and 192x128 (d_qk 192 for S = Q K^T, d_v 128 for O += P V): the valid points, and ptxas on
// the largest block_n with two consumers of each: no spills, no stack, no serialisation.
TEST(AttentionSm90a, HeadDims) {
  for (const char* hd : {"256", "192x128"}) {
    const gen::Signature sig{{"dtype", "bf16"}, {"head_dim", hd}, {"mask", "causal"}, {"lse", "yes"}};
    const gen::Space space = attn().space("sm_90a", sig);
    ASSERT_GT(space.size(), 0u) << hd;
    int64_t largest = 0;
    for (uint64_t i = 0; i < space.size(); ++i)
      largest = std::max(largest, gen::param_int(gen::params_of(space, space.valid_config(i)), "block_n"));
    std::printf("[sm_90a head_dim=%s] %zu valid points of %llu, largest block_n %lld\n", hd, space.size(),
                (unsigned long long)space.cartesian_size(), (long long)largest);
    const gen::Generated g = attn().generate("sm_90a", sig, gen::params_of(space, space.valid_config(0)));
    const std::string pv = std::string("m64n") + (std::string(hd) == "256" ? "256" : "128") + "k16";
    EXPECT_NE(g.text.find(pv), std::string::npos) << pv; // O's wgmma runs over d_v
    if (!gen_ptx_test::have_ptxas())
      continue;
    int checked = 0;
    for (uint64_t i = 0; i < space.size() && checked < 2; ++i) {
      tune::VariantSpec spec{&attn(), "sm_90a", sig, gen::params_of(space, space.valid_config(i))};
      if (gen::param_int(spec.params, "block_n") != largest || gen::param_int(spec.params, "consumers") != 2)
        continue;
      SCOPED_TRACE(gen::format(sig) + " " + gen::format(spec.params));
      const tune::Compiled c = tune::compile_variant(spec, {.ptxas = true});
      ASSERT_TRUE(c.ptx_report.has_value());
      EXPECT_TRUE(c.prune_reasons.empty()) << c.prune_reasons.front();
      const auto& k = c.ptx_report->kernels.at(0);
      EXPECT_EQ(k.spill_store_bytes + k.spill_load_bytes + k.stack_bytes, 0u) << "ptxas: spills or a stack";
      ++checked;
    }
    EXPECT_GT(checked, 0) << hd << ": no two-consumer point at the largest block_n";
  }
}

} // namespace


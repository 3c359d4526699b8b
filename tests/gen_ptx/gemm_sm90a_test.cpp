// The sm_90a GEMM (wgmma + TMA, warp-specialised: generators/gemm/gemm_sm90a*.cpp) through the tuner's
// pipeline on the PTX emulator emu:sm_90a: random valid points of its space on random ragged problems, every
// layout, f16/bf16 inputs and every cd type, checked against the float64 reference with no emulator report;
// ptxas on the points tested (no serialisation warning, no spill); the constraint that keeps out the point
// known to serialise wgmma (C7511); a broken variant caught.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <tuple>

#include "isatune/error.h"
#include "isatune/gen/buffers.h"
#include "isatune/toolchain/ptx_text_object.h"
#include "ptx_sweep.h"

namespace {

using namespace isatune;
using gen_ptx_test::describe;
using gen_ptx_test::have_ptxas;
using gen_ptx_test::run_point;

const gen::Generator& gemm() {
  return gen::find_generator("gemm");
}

gen::Signature signature(const std::string& ab, const std::string& cd, const std::string& layout,
                         const std::string& b = "") {
  std::vector<std::string> words{"a=" + ab, "b=" + (b.empty() ? ab : b), "cd=" + cd, "layout=" + layout};
  return gen::parse_signature(gemm(), words);
}

tune::VariantSpec spec_of(const gen::Signature& sig, const gen::Params& params) {
  return {&gemm(), "sm_90a", sig, params};
}

gen::Params params_of(const gen::Signature& sig, const std::vector<std::string>& words) {
  return gen::parse_params(gemm().space("sm_90a", sig), words);
}

// M, N, K ragged; with loader=tma lda and ldb rounded up to 8 elements (TMA strides are multiples of 16
// bytes) and sometimes padded further, with loader=ldst tight or padded by any amount; ldc and ldd sometimes
// padded.
gen::Problem random_problem(std::mt19937_64& rng, const gen::Signature& sig, const gen::Params& params,
                            int max_m, int max_n, int max_k) {
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  // M >= 2: the harness compares each stored column of D relative to its own largest element, so a column of
  // one element where alpha * A * B and beta * C cancel fails an exact f32 kernel (one such point did:
  // |D| = 9e-4 from terms of order 1, an error of 1e-7); M = 1 is in TinyProblems.
  gen::Problem p{{"M", pick(2, max_m)}, {"N", pick(1, max_n)}, {"K", pick(1, max_k)}};
  const bool a_t = sig.at("layout")[0] == 'T', b_t = sig.at("layout")[1] == 'T';
  const bool tma = gen::param_str(params, "loader") == "tma";
  const int64_t e = sig.at("a").starts_with("fp8") ? 16 : 8; // elements per 16 bytes
  auto ld8 = [&](int64_t rows) {
    return tma ? (rows + e - 1) / e * e + e * pick(0, 1) : rows + pick(0, 1) * pick(1, 5);
  };
  p["lda"] = ld8(a_t ? p["K"] : p["M"]);
  p["ldb"] = ld8(b_t ? p["N"] : p["K"]);
  p["ldc"] = p["M"] + pick(0, 1) * pick(1, 5);
  p["ldd"] = p["M"] + pick(0, 1) * pick(1, 5);
  if (gen::param_str(params, "epilogue") == "tma") { // TMA stores: ldd * cd bytes a multiple of 16
    const int64_t e = 16 / (sig.at("cd") == "f32" ? 4 : 2);
    p["ldd"] = (p["ldd"] + e - 1) / e * e;
  }
  return p;
}

// The sweep size: ISATUNE_SWEEP_POINTS, else the 150 (77 s wall, 39 s CPU here with ptxas on each
// point).
int sweep_points() {
  if (const char* v = std::getenv("ISATUNE_SWEEP_POINTS"))
    return std::max(1, std::atoi(v));
  return 150;
}

void expect_clean_ptxas(const tune::Compiled& c, const std::string& what) {
  EXPECT_TRUE(c.prune_reasons.empty()) << what << ": " << c.prune_reasons.front();
  ASSERT_TRUE(c.ptx_report.has_value()) << what;
  ASSERT_EQ(c.ptx_report->kernels.size(), 1u) << what;
  const auto& k = c.ptx_report->kernels[0];
  EXPECT_EQ(k.registers, 168u) << what << ": the entry .maxnreg of the register split";
  EXPECT_EQ(k.spill_store_bytes + k.spill_load_bytes + k.stack_bytes, 0u) << what;
}

TEST(Sm90aGemm, SweepMatchesReferenceOnTheEmulator) {
  const int points = sweep_points();
  const bool ptxas = have_ptxas();
  std::mt19937_64 rng(20261202);
  const char* layouts[] = {"NN", "NT", "TN", "TT"};
  const char* cds[] = {"f32", "bf16", "f16"};
  int passed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < points; ++i) {
    // inputs: bf16, f16, and every 5th point fp8 (e4m3 x e4m3 or e4m3 x e5m2)
    const char* ab = i % 5 == 4 ? "fp8_e4m3" : i % 2 ? "f16" : "bf16";
    const char* b = i % 5 == 4 && i % 2 ? "fp8_e5m2" : ab;
    const gen::Signature sig = signature(ab, cds[(i / 2) % 3], layouts[(i / 6) % 4], b);
    const gen::Space space = gemm().space("sm_90a", sig);
    const gen::Params params = gen::params_of(
        space, space.valid_config(std::uniform_int_distribution<size_t>(0, space.size() - 1)(rng)));
    const gen::Problem problem = random_problem(rng, sig, params, 300, 200, 200);
    const tune::VariantSpec spec = spec_of(sig, params);
    const auto o = run_point(spec, problem, rng(), ptxas);
    EXPECT_EQ(o.result.status, tune::Status::ok) << describe(spec, problem, o.result);
    EXPECT_TRUE(o.result.diagnostics.empty()) << describe(spec, problem, o.result);
    if (ptxas)
      expect_clean_ptxas(o.compiled, describe(spec, problem, o.result));
    passed += o.result.status == tune::Status::ok;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ sweep ] %d/%d sm_90a gemm points passed in %.1f s (%.2f s per point%s)\n", passed, points, s,
              s / points, ptxas ? ", ptxas included" : "");
  EXPECT_EQ(passed, points);
}

// The smallest problems (M, N or K of 1) on both loaders and epilogues, 16-bit outputs (their rounding, not a
// cancellation in a one-element column, dominates the check's error).
TEST(Sm90aGemm, TinyProblems) {
  const gen::Problem problems[] = {{{"M", 1}, {"N", 1}, {"K", 1}, {"lda", 8}, {"ldb", 8}, {"ldd", 8}},
                                   {{"M", 1}, {"N", 67}, {"K", 3}, {"lda", 8}, {"ldb", 8}, {"ldd", 8}},
                                   {{"M", 70}, {"N", 1}, {"K", 1}, {"lda", 72}, {"ldb", 8}, {"ldd", 72}},
                                   {{"M", 9}, {"N", 130}, {"K", 1}, {"lda", 16}, {"ldb", 8}, {"ldd", 16}}};
  int i = 0;
  for (const char* layout : {"NN", "TT"})
    for (const char* loader : {"ldst", "tma"})
      for (const char* epilogue : {"direct", "tma"}) {
        const gen::Signature sig = signature(i % 2 ? "f16" : "bf16", i % 2 ? "f16" : "bf16", layout);
        const gen::Params p =
            params_of(sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2",
                            std::string("loader=") + loader, std::string("epilogue=") + epilogue});
        for (const gen::Problem& problem : problems) {
          gen::Problem q = problem;
          if (layout[0] == 'T')
            q["lda"] = 8; // K x M stored: lda >= K
          if (layout[1] == 'T')
            q["ldb"] = (q["N"] + 7) / 8 * 8;
          const tune::VariantSpec spec = spec_of(sig, p);
          const auto o = run_point(spec, q, 100 + uint64_t(i));
          EXPECT_EQ(o.result.status, tune::Status::ok) << describe(spec, q, o.result);
        }
        ++i;
      }
}

// Every tile shape and consumer count at its deepest ring (most shared memory) with the 40/232 split,
// persistent and grouped: ptxas-clean, 168 registers at entry, no spill.
TEST(Sm90aGemm, PtxasCompilesTheLargestTilesWithoutSerialisation) {
  if (!have_ptxas())
    GTEST_SKIP() << "ptxas is absent";
  const gen::Signature sig = signature("bf16", "bf16", "NT");
  const gen::Space space = gemm().space("sm_90a", sig);
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, std::string>, gen::Params> deepest;
  for (size_t i = 0; i < space.size(); ++i) {
    const gen::Params p = gen::params_of(space, space.valid_config(i));
    // the TMA-store epilogue with the clusters, the direct one otherwise
    if (gen::param_str(p, "reg_split") != "40/232" || gen::param_int(p, "group_m") != 8 ||
        gen::param_int(p, "persistent") != 1 ||
        gen::param_str(p, "epilogue") != (gen::param_int(p, "cluster") == 2 ? "tma" : "direct"))
      continue;
    // the ldst producer's registers do not depend on the tile: its widest tiles only
    if (gen::param_str(p, "loader") == "ldst" && gen::param_int(p, "tile_n") != 256)
      continue;
    auto key = std::make_tuple(gen::param_int(p, "tile_m"), gen::param_int(p, "tile_n"),
                               gen::param_int(p, "consumers"), gen::param_int(p, "cluster"),
                               gen::param_str(p, "loader"));
    auto it = deepest.find(key);
    if (it == deepest.end() || gen::param_int(it->second, "stages") < gen::param_int(p, "stages"))
      deepest[key] = p;
  }
  // 64 x {64..256} and 128 x {64, 128} in one consumer (128x192 and 128x256 do not fit its registers), 128 x
  // {64..256} in two, each with the TMA producer alone and in a 2-CTA cluster; 64x256 and 128x256 with the
  // ldst producer
  EXPECT_EQ(deepest.size(), 22u);
  for (const auto& [key, p] : deepest) {
    const tune::Compiled c = tune::compile_variant(spec_of(sig, p));
    expect_clean_ptxas(c, gen::format(p));
    if (c.ptx_report && !c.ptx_report->kernels.empty())
      std::printf("[ ptxas ] %s: %u registers, %u spill bytes, %zu C75xx notes\n", gen::format(p).c_str(),
                  c.ptx_report->kernels[0].registers,
                  c.ptx_report->kernels[0].spill_store_bytes + c.ptx_report->kernels[0].spill_load_bytes,
                  c.prune_reasons.size());
  }
}

// A 128x256 tile in one consumer warpgroup needs 256 accumulators per thread: ptxas serialises its wgmma
// (C7511) or worse. The space keeps it out and generate names the rule.
TEST(Sm90aGemm, TheC7511PointIsRejectedWithItsReason) {
  const gen::Signature sig = signature("bf16", "f32", "TN");
  const gen::Space space = gemm().space("sm_90a", sig);
  gen::Params p = params_of(sig, {"tile_m=128", "tile_n=128", "consumers=1"});
  p["tile_n"] = gen::Value::num(256);
  EXPECT_FALSE(space.is_valid(gen::config_of(space, p)));
  try {
    gemm().generate("sm_90a", sig, p);
    FAIL() << "generated " << gen::format(p);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("C7511"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("accumulators"), std::string::npos) << e.what();
  }
  // the same tile in two consumers is in the space
  p["consumers"] = gen::Value::num(2);
  EXPECT_TRUE(space.is_valid(gen::config_of(space, p)));
  // and so is everything short of the shared-memory limit: 5 stages of 128x256 (240 KiB) are not
  p["stages"] = gen::Value::num(5);
  EXPECT_FALSE(space.is_valid(gen::config_of(space, p)));
  EXPECT_THROW(gemm().generate("sm_90a", sig, p), InputError);
}

TEST(Sm90aGemm, LeadingDimensionsTmaCannotStrideAreRefusedByName) {
  const gen::Signature sig = signature("bf16", "f32", "NN");
  const gen::Params p = params_of(sig, {"loader=tma"});
  const gen::Problem problem{{"M", 130}, {"N", 64}, {"K", 64}}; // lda = 130: 260-byte columns
  const uint64_t addresses[5] = {0x10000, 0x20000, 0x30000, 0x40000, 0x50000};
  try {
    gemm().launches("sm_90a", sig, p, problem, addresses, {{"alpha", 1.0}, {"beta", 0.0}});
    FAIL() << "launched with lda=130";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lda=130"), std::string::npos) << e.what();
  }
  // padded to 136 it launches: two 128-byte-swizzled tensor maps in the kernel arguments
  const gen::Problem padded{{"M", 130}, {"N", 64}, {"K", 64}, {"lda", 136}};
  const auto l = gemm().launches("sm_90a", sig, p, padded, addresses, {{"alpha", 1.0}, {"beta", 0.0}});
  ASSERT_EQ(l.size(), 1u);
  ASSERT_EQ(l[0].tensor_maps.size(), 2u);
  EXPECT_EQ(l[0].tensor_maps[0].kernarg_offset % 64, 0u);
  EXPECT_EQ(l[0].tensor_maps[0].map.swizzle, TensorMapSwizzle::b128);
  EXPECT_EQ(l[0].tensor_maps[0].map.global_strides[0], 136u * 2);
  EXPECT_GT(l[0].dynamic_shared_bytes, 48u * 1024 / 2);
}

// A persistent grid of 132 CTAs looping over more tiles (156 of 64x64), grouped by 8 tile rows, on the
// emulator.
TEST(Sm90aGemm, PersistentGridLoopsOverMoreTilesThanCtas) {
  const gen::Signature sig = signature("bf16", "f32", "TN");
  const gen::Params p = params_of(
      sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2", "persistent=1", "group_m=8", "loader=tma"});
  const gen::Problem problem{{"M", 64 * 12 + 5}, {"N", 64 * 12 + 3}, {"K", 24}, {"lda", 24}, {"ldb", 24}};
  const uint64_t addresses[5] = {0x10000, 0x20000, 0x30000, 0x40000, 0x50000};
  const auto l = gemm().launches("sm_90a", sig, p, problem, addresses, {{"alpha", 1.0}, {"beta", 0.0}});
  EXPECT_EQ(l.at(0).grid.x, 132u);
  const tune::VariantSpec spec = spec_of(sig, p);
  const auto o = run_point(spec, problem, 7);
  EXPECT_EQ(o.result.status, tune::Status::ok) << describe(spec, problem, o.result);
  EXPECT_TRUE(o.result.diagnostics.empty()) << describe(spec, problem, o.result);
}

// beta = 0: C is not read. C holds NaN everywhere (all-ones bits: NaN in f32, f16 and bf16); D must still be
// alpha * op(A) * op(B), with no emulator report, for each cd type.
TEST(Sm90aGemm, BetaZeroDoesNotReadANanC) {
  for (const char* cd : {"f32", "bf16"}) {
    const gen::Signature sig = signature("bf16", cd, "TT");
    const gen::Params p = params_of(sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2"});
    const tune::VariantSpec spec = spec_of(sig, p);
    const gen::Problem problem{{"M", 70}, {"N", 65}, {"K", 90}, {"lda", 96}, {"ldb", 72}};
    const tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
    auto& dev = gen_ptx_test::emu_device("sm_90a");
    auto module = dev.load(c.code);
    const auto specs = gemm().buffers(sig, problem);
    gen::HostBuffers host = gen::make_buffers(specs, 11);
    std::fill(host.bytes[2].begin(), host.bytes[2].end(), uint8_t(0xFF));
    std::vector<uint64_t> addresses;
    for (size_t i = 0; i < specs.size(); ++i) {
      addresses.push_back(dev.alloc(std::max<size_t>(16, host.bytes[i].size())));
      dev.copy_to_device(addresses.back(), host.bytes[i].data(), host.bytes[i].size());
    }
    const std::map<std::string, double> scalars{{"alpha", 1.25}, {"beta", 0.0}};
    auto launches = gemm().launches("sm_90a", sig, p, problem, addresses, scalars);
    ASSERT_EQ(launches.size(), 1u);
    auto& l = launches[0];
    for (const auto& tm : l.tensor_maps) {
      const TensorMap m = dev.encode_tensor_map(tm.map);
      std::copy(m.bytes.begin(), m.bytes.end(), l.kernargs.begin() + tm.kernarg_offset);
    }
    loader::LaunchConfig cfg;
    cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
    cfg.block = {l.block.x, l.block.y, l.block.z};
    cfg.dynamic_shared_bytes = l.dynamic_shared_bytes;
    dev.take_diagnostics();
    dev.launch(*module->function(l.kernel), cfg, l.kernargs);
    dev.synchronize();
    const auto reports = dev.take_diagnostics();
    EXPECT_TRUE(reports.empty()) << reports.front();
    std::vector<std::vector<double>> want = host.values;
    gemm().reference(sig, problem, scalars, want);
    std::vector<uint8_t> bytes(host.bytes[3].size());
    dev.copy_to_host(bytes.data(), addresses[3], bytes.size());
    const gen::Mismatch mm = gen::compare_output(specs[3], gen::decode_all(specs[3].dtype, bytes), want[3]);
    EXPECT_LE(mm.max_rel_error, gen::tolerance(gemm().output_dtype(sig)))
        << cd << " row " << mm.row << " col " << mm.col;
    for (uint64_t a : addresses)
      dev.free(a);
  }
}

// Broken variants are caught: the consumers' final wgmma.wait_group 0 removed (the epilogue reads in-flight
// accumulators), and a wrong expect_tx byte count (a stage's full barrier never completes).
TEST(Sm90aGemm, BrokenVariantsAreCaught) {
  const gen::Signature sig = signature("f16", "f32", "NT");
  const gen::Params p = params_of(sig, {"tile_m=128", "tile_n=64", "consumers=2", "stages=2", "loader=tma"});
  const tune::VariantSpec spec = spec_of(sig, p);
  const gen::Problem problem{{"M", 150}, {"N", 70}, {"K", 140}, {"lda", 152}, {"ldb", 72}};
  const tune::Compiled good = tune::compile_variant(spec, {.ptxas = false});
  auto run_mutant = [&](const std::string& from, const std::string& to) {
    tune::Compiled c = good;
    const size_t at = c.generated.text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos)
      return tune::RunResult{};
    c.generated.text.replace(at, from.size(), to);
    c.code = toolchain::ptx_text_object(c.generated.text, "sm_90a", "mutant.ptx");
    tune::RunOptions ro;
    ro.seed = 3;
    ro.time = false;
    return tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  };
  tune::RunOptions ro;
  ro.seed = 3;
  ro.time = false;
  const auto ok = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), good, spec, problem, ro);
  EXPECT_EQ(ok.status, tune::Status::ok) << ok.message;

  const auto no_wait = run_mutant("wgmma.wait_group.sync.aligned 0;", "");
  EXPECT_NE(no_wait.status, tune::Status::ok);
  EXPECT_FALSE(no_wait.diagnostics.empty()) << no_wait.message;

  const std::string tx = "], " + std::to_string((128 + 64) * 64 * 2) + ";";
  const auto short_tx = run_mutant(tx, "], " + std::to_string((128 + 64) * 64 * 2 + 16) + ";");
  EXPECT_NE(short_tx.status, tune::Status::ok);
  EXPECT_FALSE(short_tx.diagnostics.empty()) << short_tx.message;
}

// loader=ldst: the producer's st.shared writes are read by wgmma (the async proxy): without its
// fence.proxy.async before arriving on the full barrier the emulator reports proxy_fence.
TEST(Sm90aGemm, LdstProducerWithoutProxyFenceIsCaught) {
  const gen::Signature sig = signature("bf16", "f16", "NN");
  const gen::Params p = params_of(sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2", "loader=ldst"});
  const tune::VariantSpec spec = spec_of(sig, p);
  const gen::Problem problem{{"M", 77}, {"N", 65}, {"K", 130}}; // tight lda = 77, ldb = 130: no TMA stride
  tune::RunOptions ro;
  ro.seed = 9;
  ro.time = false;
  tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
  const auto ok = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_EQ(ok.status, tune::Status::ok) << ok.message;
  const size_t at = c.generated.text.find("fence.proxy.async.shared::cta;");
  ASSERT_NE(at, std::string::npos);
  c.generated.text.replace(at, std::strlen("fence.proxy.async.shared::cta;"), "// removed");
  c.code = toolchain::ptx_text_object(c.generated.text, "sm_90a", "mutant.ptx");
  const auto broken = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_NE(broken.status, tune::Status::ok);
  ASSERT_FALSE(broken.diagnostics.empty());
  EXPECT_NE(broken.diagnostics.front().find("proxy_fence"), std::string::npos) << broken.diagnostics.front();
}

// epilogue=tma: the consumers' st.shared staging is read by the TMA store (the async proxy): without the
// fence.proxy.async before the named barrier the emulator reports proxy_fence.
TEST(Sm90aGemm, TmaStoreEpilogueWithoutProxyFenceIsCaught) {
  const gen::Signature sig = signature("f16", "f32", "TN");
  const gen::Params p =
      params_of(sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2", "loader=tma", "epilogue=tma"});
  const tune::VariantSpec spec = spec_of(sig, p);
  const gen::Problem problem{{"M", 100}, {"N", 70}, {"K", 72}, {"lda", 72}, {"ldb", 72}, {"ldd", 104}};
  tune::RunOptions ro;
  ro.seed = 13;
  ro.time = false;
  tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
  const auto ok = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_EQ(ok.status, tune::Status::ok) << ok.message;
  EXPECT_TRUE(ok.diagnostics.empty()) << ok.message;
  int removed = 0;
  for (size_t at; (at = c.generated.text.find("fence.proxy.async.shared::cta;")) != std::string::npos;
       ++removed)
    c.generated.text.replace(at, std::strlen("fence.proxy.async.shared::cta;"), "// removed");
  EXPECT_GT(removed, 0);
  c.code = toolchain::ptx_text_object(c.generated.text, "sm_90a", "mutant.ptx");
  const auto broken = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_NE(broken.status, tune::Status::ok);
  ASSERT_FALSE(broken.diagnostics.empty());
  EXPECT_NE(broken.diagnostics.front().find("proxy_fence"), std::string::npos) << broken.diagnostics.front();
}

// In a 2-CTA cluster each consumer also releases the peer's stage (the peer's producer multicasts B into it):
// without those remote arrivals the producers wait forever, reported as a deadlock.
TEST(Sm90aGemm, ClusterWithoutRemoteReleaseIsCaught) {
  const gen::Signature sig = signature("bf16", "f32", "TN");
  const gen::Params p = params_of(sig, {"tile_m=64", "tile_n=64", "consumers=1", "stages=2", "cluster=2"});
  const tune::VariantSpec spec = spec_of(sig, p);
  const gen::Problem problem{{"M", 130}, {"N", 70}, {"K", 200}, {"lda", 200}, {"ldb", 200}};
  tune::RunOptions ro;
  ro.seed = 5;
  ro.time = false;
  tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
  const auto ok = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_EQ(ok.status, tune::Status::ok) << ok.message;
  EXPECT_TRUE(ok.diagnostics.empty()) << ok.message;
  std::string& text = c.generated.text;
  int removed = 0;
  for (size_t at;
       (at = text.find("mbarrier.arrive.release.cluster.shared::cluster.b64")) != std::string::npos;
       ++removed)
    text.replace(at, text.find(';', at) - at, "// removed");
  EXPECT_EQ(removed, 2); // in the k-loop and after it
  c.code = toolchain::ptx_text_object(text, "sm_90a", "mutant.ptx");
  const auto broken = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
  EXPECT_NE(broken.status, tune::Status::ok);
  EXPECT_FALSE(broken.diagnostics.empty()) << broken.message;
}

} // namespace

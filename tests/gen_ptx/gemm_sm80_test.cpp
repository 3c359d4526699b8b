// The mma.sync GEMM (generators/gemm/gemm_sm80*.cpp) through the tuner's pipeline on the PTX emulator:
// random valid points of the sm_80 space x random ragged problems (unaligned leading dimensions too, which
// take the element-by-element load path), every layout, cd type and input type, against the float64
// reference with zero emulator reports; each point also compiled by ptxas (registers known, no spills).
// ISATUNE_SWEEP_POINTS=N runs N points instead of the default.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>

#include "isatune/error.h"
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

int sweep_points(int dflt) {
  const char* e = std::getenv("ISATUNE_SWEEP_POINTS");
  return e && std::atoi(e) > 0 ? std::atoi(e) : dflt;
}

gen::Signature random_sig(std::mt19937_64& rng) {
  const char* in[] = {"f16", "bf16"};
  const char* cd[] = {"f32", "f16", "bf16"};
  const char* lay[] = {"NN", "NT", "TN", "TT"};
  const std::string a = in[rng() % 2];
  return {{"a", a}, {"b", a}, {"cd", cd[rng() % 3]}, {"layout", lay[rng() % 4]}};
}

// M, N in 1..300 (mostly ragged), K in 1..200; leading dimensions tight, padded, or padded to a size that is
// not a multiple of 8 (the element-by-element path).
gen::Problem random_problem(std::mt19937_64& rng, const gen::Signature& sig, int max_mn = 300,
                            int max_k = 200) {
  auto draw = [&](int hi) { return 1 + int(rng() % uint64_t(hi)); };
  const int64_t m = draw(max_mn), n = draw(max_mn), k = draw(max_k);
  const bool at = sig.at("layout")[0] == 'T', bt = sig.at("layout")[1] == 'T';
  auto ld = [&](int64_t tight) -> int64_t {
    switch (rng() % 6) {
    case 0:
      return 0; // tight (unaligned 7 times in 8)
    case 1:
      return tight + 1 + int64_t(rng() % 5); // padded, often unaligned
    case 2:
    case 3:
      return (tight + 7) / 8 * 8 + 8; // aligned, padded
    default:
      return (tight + 7) / 8 * 8; // aligned
    }
  };
  return {{"M", m},       {"N", n},      {"K", k}, {"lda", ld(at ? k : m)}, {"ldb", ld(bt ? n : k)},
          {"ldc", ld(m)}, {"ldd", ld(m)}};
}

tune::VariantSpec spec_of(const std::string& isa, const gen::Signature& sig, const gen::Params& params) {
  tune::VariantSpec s;
  s.generator = &gemm();
  s.isa = isa;
  s.sig = sig;
  s.params = params;
  return s;
}

// ptxas's word on a compiled point: every kernel of the module reported, registers known, no spills or stack.
void expect_ptxas_clean(const tune::Compiled& c, const std::string& what, uint32_t* max_registers = nullptr) {
  ASSERT_TRUE(c.ptx_report.has_value()) << what;
  EXPECT_TRUE(c.prune_reasons.empty()) << what << ": " << c.prune_reasons.front();
  EXPECT_FALSE(c.ptx_report->kernels.empty()) << what;
  for (const auto& k : c.ptx_report->kernels) {
    EXPECT_GT(k.registers, 0u) << what << " " << k.name;
    EXPECT_LE(k.registers, 255u) << what << " " << k.name;
    EXPECT_EQ(k.spill_store_bytes + k.spill_load_bytes, 0u) << what << " " << k.name;
    EXPECT_EQ(k.stack_bytes, 0u) << what << " " << k.name;
    if (max_registers)
      *max_registers = std::max(*max_registers, k.registers);
  }
  EXPECT_EQ(c.code.kernels.size(), c.ptx_report->kernels.size()) << what;
  for (const auto& k : c.code.kernels) { // the code object the emulator loads carries ptxas's counts
    EXPECT_EQ(k.scratch_bytes, 0u) << what << " " << k.name;
    EXPECT_GT(k.vgprs, 0u) << what << " " << k.name << ": registers not recorded";
  }
}

TEST(Sm80GemmSpace, HasEnoughValidPointsAndExplainsItsRules) {
  for (const std::string isa : {"sm_80", "sm_90"}) {
    const gen::Signature sig = gen::parse_signature(gemm(), std::vector<std::string>{"a=bf16,b=bf16"});
    const gen::Space space = gemm().space(isa, sig);
    EXPECT_GE(space.size(), 150u) << isa;
    EXPECT_LT(space.size(), space.cartesian_size()) << isa << ": the constraints reject nothing";
    EXPECT_EQ(gemm().constraint_descriptions(isa, sig).size(), 5u) << isa;
  }
  // sm_90 allows more shared memory than sm_80: 4 stages of 128 x 128 x 64 (256 KiB) on neither, 3 (192 KiB)
  // on sm_90 only.
  const gen::Signature sig = gen::parse_signature(gemm(), std::vector<std::string>{});
  const gen::Space s80 = gemm().space("sm_80", sig), s90 = gemm().space("sm_90", sig);
  EXPECT_GT(s90.size(), s80.size());
}

TEST(Sm80GemmSpace, RejectsPointsOutsideAndSignaturesItCannotRun) {
  const gen::Signature sig = gen::parse_signature(gemm(), std::vector<std::string>{"a=f16,b=f16"});
  const gen::Space space = gemm().space("sm_80", sig);
  gen::Params p = gen::params_of(space, space.valid_config(0));
  gen::Params too_many_warps = p;
  too_many_warps["warps_m"] = gen::Value::num(4), too_many_warps["warps_n"] = gen::Value::num(4);
  try {
    gemm().generate("sm_80", sig, too_many_warps);
    ADD_FAILURE() << "16 warps generated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("warps"), std::string::npos) << e.what();
  }
  gen::Params bad_value = p;
  bad_value["tile_k"] = gen::Value::num(48);
  EXPECT_THROW(gemm().generate("sm_80", sig, bad_value), InputError);
  // fp8 has no mma.sync form here
  const gen::Signature fp8 = gen::parse_signature(gemm(), std::vector<std::string>{"a=fp8_e4m3,b=fp8_e4m3"});
  EXPECT_THROW(gemm().space("sm_80", fp8), InputError);
}

// The sweep: random valid points x random ragged problems on emu:sm_80, each compiled by ptxas.
TEST(Sm80GemmSweep, RandomPointsMatchTheReferenceWithNoReports) {
  const int points = sweep_points(150);
  const bool ptxas = have_ptxas();
  std::mt19937_64 rng(0x5a80);
  const gen::Signature any = gen::parse_signature(gemm(), std::vector<std::string>{});
  const gen::Space space = gemm().space("sm_80", any); // the space does not depend on the signature
  std::set<std::string> layouts, cds, ins;
  std::set<int64_t> splits, stages;
  int passed = 0, copy_paths[3] = {0, 0, 0}; // operands per copy path: elements, 4-byte, 16-byte cp.async
  uint32_t max_registers = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < points; ++i) {
    const gen::Signature sig = random_sig(rng);
    const gen::Params params = gen::params_of(space, space.valid_config(size_t(rng() % space.size())));
    // the biggest tiles on the biggest problems are slow on the emulator: keep problems of those smaller
    const bool big = gen::param_int(params, "tile_m") * gen::param_int(params, "tile_n") >= 128 * 128;
    const gen::Problem problem = random_problem(rng, sig, big ? 200 : 300, big ? 130 : 200);
    const tune::VariantSpec spec = spec_of("sm_80", sig, params);
    const auto o = run_point(spec, problem, rng(), ptxas);
    const std::string what = describe(spec, problem, o.result);
    EXPECT_EQ(o.result.status, tune::Status::ok) << what;
    EXPECT_TRUE(o.result.diagnostics.empty()) << what << ": " << o.result.diagnostics.front();
    EXPECT_LE(o.result.max_rel_error, o.result.tolerance) << what;
    EXPECT_GT(o.result.tolerance, 0.0) << what << ": nothing compared";
    if (ptxas)
      expect_ptxas_clean(o.compiled, what, &max_registers);
    passed += o.result.status == tune::Status::ok && o.result.diagnostics.empty();
    layouts.insert(sig.at("layout")), cds.insert(sig.at("cd")), ins.insert(sig.at("a"));
    splits.insert(gen::param_int(params, "split_k")), stages.insert(gen::param_int(params, "stages"));
    const bool at = sig.at("layout")[0] == 'T', bt = sig.at("layout")[1] == 'T';
    const int64_t lda = problem.at("lda") ? problem.at("lda") : at ? problem.at("K") : problem.at("M");
    const int64_t ldb = problem.at("ldb") ? problem.at("ldb") : bt ? problem.at("N") : problem.at("K");
    for (int64_t ld : {lda, ldb})
      ++copy_paths[ld % 8 == 0 ? 2 : ld % 2 == 0 ? 1 : 0];
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[ sm_80 ] %d points, %d passed, %.2f s per point (%s); operands copied by 16-byte cp.async %d, "
      "4-byte cp.async %d, element by element %d; max %u registers\n",
      points, passed, s / points, ptxas ? "ptxas + emulator" : "emulator", copy_paths[2], copy_paths[1],
      copy_paths[0], max_registers);
  if (points >= 40) { // the default sweep covers every layout, type and pipeline depth
    EXPECT_EQ(layouts.size(), 4u);
    EXPECT_EQ(cds.size(), 3u);
    EXPECT_EQ(ins.size(), 2u);
    EXPECT_EQ(splits.size(), 3u);
    EXPECT_EQ(stages.size(), 3u);
    for (int path : copy_paths)
      EXPECT_GT(path, 0);
  }
}

// sm_90 (Hopper without wgmma): the same kernels under .target sm_90, on the sm_90a emulator, with ptxas
// -arch=sm_90.
TEST(Sm80GemmSweep, Sm90PortablePathRunsOnTheHopperEmulator) {
  const int points = std::max(4, sweep_points(150) / 4);
  const bool ptxas = have_ptxas();
  std::mt19937_64 rng(0x5a90);
  const gen::Signature any = gen::parse_signature(gemm(), std::vector<std::string>{});
  const gen::Space space = gemm().space("sm_90", any);
  for (int i = 0; i < points; ++i) {
    const gen::Signature sig = random_sig(rng);
    const gen::Params params = gen::params_of(space, space.valid_config(size_t(rng() % space.size())));
    const gen::Problem problem = random_problem(rng, sig, 160, 100);
    const tune::VariantSpec spec = spec_of("sm_90", sig, params);
    const tune::Compiled c = tune::compile_variant(spec, {.ptxas = ptxas});
    EXPECT_NE(c.generated.text.find(".target sm_90\n"), std::string::npos);
    tune::RunOptions ro;
    ro.seed = rng();
    ro.time = false;
    const tune::RunResult r = tune::run_variant(gen_ptx_test::emu_device("sm_90a"), c, spec, problem, ro);
    const std::string what = describe(spec, problem, r);
    EXPECT_EQ(r.status, tune::Status::ok) << what;
    EXPECT_TRUE(r.diagnostics.empty()) << what;
    if (ptxas)
      expect_ptxas_clean(c, what);
  }
}

// beta = 0 never reads C: a C full of NaN leaves D finite, with and without split-K.
TEST(Sm80GemmEpilogue, BetaZeroDoesNotReadC) {
  const gen::Signature sig =
      gen::parse_signature(gemm(), std::vector<std::string>{"a=bf16,b=bf16,cd=f32,layout=TN"});
  const gen::Space space = gemm().space("sm_80", sig);
  auto& dev = gen_ptx_test::emu_device("sm_80");
  for (int split : {1, 2}) {
    gen::Params params = gen::params_of(space, space.valid_config(0));
    params["split_k"] = gen::Value::num(split);
    const tune::VariantSpec spec = spec_of("sm_80", sig, params);
    const tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
    auto module = dev.load(c.code);
    const gen::Problem problem{{"M", 37}, {"N", 45}, {"K", 70}};
    const auto bufs = gemm().buffers(sig, problem);
    std::vector<uint64_t> addr;
    std::mt19937_64 rng(7 + split);
    std::vector<std::vector<double>> values;
    for (const auto& b : bufs) {
      const size_t bytes = b.elements * size_of(b.dtype);
      addr.push_back(dev.alloc(bytes));
      std::vector<double> v(b.elements);
      std::vector<uint8_t> raw(bytes);
      for (size_t e = 0; e < b.elements; ++e) {
        double x = b.name == "C" ? std::numeric_limits<double>::quiet_NaN()
                                 : std::uniform_real_distribution<double>(-1, 1)(rng);
        if (b.role == gen::BufferRole::workspace)
          x = 0;
        const uint32_t bits = gen::encode(b.dtype, x);
        v[e] = gen::decode(b.dtype, bits);
        std::memcpy(raw.data() + e * size_of(b.dtype), &bits, size_of(b.dtype));
      }
      if (b.name == "C") {
        const float nan = std::nanf("");
        for (size_t e = 0; e < b.elements; ++e)
          std::memcpy(raw.data() + 4 * e, &nan, 4);
      }
      dev.copy_to_device(addr.back(), raw.data(), bytes);
      values.push_back(v);
    }
    const std::map<std::string, double> scalars{{"alpha", 1.5}, {"beta", 0.0}};
    for (const auto& l : gemm().launches("sm_80", sig, params, problem, addr, scalars)) {
      loader::LaunchConfig cfg;
      cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
      cfg.block = {l.block.x, l.block.y, l.block.z};
      cfg.dynamic_shared_bytes = l.dynamic_shared_bytes;
      dev.launch(*module->function(l.kernel), cfg, l.kernargs);
    }
    dev.synchronize();
    EXPECT_TRUE(dev.take_diagnostics().empty());
    std::vector<float> d(bufs[3].elements);
    dev.copy_to_host(d.data(), addr[3], d.size() * 4);
    values[2].assign(values[2].size(), 0.0); // the reference with beta = 0 ignores C
    gemm().reference(sig, problem, scalars, values);
    size_t bad = 0;
    for (size_t e = 0; e < d.size(); ++e)
      bad += !(std::fabs(double(d[e]) - values[3][e]) <= 1e-4 * (1 + std::fabs(values[3][e])));
    EXPECT_EQ(bad, 0u) << "split_k " << split;
    for (uint64_t a : addr)
      dev.free(a);
  }
}

} // namespace

namespace {

// A compiled point with its PTX text edited (the emulator runs the text object; ptxas is not involved).
tune::Compiled with_text(const tune::Compiled& c, const std::string& text) {
  tune::Compiled m = c;
  m.code = toolchain::ptx_text_object(text, c.code.isa);
  m.machine_code.reset();
  return m;
}

// The emulator checks catch a broken pipeline: without the cp.async wait or the barrier after it the same
// point fails (reports, wrong data), so the clean runs above mean something.
TEST(Sm80GemmPipeline, RemovingTheWaitOrTheBarrierIsCaught) {
  const gen::Signature sig =
      gen::parse_signature(gemm(), std::vector<std::string>{"a=f16,b=f16,cd=f32,layout=NT"});
  const gen::Space space = gemm().space("sm_80", sig);
  gen::Params params = gen::params_of(space, space.valid_config(0));
  params["stages"] = gen::Value::num(3), params["tile_m"] = gen::Value::num(64);
  params["warps_m"] = gen::Value::num(2), params["warps_n"] = gen::Value::num(2);
  const tune::VariantSpec spec = spec_of("sm_80", sig, params);
  const tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
  // 5 k tiles: the 3-stage ring wraps; leading dimensions multiples of 8 (16-byte cp.async) or even (4-byte)
  for (const int64_t pad : {4, 2}) {
    const gen::Problem problem{{"M", 100}, {"N", 77}, {"K", 150}, {"lda", 100 + pad}, {"ldb", 76 + pad}};
    tune::RunOptions ro;
    ro.time = false;
    ro.seed = 11;
    auto& dev = gen_ptx_test::emu_device("sm_80");
    ASSERT_EQ(tune::run_variant(dev, c, spec, problem, ro).status, tune::Status::ok);
    for (const std::string what : {"cp.async.wait_group 1;", "bar.sync 0;"}) {
      std::string text = c.generated.text;
      const size_t at = text.find(what);
      ASSERT_NE(at, std::string::npos) << what;
      text.replace(at, what.size(), std::string(what.size(), ' '));
      const tune::RunResult r = tune::run_variant(dev, with_text(c, text), spec, problem, ro);
      EXPECT_NE(r.status, tune::Status::ok) << what << " removed: " << describe(spec, problem, r);
      EXPECT_FALSE(r.diagnostics.empty()) << what << " removed: no emulator report";
    }
  }
}

// One lane at a time, last warp first: a missing barrier or wait shows as wrong data too. A few points of
// every pipeline depth, with split-K.
TEST(Sm80GemmPipeline, AdversarialSchedulerAgrees) {
  static auto dev =
      emu::ptx::make_ptx_emu_device({.target = "sm_80", .scheduler = emu::ptx::Scheduler::adversarial});
  std::mt19937_64 rng(0xadf);
  const gen::Signature any = gen::parse_signature(gemm(), std::vector<std::string>{});
  const gen::Space space = gemm().space("sm_80", any);
  for (int stages : {2, 3, 4}) {
    gen::Params params;
    do
      params = gen::params_of(space, space.valid_config(size_t(rng() % space.size())));
    while (gen::param_int(params, "stages") != stages ||
           gen::param_int(params, "tile_m") * gen::param_int(params, "tile_n") > 64 * 128);
    const gen::Signature sig = random_sig(rng);
    const gen::Problem problem = random_problem(rng, sig, 100, 160);
    const tune::VariantSpec spec = spec_of("sm_80", sig, params);
    const tune::Compiled c = tune::compile_variant(spec, {.ptxas = false});
    tune::RunOptions ro;
    ro.time = false;
    ro.seed = rng();
    const tune::RunResult r = tune::run_variant(*dev, c, spec, problem, ro);
    EXPECT_EQ(r.status, tune::Status::ok) << describe(spec, problem, r);
  }
}

} // namespace

namespace {

// launches(): the copy path per operand from the leading dimension and the base address, the geometry, the
// dynamic shared memory, and the reduce launch with split-K.
TEST(Sm80GemmLaunch, CopyPathGeometryAndSplitK) {
  const gen::Signature sig =
      gen::parse_signature(gemm(), std::vector<std::string>{"a=bf16,b=bf16,layout=NT"});
  const gen::Space space = gemm().space("sm_80", sig);
  gen::Params params = gen::params_of(space, space.valid_config(0));
  params["tile_m"] = gen::Value::num(64), params["tile_n"] = gen::Value::num(32);
  params["tile_k"] = gen::Value::num(32), params["stages"] = gen::Value::num(3);
  params["warps_m"] = gen::Value::num(2), params["warps_n"] = gen::Value::num(1);
  auto mode = [](const gen::Launch& l, int operand) { // fast_a at byte 76, fast_b at 80
    uint32_t v = 0;
    std::memcpy(&v, l.kernargs.data() + 76 + 4 * operand, 4);
    return v;
  };
  const std::map<std::string, double> scalars{{"alpha", 1.0}, {"beta", 0.5}};
  struct Case {
    int64_t lda, ldb;
    uint64_t a_base;
    uint32_t want_a, want_b;
  };
  // NT: A is M x K (lda >= M = 100), B is N x K (ldb >= N = 70)
  for (const Case& c :
       {Case{104, 72, 0x10000, 2, 2}, Case{102, 70, 0x10000, 1, 1}, Case{101, 71, 0x10000, 0, 0},
        Case{104, 72, 0x10004, 1, 2}, Case{104, 72, 0x10002, 0, 2}}) {
    const gen::Problem problem{{"M", 100}, {"N", 70}, {"K", 99}, {"lda", c.lda}, {"ldb", c.ldb}};
    const std::vector<uint64_t> addr{c.a_base, 0x20000, 0x30000, 0x40000, 0x50000};
    const auto ls = gemm().launches("sm_80", sig, params, problem, addr, scalars);
    ASSERT_EQ(ls.size(), 1u);
    EXPECT_EQ(mode(ls[0], 0), c.want_a) << "lda " << c.lda << " base " << c.a_base;
    EXPECT_EQ(mode(ls[0], 1), c.want_b) << "ldb " << c.ldb;
    EXPECT_EQ(ls[0].grid.x, 2u * 3u); // ceil(100 / 64) x ceil(70 / 32)
    EXPECT_EQ(ls[0].block.x, 64u);
    EXPECT_EQ(ls[0].dynamic_shared_bytes, 3u * (64 + 32) * 32 * 2);
  }
  params["split_k"] = gen::Value::num(4);
  const gen::Problem problem{{"M", 100}, {"N", 70}, {"K", 99}};
  const auto ls =
      gemm().launches("sm_80", sig, params, problem, std::vector<uint64_t>{0, 0, 0, 0, 0}, scalars);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(ls[0].grid.y, 4u);
  EXPECT_NE(ls[1].kernel, ls[0].kernel);
  EXPECT_EQ(ls[1].grid.x * ls[1].block.x >= 100u * 70u, true);
  // both kernels are in the generated module
  const std::string text = gemm().generate("sm_80", sig, params).text;
  for (const auto& l : ls)
    EXPECT_NE(text.find(".entry " + l.kernel + "("), std::string::npos) << l.kernel;
}

} // namespace

// The JIT (jit/, docs/jit.md) on the emulator: an untuned shape gets a kernel built from the nearest tuned
// configuration that agrees with the float64 reference on fresh random inputs; a second request reuses it; sixteen
// threads asking at once build it once; a new process reuses the recorded build; nothing tuned falls back to the
// static model; and the database stays intact with nothing recorded lost.
#include <thread>

#include "isatune/emu/backend.h"
#include "isatune/gen/buffers.h"
#include "isatune/jit/jit.h"
#include "isatune/loader/select.h"
#include "isatune/tune/tuning_recorder.h"
#include "isatune_jit.h"
#include "selftest_fixture.h"

using namespace isatune;

namespace {

const char* kGemmSig = R"({"a":"f16","b":"f16","cd":"f32","layout":"NT"})";

// A database with one GEMM tuned on the emulator for 64x64x32 (the configuration a valid, ragged-capable one).
struct TunedDb {
  std::string path;
  gen::Params params;
};

TunedDb tuned_gemm_db(const std::string& name) {
  TunedDb t{test::temp_path(name), {}};
  const gen::Generator& g = gen::find_generator("gemm");
  const gen::Signature sig = gen::parse_signature(g, std::vector<std::string>{"layout=NT"});
  const gen::Space space = g.space("gfx942", sig);
  t.params = gen::parse_params(space, std::vector<std::string>{"tile_m=32", "tile_n=32", "split_k=1"});
  const gen::Problem problem{{"M", 64}, {"N", 64}, {"K", 32}};
  auto device = test::quick_emulator();
  const tune::VariantSpec spec{&g, "gfx942", sig, t.params};
  const tune::Compiled c = tune::compile_variant(spec);
  tune::RunOptions ro;
  ro.seed = 11;
  const tune::RunResult r = tune::run_variant(*device, c, spec, problem, ro);
  EXPECT_EQ(r.status, tune::Status::ok) << r.message;
  auto db = db::Database::open(t.path);
  tune::TuningRecorder rec(db, {&g, "gfx942", sig, {problem}}, device->properties());
  rec.start_run("test", "{}");
  rec.record(t.params, &c, {{problem, r.status, r.message, r.timing}});
  rec.end_run();
  return t;
}

// Runs the JIT kernel on fresh random inputs and returns the worst relative error against the reference.
double check(loader::Device& device, const jit::JitKernel& k, uint64_t seed) {
  const auto specs = k.generator->buffers(k.sig, k.problem);
  gen::HostBuffers host = gen::make_buffers(specs, seed);
  std::vector<uint64_t> addresses;
  for (size_t i = 0; i < specs.size(); ++i) {
    addresses.push_back(device.alloc(std::max<size_t>(host.bytes[i].size(), 4)));
    if (!host.bytes[i].empty()) device.copy_to_device(addresses.back(), host.bytes[i].data(), host.bytes[i].size());
  }
  std::map<std::string, double> scalars;
  for (const auto& [name, range] : k.generator->scalars(k.sig)) scalars[name] = 0.5 * (range.first + range.second) + 0.1;
  k.launch(addresses, scalars);
  device.synchronize();
  std::vector<std::vector<double>> want = host.values;
  k.generator->reference(k.sig, k.problem, scalars, want);
  double worst = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].role != gen::BufferRole::output) continue;
    std::vector<uint8_t> bytes(host.bytes[i].size());
    device.copy_to_host(bytes.data(), addresses[i], bytes.size());
    worst = std::max(worst, gen::compare_output(specs[i], gen::decode_all(specs[i].dtype, bytes), want[i]).max_rel_error);
  }
  for (auto a : addresses) device.free(a);
  EXPECT_TRUE(device.take_diagnostics().empty());
  return worst;
}

std::unique_ptr<loader::Loader> emu_loader(const std::string& path) {
  return std::make_unique<loader::Loader>(loader::TuningDb::open(path), test::quick_emulator());
}

} // namespace

TEST(Jit, UntunedGemmIsBuiltFromTheNearestTunedConfigurationReusedAndBuiltOnceBySixteenThreads) {
  const TunedDb t = tuned_gemm_db("jit-gemm.db");
  int64_t measurements_before = 0;
  {
    auto db = db::Database::open(t.path);
    measurements_before = test::count_rows(db, "SELECT count(*) FROM measurements");
    ASSERT_EQ(measurements_before, 1);
  }
  auto loader = emu_loader(t.path);
  jit::Jit jit(*loader);

  // The tuned problem itself: the exact entry, no build.
  auto exact = jit.select("gemm", kGemmSig, R"({"M":64,"N":64,"K":32})", jit::Mode::exact_only);
  EXPECT_EQ(exact->source, jit::Source::exact);
  EXPECT_FALSE(exact->built);
  // A ragged untuned shape: strict callers get NotFoundError, the others a kernel built for it.
  const char* untuned = R"({"M":77,"N":45,"K":40})";
  EXPECT_THROW(jit.select("gemm", kGemmSig, untuned, jit::Mode::exact_only), loader::NotFoundError);
  auto k = jit.select("gemm", R"({"layout":"NT"})", untuned); // a partial signature: defaults filled in
  EXPECT_EQ(k->source, jit::Source::nearest);
  EXPECT_TRUE(k->built);
  EXPECT_EQ(k->seed_problem, R"({"K":32,"M":64,"N":64})");
  EXPECT_EQ(k->parameters_json, tune::TuningRecorder::params_key(t.params));
  // The shape is a kernel argument and generators are pure: the build is the tuned kernel, byte for byte.
  EXPECT_EQ(k->code->sha256, exact->code->sha256);
  EXPECT_GT(k->variant_id, 0);
  EXPECT_FALSE(k->run_guid.empty());
  const double tol = gen::tolerance(k->generator->output_dtype(k->sig));
  EXPECT_LE(check(loader->device(), *k, 101), tol);
  EXPECT_LE(check(loader->device(), *k, 202), tol);
  EXPECT_EQ(jit.stats().builds, 1u);

  // The second request: the same kernel, no rebuild.
  auto again = jit.select("gemm", R"({"layout":"NT"})", untuned);
  EXPECT_EQ(again.get(), k.get());
  EXPECT_EQ(jit.stats().builds, 1u);

  // Sixteen threads asking at once for another untuned shape: one build, one kernel for all.
  std::vector<std::shared_ptr<const jit::JitKernel>> got(16);
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
      threads.emplace_back([&, i] { got[i] = jit.select("gemm", kGemmSig, R"({"M":100,"N":36,"K":72})"); });
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(jit.stats().builds, 2u);
  for (const auto& g : got) EXPECT_EQ(g.get(), got.front().get());
  EXPECT_TRUE(got.front()->built);
  EXPECT_LE(check(loader->device(), *got.front(), 303), tol);

  // A new process: the recorded builds are read back, nothing is built.
  auto loader2 = emu_loader(t.path);
  jit::Jit jit2(*loader2);
  auto reused = jit2.select("gemm", kGemmSig, untuned);
  EXPECT_TRUE(reused->from_database);
  EXPECT_FALSE(reused->built);
  EXPECT_EQ(reused->variant_id, k->variant_id);
  EXPECT_EQ(jit2.stats().builds, 0u);
  EXPECT_EQ(jit2.stats().from_database, 1u);
  EXPECT_LE(check(loader2->device(), *reused, 404), tol);

  // The database: intact, the tuned measurement kept, one JIT run per build naming its variant.
  auto db = db::Database::open(t.path);
  const db::VerifyReport v = db.verify();
  EXPECT_TRUE(v.integrity_ok);
  EXPECT_TRUE(v.problems.empty()) << v.problems.front();
  EXPECT_EQ(db::to_string(db.query("PRAGMA integrity_check").at(0).at(0)), "ok");
  EXPECT_EQ(test::count_rows(db, "SELECT count(*) FROM measurements"), measurements_before);
  EXPECT_EQ(test::count_rows(db, "SELECT count(*) FROM best"), 1);
  EXPECT_EQ(test::count_rows(db, "SELECT count(*) FROM runs WHERE strategy = 'jit'"), 2);
  EXPECT_EQ(test::count_rows(db, "SELECT count(*) FROM runs r JOIN variants v ON v.id = "
                                 "json_extract(r.budget, '$.variant_id') WHERE r.strategy = 'jit'"),
            2);
}

TEST(Jit, NothingTunedFallsBackToTheStaticModelsBestSoftmax) {
  const TunedDb t = tuned_gemm_db("jit-softmax.db"); // a database, but no softmax in it
  auto loader = emu_loader(t.path);
  jit::Jit jit(*loader);
  auto k = jit.select("softmax", R"({"dtype":"f32"})", R"({"rows":7,"N":333})");
  EXPECT_EQ(k->source, jit::Source::model);
  EXPECT_TRUE(k->built);
  EXPECT_TRUE(k->seed_problem.empty());
  EXPECT_LE(check(loader->device(), *k, 505), gen::tolerance(gen::DType::f32));
  EXPECT_THROW(jit.select("softmax", R"({"dtype":"f32"})", R"({"rows":7,"N":333})", jit::Mode::exact_only),
               loader::NotFoundError);
  EXPECT_THROW(jit.select("softmax", R"({"dtype":"f64"})", R"({"rows":7,"N":333})"), InputError);
  EXPECT_THROW(jit.select("softmax", R"({"dtype":"f32"})", R"({"rows":7})"), InputError);
  auto db = db::Database::open(t.path);
  EXPECT_TRUE(db.verify().integrity_ok);
  EXPECT_EQ(test::count_rows(db, "SELECT count(*) FROM runs WHERE strategy = 'jit' AND "
                                 "json_extract(budget, '$.source') = 'model'"),
            1);
}

TEST(Jit, CApiSelectsExactOrJitPerCallAndLaunches) {
  const TunedDb t = tuned_gemm_db("jit-c.db");
  emu::register_emu_backend();
  isatune_jit* jit = nullptr;
  ASSERT_EQ(isatune_jit_open(t.path.c_str(), "emu:gfx942", 1, &jit), ISATUNE_OK) << isatune_jit_last_error();
  isatune_jit_kernel* k = nullptr;
  EXPECT_EQ(isatune_jit_select(jit, "gemm", kGemmSig, R"({"M":50,"N":70,"K":24})", ISATUNE_JIT_EXACT_ONLY, &k),
            ISATUNE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(isatune_jit_last_error()).find("no exact tuned entry"), std::string::npos);
  ASSERT_EQ(isatune_jit_select(jit, "gemm", kGemmSig, R"({"M":50,"N":70,"K":24})", ISATUNE_JIT_EXACT_OR_JIT, &k),
            ISATUNE_OK)
      << isatune_jit_last_error();
  isatune_jit_kernel_desc d{};
  ASSERT_EQ(isatune_jit_kernel_describe(k, &d), ISATUNE_OK);
  EXPECT_STREQ(d.source, "nearest");
  EXPECT_EQ(d.built, 1);
  EXPECT_GT(d.variant_id, 0);
  EXPECT_EQ(std::string(d.code_object).size(), 64u);
  isatune_jit_kernel* again = nullptr;
  ASSERT_EQ(isatune_jit_select(jit, "gemm", kGemmSig, R"({"M":50,"N":70,"K":24})", ISATUNE_JIT_EXACT_OR_JIT, &again),
            ISATUNE_OK);
  EXPECT_EQ(again, k);

  // Launch through the C API on random inputs, checked against the reference.
  size_t count = 0;
  uint64_t sizes[8] = {};
  ASSERT_EQ(isatune_jit_kernel_buffers(k, &count, sizes, 8), ISATUNE_OK);
  ASSERT_EQ(count, 5u);
  const gen::Generator& g = gen::find_generator("gemm");
  const gen::Signature sig = gen::parse_signature(g, std::vector<std::string>{"layout=NT"});
  const gen::Problem problem{{"M", 50}, {"N", 70}, {"K", 24}};
  const auto specs = g.buffers(sig, problem);
  gen::HostBuffers host = gen::make_buffers(specs, 606);
  std::vector<uint64_t> addresses(count);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_EQ(sizes[i], host.bytes[i].size());
    ASSERT_EQ(isatune_jit_alloc(jit, std::max<size_t>(sizes[i], 4), &addresses[i]), ISATUNE_OK);
    if (sizes[i]) {
      ASSERT_EQ(isatune_jit_copy_to_device(jit, addresses[i], host.bytes[i].data(), sizes[i]), ISATUNE_OK);
    }
  }
  EXPECT_EQ(isatune_jit_launch(k, addresses.data(), count, "{\"alpha\":"), ISATUNE_ERROR_INPUT);
  ASSERT_EQ(isatune_jit_launch(k, addresses.data(), count, R"({"alpha":1.25,"beta":-0.5})"), ISATUNE_OK)
      << isatune_jit_last_error();
  ASSERT_EQ(isatune_jit_synchronize(jit), ISATUNE_OK);
  std::vector<std::vector<double>> want = host.values;
  g.reference(sig, problem, {{"alpha", 1.25}, {"beta", -0.5}}, want);
  std::vector<uint8_t> out(sizes[3]);
  ASSERT_EQ(isatune_jit_copy_to_host(jit, out.data(), addresses[3], out.size()), ISATUNE_OK);
  EXPECT_LE(gen::compare_output(specs[3], gen::decode_all(specs[3].dtype, out), want[3]).max_rel_error,
            gen::tolerance(g.output_dtype(sig)));
  for (auto a : addresses) EXPECT_EQ(isatune_jit_free(jit, a), ISATUNE_OK);
  isatune_jit_close(jit);
}

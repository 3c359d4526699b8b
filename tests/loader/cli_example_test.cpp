// End to end: the CLI's devices and db commands, and the example application built against the installed
// package and run through backend plugins: the CDNA emulator, and the test double (see docs/loader.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "isatune/db/json.h"
#include "test_util.h"
#ifdef ISATUNE_EMU_PLUGIN
#include "isatune/toolchain/assembler.h"
#endif

namespace {
struct Run {
  int rc;
  std::string out;
};
Run run(const std::string& cmd) {
  Run r{-1, ""};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}
const std::string kCli = ISATUNE_CLI_PATH;
} // namespace

TEST(Cli, DevicesAndDb) {
  auto dir = testutil::temp_dir();
  {
    auto d = isatune::db::Database::open(dir + "/t.db");
    testutil::populate(d, {256, 1024}, 2);
  }
  auto dev = run(kCli + " devices --json");
  EXPECT_EQ(dev.rc, 0) << dev.out;
  EXPECT_NE(dev.out.find("\"backends\""), std::string::npos);
  auto ls = run(kCli + " db ls --db " + dir + "/t.db");
  EXPECT_EQ(ls.rc, 0) << ls.out;
  EXPECT_NE(ls.out.find("measurements"), std::string::npos);
  auto best = run(kCli + " db best --json --db " + dir + "/t.db");
  EXPECT_EQ(best.rc, 0) << best.out;
  EXPECT_NE(best.out.find("{\\\"n\\\":1024}"), std::string::npos) << best.out;
  EXPECT_EQ(run(kCli + " db verify --db " + dir + "/t.db").rc, 0);
  EXPECT_EQ(run(kCli + " db show 1 --db " + dir + "/t.db").rc, 0);
  EXPECT_EQ(run(kCli + " db export " + dir + "/out --db " + dir + "/t.db").rc, 0);
  EXPECT_EQ(run(kCli + " db import " + dir + "/out --db " + dir + "/u.db").rc, 0);
  auto merge = run(kCli + " db merge " + dir + "/t.db --db " + dir + "/u.db");
  EXPECT_EQ(merge.rc, 0) << merge.out;
  EXPECT_EQ(run(kCli + " db gc --db " + dir + "/u.db").rc, 0);
  auto missing = run(kCli + " db ls --db " + dir + "/none.db");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.out.find("no such database file"), std::string::npos);
}

#ifdef ISATUNE_EMU_PLUGIN
// A tuning database whose one variant is the real vector_add fixture (kernel vadd(a, b, c, count)), assembled
// in process, with emulated measurements for the emulator's gfx942 at n = 256 and n = 1024.
void populate_emulated(isatune::db::Database& db) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/vector_add.s");
  std::stringstream text;
  text << f.rdbuf();
  auto code = isatune::toolchain::make_assembler("llvm")->assemble(text.str(), {"gfx942", "vector_add.s"}).code;
  isatune::db::DeviceRecord d;
  d.vendor = "amd";
  d.target_id = "amdgcn-amd-amdhsa--gfx942";
  d.isa = "gfx942";
  d.name = "CDNA emulator (gfx942)";
  d.compute_units = 304;
  d.memory_bytes = 64ull << 30;
  d.driver_version = "isatune-emu";
  d.emulated = true;
  int64_t device = db.record_device(d);
  int64_t generator = db.record_generator("vector_add", "fixture");
  int64_t tc = db.record_toolchain("llvm", "in process");
  db.record_run_start({"run-emu", "grid", "60s", "testhost", "", ""});
  isatune::db::VariantRecord vr;
  vr.generator_id = generator;
  vr.signature = testutil::kSignature;
  vr.parameters = "{\"block\":256}";
  vr.code_object = db.record_code_object(code, tc);
  vr.kernel = "vadd";
  vr.launch = testutil::kLaunch;
  int64_t variant = db.record_variant(vr);
  for (int n : {256, 1024}) {
    isatune::db::MeasurementRecord m;
    m.variant_id = variant;
    m.device_id = device;
    m.problem = "{\"n\":" + std::to_string(n) + "}";
    m.median_ms = m.p20_ms = m.p80_ms = m.min_ms = 0.004;
    m.count = 1;
    m.device_kind = "emulated";
    m.timing_method = "emulator-estimate";
    m.run_guid = "run-emu";
    db.record_measurement(m);
  }
}
#endif

// The example application, built against the installed package (isatune::loader only), loads the emulator as a
// plugin, selects the tuned vector_add and checks its results on random inputs against the CPU. The test-double
// backend stays for what the emulator cannot do: run a kernel wrongly. It runs none, so the example's check must
// report the results as wrong there (the check is not vacuous).
TEST(Example, BuildsAgainstInstalledPackageAndRuns) {
  auto dir = testutil::temp_dir();
  std::string cmake = ISATUNE_CMAKE_COMMAND;
  auto inst = run(cmake + " --install " + ISATUNE_BINARY_DIR + " --component Unspecified --prefix " + dir + "/prefix");
  ASSERT_EQ(inst.rc, 0) << inst.out;
  ASSERT_TRUE(std::filesystem::exists(dir + "/prefix/lib/cmake/isatune/isatuneConfig.cmake"));
  ASSERT_TRUE(std::filesystem::exists(dir + "/prefix/lib/pkgconfig/isatune.pc"));
  auto cfg = run(cmake + " -S " + ISATUNE_EXAMPLE_DIR + " -B " + dir + "/build -DCMAKE_PREFIX_PATH=" + dir + "/prefix");
  ASSERT_EQ(cfg.rc, 0) << cfg.out;
  auto build = run(cmake + " --build " + dir + "/build");
  ASSERT_EQ(build.rc, 0) << build.out;
  const std::string app_path = dir + "/build/select_and_launch";

#ifdef ISATUNE_EMU_PLUGIN
  {
    auto d = isatune::db::Database::open(dir + "/emu.db");
    populate_emulated(d);
  }
  // 1000 elements: a ragged last workgroup (4 x 256 threads, 24 idle).
  auto emu = run("ISATUNE_BACKEND_PLUGINS=" ISATUNE_EMU_PLUGIN " " + app_path + " " + dir +
                 "/emu.db emu:gfx942 vector_add '{\"dtype\":\"f32\"}' '{\"n\":1000}' 1000");
  EXPECT_EQ(emu.rc, 0) << emu.out;
  EXPECT_NE(emu.out.find("selected vadd"), std::string::npos) << emu.out;
  EXPECT_NE(emu.out.find("tuned for {\"n\":1024} (nearest"), std::string::npos) << emu.out;
  EXPECT_NE(emu.out.find("launched vadd on emu:gfx942"), std::string::npos) << emu.out;
  EXPECT_NE(emu.out.find("checked 1000 results against the CPU: all equal"), std::string::npos) << emu.out;
  auto exact = run("ISATUNE_BACKEND_PLUGINS=" ISATUNE_EMU_PLUGIN " " + app_path + " " + dir +
                   "/emu.db emu vector_add '{\"dtype\":\"f32\"}' '{\"n\":256}' 256");
  EXPECT_EQ(exact.rc, 0) << exact.out;
  EXPECT_NE(exact.out.find("(exact"), std::string::npos) << exact.out;
  EXPECT_NE(exact.out.find("checked 256 results against the CPU: all equal"), std::string::npos) << exact.out;
  // Emulated measurements are never offered to a real device, and the emulator has no gfx1100.
  auto other = run("ISATUNE_BACKEND_PLUGINS=" ISATUNE_EMU_PLUGIN " " + app_path + " " + dir +
                   "/emu.db emu:gfx1100 vector_add '{}' '{}' 1");
  EXPECT_EQ(other.rc, 1) << other.out;
  EXPECT_NE(other.out.find("gfx1100"), std::string::npos) << other.out;
#else
  std::printf("emulator plugin not built: the example runs on the test double only\n");
#endif

  {
    auto d = isatune::db::Database::open(dir + "/tune.db");
    testutil::populate(d, {256, 1024}, 2, true);
  }
  auto fake = run("ISATUNE_BACKEND_PLUGINS=" ISATUNE_TEST_PLUGIN " " + app_path + " " + dir +
                  "/tune.db fake:gfx942 vector_add '{\"dtype\":\"f32\"}' '{\"n\":1000}' 1000");
  EXPECT_EQ(fake.rc, 1) << fake.out;
  EXPECT_NE(fake.out.find("tuned for {\"n\":1024} (nearest"), std::string::npos) << fake.out;
  EXPECT_NE(fake.out.find("launched vector_add"), std::string::npos) << fake.out;
  EXPECT_NE(fake.out.find("results differ from the CPU"), std::string::npos) << fake.out;
  auto nodev = run(app_path + " " + dir + "/tune.db hip:0 vector_add '{}' '{}' 1");
  EXPECT_EQ(nodev.rc, 1);
  EXPECT_NE(nodev.out.find("hip"), std::string::npos) << nodev.out;
}

// `db vendor-time` sets the vendor library's time by hand; `db best` shows the ratio and flags entries slower than
// it (text and --json); bad input is refused with the reason.
TEST(Cli, VendorTimeAndBestFlagsSlowerEntries) {
  auto dir = testutil::temp_dir();
  const std::string db = dir + "/t.db";
  {
    auto d = isatune::db::Database::open(db);
    testutil::populate(d, {256, 1024}, 2);
  }
  const std::string key = " --db " + db + " -g vector_add --sig '" + testutil::kSignature +
                          "' --target amdgcn-amd-amdhsa--gfx942:sramecc+:xnack- --cus 304";
  auto set = run(kCli + " db vendor-time" + key + " --problem '{\"n\":1024}' --ms 0.0005 --library 'cublas 13.0'");
  ASSERT_EQ(set.rc, 0) << set.out;
  EXPECT_NE(set.out.find("vendor time 0.0005 ms (cublas 13.0, manual)"), std::string::npos) << set.out;
  EXPECT_EQ(run(kCli + " db vendor-time" + key + " --problem '{\"n\":256}' --ms 2 --json").rc, 0);
  auto best = run(kCli + " db best --json --db " + db);
  ASSERT_EQ(best.rc, 0) << best.out;
  const auto j = isatune::db::JsonValue::parse(best.out);
  ASSERT_EQ(j.items().size(), 2u);
  for (const auto& e : j.items()) {
    const auto* vendor = e.find("vendor");
    ASSERT_TRUE(vendor && vendor->is_object()) << e.canonical();
    const bool slower = e.find("slower_than_vendor")->as_bool();
    if (e.find("problem")->as_string() == "{\"n\":1024}") {
      EXPECT_TRUE(slower) << e.canonical();
      EXPECT_NEAR(e.find("vs_vendor")->as_number(), 0.001024 / 0.0005, 1e-9);
      EXPECT_EQ(vendor->find("library")->as_string(), "cublas 13.0");
      EXPECT_EQ(vendor->find("source")->as_string(), "manual");
    } else {
      EXPECT_FALSE(slower) << e.canonical();
      EXPECT_LT(e.find("vs_vendor")->as_number(), 1.0);
    }
    EXPECT_EQ(e.find("chosen_by")->as_string(), "fastest");
  }
  auto text = run(kCli + " db best --db " + db);
  ASSERT_EQ(text.rc, 0) << text.out;
  EXPECT_NE(text.out.find("SLOWER THAN VENDOR"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2.05x"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 tuned entry is slower than the vendor library"), std::string::npos) << text.out;

  // The gemm generator's k=v words, defaults filled in as the tuner records them.
  auto gemm = run(kCli + " db vendor-time --db " + db +
                  " --sig a=bf16 --problem M=64,N=64,K=32 --target sm_90a --cus 132 --ms 0.01 --json");
  ASSERT_EQ(gemm.rc, 0) << gemm.out;
  EXPECT_NE(isatune::db::JsonValue::parse(gemm.out).find("signature")->as_string().find("\"layout\":\"NN\""),
            std::string::npos)
      << gemm.out;
  auto zero = run(kCli + " db vendor-time" + key + " --problem '{\"n\":256}' --ms 0");
  EXPECT_EQ(zero.rc, 1);
  EXPECT_NE(zero.out.find("--ms"), std::string::npos) << zero.out;
  auto no_target = run(kCli + " db vendor-time --db " + db + " -g vector_add --problem '{\"n\":1}' --ms 1");
  EXPECT_EQ(no_target.rc, 1);
  EXPECT_NE(no_target.out.find("--target and --cus"), std::string::npos) << no_target.out;
  auto emu = run(kCli + " db vendor-time --db " + db + " --sig a=f16 --problem M=64,N=64,K=32 --device emu:gfx942");
  EXPECT_NE(emu.rc, 0);
  EXPECT_NE(emu.out.find("no vendor library"), std::string::npos) << emu.out;
}

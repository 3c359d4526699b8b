// select(): exact, nearest and missing; the same answer from many threads; loading and launching through a
// device backend (the test double); the built-in HIP and CUDA backends without drivers; the C API.
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "fake_device.h"
#include "isatune.h"
#include "isatune/loader/loader.h"
#include "test_util.h"

using namespace isatune;

namespace {
struct Fixture : ::testing::Test {
  std::string dir = testutil::temp_dir();
  std::string path = dir + "/tune.db";
  void SetUp() override {
    auto d = db::Database::open(path);
    testutil::populate(d, {256, 1024, 4096, 65536}, 3, false, 304);
    testutil::populate(d, {1024}, 3, true, 304); // emulated measurements stay apart
  }
};

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
} // namespace

TEST_F(Fixture, ExactNearestMissing) {
  auto db = loader::TuningDb::open(path);
  auto dev = fake::gfx942();
  auto exact = db->select("vector_add", R"({ "dtype" : "f32" })", R"({"n": 4096.0})", dev);
  EXPECT_TRUE(exact->exact);
  EXPECT_EQ(exact->tuned_problem, R"({"n":4096})");
  EXPECT_EQ(exact->parameters, R"({"unroll":3})"); // the last variant wins at 4096
  EXPECT_EQ(exact->device_kind, "real");
  auto exact2 = db->select("vector_add", R"({"dtype":"f32"})", R"({"n":1024})", dev);
  EXPECT_EQ(exact2->parameters, R"({"unroll":1})");

  auto near = db->select("vector_add", R"({"dtype":"f32"})", R"({"n":3000})", dev);
  EXPECT_FALSE(near->exact);
  EXPECT_EQ(near->tuned_problem, R"({"n":4096})");
  EXPECT_NEAR(near->distance, std::log(4096.0 / 3000.0), 1e-9);
  auto near_small = db->select("vector_add", R"({"dtype":"f32"})", R"({"n":1})", dev);
  EXPECT_EQ(near_small->tuned_problem, R"({"n":256})");

  // Another CU count of the same target falls back, and says so.
  auto other_cus = db->select("vector_add", R"({"dtype":"f32"})", R"({"n":1024})", fake::gfx942(228));
  EXPECT_FALSE(other_cus->compute_units_exact);
  EXPECT_EQ(other_cus->compute_units, 304u);

  // The emulated device sees only emulated measurements.
  auto emu = db->select("vector_add", R"({"dtype":"f32"})", R"({"n":65536})", fake::gfx942(304, true));
  EXPECT_EQ(emu->device_kind, "emulated");
  EXPECT_EQ(emu->tuned_problem, R"({"n":1024})");

  auto m1 = message_of([&] { db->select("gemm", "{}", R"({"n":1})", dev); });
  EXPECT_NE(m1.find("no tuned kernel for generator 'gemm'"), std::string::npos) << m1;
  EXPECT_NE(m1.find("vector_add"), std::string::npos) << m1;
  auto m2 = message_of([&] { db->select("vector_add", R"({"dtype":"f16"})", R"({"n":1})", dev); });
  EXPECT_NE(m2.find("no tuned signature {\"dtype\":\"f16\"}"), std::string::npos) << m2;
  auto other = dev;
  other.isa = "gfx90a";
  other.target_id = "amdgcn-amd-amdhsa--gfx90a";
  auto m3 = message_of([&] { db->select("vector_add", R"({"dtype":"f32"})", R"({"n":1})", other); });
  EXPECT_NE(m3.find("not for this device amdgcn-amd-amdhsa--gfx90a"), std::string::npos) << m3;
  auto m4 = message_of([&] { db->select("vector_add", R"({"dtype":"f32"})", R"({"m":1})", dev); });
  EXPECT_NE(m4.find("no tuned problem is comparable"), std::string::npos) << m4;
  EXPECT_THROW(db->select("vector_add", R"({"dtype":"f32"})", R"({"n":)", dev), InputError);
  EXPECT_THROW(db->select("gemm", "{}", "{}", dev), loader::NotFoundError);
}

TEST_F(Fixture, SameAnswerFromManyThreads) {
  auto db = loader::TuningDb::open(path);
  auto dev = fake::gfx942();
  const char* problems[] = {R"({"n":256})", R"({"n":300})", R"({"n":1024})", R"({"n":5000})", R"({"n":65536})",
                            R"({"n":100000})"};
  std::vector<std::string> expected;
  {
    auto fresh = loader::TuningDb::open(path);
    for (auto p : problems) {
      auto s = fresh->select("vector_add", testutil::kSignature, p, dev);
      expected.push_back(s->tuned_problem + s->parameters);
    }
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        size_t k = size_t(t + i) % std::size(problems);
        auto s = db->select("vector_add", testutil::kSignature, problems[k], dev);
        if (s->tuned_problem + s->parameters != expected[k]) ++mismatches;
        if (i % 50 == 0) db->code_object(s->code_object);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(Fixture, LoaderLoadsOnceAndLaunchesWithPackedArguments) {
  auto device = std::make_shared<fake::FakeDevice>(fake::gfx942());
  loader::Loader ld(loader::TuningDb::open(path), device);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) ld.select("vector_add", testutil::kSignature, R"({"n":1000})")->function();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(device->loads, 1);
  auto k = ld.select("vector_add", testutil::kSignature, R"({"n":1000})");
  std::vector<loader::ArgValue> args = {loader::ArgValue::pointer(1), loader::ArgValue::pointer(2),
                                        loader::ArgValue::pointer(3), loader::ArgValue::of<uint32_t>(1000)};
  k->launch(args);
  EXPECT_EQ(device->launches, 1);
  EXPECT_EQ(device->last_config.grid.x, 4u); // ceil(1000 / 256)
  EXPECT_EQ(device->last_config.block.x, 256u);
  ASSERT_EQ(device->last_kernargs.size(), 48u);
  EXPECT_EQ(device->last_kernargs[32], 4); // hidden_block_count_x
}

TEST_F(Fixture, CorruptBlobIsRefusedAtLoad) {
  std::string sha;
  {
    auto d = db::Database::open(path);
    auto s = loader::TuningDb::open(path)->select("vector_add", testutil::kSignature, R"({"n":1024})", fake::gfx942());
    sha = s->code_object;
    d.query("UPDATE code_objects SET bytes = x'00' WHERE sha256 = ?", {sha});
  }
  auto device = std::make_shared<fake::FakeDevice>(fake::gfx942());
  loader::Loader ld(loader::TuningDb::open(path), device);
  auto k = ld.select("vector_add", testutil::kSignature, R"({"n":1024})");
  auto msg = message_of([&] { k->function(); });
  EXPECT_NE(msg.find("sha256=" + sha), std::string::npos) << msg;
  EXPECT_EQ(device->loads, 0);
}

TEST(Backends, NoDriverMeansEmptyListAndClearError) {
  for (std::string name : {"hip", "cuda"}) {
    auto b = loader::find_backend(name);
    ASSERT_TRUE(b);
    if (!b->unavailable_reason().empty()) {
      EXPECT_TRUE(b->list_devices().empty());
      try {
        loader::open_device(name + ":0");
        ADD_FAILURE() << "opening " << name << " without a driver succeeded";
      } catch (const UnavailableError& e) {
        std::string expect = name == "hip" ? "libamdhip64.so not found" : "libcuda.so.1 not found";
        if (b->unavailable_reason().find("not found") != std::string::npos) {
          EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
        }
      }
    } else {
      GTEST_LOG_(INFO) << name << " driver present: " << b->list_devices().size() << " devices";
    }
  }
  EXPECT_THROW(loader::open_device("nosuch:0"), InputError);
  loader::register_backend("fake", [] { return std::make_shared<fake::FakeBackend>(); });
  auto dev = loader::open_device("fake:gfx942");
  EXPECT_EQ(dev->properties().isa, "gfx942");
  bool listed = false;
  for (auto& p : loader::list_devices()) listed |= p.backend == "fake";
  EXPECT_TRUE(listed);
}

TEST_F(Fixture, CApi) {
  loader::register_backend("fake", [] { return std::make_shared<fake::FakeBackend>(); });
  isatune_context* ctx = nullptr;
  EXPECT_EQ(isatune_open((dir + "/missing.db").c_str(), "fake:0", &ctx), ISATUNE_ERROR_INPUT);
  EXPECT_NE(std::string(isatune_last_error()).find("no such database file"), std::string::npos);
  ASSERT_EQ(isatune_open(path.c_str(), "fake:0", &ctx), ISATUNE_OK) << isatune_last_error();
  isatune_kernel* k = nullptr;
  EXPECT_EQ(isatune_select(ctx, "gemm", "{}", "{}", &k), ISATUNE_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(isatune_last_error()).find("gemm"), std::string::npos);
  // The fake device is emulated: it gets the emulated measurements (tuned at n=1024).
  ASSERT_EQ(isatune_select(ctx, "vector_add", testutil::kSignature, R"({"n":2000})", &k), ISATUNE_OK)
      << isatune_last_error();
  isatune_kernel_desc desc;
  ASSERT_EQ(isatune_kernel_describe(k, &desc), ISATUNE_OK);
  EXPECT_STREQ(desc.name, "vector_add");
  EXPECT_STREQ(desc.tuned_problem, R"({"n":1024})");
  EXPECT_EQ(desc.exact, 0);
  uint64_t buf = 0;
  ASSERT_EQ(isatune_alloc(ctx, 4096, &buf), ISATUNE_OK);
  uint32_t n = 2000;
  isatune_arg args[] = {{nullptr, &buf, 8}, {nullptr, &buf, 8}, {nullptr, &buf, 8}, {nullptr, &n, 4}};
  EXPECT_EQ(isatune_launch(k, args, 4, nullptr), ISATUNE_OK) << isatune_last_error();
  EXPECT_EQ(isatune_launch(k, args, 3, nullptr), ISATUNE_ERROR_INPUT);
  EXPECT_EQ(isatune_synchronize(ctx), ISATUNE_OK);
  isatune_close(ctx);
  EXPECT_EQ(isatune_open(path.c_str(), "hip:0", &ctx) == ISATUNE_OK, !loader::find_backend("hip")->list_devices().empty());
}

// SHA-256 vectors, canonical JSON, kernarg packing, problem distance and launch templates.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "isatune/db/json.h"
#include "isatune/loader/kernargs.h"
#include "isatune/loader/select.h"
#include "isatune/loader/sha256.h"
#include "test_util.h"

using namespace isatune;

namespace {
std::string h(const std::string& s) {
  return loader::sha256_hex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}
} // namespace

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(h(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(h("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(h("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(h(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Chunked updates give the same digest as one update.
  std::string msg(1000, 'x');
  loader::Sha256 s;
  for (size_t i = 0; i < msg.size(); i += 7)
    s.update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(msg.data()) + i, std::min<size_t>(7, msg.size() - i)));
  auto d = s.finish();
  char hex[65];
  for (int i = 0; i < 32; ++i) std::snprintf(hex + 2 * i, 3, "%02x", d[size_t(i)]);
  EXPECT_EQ(std::string(hex), h(msg));
}

TEST(CanonicalJson, EqualThingsCompareEqual) {
  EXPECT_EQ(db::canonical_json(R"({ "N": 1024, "M" : 512.0 ,"dtype":"f16"})"), R"({"M":512,"N":1024,"dtype":"f16"})");
  EXPECT_EQ(db::canonical_json(R"({"M":512,"N":1024,"dtype":"f16"})"),
            db::canonical_json("{\"dtype\":\"f16\",\n\"N\":1.024e3,\"M\":512}"));
  EXPECT_EQ(db::canonical_json("[0.5, true, null, \"a\\u00e9\"]"), "[0.5,true,null,\"a\xc3\xa9\"]");
  EXPECT_EQ(db::canonical_json("{\"a\":{\"z\":1,\"b\":[2,1]}}"), "{\"a\":{\"b\":[2,1],\"z\":1}}");
  EXPECT_THROW(db::canonical_json("{\"a\":1,\"a\":2}"), InputError);
  EXPECT_THROW(db::canonical_json("{\"a\":}"), InputError);
  EXPECT_THROW(db::canonical_json("[1,2"), InputError);
  EXPECT_THROW(db::canonical_json("{} x"), InputError);
}

TEST(Kernargs, PacksByPositionAndNameAndFillsHidden) {
  auto code = testutil::code_object();
  const KernelInfo& k = code.kernels[0];
  loader::LaunchConfig cfg;
  cfg.grid = {7, 1, 1};
  cfg.block = {256, 1, 1};
  std::vector<loader::ArgValue> args = {loader::ArgValue::pointer(0x1000), loader::ArgValue::pointer(0x2000),
                                        loader::ArgValue::pointer(0x3000), loader::ArgValue::of<uint32_t>(1792)};
  auto buf = loader::pack_kernargs(k, args, cfg);
  ASSERT_EQ(buf.size(), 48u);
  uint64_t p;
  std::memcpy(&p, buf.data() + 8, 8);
  EXPECT_EQ(p, 0x2000u);
  uint32_t n, blocks;
  uint16_t group;
  std::memcpy(&n, buf.data() + 24, 4);
  std::memcpy(&blocks, buf.data() + 32, 4);
  std::memcpy(&group, buf.data() + 36, 2);
  EXPECT_EQ(n, 1792u);
  EXPECT_EQ(blocks, 7u);
  EXPECT_EQ(group, 256u);

  std::vector<loader::ArgValue> named = {loader::ArgValue::of<uint32_t>(5, "n"), loader::ArgValue::pointer(3, "c"),
                                         loader::ArgValue::pointer(1, "a"), loader::ArgValue::pointer(2, "b")};
  auto buf2 = loader::pack_kernargs(k, named, cfg);
  std::memcpy(&p, buf2.data() + 16, 8);
  EXPECT_EQ(p, 3u);

  std::vector<loader::ArgValue> too_few(args.begin(), args.begin() + 3);
  EXPECT_THROW(loader::pack_kernargs(k, too_few, cfg), InputError);
  std::vector<loader::ArgValue> wrong_size = args;
  wrong_size[3] = loader::ArgValue::of<uint64_t>(1);
  EXPECT_THROW(loader::pack_kernargs(k, wrong_size, cfg), InputError);
  std::vector<loader::ArgValue> bad_name = named;
  bad_name[0].name = "m";
  EXPECT_THROW(loader::pack_kernargs(k, bad_name, cfg), InputError);
}

TEST(ProblemDistance, LogSpaceAndComparability) {
  auto J = [](const char* s) { return db::JsonValue::parse(s); };
  EXPECT_DOUBLE_EQ(loader::problem_distance(J(R"({"M":1024,"N":64})"), J(R"({"M":1024,"N":64})")), 0.0);
  EXPECT_NEAR(loader::problem_distance(J(R"({"M":2048,"N":64})"), J(R"({"M":1024,"N":64})")), std::log(2.0), 1e-12);
  EXPECT_NEAR(loader::problem_distance(J(R"({"M":2048,"N":128})"), J(R"({"M":1024,"N":64})")),
              std::sqrt(2.0) * std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isinf(loader::problem_distance(J(R"({"M":1,"dtype":"f16"})"), J(R"({"M":1,"dtype":"f32"})"))));
  EXPECT_TRUE(std::isinf(loader::problem_distance(J(R"({"M":1})"), J(R"({"M":1,"N":2})"))));
}

TEST(LaunchTemplate, GridFromProblem) {
  auto c = loader::launch_config_for(testutil::kLaunch, R"({"n":1000})");
  EXPECT_EQ(c.grid.x, 4u);
  EXPECT_EQ(c.block.x, 256u);
  EXPECT_THROW(loader::launch_config_for("{}", R"({"n":1})"), InputError);
  EXPECT_THROW(loader::launch_config_for(testutil::kLaunch, R"({"m":1})"), InputError);
}

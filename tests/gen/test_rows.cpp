// Unit tests of the row kernel generators (softmax, rmsnorm, layernorm): the registry, schemas, the space
// against an independent enumeration, references on hand-computed cases, launches and kernel arguments, and
// the emitted kernels' structure. The emulator sweep is in test_rows_sweep.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "../../generators/rows/row_common.h"
#include "isatune/cdna/printer.h"
#include "isatune/error.h"

namespace {

using namespace isatune;

const char* kNames[] = {"softmax", "rmsnorm", "layernorm"};

TEST(Rows, Registered) {
  for (const char* n : kNames) {
    const gen::Generator& g = gen::find_generator(n);
    EXPECT_EQ(g.name(), n);
    EXPECT_FALSE(g.description().empty());
    EXPECT_EQ(g.targets(), (std::vector<std::string>{"gfx90a", "gfx942", "gfx950", "sm_80", "sm_90a"}));
  }
}

TEST(Rows, SignatureParsing) {
  const gen::Generator& g = gen::find_generator("rmsnorm");
  EXPECT_EQ(gen::parse_signature(g, std::vector<std::string>{}).at("dtype"), "f32");
  EXPECT_EQ(gen::parse_signature(g, std::vector<std::string>{"dtype=bf16"}).at("dtype"), "bf16");
  EXPECT_THROW(gen::parse_signature(g, std::vector<std::string>{"dtype=fp8"}), InputError);
  EXPECT_THROW(gen::parse_signature(g, std::vector<std::string>{"a=f16"}), InputError);
  EXPECT_EQ(g.output_dtype({{"dtype", "f16"}}), gen::DType::f16);
}

TEST(Rows, ProblemParsingAndBuffers) {
  const gen::Generator& g = gen::find_generator("layernorm");
  gen::Problem p = gen::parse_problem(g, std::vector<std::string>{"rows=3,N=5,ld=7"});
  EXPECT_EQ(p.at("rows"), 3);
  EXPECT_EQ(p.at("ld"), 7);
  EXPECT_THROW(gen::parse_problem(g, std::vector<std::string>{"rows=3"}), InputError); // N required
  EXPECT_THROW(gen::parse_problem(g, std::vector<std::string>{"rows=0,N=4"}), InputError);
  auto b = g.buffers({{"dtype", "f16"}}, p);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].name, "x");
  EXPECT_EQ(b[0].elements, 2u * 7 + 5); // the last row ends at N: no padding after it
  EXPECT_EQ(b[0].row_stride, 7u);
  EXPECT_EQ(b[1].name, "weight");
  EXPECT_EQ(b[1].elements, 5u);
  EXPECT_EQ(b[2].name, "bias");
  EXPECT_EQ(b[3].name, "y");
  EXPECT_EQ(b[3].role, gen::BufferRole::output);
  EXPECT_EQ(b[3].elements, 15u); // ldy absent = N
  EXPECT_EQ(b[3].dtype, gen::DType::f16);
  EXPECT_THROW(g.buffers({{"dtype", "f32"}}, {{"rows", 2}, {"N", 8}, {"ld", 4}}), InputError);
  EXPECT_EQ(gen::find_generator("softmax").buffers({}, p).size(), 2u);
  EXPECT_TRUE(gen::find_generator("softmax").scalars({}).empty());
  EXPECT_EQ(g.scalars({}).count("eps"), 1u);
}

// The constraints, re-derived: one dword-multiple load per chunk, whole chunks per resident group, at most
// 1024 threads, the VGPR estimate within 256.
size_t independent_count(gen::rows::RowOp op, gen::DType dt) {
  size_t count = 0;
  const int size = dt == gen::DType::f32 ? 4 : 2;
  for (int vec : {1, 2, 4, 8})
    for (int rpw : {1, 2, 4})
      for (int wpr : {1, 2, 4})
        for (int u : {1, 2, 4})
          for (int rc : {0, 8, 16, 32, 64, 128}) {
            const int bytes = vec * size;
            if (bytes != 4 && bytes != 8 && bytes != 16)
              continue;
            if (rc && rc % (vec * u))
              continue;
            if (rpw * wpr * 64 > 1024)
              continue;
            // VGPRs: 24 fixed; per chunk its dwords (+ f32 slots for 16-bit, + 1 alignment); per group chunk
            // an address, 16-bit element temporaries, weight and bias chunks.
            const int dw = bytes / 4;
            auto data = [&](int c) { return c * dw + (size == 2 ? c * vec : 0) + c; };
            int temps = u + (size == 2 ? u * vec : 0);
            if (op != gen::rows::RowOp::softmax)
              temps += u * (dw + 1);
            if (op == gen::rows::RowOp::layernorm)
              temps += u * (dw + 1);
            const int est = 24 + std::max(data(u) + temps, rc ? data(rc / vec) + temps : 0);
            if (est > 256)
              continue;
            ++count;
          }
  return count;
}

TEST(Rows, SpaceMatchesIndependentEnumeration) {
  const gen::rows::RowOp ops[] = {gen::rows::RowOp::softmax, gen::rows::RowOp::rmsnorm,
                                  gen::rows::RowOp::layernorm};
  for (int i = 0; i < 3; ++i)
    for (const char* dt : {"f32", "f16", "bf16"}) {
      const gen::Generator& g = gen::find_generator(kNames[i]);
      for (const char* isa : {"gfx90a", "gfx942", "gfx950"}) {
        gen::Space sp = g.space(isa, {{"dtype", dt}});
        EXPECT_EQ(sp.cartesian_size(), 4u * 3 * 3 * 3 * 6);
        EXPECT_EQ(sp.size(), independent_count(ops[i], *gen::parse_dtype(dt))) << kNames[i] << " " << dt;
        EXPECT_GT(sp.size(), 100u);
      }
    }
  EXPECT_THROW(gen::find_generator("softmax").space("gfx908", {{"dtype", "f32"}}), InputError);
}

TEST(Rows, GenerateRejectsInvalidPoints) {
  const gen::Generator& g = gen::find_generator("softmax");
  gen::Params p{{"vec", gen::Value::num(1)},
                {"rows_per_wg", gen::Value::num(1)},
                {"waves_per_row", gen::Value::num(1)},
                {"unroll", gen::Value::num(1)},
                {"row_chunk", gen::Value::num(8)}};
  EXPECT_NO_THROW(g.generate("gfx942", {{"dtype", "f32"}}, p));
  EXPECT_THROW(g.generate("gfx942", {{"dtype", "f16"}}, p), InputError); // 2-byte loads
  p["unroll"] = gen::Value::num(3);
  EXPECT_THROW(g.generate("gfx942", {{"dtype", "f32"}}, p), InputError); // not a value of the space
  p["unroll"] = gen::Value::num(4);
  p["vec"] = gen::Value::num(4);
  EXPECT_THROW(g.generate("gfx942", {{"dtype", "f32"}}, p), InputError); // row_chunk 8 % 16
  p.erase("vec");
  EXPECT_THROW(g.generate("gfx942", {{"dtype", "f32"}}, p), InputError);
}

TEST(Rows, SoftmaxReferenceHandComputed) {
  const gen::Generator& g = gen::find_generator("softmax");
  // Row 0: {0, ln 3} -> {1/4, 3/4}; row 1 (stride 3): {5, 5} -> {1/2, 1/2}.
  std::vector<std::vector<double>> b{{0, std::log(3.0), 99, 5, 5}, std::vector<double>(5, -1)};
  g.reference({}, {{"rows", 2}, {"N", 2}, {"ld", 3}, {"ldy", 3}}, {}, b);
  EXPECT_NEAR(b[1][0], 0.25, 1e-15);
  EXPECT_NEAR(b[1][1], 0.75, 1e-15);
  EXPECT_EQ(b[1][2], -1); // between the rows: untouched
  EXPECT_NEAR(b[1][3], 0.5, 1e-15);
  EXPECT_NEAR(b[1][4], 0.5, 1e-15);
}

TEST(Rows, RmsnormReferenceHandComputed) {
  const gen::Generator& g = gen::find_generator("rmsnorm");
  // x = {3, 4}: mean(x^2) = 12.5; weight {1, 2}; eps 0.
  std::vector<std::vector<double>> b{{3, 4}, {1, 2}, {0, 0}};
  g.reference({}, {{"rows", 1}, {"N", 2}}, {{"eps", 0.0}}, b);
  EXPECT_NEAR(b[2][0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(b[2][1], 8 / std::sqrt(12.5), 1e-15);
}

TEST(Rows, LayernormReferenceHandComputed) {
  const gen::Generator& g = gen::find_generator("layernorm");
  // x = {1, 3}: mean 2, biased variance 1; weight {1, 2}, bias {0, 1}; eps 0 -> {-1, 3}.
  std::vector<std::vector<double>> b{{1, 3}, {1, 2}, {0, 1}, {0, 0}};
  g.reference({}, {{"rows", 1}, {"N", 2}}, {{"eps", 0.0}}, b);
  EXPECT_NEAR(b[3][0], -1, 1e-15);
  EXPECT_NEAR(b[3][1], 3, 1e-15);
}

TEST(Rows, LaunchGeometryAndKernargs) {
  const gen::Generator& g = gen::find_generator("layernorm");
  gen::Params p{{"vec", gen::Value::num(2)},
                {"rows_per_wg", gen::Value::num(4)},
                {"waves_per_row", gen::Value::num(2)},
                {"unroll", gen::Value::num(1)},
                {"row_chunk", gen::Value::num(0)}};
  const uint64_t addr[] = {0x1000, 0x2000, 0x3000, 0x4000};
  auto ls = g.launches("gfx90a", {{"dtype", "bf16"}}, p, {{"rows", 9}, {"N", 100}, {"ld", 101}}, addr, {{"eps", 0.5}});
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0].grid.x, 3u);    // ceil(9 / 4)
  EXPECT_EQ(ls[0].block.x, 512u); // 4 rows x 2 waves
  ASSERT_EQ(ls[0].kernargs.size(), 52u);
  uint64_t a3;
  std::memcpy(&a3, ls[0].kernargs.data() + 24, 8);
  EXPECT_EQ(a3, 0x4000u);
  uint32_t u[4];
  std::memcpy(u, ls[0].kernargs.data() + 32, 16);
  EXPECT_EQ(u[0], 9u);
  EXPECT_EQ(u[1], 100u);
  EXPECT_EQ(u[2], 101u);
  EXPECT_EQ(u[3], 100u); // ldy absent = N
  float eps;
  std::memcpy(&eps, ls[0].kernargs.data() + 48, 4);
  EXPECT_EQ(eps, 0.5f);
  // The kernel's own argument layout agrees.
  gen::Generated gd = g.generate("gfx90a", {{"dtype", "bf16"}}, p);
  EXPECT_EQ(gd.kernel_name, ls[0].kernel);
  ASSERT_TRUE(gd.cdna);
  EXPECT_EQ(gd.cdna->kernarg_size, 52u);
  EXPECT_EQ(gd.cdna->workgroup_size, 512u);
  EXPECT_EQ(gd.cdna->lds_bytes, 2u * 4 * 2 * 4); // two reductions x rows x waves x f32
  EXPECT_THROW(g.launches("gfx90a", {{"dtype", "bf16"}}, p, {{"rows", 9}, {"N", 100}}, std::span(addr, 3), {}),
               InputError);
}

TEST(Rows, KernelsUseTheTargetsConversions) {
  const gen::Generator& g = gen::find_generator("rmsnorm");
  gen::Params p{{"vec", gen::Value::num(8)},
                {"rows_per_wg", gen::Value::num(1)},
                {"waves_per_row", gen::Value::num(1)},
                {"unroll", gen::Value::num(1)},
                {"row_chunk", gen::Value::num(16)}};
  const std::string t950 = g.generate("gfx950", {{"dtype", "bf16"}}, p).text;
  const std::string t942 = g.generate("gfx942", {{"dtype", "bf16"}}, p).text;
  EXPECT_NE(t950.find("v_cvt_pk_bf16_f32"), std::string::npos);
  EXPECT_EQ(t942.find("v_cvt_pk_bf16_f32"), std::string::npos);
  EXPECT_NE(t942.find("v_add3_u32"), std::string::npos); // round to nearest even by hand
  EXPECT_NE(t942.find("global_load_dwordx4"), std::string::npos);
  EXPECT_NE(t942.find("global_load_ushort"), std::string::npos); // the ragged path
  EXPECT_NE(t942.find("global_store_short_d16_hi"), std::string::npos);
  EXPECT_NE(t942.find("s_waitcnt"), std::string::npos); // inserted by the wait pass
  EXPECT_EQ(t942.find("ds_write"), std::string::npos);  // one wave per row: no LDS
}

} // namespace

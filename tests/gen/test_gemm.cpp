// GEMM generator unit tests: schema and signature parsing, the space against an independent enumeration,
// the reference on a hand-computed case, purity, and a few end-to-end runs on the emulator.
#include <gtest/gtest.h>

#include <algorithm>

#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"
#include "test_gemm_harness.h"

using namespace isatune;
using namespace gemm_test;

namespace {

gen::Signature sig_of(const char* ab, const char* cd, const char* layout) {
  return {{"a", ab}, {"b", ab}, {"cd", cd}, {"layout", layout}};
}

// The rules of docs/gemm.md, re-derived independently of generators/gemm/gemm_params.cpp.
// fp8: 1-byte inputs, the fp8 MFMA shapes (2 VGPRs per operand), depth 32 or 64.
uint64_t count_valid(const std::string& isa, bool a_trans, bool b_trans, bool fp8 = false) {
  struct Shape {
    int m, n, k, ab, cd;
  };
  std::vector<Shape> shapes{{32, 32, 8, 2, 16}, {16, 16, 16, 2, 4}};
  if (isa == "gfx950")
    shapes.push_back({32, 32, 16, 4, 16}), shapes.push_back({16, 16, 32, 4, 4});
  if (fp8)
    shapes = {{32, 32, 16, 2, 16}, {16, 16, 32, 2, 4}};
  const int es = fp8 ? 1 : 2;
  const std::vector<int> depths = fp8 ? std::vector<int>{32, 64} : std::vector<int>{16, 32};
  uint64_t n = 0;
  for (int tm : {32, 64, 128, 256})
    for (int tn : {32, 64, 128, 256})
      for (int depth : depths)
        for (int wm : {1, 2, 4})
          for (int wn : {1, 2, 4})
            for (const Shape& s : shapes)
              for (int vw : {1, 2, 4})
                for (int pad : {0, 8})
                  for (int pgr : {0, 1})
                    for (int plr : {0, 1})
                      for (int split : {1, 2, 4})
                        for (int order = 0; order < 3; ++order) {
                          int waves = wm * wn;
                          if (waves > 4)
                            continue;
                          if (tm % (wm * s.m) || tn % (wn * s.n) || depth % s.k)
                            continue;
                          if (plr && depth / s.k < 2)
                            continue;
                          if (split > 1 && order != 0)
                            continue;
                          int threads = 64 * waves, e = 4 * vw / es;
                          // A: K contiguous when transposed; B: K contiguous when not transposed
                          auto ok = [&](bool kcontig, int t) {
                            int contiguous = kcontig ? depth : t;
                            return contiguous % e == 0 && (t * depth) % (e * threads) == 0;
                          };
                          if (!ok(a_trans, tm) || !ok(!b_trans, tn))
                            continue;
                          int row = depth + pad;
                          int lds = (tm + tn) * row * es * (pgr ? 2 : 1);
                          if (lds > 65536)
                            continue;
                          int bm = tm / wm / s.m, bn = tn / wn / s.n;
                          int slots_a = tm * depth / (e * threads), slots_b = tn * depth / (e * threads);
                          int per_a = e + (a_trans ? 3 : 4), per_b = e + (!b_trans ? 3 : 4);
                          int loop = (bm + bn) * s.ab * (plr ? 2 : 1) + slots_a * per_a + slots_b * per_b + 8;
                          int epi = 3 * bn + 3 * s.cd + 8;
                          int vgprs = 2 + bm * bn * s.cd + std::max(loop, epi);
                          if (vgprs > 256)
                            continue;
                          ++n;
                        }
  return n;
}

} // namespace

TEST(GemmGenerator, Registered) {
  const gen::Generator& g = gemm();
  EXPECT_EQ(g.name(), "gemm");
  // CDNA, then the PTX backends' targets in order (gemm_ptx_backends())
  EXPECT_EQ(g.targets(), (std::vector<std::string>{"gfx90a", "gfx942", "gfx950", "sm_80", "sm_90", "sm_90a"}));
}

TEST(GemmGenerator, SignatureParsing) {
  const gen::Generator& g = gemm();
  std::vector<std::string> words{"a=bf16,b=bf16,layout=TN"};
  gen::Signature s = gen::parse_signature(g, words);
  EXPECT_EQ(s.at("a"), "bf16");
  EXPECT_EQ(s.at("cd"), "f32");
  EXPECT_EQ(s.at("layout"), "TN");
  std::vector<std::string> bad{"layout=XN"};
  EXPECT_THROW(gen::parse_signature(g, bad), InputError);
  gen::Signature mixed{{"a", "f16"}, {"b", "bf16"}, {"cd", "f32"}, {"layout", "NN"}};
  EXPECT_THROW(g.space("gfx942", mixed), InputError);
  EXPECT_THROW(g.space("gfx1100", sig_of("f16", "f32", "NN")), InputError);
  std::vector<std::string> pw{"M=5,N=7,K=3,lda=9"};
  gen::Problem p = gen::parse_problem(g, pw);
  EXPECT_EQ(p.at("M"), 5);
  EXPECT_EQ(p.at("lda"), 9);
  // lda below the tight value
  EXPECT_THROW(g.buffers(sig_of("f16", "f32", "NN"), {{"M", 5}, {"N", 2}, {"K", 3}, {"lda", 4}}), InputError);
}

TEST(GemmGenerator, SpaceMatchesIndependentEnumeration) {
  const gen::Generator& g = gemm();
  for (std::string isa : {"gfx90a", "gfx942", "gfx950"})
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      gen::Space s = g.space(isa, sig_of("bf16", "f32", layout));
      uint64_t want = count_valid(isa, layout[0] == 'T', layout[1] == 'T');
      EXPECT_EQ(s.size(), want) << isa << " " << layout;
      EXPECT_GT(s.size(), 200u);
      std::printf("[gemm space] %s %s: %zu valid of %llu\n", isa.c_str(), layout, s.size(),
                  (unsigned long long)s.cartesian_size());
    }
  for (std::string isa : {"gfx942", "gfx950"})
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      const char* a = isa == "gfx942" ? "fp8_e4m3_fnuz" : "fp8_e4m3";
      const char* b = isa == "gfx942" ? "fp8_e5m2_fnuz" : "fp8_e5m2";
      gen::Space s = g.space(isa, {{"a", a}, {"b", b}, {"cd", "f16"}, {"layout", layout}});
      EXPECT_EQ(s.size(), count_valid(isa, layout[0] == 'T', layout[1] == 'T', true)) << isa << " fp8 " << layout;
      EXPECT_GT(s.size(), 200u);
      std::printf("[gemm space] %s fp8 %s: %zu valid of %llu\n", isa.c_str(), layout, s.size(),
                  (unsigned long long)s.cartesian_size());
    }
}

TEST(GemmGenerator, ReferenceHandComputed) {
  const gen::Generator& g = gemm();
  // M=2, N=2, K=2, layout NT: A column-major 2x2, B stored N x K (transposed)
  gen::Signature sig = sig_of("f16", "f32", "NT");
  gen::Problem p{{"M", 2}, {"N", 2}, {"K", 2}};
  std::vector<std::vector<double>> buf(5);
  buf[0] = {1, 2, 3, 4};   // A = [[1,3],[2,4]]
  buf[1] = {5, 6, 7, 8};   // stored B^T (N x K col-major) = [[5,7],[6,8]] -> B = [[5,6],[7,8]]
  buf[2] = {1, 1, 1, 1};   // C
  buf[3] = {0, 0, 0, 0};   // D
  buf[4].assign(16, 0);
  g.reference(sig, p, {{"alpha", 2.0}, {"beta", -1.0}}, buf);
  // A*B = [[1*5+3*7, 1*6+3*8],[2*5+4*7, 2*6+4*8]] = [[26,30],[38,44]]; D = 2*AB - 1
  EXPECT_EQ(buf[3], (std::vector<double>{51, 75, 59, 87}));
}

TEST(GemmGenerator, PureAndRefusesPointsOutsideTheSpace) {
  const gen::Generator& g = gemm();
  gen::Signature sig = sig_of("f16", "bf16", "TN");
  gen::Space s = g.space("gfx942", sig);
  gen::Params p = gen::params_of(s, s.valid_config(s.size() / 2));
  EXPECT_EQ(g.generate("gfx942", sig, p).text, g.generate("gfx942", sig, p).text);
  gen::Params bad = p;
  bad["tile_m"] = gen::Value::num(48);
  EXPECT_THROW(g.generate("gfx942", sig, bad), InputError);
  bad = p;
  bad["mfma"] = gen::Value::str("16x16x32"); // gfx950 only
  EXPECT_THROW(g.generate("gfx942", sig, bad), InputError);
}

// Valid points (every 97th of one signature per target) generate within the register and LDS budgets.
TEST(GemmGenerator, EveryPointOfASpaceGenerates) {
  const gen::Generator& g = gemm();
  for (std::string isa : {"gfx90a", "gfx942", "gfx950"}) {
    gen::Signature sig = sig_of(isa == "gfx950" ? "bf16" : "f16", "f16", isa == "gfx90a" ? "NT" : "TN");
    gen::Space s = g.space(isa, sig);
    for (size_t i = 0; i < s.size(); i += 97) {
      gen::Params p = gen::params_of(s, s.valid_config(i));
      gen::Generated gd;
      ASSERT_NO_THROW(gd = g.generate(isa, sig, p)) << isa << " " << gen::format(p);
      ASSERT_LE(gd.cdna->arch_vgprs, 256u);
    }
  }
  // fp8 (one mixed signature per target, every 97th point)
  for (std::string isa : {"gfx942", "gfx950"}) {
    gen::Signature sig{{"a", isa == "gfx942" ? "fp8_e5m2_fnuz" : "fp8_e4m3"},
                       {"b", isa == "gfx942" ? "fp8_e4m3_fnuz" : "fp8_e5m2"},
                       {"cd", "bf16"},
                       {"layout", isa == "gfx942" ? "NT" : "TN"}};
    gen::Space s = g.space(isa, sig);
    for (size_t i = 0; i < s.size(); i += 97) {
      gen::Params p = gen::params_of(s, s.valid_config(i));
      gen::Generated gd;
      ASSERT_NO_THROW(gd = g.generate(isa, sig, p)) << isa << " " << gen::format(p);
      ASSERT_LE(gd.cdna->arch_vgprs, 256u);
    }
  }
}

TEST(GemmGenerator, TinyAndRaggedOnTheEmulator) {
  const gen::Generator& g = gemm();
  gen::Signature sig = sig_of("f16", "f32", "NN");
  gen::Params p{{"tile_m", gen::Value::num(32)},       {"tile_n", gen::Value::num(32)},
                {"depth", gen::Value::num(16)},        {"waves_m", gen::Value::num(1)},
                {"waves_n", gen::Value::num(1)},       {"mfma", gen::Value::str("32x32x8")},
                {"vw", gen::Value::num(1)},            {"lds_pad", gen::Value::num(0)},
                {"prefetch_global", gen::Value::num(0)}, {"prefetch_local", gen::Value::num(0)},
                {"split_k", gen::Value::num(1)},       {"wg_order", gen::Value::str("row")}};
  gen::Generated gd = g.generate("gfx942", sig, p);
  CodeObject code = assemble("gfx942", gd);
  auto dev = emu::make_emu_device({.target = "gfx942", .threads = 2});
  for (auto [m, n, k] : std::vector<std::tuple<int, int, int>>{{1, 1, 1}, {32, 32, 16}, {33, 17, 5}, {64, 40, 40}}) {
    gen::Problem prob{{"M", m}, {"N", n}, {"K", k}};
    RunOutcome r = run_problem(*dev, code, sig, p, prob, 7, {{"alpha", 1.5}, {"beta", 0.5}});
    EXPECT_LE(r.max_rel_error, 1e-5) << gen::format(prob) << " " << r.where;
    EXPECT_TRUE(r.reports.empty()) << gen::format(prob) << "\n" << (r.reports.empty() ? "" : r.reports[0]);
  }
}

// compare_output's two norms on a 2 x 1 matrix: the row norm makes an error relative to the element itself, the
// matrix norm (BufferSpec::matrix_norm) to the largest element of the matrix.
TEST(GemmGenerator, MatrixNormComparesWithTheLargestElement) {
  gen::BufferSpec spec;
  spec.name = "D";
  spec.role = gen::BufferRole::output;
  spec.elements = 2, spec.rows = 2, spec.cols = 1, spec.row_stride = 1;
  const std::vector<double> want{1e-3, 10.0}, got{1e-3 + 1e-6, 10.0};
  EXPECT_NEAR(gen::compare_output(spec, got, want).max_rel_error, 1e-3, 1e-9);
  spec.matrix_norm = true;
  EXPECT_NEAR(gen::compare_output(spec, got, want).max_rel_error, 1e-7, 1e-12);
  // a real error still fails
  EXPECT_GT(gen::compare_output(spec, std::vector<double>{1e-3, 10.001}, want).max_rel_error, 1e-5);
}

// Regression (scripts/aiter_gemm_compare.py, gfx950 bf16 TN f32 at M=1, N=2048, K=6144 and M=2, N=6144, K=2048):
// every variant was a wrong answer. D's check rows are its columns of M elements, so with M = 1 or 2 the error
// was relative to the element itself, and an element near cancellation (|D| ~ 0.01 among |D| ~ 30) showed f32
// accumulation's absolute error (2e-5 at K = 6144, docs/gemm.md) as 1e-4 relative. At M = 1, K = 2048 the
// column norm gives 2e-3 to 4e-3 here (N = 512 columns hold such near-zero elements); the matrix norm passes.
TEST(GemmGenerator, TinyMLongKIsCheckedAgainstTheMatrixNorm) {
  const std::string isa = "gfx950";
  if (!toolchain::llvm_supports(isa)) GTEST_SKIP() << "this LLVM cannot assemble " << isa;
  const gen::Generator& g = gemm();
  gen::Signature sig = sig_of("bf16", "f32", "TN");
  gen::Problem prob{{"M", 1}, {"N", 512}, {"K", 2048}};
  auto specs = g.buffers(sig, prob);
  ASSERT_EQ(specs.at(3).name, "D");
  EXPECT_TRUE(specs.at(3).matrix_norm);
  auto dev = emu::make_emu_device({.target = isa, .threads = 2});
  for (int split : {1, 2}) {
    gen::Params p{{"tile_m", gen::Value::num(32)},       {"tile_n", gen::Value::num(64)},
                  {"depth", gen::Value::num(32)},        {"waves_m", gen::Value::num(1)},
                  {"waves_n", gen::Value::num(1)},       {"mfma", gen::Value::str("32x32x16")},
                  {"vw", gen::Value::num(4)},            {"lds_pad", gen::Value::num(0)},
                  {"prefetch_global", gen::Value::num(0)}, {"prefetch_local", gen::Value::num(0)},
                  {"split_k", gen::Value::num(split)},   {"wg_order", gen::Value::str("row")}};
    CodeObject code = assemble(isa, g.generate(isa, sig, p));
    RunOutcome r = run_problem(*dev, code, sig, p, prob, 1, {{"alpha", 1.25}, {"beta", 0.75}});
    EXPECT_LE(r.max_rel_error, gen::tolerance(gen::DType::f32)) << "split_k=" << split << " " << r.where;
    EXPECT_TRUE(r.reports.empty()) << (r.reports.empty() ? "" : r.reports[0]);
  }
}

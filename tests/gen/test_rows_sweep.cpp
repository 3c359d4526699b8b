// The row kernels on the emulator: for each generator and target, a deterministic sample of at least 200
// valid points (every dtype, every parameter value), each run on random problems (ragged N, odd N, padded
// strides, register-resident and looped), compared with the float64 reference within the dtype's tolerance,
// with zero emulator reports and no write between output rows.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>
#include <thread>

#include "../../generators/rows/row_common.h"
#include "isatune/toolchain/llvm_mc.h"
#include "emu_run.h"

namespace {

using namespace isatune;

struct Point {
  gen::Signature sig;
  gen::Params params;
};

// Evenly spaced valid points per dtype, then any parameter value still missing added.
std::vector<Point> sample_points(const gen::Generator& g, const std::string& isa, size_t per_dtype) {
  std::vector<Point> out;
  for (const char* dt : {"f32", "f16", "bf16"}) {
    gen::Signature sig{{"dtype", dt}};
    gen::Space sp = g.space(isa, sig);
    const size_t n = sp.size();
    std::set<size_t> chosen;
    for (size_t i = 0; i < std::min(per_dtype, n); ++i)
      chosen.insert(i * n / std::min(per_dtype, n));
    const auto& ps = sp.parameters();
    for (size_t p = 0; p < ps.size(); ++p)
      for (uint32_t v = 0; v < ps[p].values.size(); ++v) {
        bool have = false;
        for (size_t c : chosen)
          have = have || sp.valid_config(c)[p] == v;
        for (size_t pos = 0; pos < n && !have; ++pos)
          if (sp.valid_config(pos)[p] == v) {
            chosen.insert(pos);
            have = true;
          }
      }
    for (size_t c : chosen)
      out.push_back({sig, gen::params_of(sp, sp.valid_config(c))});
  }
  return out;
}

struct PointResult {
  std::vector<std::string> failures;
  size_t runs = 0, resident = 0, looped = 0;
  double max_err = 0;
  double gen_s = 0, asm_s = 0, run_s = 0;
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

gen::rows::RowOp op_of(const std::string& name) {
  return name == "softmax"   ? gen::rows::RowOp::softmax
         : name == "rmsnorm" ? gen::rows::RowOp::rmsnorm
                             : gen::rows::RowOp::layernorm;
}

// One point: generate (twice for every 10th: purity), assemble, run a resident and a looped (or second)
// problem. Deterministic in `seed`.
PointResult run_point(emu::EmuDevice& dev, const gen::Generator& g, const std::string& isa, const Point& pt,
                      uint64_t seed, bool check_purity) {
  PointResult r;
  auto fail = [&](const std::string& m) {
    r.failures.push_back(isa + " " + g.name() + " " + gen::format(pt.sig) + " " + gen::format(pt.params) +
                         ": " + m);
  };
  try {
    const gen::DType dt = gen::rows::row_dtype(pt.sig);
    const gen::rows::RowParams rp = gen::rows::row_params(dt, pt.params);
    auto tg = std::chrono::steady_clock::now();
    gen::Generated gd = g.generate(isa, pt.sig, pt.params);
    r.gen_s = since(tg);
    if (check_purity && g.generate(isa, pt.sig, pt.params).text != gd.text)
      fail("generating twice gives different text");
    if (!gd.cdna)
      return fail("no kernel IR"), r;
    if (int(gd.cdna->arch_vgprs) > gen::rows::vgpr_estimate(op_of(g.name()), rp))
      fail("uses " + std::to_string(gd.cdna->arch_vgprs) + " VGPRs, more than the space's estimate");
    auto ta = std::chrono::steady_clock::now();
    CodeObject code = gen_test::assemble(isa, gd);
    r.asm_s = since(ta);
    std::mt19937_64 rng(seed);
    auto rnd = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int64_t lanes = 64 * rp.waves_per_row;
    const int64_t cap = lanes * rp.row_chunk - (dt == gen::DType::f32 ? 0 : 1); // resident when N <= cap
    auto make = [&](int64_t n) {
      gen::Problem p{{"rows", rnd(1, 9)}, {"N", n}};
      if (rnd(0, 1))
        p["ld"] = n + rnd(0, 3);
      if (rnd(0, 2) == 0)
        p["ldy"] = n + rnd(1, 2);
      return p;
    };
    std::vector<gen::Problem> probs;
    if (cap > 0)
      probs.push_back(make(rnd(1, std::min<int64_t>(cap, 3000))));
    probs.push_back(cap < 3000 ? make(rnd(std::max<int64_t>(cap + 1, 1), 3000)) : make(rnd(1, 200)));
    for (const gen::Problem& prob : probs) {
      std::map<std::string, double> scalars;
      for (const auto& [k, range] : g.scalars(pt.sig))
        scalars[k] = std::uniform_real_distribution<double>(range.first, range.second)(rng);
      auto tr = std::chrono::steady_clock::now();
      gen_test::Outcome o = gen_test::run_problem(dev, g, code, pt.sig, pt.params, prob, rng(), scalars);
      r.run_s += since(tr);
      ++r.runs;
      (prob.at("N") <= cap ? r.resident : r.looped)++;
      r.max_err = std::max(r.max_err, o.max_rel_error);
      const std::string where = gen::format(prob);
      if (!(o.max_rel_error <= gen::tolerance(dt)))
        fail(where + ": max relative error " + std::to_string(o.max_rel_error) + " at " + o.where);
      if (o.gap_writes)
        fail(where + ": " + std::to_string(o.gap_writes) + " elements written between output rows");
      if (!o.reports.empty())
        fail(where + ": " + std::to_string(o.reports.size()) +
             " emulator reports, first: " + o.reports.front());
    }
  } catch (const std::exception& e) {
    fail(std::string("exception: ") + e.what());
  }
  return r;
}

void sweep(const std::string& name, const std::string& isa) {
  if (!toolchain::llvm_supports(isa))
    GTEST_SKIP() << "this LLVM cannot assemble " << isa;
  const gen::Generator& g = gen::find_generator(name);
  const auto points = sample_points(g, isa, 70);
  ASSERT_GE(points.size(), 200u);
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t base_seed = std::hash<std::string>{}(name + isa) & 0xffff;
  // Two workers (CI has two cores), one emulator each.
  std::vector<PointResult> results(points.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    auto dev = emu::make_emu_device({.target = isa, .threads = 1});
    for (size_t i; (i = next++) < points.size();)
      results[i] = run_point(*dev, g, isa, points[i], base_seed * 1000 + i, i % 10 == 0);
  };
  std::thread t1(worker);
  worker();
  t1.join();
  size_t runs = 0, resident = 0, looped = 0, failures = 0;
  double err[3] = {0, 0, 0}, gen_s = 0, asm_s = 0, run_s = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const PointResult& r = results[i];
    runs += r.runs, resident += r.resident, looped += r.looped;
    gen_s += r.gen_s, asm_s += r.asm_s, run_s += r.run_s;
    const gen::DType dt = gen::rows::row_dtype(points[i].sig);
    double& e = err[dt == gen::DType::f32 ? 0 : dt == gen::DType::f16 ? 1 : 2];
    e = std::max(e, r.max_err);
    for (const auto& f : r.failures)
      if (failures++ < 10)
        ADD_FAILURE() << f;
  }
  EXPECT_EQ(failures, 0u);
  std::printf("[rows sweep] %s %s: %zu points, %zu runs (%zu resident, %zu looped), max rel error f32 %.3g "
              "f16 %.3g bf16 %.3g; %.1f s wall on 2 threads (generate %.1f, assemble %.1f, emulate %.1f)\n",
              name.c_str(), isa.c_str(), points.size(), runs, resident, looped, err[0], err[1], err[2],
              since(t0), gen_s, asm_s, run_s);
}

// Fixed edge cases on gfx942: N = 1, 2, 3, around a wave and around the resident capacity (N + s_max), with
// odd and even strides, for one point per dtype.
TEST(RowsEdges, SizesAroundBoundaries) {
  if (!toolchain::llvm_supports("gfx942"))
    GTEST_SKIP() << "this LLVM cannot assemble gfx942";
  auto dev = emu::make_emu_device({.target = "gfx942", .threads = 2});
  struct P {
    const char* dtype;
    int vec, rpw, wpr, unroll, row_chunk;
  };
  const P pts[] = {
      {"f16", 8, 2, 2, 2, 16}, {"f32", 1, 1, 4, 4, 0}, {"bf16", 2, 4, 1, 1, 8}, {"f32", 4, 2, 1, 1, 4 * 8}};
  uint64_t seed = 7;
  for (const char* name : {"softmax", "rmsnorm", "layernorm"}) {
    const gen::Generator& g = gen::find_generator(name);
    for (const P& p : pts) {
      gen::Signature sig{{"dtype", p.dtype}};
      gen::Params params{{"vec", gen::Value::num(p.vec)},
                         {"rows_per_wg", gen::Value::num(p.rpw)},
                         {"waves_per_row", gen::Value::num(p.wpr)},
                         {"unroll", gen::Value::num(p.unroll)},
                         {"row_chunk", gen::Value::num(p.row_chunk)}};
      CodeObject code = gen_test::assemble("gfx942", g.generate("gfx942", sig, params));
      const int64_t cap = int64_t(64) * p.wpr * p.row_chunk - (std::string(p.dtype) == "f32" ? 0 : 1);
      std::vector<int64_t> ns{1, 2, 3, 63, 64, 65, 129};
      if (cap > 0)
        for (int64_t d : {-1, 0, 1})
          ns.push_back(cap + d);
      for (int64_t n : ns)
        for (int64_t pad : {0, 1}) {
          gen::Problem prob{{"rows", 5}, {"N", n}, {"ld", n + pad}, {"ldy", n + 1 - pad}};
          SCOPED_TRACE(std::string(name) + " " + gen::format(sig) + " " + gen::format(params) + " " +
                       gen::format(prob));
          std::map<std::string, double> scalars;
          if (std::string(name) != "softmax")
            scalars["eps"] = 1e-5;
          gen_test::Outcome o = gen_test::run_problem(*dev, g, code, sig, params, prob, ++seed, scalars);
          EXPECT_LE(o.max_rel_error, gen::tolerance(*gen::parse_dtype(p.dtype))) << o.where;
          EXPECT_EQ(o.gap_writes, 0u);
          EXPECT_TRUE(o.reports.empty()) << o.reports.front();
          if (::testing::Test::HasFailure())
            return;
        }
    }
  }
}

class RowsSweep : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(RowsSweep, EmulatorMatchesReference) {
  sweep(std::get<0>(GetParam()), std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(All, RowsSweep,
                         ::testing::Combine(::testing::Values("softmax", "rmsnorm", "layernorm"),
                                            ::testing::Values("gfx90a", "gfx942", "gfx950")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

} // namespace

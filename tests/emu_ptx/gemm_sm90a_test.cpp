// The nvcc sm_90a warp-specialised GEMM (tests/fixtures/ptx/cuda/gemm_bf16_ws_sm90a: a TMA producer warpgroup,
// two wgmma consumer warpgroups, a 3-stage mbarrier ring, a 2-CTA cluster with B multicast, setmaxnreg) run end
// to end on the emulator against the float64 reference on random ragged shapes, with no report; and its seeded
// mutations, each reported: wgmma.wait_group removed, a wrong expect_tx byte count, the mbarrier wait of the
// consumers removed. (Its one fence.proxy.async follows the mbarrier inits, which the async proxy does not read
// as data: removing it is reported nowhere; the fence mutations are in wgmma_test.cpp and tma_test.cpp.)
#include <cmath>
#include <fstream>
#include <sstream>

#include "../fixtures/ptx/cuda/references.h"
#include "emu_ptx_test.h"
#include "isatune/ptx/tensor_map.h"

using namespace emu_ptx_test;

namespace {

std::string fixture() {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/gemm_bf16_ws_sm90a.sm_90a.ptx");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The fixture with every line for which `drop` is true blanked (line numbers kept) and `from` replaced by `to`.
template <class Drop> std::string mutate(Drop drop, const std::string& from = "", const std::string& to = "") {
  std::istringstream in(fixture());
  std::string out, line;
  int changed = 0;
  while (std::getline(in, line)) {
    if (drop(line)) {
      line.clear();
      ++changed;
    }
    if (!from.empty() && line.find(from) != std::string::npos) {
      line.replace(line.find(from), from.size(), to);
      ++changed;
    }
    out += line + "\n";
  }
  EXPECT_GT(changed, 0) << "the mutation changed nothing: the fixture has changed";
  return out;
}
bool starts(const std::string& line, const char* what) {
  size_t k = line.find_first_not_of(" \t");
  return k != std::string::npos && line.compare(k, std::strlen(what), what) == 0;
}

struct Gemm {
  uint32_t M, N, K, lda, ldc;
  std::vector<uint16_t> a, bt;
  std::vector<float> c0;
};

Gemm random_gemm(uint32_t max_m, uint32_t max_n, uint32_t max_k) {
  Gemm g;
  g.M = 1 + rand_u32() % max_m, g.N = 1 + rand_u32() % max_n, g.K = 1 + rand_u32() % max_k;
  g.lda = (g.K + 7) / 8 * 8; // the tensor maps' byte strides must be multiples of 16
  g.ldc = g.N + 1 + rand_u32() % 4;
  // bf16 in [-2, 2): 1 sign, 8 exponent, 7 mantissa bits, never zero.
  auto bf16 = [] {
    float f = rand_float(-2, 2);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return uint16_t(u >> 16);
  };
  g.a = random_vec<uint16_t>(size_t(g.M) * g.lda, bf16);
  g.bt = random_vec<uint16_t>(size_t(g.N) * g.lda, bf16);
  g.c0 = random_vec<float>(size_t(g.M) * g.ldc, [] { return rand_float(); });
  return g;
}

// Runs the kernel text on `g`; returns C (M x ldc).
std::vector<float> run(Runner& r, const std::string& ptx, const Gemm& g) {
  r.load(ptx);
  uint64_t pa = r.upload(g.a), pb = r.upload(g.bt), pc = r.upload(g.c0);
  auto map = [&](uint64_t base, uint32_t rows, uint32_t box_rows) {
    isatune::TensorMapTiledArgs m;
    m.data_type = isatune::TensorMapDataType::bfloat16;
    m.rank = 2;
    m.global_address = base;
    m.global_dim = {g.K, rows, 0, 0, 0};
    m.global_strides = {uint64_t(g.lda) * 2, 0, 0, 0};
    m.box_dim = {64, box_rows, 0, 0, 0};
    m.swizzle = isatune::TensorMapSwizzle::b128;
    return r.dev->encode_tensor_map(m); // the loader's API, as an application calls it
  };
  auto ta = map(pa, g.M, 128), tb = map(pb, g.N, 64);
  Runner::Args args;
  args.bytes.assign(ta.bytes.begin(), ta.bytes.end());
  args.bytes.insert(args.bytes.end(), tb.bytes.begin(), tb.bytes.end());
  args.add(pc).add(g.M).add(g.N).add(g.K).add(g.ldc);
  const uint32_t gx = 2 * (((g.M + 127) / 128 + 1) / 2), gy = (g.N + 127) / 128;
  r.launch("gemm_bf16_ws_sm90a", {gx, gy, 1}, {384, 1, 1}, args, 99376, {2, 1, 1});
  return r.download<float>(pc, size_t(g.M) * g.ldc);
}

// Elements of C off the reference by more than f32 accumulation allows (relative to sum |a||b|), and any
// change past column N.
size_t wrong_elements(const Gemm& g, const std::vector<float>& c) {
  auto ref = isatune::fixtures::gemm_bf16_nt_reference(g.a.data(), g.bt.data(), int(g.M), int(g.N), int(g.K),
                                                       int(g.lda), int(g.lda));
  size_t wrong = 0;
  for (uint32_t i = 0; i < g.M; ++i)
    for (uint32_t j = 0; j < g.ldc; ++j) {
      const float got = c[size_t(i) * g.ldc + j];
      if (j >= g.N) {
        wrong += got != g.c0[size_t(i) * g.ldc + j];
        continue;
      }
      double mag = 0;
      for (uint32_t k = 0; k < g.K; ++k)
        mag += std::fabs(isatune::fixtures::bf16_to_double(g.a[size_t(i) * g.lda + k]) *
                         isatune::fixtures::bf16_to_double(g.bt[size_t(j) * g.lda + k]));
      const double want = ref[size_t(i) * g.N + j];
      wrong += !(std::fabs(got - want) <= 1e-5 * mag + 1e-30);
    }
  return wrong;
}

TEST(EmuPtxGemmSm90a, MatchesFloat64ReferenceOnRaggedShapes) {
  // Two CTAs of M, more than one of N, K past the 3-stage ring (wraps its phases), all ragged.
  Gemm g = random_gemm(300, 300, 500);
  Runner r;
  auto c = run(r, fixture(), g);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  EXPECT_EQ(wrong_elements(g, c), 0u) << "M=" << g.M << " N=" << g.N << " K=" << g.K;
}

TEST(EmuPtxGemmSm90a, AdversarialSchedulerOnASmallShape) {
  Gemm g = random_gemm(140, 70, 200);
  eptx::PtxEmuOptions o;
  o.scheduler = eptx::Scheduler::adversarial;
  Runner r(o);
  auto c = run(r, fixture(), g);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  EXPECT_EQ(wrong_elements(g, c), 0u) << "M=" << g.M << " N=" << g.N << " K=" << g.K;
}

TEST(EmuPtxGemmSm90a, WgmmaWaitGroupRemovedIsAsyncPendingAndWrongData) {
  Gemm g = random_gemm(200, 150, 200);
  Runner r;
  auto c = run(r, mutate([](const std::string& l) { return starts(l, "wgmma.wait_group"); }), g);
  EXPECT_TRUE(r.has(HazardKind::async_pending)) << r.all_reports();
  EXPECT_GT(wrong_elements(g, c), size_t(g.M) * g.N / 2);
}

TEST(EmuPtxGemmSm90a, WrongExpectTxIsReported) {
  Gemm g = random_gemm(200, 150, 200);
  Runner r;
  run(r, mutate([](const std::string&) { return false; }, "mov.u32 \t%r168, 32768;", "mov.u32 \t%r168, 32784;"),
      g);
  EXPECT_TRUE(r.has(HazardKind::deadlock) || r.has(HazardKind::mbarrier)) << r.all_reports();
}

TEST(EmuPtxGemmSm90a, ConsumerMbarrierWaitRemovedIsAsyncPending) {
  // The consumers' wait on full[s] (the try_wait before wgmma.fence, and its loop's branch back) dropped, so
  // they read the stage whether or not its TMA data has landed. (Dropping only the branch back changes
  // nothing here: the emulator's try_wait waits until the phase completes, a legal time limit.) Under the lockstep scheduler the producer
  // warp runs first and the data has always landed by then; the adversarial one runs the last warps (the
  // consumers) first, as a GPU may.
  Gemm g = random_gemm(140, 70, 200);
  eptx::PtxEmuOptions o;
  o.scheduler = eptx::Scheduler::adversarial;
  Runner r(o);
  std::string out = mutate([](const std::string& l) {
    return (l.find("@%p4 bra") != std::string::npos && l.find("$L__BB0_6;") != std::string::npos) ||
           l.find("mbarrier.try_wait.parity.shared::cta.b64 p, [%r15], %r12;") != std::string::npos;
  });
  auto c = run(r, out, g);
  EXPECT_TRUE(r.has(HazardKind::async_pending) || r.has(HazardKind::race) || r.has(HazardKind::uninitialized))
      << r.all_reports();
  EXPECT_GT(wrong_elements(g, c), 0u);
}

} // namespace

// The nvcc sm_80 GEMM fixture (cp.async + ldmatrix + mma.sync, tests/fixtures/ptx/cuda/gemm_bf16_sm80) on the
// emulator against the float64 reference, on random ragged shapes, under both schedulers; and its mutants:
// the cp.async.wait_group removed (async_pending, wrong data), either bar.sync removed (race).
#include <cmath>
#include <fstream>
#include <sstream>

#include "../fixtures/ptx/cuda/references.h"
#include "emu_ptx_test.h"

using namespace emu_ptx_test;

namespace {

std::string gemm_text() {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/gemm_bf16_sm80.sm_80.ptx");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Blanks the first line holding `what` (the line numbers stay); returns its number.
long blank_line(std::string& text, const std::string& what) {
  size_t at = text.find(what);
  EXPECT_NE(at, std::string::npos) << what;
  size_t bol = text.rfind('\n', at) + 1, eol = text.find('\n', at);
  text.replace(bol, eol - bol, std::string(eol - bol, ' '));
  return std::count(text.begin(), text.begin() + long(bol), '\n') + 1;
}

struct GemmRun {
  int M, N, K;
  std::vector<float> C;
  std::vector<double> ref, mag;
  std::vector<HazardReport> reports;
  size_t wrong = 0; // elements outside the tolerance
};

GemmRun run_gemm(const std::string& text, eptx::Scheduler sched, int M, int N, int K) {
  GemmRun g{M, N, K, {}, {}, {}, {}, 0};
  const int lda = (K + 7) / 8 * 8 + 8 * int(rand_u32() % 2), ldb = (N + 7) / 8 * 8 + 8 * int(rand_u32() % 2);
  const int ldc = N + int(rand_u32() % 3);
  std::vector<uint16_t> A(size_t(M) * lda), B(size_t(K) * ldb);
  for (auto& x : A)
    x = isatune::fixtures::float_to_bf16(rand_float(-2, 2));
  for (auto& x : B)
    x = isatune::fixtures::float_to_bf16(rand_float(-2, 2));
  eptx::PtxEmuOptions o;
  o.target = "sm_80";
  o.scheduler = sched;
  Runner r(o);
  r.load(text);
  const float poison = std::nanf("");
  uint64_t pa = r.upload(A), pb = r.upload(B), pc = r.upload(std::vector<float>(size_t(M) * ldc, poison));
  r.launch("gemm_bf16_sm80", {uint32_t(N + 63) / 64, uint32_t(M + 63) / 64, 1}, {128, 1, 1},
           Runner::Args().add(pa).add(pb).add(pc).add(M).add(N).add(K).add(lda).add(ldb).add(ldc));
  auto C = r.download<float>(pc, size_t(M) * ldc);
  g.reports = r.reports();
  g.ref = isatune::fixtures::gemm_bf16_reference(A.data(), B.data(), M, N, K, lda, ldb);
  g.C.resize(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double mag = 0;
      for (int k = 0; k < K; ++k)
        mag += std::fabs(isatune::fixtures::bf16_to_double(A[size_t(m) * lda + k]) *
                         isatune::fixtures::bf16_to_double(B[size_t(k) * ldb + n]));
      const size_t i = size_t(m) * N + n;
      g.C[i] = C[size_t(m) * ldc + n];
      // f32 accumulation: one rounding per mma.k16 step, K/16 of them.
      const double tol = (K / 16 + 2) * std::ldexp(1.0, -23) * mag;
      if (!(std::fabs(g.C[i] - g.ref[i]) <= tol))
        ++g.wrong;
    }
  return g;
}

int pick_size() {
  const int sizes[] = {1, 17, 63, 64, 65, 130};
  return sizes[rand_u32() % 6];
}

TEST(EmuPtxGemmSm80, MatchesFloat64ReferenceOnRaggedShapes) {
  const std::string text = gemm_text();
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial})
    for (int round = 0; round < 3; ++round) {
      // One shape per round with K > 64 (the stage ring wraps); the others random from the README's list.
      const int M = pick_size(), N = pick_size(), K = round == 0 ? 65 + int(rand_u32() % 80) : pick_size();
      SCOPED_TRACE("M " + std::to_string(M) + " N " + std::to_string(N) + " K " + std::to_string(K));
      GemmRun g = run_gemm(text, sched, M, N, K);
      EXPECT_TRUE(g.reports.empty()) << g.reports.front().str();
      EXPECT_EQ(g.wrong, 0u);
      for (size_t i = 0; i < g.C.size() && i < 4096; ++i)
        ASSERT_NEAR(g.C[i], g.ref[i], 1e-3 * (1 + std::fabs(g.ref[i]))) << "element " << i;
    }
}

TEST(EmuPtxGemmSm80, WaitGroupRemovedIsAsyncPendingAndWrongData) {
  std::string text = gemm_text();
  const long wait = blank_line(text, "cp.async.wait_group 1;");
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
    GemmRun g = run_gemm(text, sched, 64 + int(rand_u32() % 40), 17 + int(rand_u32() % 60), 65);
    bool reading = false, never = false;
    for (auto& h : g.reports) {
      if (h.kind != HazardKind::async_pending)
        continue;
      reading |= h.disassembly.find("ldmatrix") != std::string::npos;
      never |= h.message.find("never waited") != std::string::npos;
    }
    EXPECT_TRUE(reading) << "wait_group at line " << wait << " removed: no report at an ldmatrix";
    EXPECT_TRUE(never);
    EXPECT_GT(g.wrong, g.C.size() / 2) << "the data landed anyway";
  }
}

TEST(EmuPtxGemmSm80, EachBarSyncRemovedIsARace) {
  const std::string text = gemm_text();
  // The kernel's two bar.sync: right after cp.async.wait_group (other threads' copies land before it: without
  // it the ldmatrix reads race with them), and at the end of the k loop (the stage is refilled by the next
  // iterations' copies: without it they land over bytes other threads still read).
  const size_t wait = text.find("cp.async.wait_group 1;");
  const size_t first = text.find("bar.sync", wait);
  ASSERT_LT(first - wait, 64u);
  const size_t second = text.find("bar.sync", first + 1);
  ASSERT_NE(second, std::string::npos);
  ASSERT_EQ(text.find("bar.sync", second + 1), std::string::npos);
  for (size_t at : {first, second}) {
    std::string mutant = text;
    const long line = blank_line(mutant, text.substr(at, text.find('\n', at) - at));
    for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial}) {
      // K > 64: three k tiles, so a stage is refilled after it was read.
      GemmRun g = run_gemm(mutant, sched, 64, 64, 65 + int(rand_u32() % 60));
      bool race = false;
      for (auto& h : g.reports)
        race |= h.kind == HazardKind::race;
      EXPECT_TRUE(race) << "bar.sync at line " << line << " removed, not reported";
    }
  }
}

} // namespace

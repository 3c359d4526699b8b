// AMD's own production kernels (AITER's hand-written MI300X/MI355X code objects, tests/fixtures/aiter) on the
// emulator, each against a float64 or bit-exact CPU reference on fresh random inputs, with ragged sizes that
// put tails through the buffer range check and padded layouts that catch stray reads and writes. Calling
// conventions: shared/notes/aiter.md section 3 (16-byte argument slots; grids). Every hazard report must be
// listed in tests/fixtures/aiter/allowances.txt (kernel, instruction address, kind, reason).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "isatune/codeobj/reader.h"
#include "isatune/emu/emulator.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

const std::string kDir = std::string(ISATUNE_FIXTURES_DIR) + "/aiter/";

// AITER's KernelArgs: packed structs where every field is padded to 16 bytes (aiter.md 3.0).
struct AiterArgs {
  std::vector<uint8_t> bytes;
  void slot(const void* p, size_t n) {
    size_t at = bytes.size();
    bytes.resize(at + 16, 0);
    std::memcpy(bytes.data() + at, p, n);
  }
  void ptr(uint64_t p) { slot(&p, 8); }
  void u32(uint32_t v) { slot(&v, 4); }
};

struct Allowance {
  std::string fixture, kind, reason;
  uint64_t address = 0;
};

std::vector<Allowance> allowances() {
  std::vector<Allowance> out;
  std::ifstream f(kDir + "allowances.txt");
  EXPECT_TRUE(f) << "allowances.txt";
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    Allowance a;
    std::string addr;
    ss >> a.fixture >> addr >> a.kind;
    std::getline(ss, a.reason);
    a.address = std::stoull(addr, nullptr, 16);
    EXPECT_NE(a.reason.find_first_not_of(" \t"), std::string::npos) << "allowance without a reason: " << line;
    out.push_back(a);
  }
  return out;
}

// Reports that no allowance explains, one per line (empty: all explained).
std::string unexplained(const EmuDevice& dev, const std::string& fixture) {
  static const std::vector<Allowance> all = allowances();
  std::string s;
  for (const auto& r : dev.reports()) {
    bool ok = std::any_of(all.begin(), all.end(), [&](const Allowance& a) {
      return a.fixture == fixture && a.address == r.address && a.kind == to_string(r.kind);
    });
    if (!ok)
      s += r.str() + "\n";
  }
  return s;
}

CodeObject fixture(const std::string& name) {
  return codeobj::read_code_object_file(kDir + name);
}

template <class T> uint64_t upload(EmuDevice& dev, const std::vector<T>& v) {
  uint64_t p = dev.alloc(v.size() * sizeof(T));
  dev.copy_to_device(p, v.data(), v.size() * sizeof(T));
  return p;
}
template <class T> std::vector<T> download(EmuDevice& dev, uint64_t p, size_t n) {
  std::vector<T> v(n);
  dev.copy_to_host(v.data(), p, n * sizeof(T));
  return v;
}

uint16_t bf16_rne(float f) { // finite inputs: round to nearest even on the high half
  uint32_t u = std::bit_cast<uint32_t>(f);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
float bf16_value(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

// A finite, normal float of either sign with magnitude about 2^-20 .. 2^20.
float random_normal_float(std::mt19937& rng) {
  uint32_t sign = rng() & 1, exponent = 107 + rng() % 40, mantissa = rng() & 0x7fffff;
  return std::bit_cast<float>(sign << 31 | exponent << 23 | mantissa);
}

class AiterKernel : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override { ISATUNE_SKIP_IF_LLVM_LACKS(GetParam()); }
  std::string arch() const { return GetParam(); }
};

} // namespace

// fmha backward "odo": D[b,h,s] = sum_d O[b,h,s,d] dO[b,h,s,d] (aiter.md 3.3), bf16 in, fp32 out, hd128
// kernel with 64 < head_dim <= 128. Layout BSHD with padded rows (the padding holds random values), D with
// padded heads (sentinels); seqlen not a multiple of the 128-row tile.
TEST_P(AiterKernel, FmhaBwdOdoBf16) {
  const std::string name = arch() + "/bwd_hd128_odo_bf16.co";
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t B = 1 + rng() % 2, H = 1 + rng() % 3, S = 129 + rng() % 200, D = 72 + 8 * (rng() % 8);
  const uint32_t Dp = D + 8 * (1 + rng() % 3), Sp = S + 5;
  std::uniform_real_distribution<float> u(-2, 2);
  const size_t n = size_t(B) * S * H * Dp;
  std::vector<uint16_t> O(n), dO(n);
  for (size_t i = 0; i < n; ++i)
    O[i] = bf16_rne(u(rng)), dO[i] = bf16_rne(u(rng));
  const float sentinel = -12345.5f;
  std::vector<float> Dout(size_t(B) * H * Sp, sentinel);

  EmuDevice dev({.target = arch()});
  uint64_t po = upload(dev, O), pdo = upload(dev, dO), pd = upload(dev, Dout);
  auto code = fixture(name);
  auto fn = dev.load(code)->function(code.kernels.at(0).name);
  const uint32_t seqs = H * Dp * 2, hs = Dp * 2, bas = S * seqs;
  AiterArgs a;
  a.ptr(po), a.ptr(pdo), a.ptr(pd);
  for (int t = 0; t < 2; ++t)
    a.u32(hs), a.u32(bas), a.u32(seqs);       // O, dO
  a.u32(Sp * 4), a.u32(H * Sp * 4), a.u32(4); // D: head, batch, row (the kernel assumes 4)
  a.u32(S), a.u32(D), a.ptr(0), a.ptr(0);
  dev.launch(*fn, {{(S + 127) / 128, H, B}, {256, 1, 1}}, a.bytes);
  auto got = download<float>(dev, pd, Dout.size());

  int bad = 0;
  double worst = 0;
  for (uint32_t b = 0; b < B; ++b)
    for (uint32_t h = 0; h < H; ++h)
      for (uint32_t s = 0; s < Sp; ++s) {
        float g = got[(size_t(b) * H + h) * Sp + s];
        if (s >= S) { // tail rows: the range check drops their stores
          if (std::bit_cast<uint32_t>(g) != std::bit_cast<uint32_t>(sentinel) && bad++ < 5)
            ADD_FAILURE() << "padding written at b" << b << " h" << h << " s" << s;
          continue;
        }
        double ref = 0, mag = 0;
        for (uint32_t d = 0; d < D; ++d) {
          size_t i = ((size_t(b) * S + s) * H + h) * Dp + d;
          double t = double(bf16_value(O[i])) * bf16_value(dO[i]);
          ref += t, mag += std::fabs(t);
        }
        double err = std::fabs(g - ref) / std::max(mag, 1e-30);
        worst = std::max(worst, err);
        if (err > 1e-5 && bad++ < 5)
          ADD_FAILURE() << "D[" << b << "," << h << "," << s << "] " << g << " want " << ref;
      }
  EXPECT_EQ(bad, 0) << name << " B" << B << " H" << H << " S" << S << " D" << D << " Dp" << Dp << " seed "
                    << seed << " worst " << worst;
  EXPECT_EQ(unexplained(dev, name), "") << name;
}

// fmha backward "dq_convert": fp32 dQ accumulator -> bf16, bit-exact (gfx942: integer RTNE; gfx950:
// v_cvt_pk_bf16_f32, RNE). Output BSHD with padded rows (sentinels), seqlen not a multiple of the 64-row
// tile.
TEST_P(AiterKernel, FmhaBwdDqConvertBf16) {
  const std::string name =
      arch() + (arch() == "gfx942" ? "/bwd_hd128_dq_convert_bf16_rtne.co" : "/bwd_hd128_dq_convert_bf16.co");
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t B = 1 + rng() % 2, H = 1 + rng() % 3, S = 65 + rng() % 150, D = 128;
  std::vector<float> acc(size_t(B) * H * S * D);
  for (auto& x : acc)
    x = random_normal_float(rng);
  const uint32_t row = H * D + 16 * (1 + rng() % 3); // dq row stride in elements, padded
  const uint16_t sentinel = 0xabcd;
  std::vector<uint16_t> dq(size_t(B) * S * row, sentinel);

  EmuDevice dev({.target = arch()});
  uint64_t pacc = upload(dev, acc), pdq = upload(dev, dq);
  auto code = fixture(name);
  auto fn = dev.load(code)->function(code.kernels.at(0).name);
  AiterArgs a;
  a.ptr(pacc), a.ptr(pdq);
  a.u32(S * D * 4), a.u32(B > 1 ? H * S * D * 4 : 0), a.u32(D * 4); // dq_acc: head, batch, row
  a.u32(D * 2), a.u32(S * row * 2), a.u32(row * 2);                 // dq: head, batch, row
  a.u32(S), a.u32(D), a.ptr(0), a.ptr(0);
  dev.launch(*fn, {{(S + 63) / 64, H, B}, {256, 1, 1}}, a.bytes);
  auto got = download<uint16_t>(dev, pdq, dq.size());

  int bad = 0;
  for (uint32_t b = 0; b < B; ++b)
    for (uint32_t s = 0; s < S; ++s)
      for (uint32_t c = 0; c < row; ++c) {
        uint16_t g = got[(size_t(b) * S + s) * row + c], want = sentinel;
        if (c < H * D)
          want = bf16_rne(acc[((size_t(b) * H + c / D) * S + s) * D + c % D]);
        if (g != want && bad++ < 5)
          ADD_FAILURE() << "dq[b" << b << " s" << s << " col " << c << "] 0x" << std::hex << g << " want 0x"
                        << want;
      }
  EXPECT_EQ(bad, 0) << name << " B" << B << " H" << H << " S" << S << " seed " << seed;
  EXPECT_EQ(unexplained(dev, name), "") << name;
}

// topksoftmax_4x128x4: per token, softmax over 128 experts then the 4 largest, descending, optionally
// renormalised (aiter.md 3.1). Strided outputs (out_stride = (topk + 10) * 4 bytes, as AITER's own test), the
// token count not a multiple of the 4 rows per workgroup.
TEST_P(AiterKernel, TopkSoftmax) {
  const std::string name = arch() + "/topksoftmax_4x128x4.co";
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t E = 128, K = 4, stride = K + 10;
  for (uint32_t renorm : {0u, 1u}) {
    const uint32_t T = 5 + rng() % 40 + (rng() % 4 == 0 ? 0 : 0);
    std::uniform_real_distribution<float> u(-4, 4);
    std::vector<float> x(size_t(T) * E);
    for (auto& v : x)
      v = u(rng);
    const int32_t isent = -7;
    const float wsent = -3.25f;
    std::vector<int32_t> ids(size_t(T) * stride, isent);
    std::vector<float> ws(size_t(T) * stride, wsent);

    EmuDevice dev({.target = arch()});
    uint64_t pt = upload(dev, ids), pw = upload(dev, ws), pa = upload(dev, x);
    auto code = fixture(name);
    auto fn = dev.load(code)->function(code.kernels.at(0).name);
    AiterArgs a;
    a.ptr(pt), a.ptr(pw), a.ptr(pa);
    a.u32(T), a.u32(E), a.u32(K), a.u32(renorm), a.u32(stride * 4);
    dev.launch(*fn, {{(T + 3) / 4, 1, 1}, {256, 1, 1}}, a.bytes);
    auto gid = download<int32_t>(dev, pt, ids.size());
    auto gw = download<float>(dev, pw, ws.size());

    int bad = 0;
    for (uint32_t t = 0; t < T; ++t) {
      std::vector<double> p(E);
      double mx = -1e300, sum = 0;
      for (uint32_t e = 0; e < E; ++e)
        mx = std::max(mx, double(x[size_t(t) * E + e]));
      for (uint32_t e = 0; e < E; ++e)
        sum += p[e] = std::exp(double(x[size_t(t) * E + e]) - mx);
      for (auto& v : p)
        v /= sum;
      std::vector<int> order(E);
      for (uint32_t e = 0; e < E; ++e)
        order[e] = int(e);
      std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return p[size_t(i)] > p[size_t(j)]; });
      double top = 0;
      for (uint32_t k = 0; k < K; ++k)
        top += p[size_t(order[k])];
      for (uint32_t c = 0; c < stride; ++c) {
        int32_t gi = gid[size_t(t) * stride + c];
        float g = gw[size_t(t) * stride + c];
        if (c >= K) {
          if ((gi != isent || g != wsent) && bad++ < 5)
            ADD_FAILURE() << "padding written at token " << t << " col " << c;
          continue;
        }
        double want = p[size_t(order[c])] / (renorm ? top : 1.0);
        // A different id is only acceptable for a near-tie (fp32 exp and sum against float64).
        bool id_ok = gi == order[c] ||
                     (gi >= 0 && gi < int(E) && std::fabs(p[size_t(gi)] - p[size_t(order[c])]) < 1e-6 * want);
        if ((!id_ok || std::fabs(g - want) > 1e-5 * want + 1e-9) && bad++ < 5)
          ADD_FAILURE() << "token " << t << " k" << c << ": id " << gi << " w " << g << ", want id "
                        << order[c] << " w " << want;
      }
    }
    EXPECT_EQ(bad, 0) << name << " T" << T << " renorm " << renorm << " seed " << seed;
    EXPECT_EQ(unexplained(dev, name), "") << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AiterKernel, ::testing::Values("gfx942", "gfx950"));

// bf16 GEMM "a16w16" bf16gemm_fp32bf16_tn_32x64_pf3_splitk with splitk = 1 (aiter.md 3.2): D = A B^T, A [M,K]
// and B [N,K] bf16 K-contiguous, D [M,N] fp32 or bf16. M ragged (the tail rows go through the range check), N
// a multiple of 64 and K of 64, as the host requires. Runs LDS-DMA (buffer_load_dword ... lds) and MFMA on
// AGPRs.
class AiterGemm : public ::testing::TestWithParam<std::tuple<const char*, bool>> {
protected:
  void SetUp() override { ISATUNE_SKIP_IF_LLVM_LACKS(std::get<0>(GetParam())); }
};

TEST_P(AiterGemm, Bf16GemmSplitK1) {
  const std::string arch = std::get<0>(GetParam());
  const bool out_bf16 = std::get<1>(GetParam());
  const std::string name = arch + "/bf16gemm_fp32bf16_tn_32x64_pf3_splitk.co";
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t M = 1 + rng() % 100, N = 64 * (1 + rng() % 3), K = 64 * (3 + rng() % 6);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<uint16_t> A(size_t(M) * K), B(size_t(N) * K);
  for (auto& x : A)
    x = bf16_rne(u(rng));
  for (auto& x : B)
    x = bf16_rne(u(rng));
  const size_t esize = out_bf16 ? 2 : 4;
  std::vector<uint8_t> D(size_t(M) * N * esize, 0x7f);

  EmuDevice dev({.target = arch});
  uint64_t pa = upload(dev, A), pb = upload(dev, B), pd = upload(dev, D);
  auto code = fixture(name);
  auto fn = dev.load(code)->function(code.kernels.at(0).name);
  AiterArgs a;
  const float one = 1.0f, zero = 0.0f;
  a.ptr(pd), a.ptr(0), a.ptr(pa), a.ptr(pb);
  a.slot(&one, 4), a.slot(&zero, 4);
  a.u32(uint32_t(N * esize)), a.u32(0), a.u32(uint32_t(N * esize)), a.u32(0); // D0 D1 C0 C1
  a.u32(K * 2), a.u32(0), a.u32(K * 2), a.u32(0);                             // A0 A1 B0 B1
  a.u32(M), a.u32(N), a.u32(K), a.u32(1), a.u32(out_bf16 ? 1 : 0);
  a.ptr(0), a.u32(0), a.ptr(0); // bias, add_bias, semaphore
  dev.launch(*fn, {{N / 64, (M + 31) / 32, 1}, {256, 1, 1}}, a.bytes);
  auto got = download<uint8_t>(dev, pd, D.size());

  int bad = 0;
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (uint32_t k = 0; k < K; ++k) {
        double t = double(bf16_value(A[size_t(i) * K + k])) * bf16_value(B[size_t(j) * K + k]);
        ref += t, mag += std::fabs(t);
      }
      size_t at = size_t(i) * N + j;
      bool ok;
      double g;
      if (out_bf16) {
        uint16_t h;
        std::memcpy(&h, got.data() + at * 2, 2);
        g = bf16_value(h);
        ok = std::fabs(g - ref) <= std::ldexp(std::fabs(ref), -7) + 1e-5 * mag; // within one bf16 ulp
      } else {
        float f;
        std::memcpy(&f, got.data() + at * 4, 4);
        g = f;
        ok = std::fabs(g - ref) <= 1e-5 * mag + 1e-30;
      }
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "D[" << i << "," << j << "] " << g << " want " << ref;
    }
  EXPECT_EQ(bad, 0) << name << " M" << M << " N" << N << " K" << K << " bf16 out " << out_bf16 << " seed "
                    << seed;
  EXPECT_EQ(unexplained(dev, name), "") << name;
}

INSTANTIATE_TEST_SUITE_P(Targets, AiterGemm,
                         ::testing::Combine(::testing::Values("gfx942", "gfx950"), ::testing::Bool()));

// The same GEMM with split-K 2..4: each z-slice adds its partial sums into the zeroed output with
// global_atomic_add_f32 (fp32 out) or global_atomic_pk_add_bf16 (bf16 out), from workgroups that run on
// several host threads at once.
TEST_P(AiterGemm, Bf16GemmSplitKAtomics) {
  const std::string arch = std::get<0>(GetParam());
  const bool out_bf16 = std::get<1>(GetParam());
  const std::string name = arch + "/bf16gemm_fp32bf16_tn_32x64_pf3_splitk.co";
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t split = 2 + rng() % 3;
  const uint32_t M = 1 + rng() % 70, N = 64 * (1 + rng() % 2), K = 64 * split * (1 + rng() % 3);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<uint16_t> A(size_t(M) * K), B(size_t(N) * K);
  for (auto& x : A)
    x = bf16_rne(u(rng));
  for (auto& x : B)
    x = bf16_rne(u(rng));
  const size_t esize = out_bf16 ? 2 : 4;
  std::vector<uint8_t> D(size_t(M) * N * esize, 0); // split-K accumulates: the output starts at zero

  EmuDevice dev({.target = arch, .threads = 4});
  uint64_t pa = upload(dev, A), pb = upload(dev, B), pd = upload(dev, D);
  auto code = fixture(name);
  auto fn = dev.load(code)->function(code.kernels.at(0).name);
  AiterArgs a;
  const float one = 1.0f, zero = 0.0f;
  a.ptr(pd), a.ptr(0), a.ptr(pa), a.ptr(pb);
  a.slot(&one, 4), a.slot(&zero, 4);
  a.u32(uint32_t(N * esize)), a.u32(0), a.u32(uint32_t(N * esize)), a.u32(0);
  a.u32(K * 2), a.u32(0), a.u32(K * 2), a.u32(0);
  a.u32(M), a.u32(N), a.u32(K), a.u32(split), a.u32(out_bf16 ? 1 : 0);
  a.ptr(0), a.u32(0), a.ptr(0);
  dev.launch(*fn, {{N / 64, (M + 31) / 32, split}, {256, 1, 1}}, a.bytes);
  auto got = download<uint8_t>(dev, pd, D.size());

  int bad = 0;
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (uint32_t k = 0; k < K; ++k) {
        double t = double(bf16_value(A[size_t(i) * K + k])) * bf16_value(B[size_t(j) * K + k]);
        ref += t, mag += std::fabs(t);
      }
      size_t at = size_t(i) * N + j;
      double g;
      bool ok;
      if (out_bf16) { // each of the `split` partial sums and additions rounds to bf16
        uint16_t h;
        std::memcpy(&h, got.data() + at * 2, 2);
        g = bf16_value(h);
        ok = std::fabs(g - ref) <= split * std::ldexp(mag, -8) + 1e-5 * mag;
      } else {
        float f;
        std::memcpy(&f, got.data() + at * 4, 4);
        g = f;
        ok = std::fabs(g - ref) <= 1e-5 * mag + 1e-30;
      }
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "D[" << i << "," << j << "] " << g << " want " << ref;
    }
  EXPECT_EQ(bad, 0) << name << " M" << M << " N" << N << " K" << K << " split " << split << " bf16 out "
                    << out_bf16 << " seed " << seed;
  EXPECT_EQ(unexplained(dev, name), "") << name;
}

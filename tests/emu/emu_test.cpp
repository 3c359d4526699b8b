// The CDNA emulator against CPU references on fresh random inputs, seeded mutations that must be reported,
// and malformed launches.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/" + name);
  EXPECT_TRUE(f) << name;
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}
std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << "mutation site '" << from << "' not found";
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

CodeObject assemble(const std::string& text, const std::string& target) {
  return toolchain::make_assembler("llvm")->assemble(text, {target, "test.s"}).code;
}

uint32_t fresh_seed() { return std::random_device{}(); }

struct Args {
  std::vector<uint8_t> bytes;
  void ptr(uint64_t p) { put(&p, 8); }
  void u32(uint32_t v) { put(&v, 4); }
  void put(const void* p, size_t n) {
    while (bytes.size() % n) bytes.push_back(0);
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

template <class T>
uint64_t upload(EmuDevice& dev, const std::vector<T>& v) {
  uint64_t p = dev.alloc(v.size() * sizeof(T));
  dev.copy_to_device(p, v.data(), v.size() * sizeof(T));
  return p;
}
template <class T>
std::vector<T> download(EmuDevice& dev, uint64_t p, size_t n) {
  std::vector<T> v(n);
  dev.copy_to_host(v.data(), p, n * sizeof(T));
  return v;
}

std::string all_reports(const EmuDevice& dev) {
  std::string s;
  for (const auto& r : dev.reports()) s += r.str() + "\n";
  return s;
}

bool has_report(const EmuDevice& dev, HazardKind kind) {
  for (const auto& r : dev.reports())
    if (r.kind == kind) return true;
  return false;
}

uint16_t to_half(float f) {
  // f is exactly representable in the tests (small integers / 8 or 16-bit mantissas)
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0) return uint16_t(sign);
  return uint16_t(sign | ((exp - 112) << 10) | (man >> 13));
}
uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return uint16_t(x >> 16);
}

// Runs vector_add for n elements; returns mismatches.
int run_vadd(EmuDevice& dev, const CodeObject& code, uint32_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-100, 100);
  std::vector<float> a(n), b(n), c(n + 64, 12345.0f);
  for (uint32_t i = 0; i < n; ++i) a[i] = u(rng), b[i] = u(rng);
  uint64_t pa = upload(dev, a), pb = upload(dev, b), pc = upload(dev, c);
  auto mod = dev.load(code);
  auto fn = mod->function("vadd");
  Args args;
  args.ptr(pa), args.ptr(pb), args.ptr(pc), args.u32(n);
  dev.launch(*fn, {{(n + 255) / 256, 1, 1}, {256, 1, 1}}, args.bytes);
  auto out = download<float>(dev, pc, n + 64);
  int bad = 0;
  for (uint32_t i = 0; i < n; ++i) bad += out[i] != a[i] + b[i];
  for (uint32_t i = n; i < n + 64; ++i) bad += out[i] != 12345.0f; // past n untouched
  dev.free(pa), dev.free(pb), dev.free(pc);
  return bad;
}

} // namespace

TEST(Emu, VectorAddRaggedNoReports) {
  uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  uint32_t n = 1000 + rng() % 3000;
  if (n % 256 == 0) ++n;
  EmuDevice dev({.target = "gfx942"});
  auto code = assemble(read_fixture("vector_add.s"), "gfx942");
  EXPECT_EQ(run_vadd(dev, code, n, seed), 0) << "seed " << seed << " n " << n;
  EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
  EXPECT_GT(dev.last_launch().lane_instructions, n);
  EXPECT_GT(dev.last_launch().estimated_ms, 0);
  EXPECT_TRUE(dev.properties().emulated);
}

// Workgroups on four host threads that race through global memory, as a guest may on a GPU: vadd with c = a +
// 256 elements, so workgroup w writes what workgroup w + 1 reads. Each result is a[i] + b[i] with a[i] either as
// uploaded or as workgroup w - 1 wrote it. Under ThreadSanitizer (scripts/sanitize.sh thread) this is the
// regression test for the emulator's global loads and stores going through relaxed host atomics
// (emu/common/guest_access.h): a guest race must not be a data race in the emulator.
TEST(Emu, RacingWorkgroupsOnHostThreads) {
  uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  const uint32_t n = 256 * (16 + rng() % 16);
  std::uniform_real_distribution<float> u(-100, 100);
  std::vector<float> a(n + 256), b(n);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  EmuDevice dev({.target = "gfx942", .threads = 4});
  auto code = assemble(read_fixture("vector_add.s"), "gfx942");
  uint64_t pa = upload(dev, a), pb = upload(dev, b);
  auto fn = dev.load(code)->function("vadd");
  Args args;
  args.ptr(pa), args.ptr(pb), args.ptr(pa + 256 * 4), args.u32(n);
  dev.launch(*fn, {{n / 256, 1, 1}, {256, 1, 1}}, args.bytes);
  auto out = download<float>(dev, pa, n + 256);
  int bad = 0;
  for (uint32_t i = 0; i < n; ++i)
    bad += !(out[i + 256] == a[i] + b[i] || (i >= 256 && out[i + 256] == out[i] + b[i]));
  for (uint32_t i = 0; i < 256; ++i) bad += out[i] != a[i]; // never written
  EXPECT_EQ(bad, 0) << "seed " << seed << " n " << n;
  EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
}

TEST(Emu, LdsReduceAndDppReduce) {
  uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-50, 50);
  for (const char* fixture : {"lds_reduce.s", "emu/dpp_reduce.s"}) {
    uint32_t n = 700 + rng() % 2000;
    std::string text = replace_all(read_fixture(fixture), "TARGET", "gfx942");
    std::string name = std::string(fixture) == "lds_reduce.s" ? "lds_reduce" : "dpp_reduce";
    EmuDevice dev({.target = "gfx942"});
    auto code = assemble(text, "gfx942");
    std::vector<float> in(n);
    for (auto& x : in) x = float(u(rng)); // integers: every summation order is exact
    uint32_t groups = (n + 255) / 256;
    std::vector<float> out(groups, -1.0f);
    uint64_t pin = upload(dev, in), pout = upload(dev, out);
    auto fn = dev.load(code)->function(name);
    Args args;
    args.ptr(pin), args.ptr(pout), args.u32(n);
    dev.launch(*fn, {{groups, 1, 1}, {256, 1, 1}}, args.bytes);
    auto got = download<float>(dev, pout, groups);
    for (uint32_t g = 0; g < groups; ++g) {
      float want = 0;
      for (uint32_t i = g * 256; i < std::min(n, g * 256 + 256); ++i) want += in[i];
      EXPECT_EQ(got[g], want) << fixture << " group " << g << " seed " << seed;
    }
    EXPECT_TRUE(dev.reports().empty()) << fixture << "\n" << all_reports(dev);
  }
}

namespace {
int run_loop_sum(EmuDevice& dev, const std::string& text, uint32_t seed) {
  std::mt19937 rng(seed);
  uint32_t cols = 100 + rng() % 300, rows = 2 + rng() % 9;
  std::uniform_int_distribution<int> u(-1000, 1000);
  std::vector<float> a(size_t(rows) * cols), out(cols, -7.0f);
  for (auto& x : a) x = float(u(rng));
  uint64_t pa = upload(dev, a), po = upload(dev, out);
  auto fn = dev.load(assemble(text, "gfx942"))->function("loop_sum");
  Args args;
  args.ptr(pa), args.ptr(po), args.u32(cols), args.u32(rows);
  dev.launch(*fn, {{(cols + 63) / 64, 1, 1}, {64, 1, 1}}, args.bytes);
  auto got = download<float>(dev, po, cols);
  int bad = 0;
  for (uint32_t c = 0; c < cols; ++c) {
    float want = 0;
    for (uint32_t r = 0; r < rows; ++r) want += a[size_t(r) * cols + c];
    bad += got[c] != want;
  }
  return bad;
}
} // namespace

TEST(Emu, DoubleBufferedLoop) {
  uint32_t seed = fresh_seed();
  EmuDevice dev({.target = "gfx942"});
  EXPECT_EQ(run_loop_sum(dev, replace_all(read_fixture("emu/loop_sum.s"), "TARGET", "gfx942"), seed), 0)
      << "seed " << seed;
  EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
}

namespace {
// D = A * B for an MxK by KxN tile; A and Bt row-major in 16-bit floats.
void run_mfma(const std::string& target, const std::string& fixture, const std::string& kernel, int m, int k,
              bool bf16, uint32_t seed, const std::string& mutate_from = "", const std::string& mutate_to = "",
              HazardKind expect = HazardKind::wait_states) {
  std::string text = replace_all(read_fixture(fixture), "gfx942", target);
  text = replace_all(text, "TARGET", target);
  if (!mutate_from.empty()) text = replace_once(text, mutate_from, mutate_to);
  EmuDevice dev({.target = target});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-8, 8);
  std::vector<float> A(size_t(m) * k), B(size_t(k) * m);
  std::vector<uint16_t> a16(A.size()), bt16(B.size());
  for (auto& x : A) x = float(u(rng)) / 4;
  for (auto& x : B) x = float(u(rng)) / 4;
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) a16[size_t(i) * k + kk] = bf16 ? to_bf16(A[size_t(i) * k + kk]) : to_half(A[size_t(i) * k + kk]);
  for (int j = 0; j < m; ++j)
    for (int kk = 0; kk < k; ++kk)
      bt16[size_t(j) * k + kk] = bf16 ? to_bf16(B[size_t(kk) * m + j]) : to_half(B[size_t(kk) * m + j]);
  std::vector<float> d(size_t(m) * m, -1.0f);
  uint64_t pa = upload(dev, a16), pb = upload(dev, bt16), pd = upload(dev, d);
  auto fn = dev.load(assemble(text, target))->function(kernel);
  Args args;
  args.ptr(pa), args.ptr(pb), args.ptr(pd);
  dev.launch(*fn, {{1, 1, 1}, {64, 1, 1}}, args.bytes);
  auto got = download<float>(dev, pd, d.size());
  int bad = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      float want = 0;
      for (int kk = 0; kk < k; ++kk) want += A[size_t(i) * k + kk] * B[size_t(kk) * m + j];
      bad += got[size_t(i) * m + j] != want;
    }
  EXPECT_EQ(bad, 0) << target << " " << kernel << " seed " << seed;
  if (mutate_from.empty()) {
    EXPECT_TRUE(dev.reports().empty()) << target << "\n" << all_reports(dev);
  } else {
    EXPECT_TRUE(has_report(dev, expect)) << target << " mutation '" << mutate_to << "' not reported\n" << all_reports(dev);
  }
}
} // namespace

class EmuMfma : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override { ISATUNE_SKIP_IF_LLVM_LACKS(GetParam()); }
};

TEST_P(EmuMfma, TilesPerTarget) {
  uint32_t seed = fresh_seed();
  const char* t = GetParam();
  run_mfma(t, "mfma_tile.s", "mfma_tile", 32, 8, true, seed);
  run_mfma(t, "emu/mfma16_f16.s", "mfma16_f16", 16, 16, false, seed);
}

// The s_nop padding shortened; an EXEC write right before the MFMA.
TEST_P(EmuMfma, MutationsAreReported) {
  uint32_t seed = fresh_seed();
  const char* t = GetParam();
  // mfma_tile.s: the first s_nop 7 carries a comment; the two after it are dropped (8 wait states left).
  run_mfma(t, "mfma_tile.s", "mfma_tile", 32, 8, true, seed, "  s_nop          7\n  s_nop          7\n", "");
  run_mfma(t, "emu/mfma16_f16.s", "mfma16_f16", 16, 16, false, seed, "  s_nop          7\n  s_nop          7\n  s_nop          7\n",
           "  s_nop          4\n");
  run_mfma(t, "emu/mfma16_f16.s", "mfma16_f16", 16, 16, false, seed, "  v_mfma_f32_16x16x16f16",
           "  v_cmpx_le_u32  vcc, 0, v0\n  v_mfma_f32_16x16x16f16");
}

INSTANTIATE_TEST_SUITE_P(Targets, EmuMfma, ::testing::Values("gfx90a", "gfx942", "gfx950"));

TEST(Emu, MutationsAreReported) {
  uint32_t seed = fresh_seed();
  const std::string vadd = read_fixture("vector_add.s");
  struct Case {
    std::string from, to;
    HazardKind kind;
  };
  // vector_add: an s_waitcnt removed, vmcnt too high, lgkmcnt too high (SMEM completes out of order).
  for (const Case& c : {Case{"  s_waitcnt      vmcnt(0)\n", "", HazardKind::pending_read},
                        Case{"s_waitcnt      vmcnt(0)", "s_waitcnt      vmcnt(1)", HazardKind::pending_read},
                        Case{"s_waitcnt      lgkmcnt(0)", "s_waitcnt      lgkmcnt(1)", HazardKind::pending_read},
                        Case{"  s_waitcnt      lgkmcnt(0)\n", "", HazardKind::pending_read}}) {
    EmuDevice dev({.target = "gfx942"});
    auto code = assemble(replace_once(vadd, c.from, c.to), "gfx942");
    run_vadd(dev, code, 300 + seed % 500, seed);
    EXPECT_TRUE(has_report(dev, c.kind)) << "mutation '" << c.to << "' not reported";
    for (const auto& r : dev.reports()) EXPECT_FALSE(r.disassembly.empty());
  }
  // loop: vmcnt(1) -> vmcnt(2) in the double-buffered loop.
  {
    EmuDevice dev({.target = "gfx942"});
    std::string text = replace_all(read_fixture("emu/loop_sum.s"), "TARGET", "gfx942");
    run_loop_sum(dev, replace_once(text, "vmcnt(1)                // A", "vmcnt(2)                // A"), seed);
    EXPECT_TRUE(has_report(dev, HazardKind::pending_read)) << all_reports(dev);
  }
  // MFMA mutations: EmuMfma.MutationsAreReported, per target.
}

TEST(Emu, StrictStopsAtFirstReport) {
  EmuDevice dev({.target = "gfx942", .strict = true});
  auto code = assemble(replace_once(read_fixture("vector_add.s"), "  s_waitcnt      vmcnt(0)\n", ""), "gfx942");
  try {
    run_vadd(dev, code, 500, 1);
    FAIL() << "no HazardError";
  } catch (const HazardError& e) {
    EXPECT_EQ(e.report().kind, HazardKind::pending_read);
    EXPECT_NE(std::string(e.what()).find("v_add_f32"), std::string::npos) << e.what();
  }
}

TEST(Emu, MalformedLaunches) {
  EmuDevice dev({.target = "gfx942"});
  auto code = assemble(read_fixture("vector_add.s"), "gfx942");
  auto fn = dev.load(code)->function("vadd");
  Args args;
  args.ptr(0), args.ptr(0), args.ptr(0), args.u32(0);
  auto expect_error = [&](const loader::LaunchConfig& cfg, std::span<const uint8_t> ka, const std::string& words) {
    try {
      dev.launch(*fn, cfg, ka);
      ADD_FAILURE() << "no error for " << words;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_error({{1, 1, 1}, {2048, 1, 1}}, args.bytes, "threads per workgroup");
  expect_error({{1, 1, 1}, {64, 1, 1}, 70000}, args.bytes, "LDS");
  expect_error({{1, 1, 1}, {64, 1, 1}}, std::span<const uint8_t>(args.bytes.data(), 16), "bytes of arguments");
  EXPECT_THROW(dev.load(code)->function("nope"), InputError);
  EmuDevice other({.target = "gfx950"});
  EXPECT_THROW(other.load(code), InputError);
}

TEST(Emu, OutOfBoundsAndUnsupported) {
  EmuDevice dev({.target = "gfx942"});
  auto code = assemble(read_fixture("vector_add.s"), "gfx942");
  // count larger than the buffers: loads and stores past the end are reported.
  std::vector<float> a(100, 1.0f);
  uint64_t pa = upload(dev, a), pb = upload(dev, a), pc = upload(dev, a);
  Args args;
  args.ptr(pa), args.ptr(pb), args.ptr(pc), args.u32(256);
  dev.launch(*dev.load(code)->function("vadd"), {{1, 1, 1}, {256, 1, 1}}, args.bytes);
  EXPECT_TRUE(has_report(dev, HazardKind::out_of_bounds)) << all_reports(dev);

  auto bad = assemble(replace_once(read_fixture("vector_add.s"), "  s_endpgm\n.Lvadd_end",
                                   "  s_setreg_b32 hwreg(HW_REG_MODE, 0, 4), s0\n  s_endpgm\n.Lvadd_end"),
                      "gfx942");
  try {
    dev.launch(*dev.load(bad)->function("vadd"), {{1, 1, 1}, {256, 1, 1}}, args.bytes);
    FAIL() << "no error";
  } catch (const EmulationError& e) {
    EXPECT_NE(std::string(e.what()).find("s_setreg_b32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0x00"), std::string::npos) << e.what();
  }
}

TEST(Emu, TimingEventsAreEmulated) {
  EmuDevice dev({.target = "gfx942"});
  auto code = assemble(read_fixture("vector_add.s"), "gfx942");
  auto start = dev.create_event(), end = dev.create_event();
  dev.record(*start);
  run_vadd(dev, code, 5000, 3);
  dev.record(*end);
  dev.synchronize();
  double ms = dev.elapsed_ms(*start, *end);
  EXPECT_GT(ms, 0);
  // deterministic: the same launch gives the same estimate
  dev.record(*start);
  run_vadd(dev, code, 5000, 4);
  dev.record(*end);
  EXPECT_DOUBLE_EQ(dev.elapsed_ms(*start, *end), ms);
}

// Instructions AITER's gfx942/gfx950 kernels use (docs/emulator.md, "Semantics added"), each run in a small
// assembled kernel on fresh random inputs and checked against an independent reference written here from the
// ISA text (bit-exact where the ISA defines the bits).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::emu;

namespace {

// A one-kernel code object around `body`; s[0:1] = kernarg pointer, v0 = packed thread id. VGPRs v0..v95,
// AGPRs a0..a31.
std::string kernel_text(const std::string& target, const std::string& body, uint32_t lds = 0) {
  const std::string name = "k";
  return ".amdgcn_target \"amdgcn-amd-amdhsa--" + target +
         "\"\n.amdhsa_code_object_version 5\n.text\n.globl " + name + "\n.p2align 8\n.type " + name +
         ",@function\n" + name + ":\n" + body + "  s_endpgm\n.L" + name + "_end:\n.size " + name + ", .L" +
         name + "_end-" + name +
         "\n.p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n.rodata\n.p2align 6\n.amdhsa_kernel " + name +
         "\n  .amdhsa_user_sgpr_count 2\n  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n  .amdhsa_kernarg_size 32"
         "\n  .amdhsa_system_sgpr_workgroup_id_x 1\n  .amdhsa_next_free_vgpr 128\n  .amdhsa_next_free_sgpr "
         "48\n"
         "  .amdhsa_accum_offset 96\n  .amdhsa_group_segment_fixed_size " +
         std::to_string(lds) +
         "\n.end_amdhsa_kernel\n.amdgpu_metadata\n---\namdhsa.version: [ 1, 2 ]\namdhsa.kernels:\n  - "
         ".name: " +
         name + "\n    .symbol: " + name +
         ".kd\n    .kernarg_segment_size: 32\n    .kernarg_segment_align: 8\n    "
         ".group_segment_fixed_size: " +
         std::to_string(lds) +
         "\n    .private_segment_fixed_size: 0\n    .wavefront_size: 64\n    .sgpr_count: 54\n"
         "    .vgpr_count: 128\n    .agpr_count: 32\n    .max_flat_workgroup_size: "
         "64\n...\n.end_amdgpu_metadata\n";
}

std::string all_reports(const EmuDevice& dev) {
  std::string s;
  for (const auto& r : dev.reports())
    s += r.str() + "\n";
  return s;
}

// Runs `body` on one wave: lane l's NIN input dwords in[l * NIN + i] are in v10.., its NOUT results are taken
// from v40.. into out[l * NOUT + i]. s[20:21] points to a scratch buffer of `scratch` bytes (initialised from
// `scratch_init`), given back in `scratch_out`. Hazard reports fail the test.
struct LaneRun {
  std::string target = "gfx942";
  std::string body;
  uint32_t nin = 1, nout = 1;
  std::vector<uint32_t> in;
  std::vector<uint32_t> scratch_init;
  uint32_t lds = 0;
  bool expect_no_reports = true;

  std::vector<uint32_t> scratch_out;
  std::string reports; // every hazard report of the run
  std::vector<uint32_t> run() {
    std::string b = "  s_load_dwordx4 s[16:19], s[0:1], 0x0\n  s_load_dwordx2 s[20:21], s[0:1], 0x10\n"
                    "  v_and_b32 v0, 63, v0\n  v_mov_b32 v2, " +
                    std::to_string(4 * nin) + "\n  v_mul_lo_u32 v1, v0, v2\n  s_waitcnt lgkmcnt(0)\n";
    for (uint32_t i = 0; i < nin; ++i)
      b += "  global_load_dword v" + std::to_string(10 + i) +
           ", v1, s[16:17] offset:" + std::to_string(4 * i) + "\n";
    b += "  s_waitcnt vmcnt(0)\n" + body + "  s_nop 7\n  s_nop 7\n  v_mov_b32 v2, " +
         std::to_string(4 * nout) + "\n  v_mul_lo_u32 v1, v0, v2\n";
    for (uint32_t i = 0; i < nout; ++i)
      b += "  global_store_dword v1, v" + std::to_string(40 + i) +
           ", s[18:19] offset:" + std::to_string(4 * i) + "\n";
    b += "  s_waitcnt vmcnt(0)\n";
    CodeObject code;
    try {
      code =
          toolchain::make_assembler("llvm")->assemble(kernel_text(target, b, lds), {target, "test.s"}).code;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what() << "\n" << b;
      return {};
    }
    EmuDevice dev({.target = target});
    in.resize(64 * nin);
    uint64_t pin = dev.alloc(in.size() * 4), pout = dev.alloc(64 * nout * 4);
    dev.copy_to_device(pin, in.data(), in.size() * 4);
    std::vector<uint32_t> poison(64 * nout, 0xdeadbeefu);
    dev.copy_to_device(pout, poison.data(), poison.size() * 4);
    uint64_t pscratch = dev.alloc(std::max<size_t>(4, scratch_init.size() * 4));
    if (!scratch_init.empty()) {
      dev.copy_to_device(pscratch, scratch_init.data(), scratch_init.size() * 4);
    }
    uint64_t ka[4] = {pin, pout, pscratch, 0};
    std::vector<uint8_t> bytes(32);
    std::memcpy(bytes.data(), ka, 32);
    dev.launch(*dev.load(code)->function("k"), {{1, 1, 1}, {64, 1, 1}}, bytes);
    std::vector<uint32_t> out(64 * nout);
    dev.copy_to_host(out.data(), pout, out.size() * 4);
    scratch_out.resize(scratch_init.size());
    if (!scratch_init.empty()) {
      dev.copy_to_host(scratch_out.data(), pscratch, scratch_out.size() * 4);
    }
    reports = all_reports(dev);
    if (expect_no_reports) {
      EXPECT_TRUE(dev.reports().empty()) << all_reports(dev);
    }
    return out;
  }
};

uint32_t fbits(float f) {
  return std::bit_cast<uint32_t>(f);
}
float bitsf(uint32_t u) {
  return std::bit_cast<float>(u);
}

// ---- 8-bit floats: an independent model of the four formats, from their definitions (OCP 8-bit floating
// point spec for E4M3FN/E5M2; FNUZ: bias + 1, no infinities, no negative zero, 0x80 the only NaN). ----
struct F8 {
  bool bf8, fnuz;
  int man() const { return bf8 ? 2 : 3; }
  int bias() const { return (bf8 ? 15 : 7) + (fnuz ? 1 : 0); }
  // NaN for NaN codes, +-inf for OCP E5M2's infinities.
  double decode(uint8_t c) const {
    const bool neg = c & 0x80;
    const int ebits = bf8 ? 5 : 4, m = man();
    const int e = (c >> m) & ((1 << ebits) - 1), f = c & ((1 << m) - 1);
    if (fnuz && c == 0x80)
      return NAN;
    if (!fnuz && bf8 && e == 31)
      return f ? NAN : (neg ? -INFINITY : INFINITY);
    if (!fnuz && !bf8 && e == 15 && f == 7)
      return NAN;
    double v =
        e == 0 ? std::ldexp(double(f), 1 - bias() - m) : std::ldexp(double(f + (1 << m)), e - bias() - m);
    return neg ? -v : v;
  }
  // Round to nearest even over the finite codes; past the largest finite value by half an ulp or more (a tie
  // going away from the odd largest code): overflow, returned as 0x100.
  uint32_t encode_ref(double x) const {
    int best = -1;
    double best_err = INFINITY, max_finite = 0;
    int max_code = 0;
    for (int c = 0; c < 128; ++c) {
      double v = decode(uint8_t(c));
      if (std::isnan(v) || std::isinf(v))
        continue;
      if (v > max_finite)
        max_finite = v, max_code = c;
    }
    const double a = std::fabs(x);
    const double prev = decode(uint8_t(max_code - 1)), ulp = max_finite - prev;
    if (a > max_finite + ulp / 2 || (a == max_finite + ulp / 2 && (max_code & 1)))
      return 0x100;
    for (int c = 0; c < 128; ++c) {
      double v = decode(uint8_t(c));
      if (std::isnan(v) || std::isinf(v))
        continue;
      double err = std::fabs(v - a);
      if (err < best_err || (err == best_err && !(c & 1)))
        best_err = err, best = c;
    }
    if (best == 0)
      return fnuz ? 0u : (std::signbit(x) ? 0x80u : 0u);
    return uint32_t(best) | (std::signbit(x) ? 0x80u : 0u);
  }
};

// Inputs that exercise a format: log-uniform magnitudes across its range and past it, exact midpoints between
// neighbouring codes (ties), signed zeros, infinities, NaN.
float f8_input(std::mt19937& rng, const F8& f) {
  std::uniform_int_distribution<int> kind(0, 9);
  const float sign = (rng() & 1) ? -1.0f : 1.0f;
  switch (kind(rng)) {
  case 0: {
    int c = int(rng() % 126);
    double a = f.decode(uint8_t(c)), b = f.decode(uint8_t(c + 1));
    if (std::isnan(a) || std::isnan(b) || std::isinf(b))
      return sign * 1.5f;
    return sign * float((a + b) / 2); // a tie
  }
  case 1: {
    const float specials[] = {0.0f, INFINITY, NAN, 240.0f, 448.0f, 57344.0f, 248.0f, 464.0f, 61440.0f, 1e-9f};
    return sign * specials[rng() % 10];
  }
  default: {
    std::uniform_real_distribution<float> e(float(-f.bias() - f.man() - 3), f.bf8 ? 17.0f : 9.5f);
    return sign * std::exp2(e(rng));
  }
  }
}

void expect_f8(uint8_t got, float x, const F8& f, const std::string& what) {
  const uint32_t want = f.encode_ref(x);
  if (std::isnan(x) || (want == 0x100 && !(f.bf8 && !f.fnuz))) {
    // NaN: FNUZ has exactly one code; OCP's NaN code is the hardware's choice, any NaN passes.
    if (f.fnuz)
      EXPECT_EQ(got, 0x80) << what << " x " << x;
    else
      EXPECT_TRUE(std::isnan(f.decode(got))) << what << " x " << x << " got 0x" << std::hex << int(got);
  } else if (want == 0x100) { // OCP E5M2 overflows to infinity
    EXPECT_EQ(got, std::signbit(x) ? 0xfc : 0x7c) << what << " x " << x;
  } else {
    EXPECT_EQ(got, want) << what << " x " << x << " (" << double(x) << ")";
  }
}

// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32: both words (op_sel), the other word kept, neg/abs modifiers; FNUZ on
// gfx942, OCP on gfx950.
TEST(AiterInstructions, CvtPkF8F32) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  for (const char* target : {"gfx942", "gfx950"}) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(target);
    for (bool bf8 : {false, true}) {
      const F8 f{bf8, std::string(target) == "gfx942"};
      const std::string op = bf8 ? "v_cvt_pk_bf8_f32" : "v_cvt_pk_fp8_f32";
      LaneRun r;
      r.target = target;
      r.nin = 3, r.nout = 3;
      r.body = "  v_mov_b32 v40, v12\n  " + op + " v40, v10, v11\n  v_mov_b32 v41, v12\n  " + op +
               " v41, v10, v11 op_sel:[0,0,1]\n  v_mov_b32 v42, v12\n  " + op +
               " v42, -v10, |v11| op_sel:[0,0,1]\n";
      r.in.resize(64 * 3);
      for (uint32_t l = 0; l < 64; ++l) {
        r.in[3 * l] = fbits(f8_input(rng, f));
        r.in[3 * l + 1] = fbits(f8_input(rng, f));
        r.in[3 * l + 2] = rng();
      }
      auto out = r.run();
      ASSERT_EQ(out.size(), 64u * 3);
      for (uint32_t l = 0; l < 64; ++l) {
        const float x = bitsf(r.in[3 * l]), y = bitsf(r.in[3 * l + 1]);
        const uint32_t old = r.in[3 * l + 2];
        const std::string what =
            std::string(target) + " " + op + " lane " + std::to_string(l) + " seed " + std::to_string(seed);
        EXPECT_EQ(out[3 * l] >> 16, old >> 16) << what << ": high word kept";
        expect_f8(uint8_t(out[3 * l]), x, f, what + " word 0 byte 0");
        expect_f8(uint8_t(out[3 * l] >> 8), y, f, what + " word 0 byte 1");
        EXPECT_EQ(out[3 * l + 1] & 0xffff, old & 0xffff) << what << ": low word kept";
        expect_f8(uint8_t(out[3 * l + 1] >> 16), x, f, what + " word 1 byte 0");
        expect_f8(uint8_t(out[3 * l + 1] >> 24), y, f, what + " word 1 byte 1");
        expect_f8(uint8_t(out[3 * l + 2] >> 16), -x, f, what + " -src0");
        expect_f8(uint8_t(out[3 * l + 2] >> 24), std::fabs(y), f, what + " |src1|");
      }
    }
  }
}

// v_cvt_pk_f32_fp8 / _bf8 and their SDWA src0_sel:WORD_1 form (AITER's): every code of the byte decodes
// exactly.
TEST(AiterInstructions, CvtPkF32F8) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  for (const char* target : {"gfx942", "gfx950"}) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(target);
    LaneRun r;
    r.target = target;
    r.nin = 1, r.nout = 8;
    r.body = "  v_cvt_pk_f32_fp8 v[40:41], v10\n  v_cvt_pk_f32_fp8_sdwa v[42:43], v10 src0_sel:WORD_1\n"
             "  v_cvt_pk_f32_bf8 v[44:45], v10\n  v_cvt_pk_f32_bf8_sdwa v[46:47], v10 src0_sel:WORD_1\n";
    r.in.resize(64);
    for (uint32_t l = 0; l < 64; ++l) // bytes 4l..4l+3: all 256 codes over the wave
      r.in[l] = (4 * l) | (4 * l + 1) << 8 | (4 * l + 2) << 16 | (4 * l + 3) << 24;
    std::shuffle(r.in.begin(), r.in.end(), rng);
    auto out = r.run();
    ASSERT_EQ(out.size(), 64u * 8);
    for (uint32_t l = 0; l < 64; ++l)
      for (int k = 0; k < 8; ++k) {
        const bool bf8 = k >= 4;
        const F8 f{bf8, std::string(target) == "gfx942"};
        const uint8_t code = uint8_t(r.in[l] >> (8 * (k % 4)));
        const double want = f.decode(code);
        const float got = bitsf(out[8 * l + k]);
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(got)) << target << " code " << int(code);
        else
          EXPECT_EQ(fbits(got), fbits(float(want)))
              << target << (bf8 ? " bf8" : " fp8") << " code " << int(code);
      }
  }
}

// Integer MFMAs: D = C + A B over signed bytes, i32 wrapping. Layout (shared/notes/cdna.md section 4, K
// contiguous in a lane): A[i][k] is byte k mod E of lane M floor(k/E) + i (E bytes a lane), B[k][j] likewise;
// D/C 32x32: element (8 floor(r/4) + 4 floor(l/32) + r mod 4, l mod 32) in register r, 16x16: (4 floor(l/16)
// + r, l mod 16).
struct IntMfma {
  const char* target;
  const char* op;
  int m, k, ab_regs;
};

TEST(AiterInstructions, MfmaI8) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const IntMfma shapes[] = {{"gfx942", "v_mfma_i32_16x16x32_i8", 16, 32, 2},
                            {"gfx942", "v_mfma_i32_32x32x16_i8", 32, 16, 2},
                            {"gfx950", "v_mfma_i32_32x32x32_i8", 32, 32, 4},
                            {"gfx950", "v_mfma_i32_16x16x64_i8", 16, 64, 4}};
  for (const auto& s : shapes) {
    ISATUNE_CONTINUE_IF_LLVM_LACKS(s.target);
    const int cd = s.m == 32 ? 16 : 4, epl = 4 * s.ab_regs;
    LaneRun r;
    r.target = s.target;
    r.nin = uint32_t(2 * s.ab_regs + cd), r.nout = uint32_t(cd);
    auto range = [](int first, int n) {
      return "v[" + std::to_string(first) + ":" + std::to_string(first + n - 1) + "]";
    };
    const int a0 = 10, b0 = 10 + s.ab_regs, c0 = 10 + 2 * s.ab_regs;
    r.body = "  " + std::string(s.op) + " " + range(40, cd) + ", " + range(a0, s.ab_regs) + ", " +
             range(b0, s.ab_regs) + ", " + range(c0, cd) + "\n  s_nop 7\n  s_nop 7\n  s_nop 7\n";
    r.in.resize(64 * r.nin);
    for (auto& x : r.in)
      x = rng();
    auto out = r.run();
    ASSERT_EQ(out.size(), size_t(64 * cd));
    auto byte = [&](int reg0, int l, int e) {
      return int8_t(r.in[l * r.nin + uint32_t(reg0 - 10 + e / 4)] >> (8 * (e % 4)));
    };
    for (int reg = 0; reg < cd; ++reg)
      for (int l = 0; l < 64; ++l) {
        const int i = s.m == 32 ? 8 * (reg / 4) + 4 * (l / 32) + reg % 4 : 4 * (l / 16) + reg, j = l % s.m;
        int64_t acc = int32_t(r.in[l * r.nin + uint32_t(c0 - 10 + reg)]);
        for (int k = 0; k < s.k; ++k) {
          const int lane_a = s.m * (k / epl) + i, lane_b = s.m * (k / epl) + j;
          acc += int64_t(byte(a0, lane_a, k % epl)) * byte(b0, lane_b, k % epl);
        }
        EXPECT_EQ(out[l * cd + reg], uint32_t(uint64_t(acc)))
            << s.op << " D[" << i << "][" << j << "] seed " << seed;
      }
  }
}

// v_cmp_class_f32 (VOPC, VCC), its VOP3 form with a negated source, v_cmpx_class_f32: bit `class` of S1.
TEST(AiterInstructions, CmpClassF32) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  // one of each class: sNaN, qNaN, -inf, -normal, -denormal, -0, +0, +denormal, +normal, +inf
  const uint32_t samples[10] = {0x7f800001u, 0x7fc00000u, 0xff800000u, 0xbf800000u, 0x80000001u,
                                0x80000000u, 0x00000000u, 0x00000010u, 0x40490fdbu, 0x7f800000u};
  LaneRun r;
  r.nin = 2, r.nout = 3;
  r.body = "  v_cmp_class_f32 vcc, v10, v11\n  s_nop 1\n  v_cndmask_b32 v40, 0, 1, vcc\n"
           "  v_cmp_class_f32_e64 s[30:31], -v10, v11\n  s_nop 1\n  v_cndmask_b32_e64 v41, 0, 1, s[30:31]\n"
           "  v_mov_b32 v42, 0\n  v_cmpx_class_f32 vcc, v10, v11\n  v_mov_b32 v42, 1\n  s_mov_b64 exec, -1\n";
  r.in.resize(128);
  std::vector<int> cls(64);
  for (uint32_t l = 0; l < 64; ++l) {
    cls[l] = int(rng() % 10);
    uint32_t x = samples[cls[l]];
    if (cls[l] == 3 || cls[l] == 8)
      x = (x & 0x80000000u) | ((1 + rng() % 254) << 23) | (rng() & 0x7fffff);
    if (cls[l] == 4 || cls[l] == 7)
      x = (x & 0x80000000u) | (1 + rng() % 0x7ffffe);
    r.in[2 * l] = x;
    r.in[2 * l + 1] = rng() & 0x3ff;
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), 64u * 3);
  // negation maps class c to its mirror (NaNs stay)
  const int mirror[10] = {0, 1, 9, 8, 7, 6, 5, 4, 3, 2};
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t mask = r.in[2 * l + 1];
    EXPECT_EQ(out[3 * l], (mask >> cls[l]) & 1) << "lane " << l << " class " << cls[l];
    EXPECT_EQ(out[3 * l + 1], (mask >> mirror[cls[l]]) & 1) << "-x, lane " << l << " class " << cls[l];
    EXPECT_EQ(out[3 * l + 2], (mask >> cls[l]) & 1) << "cmpx, lane " << l;
  }
}

// v_cvt_pk_u8_f32: byte S1[1:0] of S2 replaced by u8(S0), rounded to nearest even (inputs in [0, 255.25]).
// v_cvt_pk_f16_f32 (gfx950): {f16(S1), f16(S0)} rounded to nearest even, against the host's _Float16.
TEST(AiterInstructions, CvtPkU8AndF16) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  {
    LaneRun r;
    r.nin = 2, r.nout = 4;
    for (int sel = 0; sel < 4; ++sel)
      r.body +=
          "  v_cvt_pk_u8_f32 v" + std::to_string(40 + sel) + ", v10, " + std::to_string(sel) + ", v11\n";
    r.in.resize(128);
    for (uint32_t l = 0; l < 64; ++l) {
      float x =
          (rng() & 1) ? float(rng() % 255) + 0.5f : std::uniform_real_distribution<float>(0, 255.25f)(rng);
      r.in[2 * l] = fbits(x), r.in[2 * l + 1] = rng();
    }
    auto out = r.run();
    ASSERT_EQ(out.size(), 256u);
    for (uint32_t l = 0; l < 64; ++l) {
      const double x = bitsf(r.in[2 * l]);
      double fl = std::floor(x);
      uint32_t want = uint32_t(x - fl > 0.5 || (x - fl == 0.5 && std::fmod(fl, 2) != 0) ? fl + 1 : fl);
      for (uint32_t sel = 0; sel < 4; ++sel) {
        uint32_t expect = (r.in[2 * l + 1] & ~(0xffu << (8 * sel))) | (want << (8 * sel));
        EXPECT_EQ(out[4 * l + sel], expect) << "x " << x << " sel " << sel;
      }
    }
  }
  {
    const std::string lacks = isatune::test::llvm_lacks("gfx950");
    if (!lacks.empty())
      GTEST_SKIP() << lacks;
    LaneRun r;
    r.target = "gfx950";
    r.nin = 2, r.nout = 2;
    r.body = "  v_cvt_pk_f16_f32 v40, v10, v11\n  v_cvt_pk_f16_f32 v41, -v10, |v11|\n";
    r.in.resize(128);
    for (auto& x : r.in) {
      float f = std::exp2(std::uniform_real_distribution<float>(-27, 17)(rng)) * ((rng() & 1) ? -1.0f : 1.0f);
      x = (rng() % 8 == 0) ? (fbits(f) & 0xffffe000u) | 0x1000u : fbits(f); // some exact f16 ties
    }
    auto out = r.run();
    ASSERT_EQ(out.size(), 128u);
    auto h = [](float f) { return uint32_t(std::bit_cast<uint16_t>(static_cast<_Float16>(f))); };
    for (uint32_t l = 0; l < 64; ++l) {
      const float x = bitsf(r.in[2 * l]), y = bitsf(r.in[2 * l + 1]);
      EXPECT_EQ(out[2 * l], h(x) | h(y) << 16) << "x " << x << " y " << y;
      EXPECT_EQ(out[2 * l + 1], h(-x) | h(std::fabs(y)) << 16) << "x " << x << " y " << y;
    }
  }
}

// v_swap_b32 under a random EXEC; v_nop changes nothing.
TEST(AiterInstructions, SwapAndNop) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t lo = rng(), hi = rng();
  LaneRun r;
  r.nin = 2, r.nout = 3;
  r.body = "  v_mov_b32 v40, v10\n  v_mov_b32 v41, v11\n  v_mov_b32 v42, v10\n  s_mov_b32 exec_lo, " +
           std::to_string(lo) + "\n  s_mov_b32 exec_hi, " + std::to_string(hi) +
           "\n  v_swap_b32 v40, v41\n  v_nop\n  s_mov_b64 exec, -1\n  v_nop\n";
  r.in.resize(128);
  for (auto& x : r.in)
    x = rng();
  auto out = r.run();
  ASSERT_EQ(out.size(), 192u);
  const uint64_t exec = uint64_t(lo) | uint64_t(hi) << 32;
  for (uint32_t l = 0; l < 64; ++l) {
    const bool on = (exec >> l) & 1;
    EXPECT_EQ(out[3 * l], on ? r.in[2 * l + 1] : r.in[2 * l]) << "lane " << l;
    EXPECT_EQ(out[3 * l + 1], on ? r.in[2 * l] : r.in[2 * l + 1]) << "lane " << l;
    EXPECT_EQ(out[3 * l + 2], r.in[2 * l]);
  }
}

// s_setvskip S0, S1: with S0[S1] set, VALU and vector memory are not issued (a v_mov and a global store are
// skipped); s_setvskip 0, 0 turns it off.
TEST(AiterInstructions, SetVskip) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  for (int round = 0; round < 4; ++round) {
    const uint32_t pattern = rng(), bit = rng() % 32;
    const bool skip = (pattern >> bit) & 1;
    LaneRun r;
    r.nin = 1, r.nout = 2;
    r.scratch_init.assign(64, 0x5eed0000u + uint32_t(round));
    r.body =
        "  v_mov_b32 v40, 7\n  v_lshlrev_b32 v3, 2, v0\n  s_mov_b32 s22, " + std::to_string(pattern) +
        "\n  s_mov_b32 s23, " + std::to_string(bit) +
        "\n  s_setvskip s22, s23\n  s_nop 0\n  v_mov_b32 v40, v10\n  global_store_dword v3, v10, s[20:21]\n"
        "  s_setvskip 0, 0\n  s_nop 0\n  v_mov_b32 v41, v10\n  s_waitcnt vmcnt(0)\n";
    r.in.resize(64);
    for (auto& x : r.in)
      x = rng();
    auto out = r.run();
    ASSERT_EQ(out.size(), 128u);
    for (uint32_t l = 0; l < 64; ++l) {
      EXPECT_EQ(out[2 * l], skip ? 7u : r.in[l]) << "skip " << skip << " lane " << l;
      EXPECT_EQ(out[2 * l + 1], r.in[l]) << "after s_setvskip 0, 0";
      EXPECT_EQ(r.scratch_out[l], skip ? r.scratch_init[l] : r.in[l]) << "store, skip " << skip;
    }
  }
}

// ds_or_b32 (four lanes on one address), ds_or_rtn_b32 / ds_and_rtn_b32 / ds_xor_rtn_b32 (one lane each).
TEST(AiterInstructions, LdsBitwiseAtomics) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 3, r.nout = 5;
  r.lds = 1024;
  r.body = "  v_lshlrev_b32 v3, 2, v0\n  v_lshrrev_b32 v4, 2, v0\n  v_lshlrev_b32 v4, 2, v4\n"
           "  ds_write_b32 v3, v10\n  ds_write_b32 v3, v10 offset:256\n  ds_write_b32 v3, v10 offset:512\n"
           "  s_waitcnt lgkmcnt(0)\n"
           "  ds_or_b32 v4, v11\n  ds_or_rtn_b32 v41, v3, v11 offset:256\n  ds_and_rtn_b32 v42, v3, v12 "
           "offset:512\n"
           "  s_waitcnt lgkmcnt(0)\n  ds_xor_rtn_b32 v43, v3, v12 offset:512\n  s_waitcnt lgkmcnt(0)\n"
           "  ds_read_b32 v40, v3\n  ds_read_b32 v44, v3 offset:512\n  s_waitcnt lgkmcnt(0)\n";
  r.in.resize(64 * 3);
  for (auto& x : r.in)
    x = rng();
  auto out = r.run();
  ASSERT_EQ(out.size(), 64u * 5);
  for (uint32_t l = 0; l < 64; ++l) {
    auto in = [&](uint32_t lane, int k) { return r.in[3 * lane + uint32_t(k)]; };
    uint32_t orv = in(l, 0);
    if (l < 16) // ds_or_b32: address 4 floor(l'/4) gets the OR of lanes 4a..4a+3
      for (uint32_t q = 0; q < 4; ++q)
        orv |= in(4 * l + q, 1);
    EXPECT_EQ(out[5 * l], orv) << "ds_or_b32, dword " << l;
    EXPECT_EQ(out[5 * l + 1], in(l, 0)) << "ds_or_rtn_b32 returns the old value";
    EXPECT_EQ(out[5 * l + 2], in(l, 0)) << "ds_and_rtn_b32 returns the old value";
    EXPECT_EQ(out[5 * l + 3], in(l, 0) & in(l, 2)) << "ds_xor_rtn_b32 returns the AND result";
    EXPECT_EQ(out[5 * l + 4], (in(l, 0) & in(l, 2)) ^ in(l, 2)) << "and then xor";
  }
}

// s_store_dword / s_store_dwordx2 (values through v_readfirstlane), s_atomic_inc / s_atomic_dec without and
// with return (glc), all on the scratch buffer; lgkmcnt counts them.
TEST(AiterInstructions, ScalarStoresAndAtomics) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 3, r.nout = 2;
  r.scratch_init.resize(16);
  for (auto& x : r.scratch_init)
    x = rng() % 8; // counters near their limits
  r.scratch_init[0] = r.scratch_init[1] = r.scratch_init[2] = 0xdeadbeefu;
  r.scratch_init[4] = 5, r.scratch_init[5] = 0; // the wrap-arounds: inc at the limit, dec at zero
  r.body = "  v_readfirstlane_b32 s30, v10\n  v_readfirstlane_b32 s31, v11\n  v_readfirstlane_b32 s32, v12\n"
           "  s_nop 3\n"
           "  s_store_dword s30, s[20:21], 0x0\n  s_store_dwordx2 s[30:31], s[20:21], 0x4\n"
           "  s_mov_b32 s33, 5\n  s_mov_b32 s34, 5\n  s_mov_b32 s35, 5\n  s_mov_b32 s36, 5\n"
           "  s_atomic_inc s33, s[20:21], 0x10\n  s_atomic_dec s34, s[20:21], 0x14\n"
           "  s_atomic_inc s35, s[20:21], 0x18 glc\n  s_atomic_dec s36, s[20:21], 0x1c glc\n"
           "  s_mov_b32 s37, 0x20\n  s_atomic_inc s32, s[20:21], s37\n"
           "  s_mov_b32 s38, 0x24\n  s_store_dword s31, s[20:21], s38 glc\n" // soffset and glc: no imm offset
           "  s_waitcnt lgkmcnt(0)\n  s_dcache_wb\n  v_mov_b32 v40, s35\n  v_mov_b32 v41, s36\n";
  r.in.resize(64 * 3);
  for (auto& x : r.in)
    x = rng() % 10;
  r.in[0] = rng(), r.in[1] = rng(); // lane 0's v10, v11: the stored values
  auto out = r.run();
  ASSERT_EQ(out.size(), 128u);
  const auto& m0 = r.scratch_init;
  const auto& m = r.scratch_out;
  auto inc = [](uint32_t old, uint32_t v) { return old >= v ? 0u : old + 1; };
  auto dec = [](uint32_t old, uint32_t v) { return (old == 0 || old > v) ? v : old - 1; };
  EXPECT_EQ(m[0], r.in[0]);
  EXPECT_EQ(m[1], r.in[0]);
  EXPECT_EQ(m[2], r.in[1]);
  EXPECT_EQ(m[4], inc(m0[4], 5)) << "old " << m0[4];
  EXPECT_EQ(m[5], dec(m0[5], 5)) << "old " << m0[5];
  EXPECT_EQ(m[6], inc(m0[6], 5)) << "old " << m0[6];
  EXPECT_EQ(m[7], dec(m0[7], 5)) << "old " << m0[7];
  EXPECT_EQ(m[8], inc(m0[8], r.in[2])) << "soffset form, limit " << r.in[2];
  for (uint32_t l = 0; l < 64; ++l) {
    EXPECT_EQ(out[2 * l], m0[6]) << "s_atomic_inc glc returns the old value";
    EXPECT_EQ(out[2 * l + 1], m0[7]) << "s_atomic_dec glc returns the old value";
  }
  EXPECT_EQ(m[9], r.in[1]) << "s_store_dword soffset glc";
  for (uint32_t i = 10; i < 16; ++i)
    EXPECT_EQ(m[i], m0[i]) << "untouched dword " << i;
}

// buffer_load_short_d16 / _d16_hi: the loaded half replaces one half of vdst, the other half is kept; a lane
// past num_records loads zero into its half.
TEST(AiterInstructions, BufferLoadShortD16) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const uint32_t nrec = 2 * (20 + rng() % 40); // bytes; lanes at 2 l >= nrec are out of range
  LaneRun r;
  r.nin = 1, r.nout = 2;
  r.scratch_init.resize(32);
  for (auto& x : r.scratch_init)
    x = rng();
  r.body =
      "  s_mov_b32 s24, s20\n  s_mov_b32 s25, s21\n  s_mov_b32 s26, " + std::to_string(nrec) +
      "\n  s_mov_b32 s27, 0x20000\n  v_lshlrev_b32 v3, 1, v0\n  v_mov_b32 v40, v10\n  v_mov_b32 v41, v10\n"
      "  buffer_load_short_d16 v40, v3, s[24:27], 0 offen\n  buffer_load_short_d16_hi v41, v3, s[24:27], 0 "
      "offen\n"
      "  s_waitcnt vmcnt(0)\n";
  r.in.resize(64);
  for (auto& x : r.in)
    x = rng();
  auto out = r.run();
  ASSERT_EQ(out.size(), 128u);
  for (uint32_t l = 0; l < 64; ++l) {
    uint16_t half = 0;
    if (2 * l < nrec)
      std::memcpy(&half, reinterpret_cast<const uint8_t*>(r.scratch_init.data()) + 2 * l, 2);
    EXPECT_EQ(out[2 * l], (r.in[l] & 0xffff0000u) | half) << "d16 lane " << l << " nrec " << nrec;
    EXPECT_EQ(out[2 * l + 1], (r.in[l] & 0xffffu) | uint32_t(half) << 16) << "d16_hi lane " << l;
  }
}

// global_atomic_cmpswap_x2 with return (saddr and 64-bit address forms): MEM = old == cmp ? src : old,
// vdst = old; half the lanes compare equal.
TEST(AiterInstructions, GlobalCmpswapX2Return) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  for (bool saddr : {true, false}) {
    LaneRun r;
    r.nin = 5, r.nout = 2;
    r.scratch_init.resize(128);
    for (auto& x : r.scratch_init)
      x = rng();
    r.in.resize(64 * 5);
    std::vector<bool> match(64);
    for (uint32_t l = 0; l < 64; ++l) {
      match[l] = rng() & 1;
      r.in[5 * l] = rng(), r.in[5 * l + 1] = rng();                                    // src
      r.in[5 * l + 2] = match[l] ? r.scratch_init[2 * l] : r.scratch_init[2 * l] ^ 1u; // cmp
      r.in[5 * l + 3] = r.scratch_init[2 * l + 1];
      r.in[5 * l + 4] = 0;
    }
    r.body = "  v_lshlrev_b32 v3, 3, v0\n";
    if (saddr) {
      r.body += "  global_atomic_cmpswap_x2 v[40:41], v3, v[10:13], s[20:21] sc0\n";
    } else {
      r.body += "  v_mov_b32 v5, s21\n  v_add_co_u32 v4, vcc, s20, v3\n  s_nop 1\n  v_addc_co_u32 v5, vcc, "
                "0, v5, vcc\n"
                "  global_atomic_cmpswap_x2 v[40:41], v[4:5], v[10:13], off sc0\n";
    }
    r.body += "  s_waitcnt vmcnt(0)\n";
    auto out = r.run();
    ASSERT_EQ(out.size(), 128u);
    for (uint32_t l = 0; l < 64; ++l) {
      EXPECT_EQ(out[2 * l], r.scratch_init[2 * l]) << "returned old, lane " << l;
      EXPECT_EQ(out[2 * l + 1], r.scratch_init[2 * l + 1]);
      EXPECT_EQ(r.scratch_out[2 * l], match[l] ? r.in[5 * l] : r.scratch_init[2 * l]) << "saddr " << saddr;
      EXPECT_EQ(r.scratch_out[2 * l + 1], match[l] ? r.in[5 * l + 1] : r.scratch_init[2 * l + 1]);
    }
  }
}

// gfx942/gfx950: v_cvt_pk_fp8_f32 with op_sel dst-hi, its VGPR read by the next VALU: 1 wait state needed
// (LLVM GCNHazardRecognizer, dst-sel forwarding). Without the s_nop it is reported, with it not.
TEST(AiterInstructions, Fp8OpSelForwardingWaitState) {
  for (bool nop : {false, true}) {
    LaneRun r;
    r.nin = 3, r.nout = 1;
    r.expect_no_reports = false;
    r.body = "  v_mov_b32 v40, v12\n  v_cvt_pk_fp8_f32 v40, v10, v11 op_sel:[0,0,1]\n" +
             std::string(nop ? "  s_nop 0\n" : "") + "  v_add_u32 v40, v40, 1\n";
    r.in.assign(64 * 3, 0x3f800000u);
    r.run();
    if (nop)
      EXPECT_EQ(r.reports, "");
    else
      EXPECT_NE(r.reports.find("wait_states: VALU write of part of a VGPR"), std::string::npos) << r.reports;
  }
}

// SDWA forms AITER uses: v_cvt_f32_f16_sdwa, v_cvt_f16_f32_sdwa, v_lshlrev_b32_sdwa, with the selects, sign
// extension and the three dst_unused modes, against the Vega ISA's SDWA description implemented here.
TEST(AiterInstructions, SdwaConversionsAndShift) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 4, r.nout = 7;
  const char* ops[7] = {
      "v_cvt_f32_f16_sdwa v40, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1",
      "v_cvt_f32_f16_sdwa v41, -|v10| dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0",
      "v_cvt_f16_f32_sdwa v42, v13 dst_sel:WORD_1 dst_unused:UNUSED_PRESERVE src0_sel:DWORD",
      "v_cvt_f16_f32_sdwa v43, v13 dst_sel:WORD_0 dst_unused:UNUSED_PAD src0_sel:DWORD",
      "v_lshlrev_b32_sdwa v44, v10, v11 dst_sel:WORD_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_2 "
      "src1_sel:WORD_1",
      "v_lshlrev_b32_sdwa v45, sext(v10), v11 dst_sel:BYTE_1 dst_unused:UNUSED_PRESERVE src0_sel:BYTE_0 "
      "src1_sel:BYTE_3",
      "v_lshlrev_b32_sdwa v46, v10, v11 dst_sel:BYTE_1 dst_unused:UNUSED_SEXT src0_sel:BYTE_1 "
      "src1_sel:WORD_0"};
  for (int k = 0; k < 7; ++k)
    r.body += "  v_mov_b32 v" + std::to_string(40 + k) + ", v12\n  " + ops[k] + "\n";
  r.in.resize(64 * 4);
  auto f16 = [&] { // a finite f16 (exponent < 31)
    return uint32_t((rng() & 0x8000) | ((rng() % 31) << 10) | (rng() & 0x3ff));
  };
  for (uint32_t l = 0; l < 64; ++l) {
    r.in[4 * l] = f16() | f16() << 16;
    r.in[4 * l + 1] = rng();
    r.in[4 * l + 2] = rng();
    const float mag = std::exp2(std::uniform_real_distribution<float>(-26, 17)(rng));
    r.in[4 * l + 3] = fbits((rng() & 1) ? -mag : mag);
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), 64u * 7);
  auto h2f = [](uint32_t h) { return fbits(float(std::bit_cast<_Float16>(uint16_t(h)))); };
  auto f2h = [](uint32_t f) { return uint32_t(std::bit_cast<uint16_t>(static_cast<_Float16>(bitsf(f)))); };
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t v10 = r.in[4 * l], v11 = r.in[4 * l + 1], old = r.in[4 * l + 2], v13 = r.in[4 * l + 3];
    const std::string at = "lane " + std::to_string(l) + " seed " + std::to_string(seed);
    EXPECT_EQ(out[7 * l], h2f(v10 >> 16)) << at;
    EXPECT_EQ(out[7 * l + 1], h2f((v10 & 0x7fff) | 0x8000)) << at;
    EXPECT_EQ(out[7 * l + 2], (old & 0xffff) | f2h(v13) << 16) << at;
    EXPECT_EQ(out[7 * l + 3], f2h(v13)) << at;
    // lshlrev: shift = byte 2 of v10, value = word 1 of v11; the result's low 16 bits into [31:16], sign
    // above (none: the field is the top), zeros below.
    const uint32_t r4 = (v11 >> 16) << (((v10 >> 16) & 0xff) & 31);
    EXPECT_EQ(out[7 * l + 4], (r4 & 0xffff) << 16) << at;
    // sext(byte 0 of v10) & 31 as the shift of byte 3 of v11; the low byte into [15:8], the rest kept.
    const uint32_t sh = uint32_t(int32_t(int8_t(v10 & 0xff))) & 31, r5 = (v11 >> 24) << sh;
    EXPECT_EQ(out[7 * l + 5], (old & ~0xff00u) | (r5 & 0xff) << 8) << at;
    // byte 1 of v10 shifts word 0 of v11; the low byte into [15:8], its bit 7 copied into [31:16], [7:0]
    // zero.
    const uint32_t r6 = (v11 & 0xffff) << (((v10 >> 8) & 0xff) & 31);
    EXPECT_EQ(out[7 * l + 6], (r6 & 0xff) << 8 | ((r6 & 0x80) ? 0xffff0000u : 0u)) << at;
  }
}

// 16-bit integer compares (v_cmp_gt_i16, v_cmp_eq_u16, v_cmp_ne_u16, v_cmp_lt_u16): the low halves only.
TEST(AiterInstructions, Cmp16BitIntegers) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 2, r.nout = 4;
  const char* ops[4] = {"v_cmp_gt_i16", "v_cmp_eq_u16", "v_cmp_ne_u16", "v_cmp_lt_u16"};
  for (int k = 0; k < 4; ++k)
    r.body += std::string("  ") + ops[k] + " vcc, v10, v11\n  s_nop 1\n  v_cndmask_b32 v" +
              std::to_string(40 + k) + ", 0, 1, vcc\n";
  r.in.resize(128);
  for (uint32_t l = 0; l < 64; ++l) {
    r.in[2 * l] = rng();
    r.in[2 * l + 1] = (rng() & 1) ? (r.in[2 * l] & 0xffff) | (rng() << 16) : rng(); // equal low halves often
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), 256u);
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t a = r.in[2 * l], b = r.in[2 * l + 1];
    EXPECT_EQ(out[4 * l], uint32_t(int16_t(a) > int16_t(b))) << std::hex << a << " " << b;
    EXPECT_EQ(out[4 * l + 1], uint32_t(uint16_t(a) == uint16_t(b)));
    EXPECT_EQ(out[4 * l + 2], uint32_t(uint16_t(a) != uint16_t(b)));
    EXPECT_EQ(out[4 * l + 3], uint32_t(uint16_t(a) < uint16_t(b)));
  }
}

// VOPC SDWA (AITER: v_cmp_eq_u32_sdwa, v_cmp_le_i32_sdwa): the sources cut by src_sel, sign-extended with
// sext.
TEST(AiterInstructions, CmpSdwa) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 2, r.nout = 2;
  r.body = "  v_cmp_eq_u32_sdwa vcc, v10, v11 src0_sel:WORD_1 src1_sel:DWORD\n  s_nop 1\n"
           "  v_cndmask_b32 v40, 0, 1, vcc\n"
           "  v_cmp_le_i32_sdwa s[30:31], sext(v10), v11 src0_sel:BYTE_1 src1_sel:WORD_0\n  s_nop 1\n"
           "  v_cndmask_b32_e64 v41, 0, 1, s[30:31]\n";
  r.in.resize(128);
  for (uint32_t l = 0; l < 64; ++l) {
    r.in[2 * l] = rng();
    r.in[2 * l + 1] = (rng() & 1) ? r.in[2 * l] >> 16 : rng() & 0x1ffff;
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), 128u);
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t a = r.in[2 * l], b = r.in[2 * l + 1];
    EXPECT_EQ(out[2 * l], uint32_t((a >> 16) == b)) << std::hex << a << " " << b;
    EXPECT_EQ(out[2 * l + 1], uint32_t(int32_t(int8_t(a >> 8)) <= int32_t(b & 0xffff)))
        << std::hex << a << " " << b;
  }
}

} // namespace

// gfx950 ds_read_b64_tr_b16 / _b8 / _b4 (CDNA4 ISA 11.4): each lane reads 64 bits at its own address; every 16-lane
// group holds E = 64/bits rows of 16 columns, lane 16g + s holding row s / (16/E), columns E (s mod 16/E) ..
// +E-1; lane 16g + i returns column i of the E rows, row r as element r. Addresses are a random permutation of
// the 64 rows written first, so the source of every element is checked.
TEST(AiterInstructions, DsReadB64Transpose) {
  const std::string lacks = isatune::test::llvm_lacks("gfx950");
  if (!lacks.empty())
    GTEST_SKIP() << lacks;
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  for (uint32_t bits : {16u, 8u, 4u}) {
    LaneRun r;
    r.target = "gfx950";
    r.nin = 3, r.nout = 2;
    r.lds = 512;
    r.body = "  v_lshlrev_b32 v3, 3, v0\n  ds_write_b64 v3, v[10:11]\n  s_waitcnt lgkmcnt(0)\n"
             "  v_lshlrev_b32 v4, 3, v12\n  ds_read_b64_tr_b" +
             std::to_string(bits) + " v[40:41], v4\n  s_waitcnt lgkmcnt(0)\n";
    std::vector<uint32_t> perm(64);
    for (uint32_t l = 0; l < 64; ++l)
      perm[l] = l;
    std::shuffle(perm.begin(), perm.end(), rng);
    r.in.resize(64 * 3);
    for (uint32_t l = 0; l < 64; ++l)
      r.in[3 * l] = rng(), r.in[3 * l + 1] = rng(), r.in[3 * l + 2] = perm[l];
    auto out = r.run();
    ASSERT_EQ(out.size(), 128u);
    auto row_of = [&](uint32_t lane) { // the 64 bits lane `lane` read
      uint32_t src = perm[lane];
      return uint64_t(r.in[3 * src]) | uint64_t(r.in[3 * src + 1]) << 32;
    };
    const uint32_t E = 64 / bits, blocks = 16 / E;
    const uint64_t mask = (1ull << bits) - 1;
    for (uint32_t l = 0; l < 64; ++l) {
      const uint32_t g = l / 16 * 16, i = l % 16;
      uint64_t want = 0;
      for (uint32_t e = 0; e < E; ++e) {
        uint32_t src_lane = g + blocks * e + i / E; // row e, the block holding column i
        want |= ((row_of(src_lane) >> (bits * (i % E))) & mask) << (bits * e);
      }
      uint64_t got = uint64_t(out[2 * l]) | uint64_t(out[2 * l + 1]) << 32;
      EXPECT_EQ(got, want) << "ds_read_b64_tr_b" << bits << " lane " << l << " seed " << seed;
    }
  }
}

// v_cvt_off_f32_i4 (and its SDWA form, which AITER's int4 MoE kernels use to reach each byte): S0[3:0] as a
// signed 4-bit integer in sixteenths, per the ISA's lookup table (1000 -> -0.5, 0111 -> 0.4375); the SDWA select
// picks the byte or word first, the low nibble of which is converted. Every nibble value appears.
TEST(AiterInstructions, CvtOffF32I4) {
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.nin = 1, r.nout = 5;
  r.body = "  v_cvt_off_f32_i4 v40, v10\n  v_cvt_off_f32_i4_e64 v41, v10\n"
           "  v_cvt_off_f32_i4_sdwa v42, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1\n"
           "  v_cvt_off_f32_i4_sdwa v43, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_3\n"
           "  v_cvt_off_f32_i4_sdwa v44, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1\n";
  r.in.resize(64);
  for (uint32_t l = 0; l < 64; ++l)
    r.in[l] = (rng() & ~0xfu) | (l & 15);
  auto out = r.run();
  ASSERT_EQ(out.size(), 64u * 5);
  const float table[16] = {0.0f,     0.0625f,  0.125f,   0.1875f,  0.25f,    0.3125f,  0.375f,   0.4375f,
                           -0.5f,    -0.4375f, -0.375f,  -0.3125f, -0.25f,   -0.1875f, -0.125f,  -0.0625f};
  for (uint32_t l = 0; l < 64; ++l) {
    const uint32_t x = r.in[l];
    const std::string at = "lane " + std::to_string(l) + " seed " + std::to_string(seed);
    EXPECT_EQ(out[5 * l], fbits(table[x & 15])) << at;
    EXPECT_EQ(out[5 * l + 1], fbits(table[x & 15])) << at;
    EXPECT_EQ(out[5 * l + 2], fbits(table[(x >> 8) & 15])) << at;
    EXPECT_EQ(out[5 * l + 3], fbits(table[(x >> 24) & 15])) << at;
    EXPECT_EQ(out[5 * l + 4], fbits(table[(x >> 16) & 15])) << at;
  }
}

// s_trap stops the launch with an error that names the trap (no trap handler is modelled).
TEST(AiterInstructions, TrapStopsTheLaunch) {
  const std::string text = kernel_text("gfx942", "  s_trap 2\n");
  auto code = toolchain::make_assembler("llvm")->assemble(text, {"gfx942", "trap.s"}).code;
  EmuDevice dev({.target = "gfx942"});
  std::vector<uint8_t> args(32, 0);
  try {
    dev.launch(*dev.load(code)->function("k"), {{1, 1, 1}, {64, 1, 1}}, args);
    ADD_FAILURE() << "s_trap did not stop the launch";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("trapped (s_trap 2"), std::string::npos) << e.what();
  }
}

// ds_read_b64_tr_b16 with EXEC not all ones is undefined in the CDNA4 ISA: the launch stops rather than guess.
TEST(AiterInstructions, DsReadB64TransposeNeedsFullExec) {
  const std::string lacks = isatune::test::llvm_lacks("gfx950");
  if (!lacks.empty())
    GTEST_SKIP() << lacks;
  const std::string text = kernel_text("gfx950",
                                       "  v_mov_b32 v4, 0\n  s_mov_b64 exec, 0xffff\n"
                                       "  ds_read_b64_tr_b16 v[40:41], v4\n  s_waitcnt lgkmcnt(0)\n",
                                       512);
  auto code = toolchain::make_assembler("llvm")->assemble(text, {"gfx950", "tr.s"}).code;
  EmuDevice dev({.target = "gfx950"});
  std::vector<uint8_t> args(32, 0);
  try {
    dev.launch(*dev.load(code)->function("k"), {{1, 1, 1}, {64, 1, 1}}, args);
    ADD_FAILURE() << "ds_read_b64_tr_b16 ran with a partial EXEC";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("EXEC not all ones"), std::string::npos) << e.what();
  }
}

// ---- gfx950 f8f6f4 formats, written here from their definitions (OCP MX v1.0 spec 5.3: FP6 E2M3 bias 1, FP6
// E3M2 bias 3, FP4 E2M1 bias 1, no infinities or NaNs, exponent field 0 subnormal; FP8 E4M3 / E5M2 as OCP's
// 8-bit spec, the F8 model above). fmt: the cbsz/blgp value. ----
struct MxFmt {
  int fmt;
  int bits() const { return fmt <= 1 ? 8 : fmt <= 3 ? 6 : 4; }
  double decode(uint32_t c) const {
    if (fmt <= 1)
      return F8{fmt == 1, false}.decode(uint8_t(c));
    const int e_bits = fmt == 3 ? 3 : 2, m_bits = bits() - 1 - e_bits, bias = fmt == 3 ? 3 : 1;
    const bool neg = (c >> (bits() - 1)) & 1;
    const int e = int(c >> m_bits) & ((1 << e_bits) - 1), f = int(c) & ((1 << m_bits) - 1);
    const double v = e == 0 ? f * std::ldexp(1.0, 1 - bias - m_bits)
                            : (1.0 + f * std::ldexp(1.0, -m_bits)) * std::ldexp(1.0, e - bias);
    return neg ? -v : v;
  }
  bool special(uint32_t c) const {
    const double v = decode(c);
    return std::isnan(v) || std::isinf(v);
  }
};

// A random code of `f`: a NaN or infinity (where the format has one) only with probability `p_special`.
uint32_t mx_code(std::mt19937& rng, const MxFmt& f, double p_special) {
  std::uniform_real_distribution<double> u(0, 1);
  for (;;) {
    const uint32_t c = rng() & ((1u << f.bits()) - 1);
    if (!f.special(c) || u(rng) < p_special)
      return c;
  }
}

// An MFMA f8f6f4 case: op text "v_mfma_[scale_]f32_MxNxK_f8f6f4", formats, scale byte selects.
struct F8f6f4Case {
  int m;      // 16 (16x16x128) or 32 (32x32x64)
  int fa, fb; // cbsz, blgp
  bool scaled;
  int sel_a, sel_b; // scale bytes (op_sel bit 0, op_sel_hi bit 1)
};

// D = C + sum_b 2^(Sa[i][b] + Sb[j][b] - 254) sum_{k in block b} A[i][k] B[k][j] (scale 1 without scales).
// Layout, from the sources cited in ops_mfma.cpp (ROCm CDNA4 matrix-core blog, OCP MX): element e of lane l
// of an FP8 operand is row l mod M, k = (K/2) floor(e/16) + 16 floor(l/M) + e mod 16; FP6/FP4: k = 32
// floor(l/M) + e; the scale of row i, block b is byte sel of lane i + M b.
void run_f8f6f4(const F8f6f4Case& c, std::mt19937& rng, uint32_t seed, bool with_specials) {
  const MxFmt fa{c.fa}, fb{c.fb};
  const int K = c.m == 16 ? 128 : 64, cd = c.m == 16 ? 4 : 16;
  const int ra = fa.bits(), rb = fb.bits(); // VGPRs per lane = bits (32 elements x bits / 32)
  const int a0 = 10, b0 = a0 + ra, s0 = b0 + rb, c0 = s0 + (c.scaled ? 2 : 0);
  const int nin = c0 - 10 + cd;
  auto range = [](int first, int n) {
    return "v[" + std::to_string(first) + ":" + std::to_string(first + n - 1) + "]";
  };
  LaneRun r;
  r.target = "gfx950";
  r.nin = uint32_t(nin), r.nout = uint32_t(cd);
  // C moves to v60.. first (the inputs may reach past v40, where D goes).
  std::string body;
  for (int i = 0; i < cd; ++i)
    body += "  v_mov_b32 v" + std::to_string(60 + i) + ", v" + std::to_string(c0 + i) + "\n";
  body += "  s_nop 4\n";
  const std::string name = std::string(c.scaled ? "v_mfma_scale_f32_" : "v_mfma_f32_") +
                           (c.m == 16 ? "16x16x128" : "32x32x64") + "_f8f6f4";
  body +=
      "  " + name + " " + range(40, cd) + ", " + range(a0, ra) + ", " + range(b0, rb) + ", " + range(60, cd);
  if (c.scaled)
    body += ", v" + std::to_string(s0) + ", v" + std::to_string(s0 + 1) + " op_sel:[" +
            std::to_string(c.sel_a & 1) + "," + std::to_string(c.sel_b & 1) + ",0] op_sel_hi:[" +
            std::to_string(c.sel_a >> 1) + "," + std::to_string(c.sel_b >> 1) + ",0]";
  body += " cbsz:" + std::to_string(c.fa) + " blgp:" + std::to_string(c.fb) +
          "\n  s_nop 7\n  s_nop 7\n  s_nop 7\n";
  r.body = body;
  r.in.assign(size_t(64 * nin), 0);
  // Element codes per lane, packed into the operand's VGPRs (low bits first, FP6 across dword boundaries).
  std::vector<uint32_t> ca(64 * 32), cb(64 * 32);
  const double p_special = with_specials ? 0.002 : 0.0;
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < 32; ++e) {
      ca[size_t(l * 32 + e)] = mx_code(rng, fa, p_special);
      cb[size_t(l * 32 + e)] = mx_code(rng, fb, p_special);
    }
  auto pack = [&](const std::vector<uint32_t>& codes, int bits, int reg0) {
    for (int l = 0; l < 64; ++l)
      for (int e = 0; e < 32; ++e) {
        const uint64_t v = uint64_t(codes[size_t(l * 32 + e)]);
        const int bit = bits * e, w = bit / 32, sh = bit % 32;
        r.in[size_t(l * nin + reg0 - 10 + w)] |= uint32_t(v << sh);
        if (sh + bits > 32)
          r.in[size_t(l * nin + reg0 - 10 + w + 1)] |= uint32_t(v >> (32 - sh));
      }
  };
  pack(ca, fa.bits(), a0);
  pack(cb, fb.bits(), b0);
  std::uniform_int_distribution<int> sdist(127 - 24, 127 + 24);
  for (int l = 0; l < 64; ++l) {
    if (c.scaled)
      for (int s = 0; s < 2; ++s) {
        uint32_t word = rng(); // the other bytes random: a wrong byte select shows
        const uint32_t byte = uint32_t(sdist(rng));
        const int sel = s == 0 ? c.sel_a : c.sel_b;
        word = (word & ~(0xffu << (8 * sel))) | byte << (8 * sel);
        r.in[size_t(l * nin + s0 - 10 + s)] = word;
      }
    for (int i = 0; i < cd; ++i)
      r.in[size_t(l * nin + c0 - 10 + i)] = fbits(std::uniform_real_distribution<float>(-4, 4)(rng));
  }
  if (c.scaled && with_specials) { // E8M0 NaN for A's row 3, block 1 (lane 3 + M)
    uint32_t& w = r.in[size_t((3 + c.m) * nin + s0 - 10)];
    w |= 0xffu << (8 * c.sel_a);
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), size_t(64 * cd)) << name;
  // Dense A (M x K) and B (K x N) from the codes, by the layout above.
  auto kof = [&](int bits, int l, int e) {
    return bits == 8 ? (K / 2) * (e / 16) + 16 * (l / c.m) + e % 16 : 32 * (l / c.m) + e;
  };
  std::vector<double> A(size_t(c.m * K)), B(size_t(K * c.m));
  for (int l = 0; l < 64; ++l)
    for (int e = 0; e < 32; ++e) {
      A[size_t((l % c.m) * K + kof(fa.bits(), l, e))] = fa.decode(ca[size_t(l * 32 + e)]);
      B[size_t(kof(fb.bits(), l, e) * c.m + l % c.m)] = fb.decode(cb[size_t(l * 32 + e)]);
    }
  auto scale = [&](int s, int rowcol, int blk) -> double {
    if (!c.scaled)
      return 1.0;
    const uint32_t byte =
        (r.in[size_t((rowcol + c.m * blk) * nin + s0 - 10 + s)] >> (8 * (s ? c.sel_b : c.sel_a))) & 0xff;
    return byte == 0xff ? NAN : std::ldexp(1.0, int(byte) - 127);
  };
  int checked = 0, nans = 0;
  for (int reg = 0; reg < cd; ++reg)
    for (int l = 0; l < 64; ++l) {
      const int i = c.m == 32 ? 8 * (reg / 4) + 4 * (l / 32) + reg % 4 : 4 * (l / 16) + reg, j = l % c.m;
      const double cin = bitsf(r.in[size_t(l * nin + c0 - 10 + reg)]);
      double ref = cin, mag = std::fabs(cin);
      for (int k = 0; k < K; ++k) {
        const double t =
            A[size_t(i * K + k)] * B[size_t(k * c.m + j)] * scale(0, i, k / 32) * scale(1, j, k / 32);
        ref += t, mag += std::fabs(t);
      }
      const float got = bitsf(out[size_t(l * cd + reg)]);
      const std::string at = name + " cbsz " + std::to_string(c.fa) + " blgp " + std::to_string(c.fb) +
                             " D[" + std::to_string(i) + "][" + std::to_string(j) + "] seed " +
                             std::to_string(seed);
      if (std::isnan(ref)) {
        EXPECT_TRUE(std::isnan(got)) << at << " got " << got;
        ++nans;
      } else if (std::isinf(ref)) {
        EXPECT_EQ(double(got), ref) << at;
      } else {
        EXPECT_NEAR(double(got), ref, (K + 8) * 0x1p-24 * mag + 0x1p-140) << at;
      }
      ++checked;
    }
  EXPECT_EQ(checked, c.m * c.m);
  if (c.scaled && with_specials) {
    EXPECT_GE(nans, c.m) << name << ": the NaN scale of row 3 makes that row NaN";
  }
}

// v_mfma_[scale_]f32_{16x16x128,32x32x64}_f8f6f4 over the format pairs AITER's gfx950 kernels use (and the
// rest of the register-size classes), against the float64 reference above; FP8/BF8 NaN and infinity codes and
// an E8M0 NaN scale in the second round.
TEST(AiterInstructions, MfmaF8f6f4) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const F8f6f4Case cases[] = {{16, 4, 4, true, 1, 0},  {16, 4, 4, true, 2, 3},  {16, 0, 0, true, 0, 1},
                              {16, 1, 0, true, 3, 2},  {16, 2, 3, true, 1, 1},  {16, 4, 0, true, 0, 2},
                              {16, 3, 4, true, 2, 0},  {32, 0, 0, true, 1, 2},  {32, 4, 4, true, 0, 3},
                              {32, 4, 0, true, 2, 1},  {32, 2, 2, true, 3, 0},  {32, 3, 1, true, 0, 0},
      {32, 2, 0, true, 1, 3},
                              {16, 0, 0, false, 0, 0}, {16, 1, 1, false, 0, 0}, {32, 0, 0, false, 0, 0},
                              {32, 0, 1, false, 0, 0}, {16, 4, 4, false, 0, 0}, {32, 2, 4, false, 0, 0}};
  for (bool specials : {false, true})
    for (const auto& c : cases)
      run_f8f6f4(c, rng, seed, specials && (c.fa <= 1 || c.fb <= 1 || c.scaled));
}

// v_smfmac_f32_16x16x128_fp8_fp8 (AITER's gfx950 fmha v4 forward): D += A B with A 4:2 sparse. Reference: the
// dense A rebuilt from the stored bytes and their 2-bit positions, by the layout cited in ops_mfma.cpp (two
// halves of the CDNA3 16x16x64 layout: half h = A VGPRs 2h..2h+1, B VGPRs 4h..4h+3, index bits 16h..16h+15).
TEST(AiterInstructions, SmfmacFp8) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  const MxFmt f{0};
  LaneRun r;
  r.target = "gfx950";
  r.nin = 4 + 8 + 1 + 4, r.nout = 4; // A v10..13, B v14..21, index v22, C v23..26
  r.body =
      "  v_mov_b32 v40, v23\n  v_mov_b32 v41, v24\n  v_mov_b32 v42, v25\n  v_mov_b32 v43, v26\n  s_nop 4\n"
      "  v_smfmac_f32_16x16x128_fp8_fp8 v[40:43], v[10:13], v[14:21], v22\n  s_nop 7\n  s_nop 7\n  s_nop 7\n";
  r.in.resize(64 * 17);
  for (int l = 0; l < 64; ++l) {
    uint32_t* x = &r.in[size_t(l * 17)];
    for (int i = 0; i < 12; ++i)
      x[i] =
          mx_code(rng, f, 0) | mx_code(rng, f, 0) << 8 | mx_code(rng, f, 0) << 16 | mx_code(rng, f, 0) << 24;
    uint32_t idx = 0;
    for (int q = 0; q < 8; ++q) { // two distinct positions per group of 4, either order
      const uint32_t p0 = rng() % 4;
      uint32_t p1 = rng() % 3;
      p1 += p1 >= p0 ? 1 : 0;
      idx |= (p0 | p1 << 2) << (4 * q);
    }
    x[12] = idx;
    for (int i = 0; i < 4; ++i)
      x[13 + i] = fbits(std::uniform_real_distribution<float>(-4, 4)(rng));
  }
  auto out = r.run();
  ASSERT_EQ(out.size(), 64u * 4);
  std::vector<double> A(16 * 128, 0.0), B(128 * 16);
  for (int l = 0; l < 64; ++l) {
    const uint32_t* x = &r.in[size_t(l * 17)];
    const int row = l % 16, g = l / 16;
    for (int h = 0; h < 2; ++h) {
      for (int e = 0; e < 16; ++e)
        B[size_t((64 * h + 16 * g + e) * 16 + row)] =
            f.decode((x[4 + 4 * h + e / 4] >> (8 * (e % 4))) & 0xff);
      for (int q = 0; q < 4; ++q) {
        const uint32_t bits = x[12] >> (16 * h + 4 * q);
        const uint32_t word = x[2 * h + q / 2] >> (16 * (q % 2));
        const int base = 64 * h + 16 * g + 4 * q;
        A[size_t(row * 128 + base + int(bits & 3))] = f.decode(word & 0xff);
        A[size_t(row * 128 + base + int((bits >> 2) & 3))] = f.decode((word >> 8) & 0xff);
      }
    }
  }
  for (int reg = 0; reg < 4; ++reg)
    for (int l = 0; l < 64; ++l) {
      const int i = 4 * (l / 16) + reg, j = l % 16;
      double ref = bitsf(r.in[size_t(l * 17 + 13 + reg)]), mag = std::fabs(ref);
      for (int k = 0; k < 128; ++k)
        ref += A[size_t(i * 128 + k)] * B[size_t(k * 16 + j)],
            mag += std::fabs(A[size_t(i * 128 + k)] * B[size_t(k * 16 + j)]);
      EXPECT_NEAR(double(bitsf(out[size_t(l * 4 + reg)])), ref, 136 * 0x1p-24 * mag)
          << "D[" << i << "][" << j << "] seed " << seed;
    }
}

// The reference E2M1 encoder: nearest of the 8 magnitudes, a tie to the even code, saturation at 6 (AMD's
// host model of the gfx950 conversion and OCP MX 6.3), NaN to S.111, the sign kept (also on zero).
uint32_t fp4_ref(double x) {
  const uint32_t sign = std::signbit(x) ? 8 : 0;
  if (std::isnan(x))
    return sign | 7;
  const double a = std::fabs(x);
  if (a >= 6) // also infinity, which the nearest-value search below cannot rank
    return sign | 7;
  const MxFmt f{4};
  uint32_t best = 0;
  double err = INFINITY;
  for (uint32_t c = 0; c < 8; ++c) {
    const double e = std::fabs(f.decode(c) - a);
    if (e < err || (e == err && !(c & 1)))
      err = e, best = c;
  }
  return sign | best;
}

// v_cvt_scalef32_pk_fp4_f32 into each of the 4 bytes (op_sel[3:2]), the other bytes kept, with power-of-two
// scales (the only kind where "divide by the scale" and "subtract its exponent" agree), ties, saturation,
// signed zeros, f32 denormals, infinities, NaN, and an E8M0-NaN scale (f32 exponent 255).
TEST(AiterInstructions, CvtScalef32PkFp4F32) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.target = "gfx950";
  r.nin = 4, r.nout = 4;
  r.body = "  v_mov_b32 v40, v13\n  v_mov_b32 v41, v13\n  v_mov_b32 v42, v13\n  v_mov_b32 v43, v13\n"
           "  v_cvt_scalef32_pk_fp4_f32 v40, v10, v11, v12\n"
           "  v_cvt_scalef32_pk_fp4_f32 v41, v10, v11, v12 op_sel:[0,0,1,0]\n"
           "  v_cvt_scalef32_pk_fp4_f32 v42, v10, v11, v12 op_sel:[0,0,0,1]\n"
           "  v_cvt_scalef32_pk_fp4_f32 v43, -v10, |v11|, v12 op_sel:[0,0,1,1]\n";
  const MxFmt f{4};
  for (int rep = 0; rep < 4; ++rep) {
    r.in.assign(64 * 4, 0);
    for (int l = 0; l < 64; ++l) {
      const int e = int(rng() % 40) - 20; // scale 2^e
      const bool nan_scale = l == 63;
      r.in[size_t(4 * l + 2)] = nan_scale ? 0x7fc00000u : fbits(std::ldexp(1.0f, e));
      for (int s = 0; s < 2; ++s) {
        float v;
        const float sign = (rng() & 1) ? -1.0f : 1.0f;
        switch (rng() % 6) {
        case 0: { // a tie between neighbouring codes
          const uint32_t c = rng() % 7;
          v = float((f.decode(c) + f.decode(c + 1)) / 2);
          break;
        }
        case 1: {
          const float sp[] = {0.0f, INFINITY, NAN, 6.0f, 7.0f, 8.0f, 1e-42f, 1e30f};
          v = sp[rng() % 8];
          break;
        }
        default:
          v = std::exp2(std::uniform_real_distribution<float>(-4, 4)(rng));
        }
        r.in[size_t(4 * l + s)] = fbits(sign * std::ldexp(v, e));
      }
      r.in[size_t(4 * l + 3)] = rng();
    }
    auto out = r.run();
    ASSERT_EQ(out.size(), 64u * 4);
    for (int l = 0; l < 64; ++l) {
      const float x = bitsf(r.in[size_t(4 * l)]), y = bitsf(r.in[size_t(4 * l + 1)]);
      const uint32_t sb = r.in[size_t(4 * l + 2)], old = r.in[size_t(4 * l + 3)];
      const int e = int((sb >> 23) & 0xff) - 127;
      auto ref = [&](double v) {
        return l == 63 ? (std::signbit(v) ? 15u : 7u) : fp4_ref(std::ldexp(v, -e));
      };
      for (int byte = 0; byte < 4; ++byte) {
        const double vx = byte == 3 ? -double(x) : double(x),
                     vy = byte == 3 ? std::fabs(double(y)) : double(y);
        const uint32_t want = ref(vx) | ref(vy) << 4;
        const uint32_t mask = 0xffu << (8 * byte);
        const uint32_t got = out[size_t(4 * l + byte)];
        EXPECT_EQ((got & mask) >> (8 * byte), want) << "byte " << byte << " x " << x << " y " << y
                                                    << " scale 2^" << e << " lane " << l << " seed " << seed;
        EXPECT_EQ(got & ~mask, old & ~mask) << "byte " << byte << ": the other bytes are kept";
      }
    }
  }
}

// v_cvt_scalef32_pk_bf16_fp8, both words: every E4M3 code times scales from 2^-127 to 2^+127 (bf16 subnormals
// that round, overflow to infinity), against an independent round-to-nearest-even into bf16; NaN codes and a
// NaN scale give NaN.
TEST(AiterInstructions, CvtScalef32PkBf16Fp8) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  const uint32_t seed = std::random_device{}();
  std::mt19937 rng(seed);
  LaneRun r;
  r.target = "gfx950";
  r.nin = 2, r.nout = 2;
  r.body = "  v_cvt_scalef32_pk_bf16_fp8 v40, v10, v11\n  v_cvt_scalef32_pk_bf16_fp8 v41, v10, v11 "
           "op_sel:[1,0,0]\n";
  // bf16 of an exact double: the nearest of the bf16 values (subnormals spaced 2^-133), ties to even.
  auto bf16_ref = [](double v) -> uint32_t {
    const uint32_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    if (a == 0)
      return sign;
    int ex;
    std::frexp(a, &ex);                       // a in [2^(ex-1), 2^ex)
    const int q = std::max(ex - 1, -126) - 7; // the quantum: 7 mantissa bits
    double m = a / std::ldexp(1.0, q);
    double rm = std::floor(m);
    if (m - rm > 0.5 || (m - rm == 0.5 && std::fmod(rm, 2.0) == 1.0))
      rm += 1;
    const double rv = rm * std::ldexp(1.0, q);
    if (rv >= std::ldexp(1.0, 128))
      return sign | 0x7f80;
    const uint32_t bits = std::bit_cast<uint32_t>(float(rv)); // rv is a bf16 value: exact in f32
    return sign | (bits >> 16);
  };
  const F8 f{false, false};
  for (int rep = 0; rep < 4; ++rep) {
    r.in.assign(128, 0);
    for (int l = 0; l < 64; ++l) {
      r.in[size_t(2 * l)] = rng();
      if (rep == 0) // every code once over the wave
        r.in[size_t(2 * l)] = (4 * l) | (4 * l + 1) << 8 | (4 * l + 2) << 16 | (4 * l + 3) << 24;
      const int e =
          l == 63 ? 128 : int(rng() % 255) - 127; // the f32 scale's exponent field 0 .. 254 (255: NaN)
      r.in[size_t(2 * l + 1)] = uint32_t(e + 127) << 23;
    }
    auto out = r.run();
    ASSERT_EQ(out.size(), 128u);
    for (int l = 0; l < 64; ++l) {
      const int e = int((r.in[size_t(2 * l + 1)] >> 23) & 0xff) - 127;
      for (int h = 0; h < 4; ++h) {
        const uint8_t code = uint8_t(r.in[size_t(2 * l)] >> (8 * h));
        const uint32_t got = (out[size_t(2 * l + h / 2)] >> (16 * (h % 2))) & 0xffff;
        const double v = f.decode(code);
        const std::string at = "code " + std::to_string(code) + " scale 2^" + std::to_string(e) + " seed " +
                               std::to_string(seed);
        if (std::isnan(v) || e == 128)
          EXPECT_TRUE(std::isnan(std::bit_cast<float>(got << 16))) << at;
        else
          EXPECT_EQ(got, bf16_ref(std::ldexp(v, e))) << at;
      }
    }
  }
}

// v_cvt_scalef32_pk_fp4_f32 with op_sel[3] set (LLVM's DST_OP_SEL, the src0 modifier bit) writes part of its
// VGPR: a VALU reading it next needs 1 wait state (gfx950, as the fp8 packs); byte 1 (op_sel[2] only) does
// not set DST_OP_SEL and is not reported.
TEST(AiterInstructions, Fp4OpSelForwardingWaitState) {
  ISATUNE_SKIP_IF_LLVM_LACKS("gfx950");
  for (int variant = 0; variant < 3; ++variant) {
    LaneRun r;
    r.target = "gfx950";
    r.nin = 3, r.nout = 1;
    r.expect_no_reports = false;
    r.body = std::string("  v_mov_b32 v40, v12\n  v_cvt_scalef32_pk_fp4_f32 v40, v10, v11, v12 op_sel:") +
             (variant == 2 ? "[0,0,1,0]\n" : "[0,0,0,1]\n") + (variant == 1 ? "  s_nop 0\n" : "") +
             "  v_add_u32 v40, v40, 1\n";
    r.in.assign(64 * 3, 0x3f800000u);
    r.run();
    if (variant == 0)
      EXPECT_NE(r.reports.find("wait_states: VALU write of part of a VGPR"), std::string::npos) << r.reports;
    else
      EXPECT_EQ(r.reports, "") << "variant " << variant;
  }
}

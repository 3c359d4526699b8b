// wgmma on the PTX emulator (sm_90a): hand-written kernels that fill shared memory with st.shared (then
// fence.proxy.async and bar.sync), build matrix descriptors and run wgmma.mma_async chains, checked element
// by element against float64 references on fresh random inputs. The shared-memory images are laid out with
// asm/ptx's canonical_address (matrix_descriptor.h), register A and D with fragments.h, so a wrong operand or
// fragment mapping in the emulator shows as wrong elements. Mutations of the correct kernel (no wait_group,
// no fence.proxy.async, no wgmma.fence, D or the operands written while in flight) must be reported; the
// correct kernel reports nothing. ptxas, where present, must accept every kernel.
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>

#include "emu_ptx_test.h"
#include "isatune/ptx/fragments.h"
#include "isatune/ptx/matrix_descriptor.h"

namespace {

using namespace emu_ptx_test;
namespace iptx = isatune::ptx;
using iptx::SwizzleMode;

// ptxas as the oracle of valid PTX: "" when it accepts the text (or is absent: then the reason is printed
// once).
std::string ptxas_rejects(const std::string& ptx) {
  static const char* const kPtxas = "/usr/local/cuda/bin/ptxas";
  if (access(kPtxas, X_OK) != 0) {
    static bool told = false;
    if (!told)
      std::printf("note: %s not found: kernels not checked with ptxas\n", kPtxas);
    told = true;
    return "";
  }
  char path[] = "/tmp/isatune_wgmma_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0)
    return "mkstemp failed";
  close(fd);
  std::string file = std::string(path) + ".ptx";
  std::ofstream(file) << ptx;
  std::string cmd = std::string(kPtxas) + " -arch=sm_90a " + file + " -o /dev/null > " + path + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::string out;
  if (rc != 0) {
    std::ifstream in(path);
    out.assign(std::istreambuf_iterator<char>(in), {});
    if (out.empty())
      out = "ptxas failed";
  }
  std::remove(path);
  std::remove(file.c_str());
  return out;
}

enum class El { f16, bf16, e4m3, e5m2 };
const char* el_name(El e) {
  return e == El::f16 ? "f16" : e == El::bf16 ? "bf16" : e == El::e4m3 ? "e4m3" : "e5m2";
}
uint32_t el_bytes(El e) {
  return e == El::f16 || e == El::bf16 ? 2 : 1;
}

// The test's own decoding of the input formats (OCP FP8: e4m3 bias 7, e5m2 bias 15).
double el_value(El e, uint32_t bits) {
  switch (e) {
  case El::f16:
    return double(std::bit_cast<_Float16>(uint16_t(bits)));
  case El::bf16:
    return double(std::bit_cast<float>(bits << 16));
  case El::e4m3: {
    int s = bits >> 7 & 1, ex = bits >> 3 & 15, m = bits & 7;
    double v = ex ? std::ldexp(8 + m, ex - 10) : std::ldexp(m, -9);
    return s ? -v : v;
  }
  case El::e5m2: {
    int s = bits >> 7 & 1, ex = bits >> 2 & 31, m = bits & 3;
    double v = ex ? std::ldexp(4 + m, ex - 17) : std::ldexp(m, -16);
    return s ? -v : v;
  }
  }
  return 0;
}
// A random finite nonzero value's bits.
uint32_t el_random(El e) {
  for (;;) {
    uint32_t b = 0;
    switch (e) {
    case El::f16:
      b = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      break;
    case El::bf16:
      b = std::bit_cast<uint32_t>(rand_float(-2, 2)) >> 16;
      break;
    case El::e4m3:
      b = rand_u32() & 0xff;
      if ((b & 0x7f) == 0x7f)
        continue; // NaN
      break;
    case El::e5m2:
      b = rand_u32() & 0xff;
      if ((b >> 2 & 31) == 31)
        continue; // inf / NaN
      break;
    }
    const double v = el_value(e, b);
    if (v != 0 && std::fabs(v) <= 8) // fp8 spans up to 57344: keep sums inside the f16 range
      return b;
  }
}

struct Case {
  uint32_t n = 64;
  El a = El::bf16, b = El::bf16;
  bool d_f16 = false;
  bool a_regs = false;
  bool trans_a = false, trans_b = false;
  int scale_a = 1, scale_b = 1;
  bool scale_d = true;      // the first wgmma of the chain accumulates into C (later ones always do)
  bool scale_d_imm = false; // scale-d as an immediate rather than a predicate
  SwizzleMode swz_a = SwizzleMode::b128, swz_b = SwizzleMode::b128;
  uint32_t ksteps = 1; // wgmma.mma_async per chain
  uint32_t threads = 128;
  // Mutations.
  bool no_wait = false, no_proxy_fence = false, no_wgmma_fence = false, write_d = false, write_smem = false;

  uint32_t k() const { return el_bytes(a) == 1 ? 32 : 16; }
  uint32_t d_regs() const { return d_f16 ? n / 4 : n / 2; }
  std::string str() const {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "m64n%uk%u.%s.%s.%s a_regs=%d trans=%d%d scale=%d,%d,%d%s swz=%u,%u ksteps=%u threads=%u",
                  n, k(), d_f16 ? "f16" : "f32", el_name(a), el_name(b), a_regs, trans_a, trans_b, scale_a,
                  scale_b, scale_d, scale_d_imm ? "(imm)" : "", iptx::swizzle_span_bytes(swz_a),
                  iptx::swizzle_span_bytes(swz_b), ksteps, threads);
    return buf;
  }
};

// An operand's shared-memory layout: one descriptor per wgmma of the chain (step j covers K columns
// j*k..j*k+k-1), from a base address aligned to 1024 bytes. K-major swizzled tiles hold span/(k*es) steps
// side by side in each row, advancing the start address as CUTLASS does (the fixture's +32 B per K16).
struct Layout {
  std::vector<iptx::MatrixDescriptor> desc;
  uint32_t bytes = 0;
};
Layout make_layout(SwizzleMode swz, bool mn_major, uint32_t mn, uint32_t k, uint32_t es, uint32_t steps,
                   uint32_t base) {
  Layout L;
  const uint32_t span = iptx::swizzle_span_bytes(swz);
  auto round1k = [](uint32_t x) { return (x + 1023) / 1024 * 1024; };
  for (uint32_t j = 0; j < steps; ++j) {
    iptx::MatrixDescriptor d;
    d.swizzle = swz;
    uint32_t tile;
    if (!mn_major && swz == SwizzleMode::none) {
      d.leading_byte_offset = 128; // the two 16-byte K chunks of a row group side by side
      d.stride_byte_offset = 128 * (k * es / 16);
      tile = round1k(mn / 8 * d.stride_byte_offset);
      d.start_address = base + j * tile;
    } else if (!mn_major) {
      const uint32_t per_tile = span / (k * es);
      d.leading_byte_offset = 16; // unused when swizzled ("assumed 1")
      d.stride_byte_offset = 8 * span;
      tile = round1k(mn * span);
      d.start_address = base + (j / per_tile) * tile + (j % per_tile) * k * es;
    } else if (swz == SwizzleMode::none) {
      d.stride_byte_offset = 128;           // 8-element MN chunks
      d.leading_byte_offset = 128 * mn / 8; // 8-row K groups
      tile = round1k(d.leading_byte_offset * (k / 8));
      d.start_address = base + j * tile;
    } else {
      const uint32_t mn_per_row = span / es;
      d.leading_byte_offset = 8 * span;                    // MN blocks of span bytes
      d.stride_byte_offset = 8 * span * (mn / mn_per_row); // 8-row K groups
      tile = round1k(d.stride_byte_offset * (k / 8));
      d.start_address = base + j * tile;
    }
    L.desc.push_back(d);
    L.bytes = std::max(L.bytes, d.start_address - base + tile);
  }
  return L;
}

struct Problem {
  Case c;
  std::vector<uint32_t> a, b; // element bits: a[m * K + k] (64 x K), b[n * K + k] (N x K), K = ksteps * k
  std::vector<uint8_t> image; // shared memory
  Layout la, lb;
  uint32_t b_base = 0;
  std::vector<uint64_t> descs;  // [j * 2] A, [j * 2 + 1] B
  std::vector<uint32_t> a_frag; // register A: [((j * 4 + r) * threads + tid)]
  std::vector<uint32_t> c_in;   // [i * threads + tid]
};

Problem make_problem(const Case& c) {
  Problem p;
  p.c = c;
  const uint32_t k = c.k(), K = k * c.ksteps, es = el_bytes(c.a);
  p.a.resize(64 * K);
  p.b.resize(size_t(c.n) * K);
  for (auto& x : p.a)
    x = el_random(c.a);
  for (auto& x : p.b)
    x = el_random(c.b);
  uint32_t a_bytes = 0;
  if (!c.a_regs) {
    p.la = make_layout(c.swz_a, c.trans_a, 64, k, es, c.ksteps, 0);
    a_bytes = p.la.bytes;
  }
  p.b_base = (a_bytes + 1023) / 1024 * 1024;
  p.lb = make_layout(c.swz_b, c.trans_b, c.n, k, es, c.ksteps, p.b_base);
  p.image.assign(p.b_base + p.lb.bytes, 0);
  std::set<uint32_t> used;
  auto place = [&](const iptx::MatrixDescriptor& d, iptx::WgmmaOperand op, bool mn_major, uint32_t mn,
                   uint32_t kk, uint32_t bits) {
    uint32_t addr =
        iptx::canonical_address(d, op, mn_major ? iptx::OperandMajor::mn : iptx::OperandMajor::k, es, mn, kk);
    ASSERT_TRUE(used.insert(addr).second) << "test layout places two elements at " << addr;
    ASSERT_LE(addr + es, p.image.size());
    std::memcpy(&p.image[addr], &bits, es);
  };
  for (uint32_t j = 0; j < c.ksteps; ++j) {
    for (uint32_t kk = 0; kk < k; ++kk) {
      if (!c.a_regs)
        for (uint32_t m = 0; m < 64; ++m)
          place(p.la.desc[j], iptx::WgmmaOperand::a, c.trans_a, m, kk, p.a[m * K + j * k + kk]);
      for (uint32_t n = 0; n < c.n; ++n)
        place(p.lb.desc[j], iptx::WgmmaOperand::b, c.trans_b, n, kk, p.b[n * K + j * k + kk]);
    }
    p.descs.push_back(c.a_regs ? 0 : iptx::encode_matrix_descriptor(p.la.desc[j]));
    p.descs.push_back(iptx::encode_matrix_descriptor(p.lb.desc[j]));
  }
  // Register A fragments (fragments.h), per step.
  if (c.a_regs) {
    p.a_frag.assign(size_t(c.ksteps) * 4 * c.threads, 0);
    for (uint32_t j = 0; j < c.ksteps; ++j)
      for (uint32_t tid = 0; tid < c.threads; ++tid)
        for (uint32_t r = 0; r < 4; ++r) {
          uint32_t v = 0;
          for (uint32_t part = 0; part < 4 / es; ++part) {
            iptx::MatrixCoord m =
                es == 2 ? iptx::wgmma_a_16bit(tid % 128, r, part) : iptx::wgmma_a_8bit(tid % 128, r, part);
            v |= p.a[m.row * K + j * k + m.col] << (8 * es * part);
          }
          p.a_frag[(j * 4 + r) * c.threads + tid] = v;
        }
  }
  p.c_in.resize(size_t(c.d_regs()) * c.threads);
  for (auto& x : p.c_in)
    x = c.d_f16 ? uint32_t(std::bit_cast<uint16_t>(_Float16(rand_float(-4, 4)))) |
                      uint32_t(std::bit_cast<uint16_t>(_Float16(rand_float(-4, 4)))) << 16
                : std::bit_cast<uint32_t>(rand_float(-4, 4));
  return p;
}

std::string kernel(const Problem& p) {
  const Case& c = p.c;
  const uint32_t nd = c.d_regs();
  std::string s = header();
  s += ".visible .entry wg(.param .u64 p_img, .param .u32 p_words, .param .u64 p_desc, .param .u64 p_c,\n"
       "  .param .u64 p_a, .param .u64 p_d, .param .u32 p_scaled)\n{\n";
  s += "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<16>;\n";
  s += std::string("  .reg .") + (c.d_f16 ? "b32" : "f32") + " %d<" + std::to_string(nd) + ">;\n";
  s += "  .reg .b32 %a<" + std::to_string(4 * c.ksteps) + ">;\n";
  s += "  .shared .align 1024 .b8 smem[" + std::to_string(p.image.size()) + "];\n";
  s += R"(  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [p_img];
  ld.param.u32 %r1, [p_words];
  mov.u32 %r2, smem;
  mov.u32 %r3, %r0;
COPY:
  setp.ge.u32 %p0, %r3, %r1;
  @%p0 bra COPIED;
  mul.wide.u32 %rd1, %r3, 4;
  add.s64 %rd2, %rd0, %rd1;
  ld.global.b32 %r4, [%rd2];
  shl.b32 %r5, %r3, 2;
  add.s32 %r5, %r5, %r2;
  st.shared.b32 [%r5], %r4;
  add.s32 %r3, %r3, )" +
       std::to_string(c.threads) + R"(;
  bra COPY;
COPIED:
)";
  if (!c.no_proxy_fence)
    s += "  fence.proxy.async.shared::cta;\n";
  s += "  bar.sync 0;\n";
  const std::string stride = std::to_string(4 * c.threads);
  s += "  ld.param.u64 %rd3, [p_c];\n  mul.wide.u32 %rd4, %r0, 4;\n  add.s64 %rd3, %rd3, %rd4;\n";
  const char* ld = c.d_f16 ? "b32" : "f32";
  for (uint32_t i = 0; i < nd; ++i)
    s += std::string("  ld.global.") + ld + " %d" + std::to_string(i) + ", [%rd3+" +
         std::to_string(i * 4 * c.threads) + "];\n";
  if (c.a_regs) {
    s += "  ld.param.u64 %rd5, [p_a];\n  add.s64 %rd5, %rd5, %rd4;\n";
    for (uint32_t i = 0; i < 4 * c.ksteps; ++i)
      s += "  ld.global.b32 %a" + std::to_string(i) + ", [%rd5+" + std::to_string(i * 4 * c.threads) + "];\n";
  }
  s += "  ld.param.u32 %r6, [p_scaled];\n  setp.ne.u32 %p1, %r6, 0;\n";
  s += "  ld.param.u64 %rd6, [p_desc];\n  cvt.u64.u32 %rd7, %r2;\n  shr.u64 %rd7, %rd7, 4;\n";
  if (!c.no_wgmma_fence)
    s += "  wgmma.fence.sync.aligned;\n";
  std::string dlist = "{";
  for (uint32_t i = 0; i < nd; ++i)
    dlist += (i ? ", %d" : "%d") + std::to_string(i);
  dlist += "}";
  const std::string op = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(c.n) + "k" +
                         std::to_string(c.k()) + "." + (c.d_f16 ? "f16" : "f32") + "." + el_name(c.a) + "." +
                         el_name(c.b);
  const bool fp8 = el_bytes(c.a) == 1;
  for (uint32_t j = 0; j < c.ksteps; ++j) {
    s += "  ld.global.u64 %rd8, [%rd6+" + std::to_string(16 * j) + "];\n";
    s += "  ld.global.u64 %rd9, [%rd6+" + std::to_string(16 * j + 8) + "];\n";
    s += "  add.s64 %rd8, %rd8, %rd7;\n  add.s64 %rd9, %rd9, %rd7;\n";
    std::string a = "%rd8";
    if (c.a_regs)
      a = "{%a" + std::to_string(4 * j) + ", %a" + std::to_string(4 * j + 1) + ", %a" +
          std::to_string(4 * j + 2) + ", %a" + std::to_string(4 * j + 3) + "}";
    std::string sd = j ? "1" : c.scale_d_imm ? (c.scale_d ? "1" : "0") : "%p1";
    s += "  " + op + " " + dlist + ", " + a + ", %rd9, " + sd + ", " + std::to_string(c.scale_a) + ", " +
         std::to_string(c.scale_b);
    if (!fp8) {
      if (!c.a_regs)
        s += std::string(", ") + (c.trans_a ? "1" : "0");
      s += std::string(", ") + (c.trans_b ? "1" : "0");
    }
    s += ";\n";
  }
  s += "  wgmma.commit_group.sync.aligned;\n";
  if (c.write_d)
    s += std::string("  mov.b32 %d0, ") + (c.d_f16 ? "0" : "0f3F800000") + ";\n";
  if (c.write_smem)
    s += "  add.s32 %r7, %r2, " + std::to_string(p.b_base) +
         ";\n  shl.b32 %r8, %r0, 2;\n  add.s32 %r7, %r7, %r8;\n"
         "  st.shared.b32 [%r7], %r0;\n";
  if (!c.no_wait)
    s += "  wgmma.wait_group.sync.aligned 0;\n";
  s += "  ld.param.u64 %rd10, [p_d];\n  add.s64 %rd10, %rd10, %rd4;\n";
  for (uint32_t i = 0; i < nd; ++i)
    s += std::string("  st.global.") + ld + " [%rd10+" + std::to_string(i * 4 * c.threads) + "], %d" +
         std::to_string(i) + ";\n";
  s += "  ret;\n}\n";
  return s;
}

struct Outcome {
  std::vector<uint32_t> d;
  Runner* r = nullptr;
};

std::vector<uint32_t> run(Runner& r, const Problem& p, const std::string& text) {
  r.load(text);
  std::vector<uint32_t> words((p.image.size() + 3) / 4, 0);
  std::memcpy(words.data(), p.image.data(), p.image.size());
  const uint64_t img = r.upload(words), desc = r.upload(p.descs), cin = r.upload(p.c_in),
                 af = r.upload(p.a_frag.empty() ? std::vector<uint32_t>(1) : p.a_frag),
                 dout = r.upload(std::vector<uint32_t>(p.c_in.size()));
  r.launch("wg", {1, 1, 1}, {p.c.threads, 1, 1},
           Runner::Args()
               .add(img)
               .add(uint32_t(words.size()))
               .add(desc)
               .add(cin)
               .add(af)
               .add(dout)
               .add(uint32_t(p.c.scale_d)));
  return r.download<uint32_t>(dout, p.c_in.size());
}

// Elements of D that differ from the float64 reference beyond the rounding of each step of the chain.
size_t check(const Problem& p, const std::vector<uint32_t>& d, std::string* first = nullptr) {
  const Case& c = p.c;
  const uint32_t K = c.k() * c.ksteps;
  size_t bad = 0;
  for (uint32_t tid = 0; tid < c.threads; ++tid)
    for (uint32_t i = 0; i < c.d_regs(); ++i)
      for (uint32_t h = 0; h < (c.d_f16 ? 2u : 1u); ++h) {
        iptx::MatrixCoord m =
            c.d_f16 ? iptx::wgmma_d_f16(c.n, tid % 128, i, h) : iptx::wgmma_d_f32(c.n, tid % 128, i);
        const uint32_t in = p.c_in[size_t(i) * c.threads + tid], out = d[size_t(i) * c.threads + tid];
        double ref = 0, mag = 0;
        if (c.scale_d) {
          ref = c.d_f16 ? double(std::bit_cast<_Float16>(uint16_t(in >> (16 * h))))
                        : double(std::bit_cast<float>(in));
          mag = std::fabs(ref);
        }
        for (uint32_t kk = 0; kk < K; ++kk) {
          double x =
              c.scale_a * el_value(c.a, p.a[m.row * K + kk]) * c.scale_b * el_value(c.b, p.b[m.col * K + kk]);
          ref += x;
          mag += std::fabs(x);
        }
        const double got = c.d_f16 ? double(std::bit_cast<_Float16>(uint16_t(out >> (16 * h))))
                                   : double(std::bit_cast<float>(out));
        const double tol = (c.d_f16 ? 1e-3 : 1e-6) * c.ksteps * (mag + 1e-3);
        if (!(std::fabs(got - ref) <= tol)) {
          if (!bad && first) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "thread %u reg %u half %u (D[%u][%u]): got %.9g want %.9g", tid, i,
                          h, m.row, m.col, got, ref);
            *first = buf;
          }
          ++bad;
        }
      }
  return bad;
}

// Runs a correct case: ptxas accepts it, no reports, every element right.
void expect_correct(const Case& c) {
  SCOPED_TRACE(c.str());
  Problem p = make_problem(c);
  const std::string text = kernel(p);
  Runner r;
  auto d = run(r, p, text);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  std::string first;
  EXPECT_EQ(check(p, d, &first), 0u) << first;
}

TEST(EmuPtxWgmma, Bf16AndF16SeveralN) {
  for (uint32_t n : {8u, 24u, 64u, 136u, 256u}) {
    Case c;
    c.n = n;
    c.a = c.b = (n / 8) % 2 ? El::bf16 : El::f16;
    expect_correct(c);
  }
  Case c;
  c.a = c.b = El::f16;
  c.d_f16 = true;
  c.n = 40;
  expect_correct(c);
}

TEST(EmuPtxWgmma, EverySwizzleModeBothMajors) {
  const SwizzleMode modes[] = {SwizzleMode::none, SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128};
  for (SwizzleMode sa : modes)
    for (bool trans : {false, true}) {
      Case c;
      c.n = 64; // a multiple of the 128B MN-major atom (64 elements)
      c.a = c.b = trans ? El::f16 : El::bf16;
      c.swz_a = sa;
      c.swz_b = modes[(int(sa) + 1 + rand_u32() % 3) % 4]; // a different mode for B
      c.trans_a = trans;
      c.trans_b = !trans || rand_u32() % 2;
      c.ksteps = 2;
      expect_correct(c);
    }
}

TEST(EmuPtxWgmma, Fp8AllTypePairs) {
  const SwizzleMode modes[] = {SwizzleMode::none, SwizzleMode::b32, SwizzleMode::b64, SwizzleMode::b128};
  int i = 0;
  for (El a : {El::e4m3, El::e5m2})
    for (El b : {El::e4m3, El::e5m2}) {
      Case c;
      c.n = 16 + 16 * uint32_t(i);
      c.a = a, c.b = b;
      c.d_f16 = i % 2;
      c.swz_a = modes[i], c.swz_b = modes[3 - i];
      c.ksteps = 2;
      expect_correct(c);
      ++i;
    }
}

TEST(EmuPtxWgmma, RegisterA) {
  Case c;
  c.a_regs = true;
  c.n = 64;     // MN-major B with the 128B swizzle: N a multiple of 64
  c.ksteps = 3; // three A fragments in flight at once (as A of three chained operations)
  c.trans_b = true;
  c.a = c.b = El::f16;
  expect_correct(c);
  c.a = c.b = El::e4m3;
  c.trans_b = false;
  c.swz_b = SwizzleMode::b64;
  c.ksteps = 2;
  expect_correct(c);
}

TEST(EmuPtxWgmma, ScalesAndScaleD) {
  Case c;
  c.n = 48;
  c.scale_a = -1;
  c.ksteps = 4; // the fixture's form: 128B K-major, start address +32 B per step
  expect_correct(c);
  c.scale_a = 1, c.scale_b = -1;
  c.scale_d = false; // predicate false: D = A*B, C ignored
  expect_correct(c);
  c.scale_d_imm = true; // immediate 0
  c.a = c.b = El::e5m2;
  c.scale_a = -1;
  expect_correct(c);
  c.scale_d = true; // immediate 1
  expect_correct(c);
}

TEST(EmuPtxWgmma, TwoWarpgroups) {
  Case c;
  c.threads = 256;
  c.n = 72;
  c.a_regs = rand_u32() % 2;
  expect_correct(c);
}

// ---- Mutations of a correct kernel ----------------------------------------------------------------------

struct Mutant {
  Problem p;
  std::vector<uint32_t> d;
  std::unique_ptr<Runner> r;
  size_t wrong = 0;
};
Mutant run_mutant(Case c) {
  Mutant m;
  m.p = make_problem(c);
  const std::string text = kernel(m.p);
  m.r = std::make_unique<Runner>();
  m.d = run(*m.r, m.p, text);
  m.wrong = check(m.p, m.d);
  return m;
}

Case base_case() {
  Case c;
  c.n = 64;
  c.ksteps = 2;
  return c;
}

TEST(EmuPtxWgmma, MutationNoWaitGroup) {
  Case c = base_case();
  c.no_wait = true;
  Mutant m = run_mutant(c);
  const HazardReport* r = m.r->find(HazardKind::async_pending);
  ASSERT_NE(r, nullptr) << m.r->all_reports();
  EXPECT_NE(r->disassembly.find("st.global"), std::string::npos) << r->str();
  EXPECT_NE(r->message.find("wgmma.mma_async"), std::string::npos) << r->str();
  EXPECT_EQ(m.wrong, m.p.c_in.size()) << "D read before the wait must be the poison, not the result";
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(m.d[0])));
}

TEST(EmuPtxWgmma, MutationNoProxyFence) {
  Case c = base_case();
  c.no_proxy_fence = true;
  Mutant m = run_mutant(c);
  const HazardReport* r = m.r->find(HazardKind::proxy_fence);
  ASSERT_NE(r, nullptr) << m.r->all_reports();
  EXPECT_NE(r->disassembly.find("wgmma.mma_async"), std::string::npos) << r->str();
  EXPECT_NE(r->message.find("st.shared"), std::string::npos) << r->str();
  EXPECT_FALSE(m.r->has(HazardKind::race)) << m.r->all_reports(); // the barrier is still there
}

TEST(EmuPtxWgmma, MutationDWrittenInFlight) {
  Case c = base_case();
  c.write_d = true;
  Mutant m = run_mutant(c);
  const HazardReport* r = m.r->find(HazardKind::async_pending);
  ASSERT_NE(r, nullptr) << m.r->all_reports();
  EXPECT_NE(r->disassembly.find("mov.b32 %d0"), std::string::npos) << r->str();
}

TEST(EmuPtxWgmma, MutationNoWgmmaFence) {
  Case c = base_case();
  c.no_wgmma_fence = true;
  Mutant m = run_mutant(c);
  const HazardReport* r = m.r->find(HazardKind::async_pending);
  ASSERT_NE(r, nullptr) << m.r->all_reports();
  EXPECT_NE(r->message.find("wgmma.fence"), std::string::npos) << r->str();
}

TEST(EmuPtxWgmma, MutationOperandWrittenInFlight) {
  Case c = base_case();
  c.write_smem = true;
  Mutant m = run_mutant(c);
  const HazardReport* r = m.r->find(HazardKind::async_pending);
  ASSERT_NE(r, nullptr) << m.r->all_reports();
  EXPECT_NE(r->disassembly.find("st.shared"), std::string::npos) << r->str();
  EXPECT_GT(m.wrong, 0u) << "the operand is read at the wait: the overwrite must change D";
}

// Two groups in flight: wait_group 1 retires only the older one.
std::string two_groups_kernel(bool early_read) {
  std::string s = header();
  s += R"(.visible .entry two(.param .u64 p_img, .param .u64 p_out)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %x<4>;
  .reg .f32 %y<4>;
  .shared .align 1024 .b8 smem[4096];
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [p_img];
  mul.wide.u32 %rd1, %r0, 32;
  add.s64 %rd0, %rd0, %rd1;
  mov.u32 %r5, smem;
  shl.b32 %r6, %r0, 5;
  add.s32 %r6, %r6, %r5;
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd0];
  st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd0+16];
  st.shared.v4.b32 [%r6+16], {%r1, %r2, %r3, %r4};
  fence.proxy.async;
  bar.sync 0;
  cvt.u64.u32 %rd2, %r5;
  shr.u64 %rd2, %rd2, 4;
  or.b64 %rd3, %rd2, 0x0000001000080000;
  add.s64 %rd4, %rd3, 128;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd3, %rd4, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%y0, %y1, %y2, %y3}, %rd3, %rd4, 0, -1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 1;
)";
  if (early_read)
    s += "  add.f32 %x0, %x0, %y0;\n";
  s += R"(  ld.param.u64 %rd5, [p_out];
  mul.wide.u32 %rd6, %r0, 32;
  add.s64 %rd5, %rd5, %rd6;
  st.global.v4.f32 [%rd5], {%x0, %x1, %x2, %x3};
  wgmma.wait_group.sync.aligned 0;
  st.global.v4.f32 [%rd5+16], {%y0, %y1, %y2, %y3};
  ret;
}
)";
  return s;
}

TEST(EmuPtxWgmma, WaitGroupRetiresOldestGroups) {
  // A (64x16 f16 at 0) and B (8x16 at 2048): K-major, no swizzle, LBO 128 B, SBO 256 B.
  iptx::MatrixDescriptor da{0, 128, 256, 0, SwizzleMode::none};
  iptx::MatrixDescriptor db = da;
  db.start_address = 2048;
  ASSERT_EQ(iptx::encode_matrix_descriptor(da), 0x0000001000080000ull);
  std::vector<uint16_t> a(64 * 16), b(8 * 16);
  std::vector<uint8_t> img(4096, 0);
  for (uint32_t m = 0; m < 64; ++m)
    for (uint32_t k = 0; k < 16; ++k) {
      a[m * 16 + k] = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      uint32_t at = iptx::canonical_address(da, iptx::WgmmaOperand::a, iptx::OperandMajor::k, 2, m, k);
      std::memcpy(&img[at], &a[m * 16 + k], 2);
    }
  for (uint32_t n = 0; n < 8; ++n)
    for (uint32_t k = 0; k < 16; ++k) {
      b[n * 16 + k] = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      uint32_t at = iptx::canonical_address(db, iptx::WgmmaOperand::b, iptx::OperandMajor::k, 2, n, k);
      std::memcpy(&img[at], &b[n * 16 + k], 2);
    }
  for (bool early : {false, true}) {
    std::string text = two_groups_kernel(early);
    // The kernel ORs LBO 128 / SBO 256 into the descriptors it builds: check that encoding matches.
    ASSERT_NE(text.find("0x0000001000080000"), std::string::npos);
    Runner r;
    r.load(text);
    uint64_t pi = r.upload(img), po = r.upload(std::vector<float>(128 * 8));
    r.launch("two", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(pi).add(po));
    auto out = r.download<float>(po, 128 * 8);
    if (early) {
      const HazardReport* h = r.find(HazardKind::async_pending);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->disassembly.find("add.f32 %x0, %x0, %y0"), std::string::npos) << h->str();
      continue;
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    size_t bad = 0;
    for (uint32_t t = 0; t < 128; ++t)
      for (uint32_t i = 0; i < 4; ++i) {
        iptx::MatrixCoord m = iptx::wgmma_d_f32(8, t, i);
        double ref = 0;
        for (uint32_t k = 0; k < 16; ++k)
          ref += double(std::bit_cast<_Float16>(a[m.row * 16 + k])) *
                 double(std::bit_cast<_Float16>(b[m.col * 16 + k]));
        bad += std::fabs(out[t * 8 + i] - ref) > 1e-6 * (std::fabs(ref) + 1);
        bad += std::fabs(out[t * 8 + 4 + i] + ref) > 1e-6 * (std::fabs(ref) + 1);
      }
    EXPECT_EQ(bad, 0u);
  }
}

// A chain of three groups into the same D with one group kept in flight (wait_group 1 after each commit, as
// CUTLASS's mainloop does): the third mma_async is issued while the second, itself chained, is in flight;
// D = A*B + A*B + A*B, not the poison (the chained issue must leave D to the in-flight operation that reads
// it).
TEST(EmuPtxWgmma, ChainAcrossGroupsWithOneInFlight) {
  iptx::MatrixDescriptor da{0, 128, 256, 0, SwizzleMode::none};
  iptx::MatrixDescriptor db = da;
  db.start_address = 2048;
  std::vector<uint16_t> a(64 * 16), b(8 * 16);
  std::vector<uint8_t> img(4096, 0);
  for (uint32_t m = 0; m < 64; ++m)
    for (uint32_t k = 0; k < 16; ++k) {
      a[m * 16 + k] = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      std::memcpy(&img[iptx::canonical_address(da, iptx::WgmmaOperand::a, iptx::OperandMajor::k, 2, m, k)],
                  &a[m * 16 + k], 2);
    }
  for (uint32_t n = 0; n < 8; ++n)
    for (uint32_t k = 0; k < 16; ++k) {
      b[n * 16 + k] = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      std::memcpy(&img[iptx::canonical_address(db, iptx::WgmmaOperand::b, iptx::OperandMajor::k, 2, n, k)],
                  &b[n * 16 + k], 2);
    }
  std::string text = two_groups_kernel(false);
  const size_t from = text.find("  wgmma.fence.sync.aligned;"),
               to = text.find("  ld.param.u64 %rd5, [p_out];");
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos);
  std::string chain = "  wgmma.fence.sync.aligned;\n";
  for (int g = 0; g < 3; ++g)
    chain += std::string(
                 "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd3, %rd4, ") +
             (g ? "1" : "0") +
             ", 1, 1, 0, 0;\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 1;\n";
  chain += "  wgmma.wait_group.sync.aligned 0;\n";
  for (int i = 0; i < 4; ++i)
    chain += "  mov.f32 %y" + std::to_string(i) + ", %x" + std::to_string(i) + ";\n";
  text.replace(from, to - from, chain);
  Runner r;
  r.load(text);
  uint64_t pi = r.upload(img), po = r.upload(std::vector<float>(128 * 8));
  r.launch("two", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(pi).add(po));
  auto out = r.download<float>(po, 128 * 8);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  size_t bad = 0;
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t i = 0; i < 4; ++i) {
      iptx::MatrixCoord m = iptx::wgmma_d_f32(8, t, i);
      double ref = 0;
      for (uint32_t k = 0; k < 16; ++k)
        ref += double(std::bit_cast<_Float16>(a[m.row * 16 + k])) *
               double(std::bit_cast<_Float16>(b[m.col * 16 + k]));
      bad += !(std::fabs(out[t * 8 + i] - 3 * ref) <= 1e-5 * (std::fabs(ref) + 1));
    }
  EXPECT_EQ(bad, 0u);
}

// fence.proxy.async variants between the st.shared fill and the wgmma: the shared and no-space forms fence,
// .global does not, and a fence after the barrier is not ordered before the other warps' async reads.
TEST(EmuPtxWgmma, ProxyFenceVariants) {
  const std::string correct = "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n";
  const std::pair<const char*, bool> variants[] = {
      {"  fence.proxy.async.shared::cluster;\n  bar.sync 0;\n", true},
      {"  fence.proxy.async;\n  bar.sync 0;\n", true},
      {"  fence.proxy.async.global;\n  bar.sync 0;\n", false},
      {"  bar.sync 0;\n  fence.proxy.async.shared::cta;\n", false},
      {"  fence.proxy.async.shared::cta;\n  bar.sync 0;\n  st.shared.b32 [%r2], %r0;\n  bar.sync 0;\n",
       false},
  };
  std::string module = header();
  int i = 0;
  for (auto [v, ok] : variants) {
    Case c = base_case();
    c.n = 8;
    c.swz_b = SwizzleMode::none;
    Problem p = make_problem(c);
    std::string text = kernel(p);
    ASSERT_NE(text.find(correct), std::string::npos);
    text.replace(text.find(correct), correct.size(), v);
    Runner r;
    auto d = run(r, p, text);
    SCOPED_TRACE(v);
    if (ok) {
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      EXPECT_EQ(check(p, d), 0u);
    } else {
      const HazardReport* h = r.find(HazardKind::proxy_fence);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->disassembly.find("wgmma.mma_async"), std::string::npos) << h->str();
    }
    std::string b = text.substr(header().size());
    b.replace(b.find("entry wg("), 9, "entry wg" + std::to_string(i++) + "(");
    module += b;
  }
  EXPECT_EQ(ptxas_rejects(module), "");
}

// ptxas accepts every kernel form the tests above run (one module of all of them: one ptxas call).
TEST(EmuPtxWgmma, PtxasAcceptsTheKernels) {
  std::vector<Case> cases;
  for (El a : {El::f16, El::bf16, El::e4m3, El::e5m2})
    for (bool d16 : {false, true})
      for (bool regs : {false, true}) {
        Case c;
        c.a = a, c.b = a == El::e4m3 ? El::e5m2 : a == El::e5m2 ? El::e4m3 : a;
        c.d_f16 = d16;
        if (a == El::bf16 && d16)
          continue; // bf16 accumulates in f32 only
        c.a_regs = regs;
        c.n = regs ? 256 : 64;
        c.trans_a = !regs && el_bytes(a) == 2;
        c.trans_b = el_bytes(a) == 2;
        c.scale_a = -1;
        c.scale_d_imm = regs;
        c.ksteps = 2;
        cases.push_back(c);
      }
  for (int m = 0; m < 5; ++m) {
    Case c = base_case();
    c.no_wait = m == 0, c.no_proxy_fence = m == 1, c.no_wgmma_fence = m == 2, c.write_d = m == 3,
    c.write_smem = m == 4;
    cases.push_back(c);
  }
  std::string module = header();
  auto body = [](const std::string& text, const std::string& from, const std::string& to) {
    std::string b = text.substr(header().size());
    b.replace(b.find(from), from.size(), to);
    return b;
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    Case c = cases[i];
    if (c.d_f16 && c.write_d)
      continue;
    module += body(kernel(make_problem(c)), "entry wg(", "entry wg" + std::to_string(i) + "(");
  }
  module += body(two_groups_kernel(false), "entry two(", "entry two0(");
  module += body(two_groups_kernel(true), "entry two(", "entry two1(");
  EXPECT_EQ(ptxas_rejects(module), "");
}

// Every wgmma form of the nvcc warp-specialised GEMM fixture (which also needs TMA and mbarrier, emulated
// elsewhere) decodes: its wgmma lines, with its registers declared, load.
TEST(EmuPtxWgmma, FixtureFormsLoad) {
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/gemm_bf16_ws_sm90a.sm_90a.ptx");
  ASSERT_TRUE(f.good());
  std::set<std::string> forms;
  for (std::string line; std::getline(f, line);) {
    size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos && line.compare(b, 6, "wgmma.") == 0)
      forms.insert(line.substr(b));
  }
  ASSERT_GE(forms.size(), 4u); // fence, mma_async (4 descriptor pairs), commit, wait
  std::string s =
      header() + ".visible .entry k()\n{\n  .reg .f32 %f<961>;\n  .reg .b64 %rd<64>;\n  .reg .pred p;\n";
  for (const std::string& l : forms)
    s += "  " + l + "\n";
  s += "  ret;\n}\n";
  Runner r;
  EXPECT_NO_THROW(r.load(s)) << s;
}

// The adversarial scheduler (one lane at a time, the last warp first) runs the same kernel to the same
// result, and still sees the missing wait.
TEST(EmuPtxWgmma, AdversarialScheduler) {
  eptx::PtxEmuOptions o;
  o.scheduler = eptx::Scheduler::adversarial;
  for (bool mutate : {false, true}) {
    Case c = base_case();
    c.n = 16;
    c.no_wait = mutate;
    Problem p = make_problem(c);
    Runner r(o);
    auto d = run(r, p, kernel(p));
    if (mutate) {
      EXPECT_TRUE(r.has(HazardKind::async_pending)) << r.all_reports();
      EXPECT_EQ(check(p, d), p.c_in.size());
    } else {
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      EXPECT_EQ(check(p, d), 0u);
    }
  }
}

// wait_group is a warpgroup rendezvous: a warp of the warpgroup held at a CTA barrier the others never reach
// is a deadlock, reported with the rendezvous named.
TEST(EmuPtxWgmma, WarpgroupRendezvousDeadlock) {
  Case c = base_case();
  c.n = 8;
  Problem p = make_problem(c);
  std::string text = kernel(p);
  const std::string wait = "  wgmma.wait_group.sync.aligned 0;\n";
  ASSERT_NE(text.find(wait), std::string::npos);
  text.replace(text.find(wait), wait.size(), "  setp.ge.u32 %p2, %r0, 96;\n  @%p2 bar.sync 1, 128;\n" + wait);
  Runner r;
  run(r, p, text);
  const HazardReport* h = r.find(HazardKind::deadlock);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_NE(h->message.find("warpgroup rendezvous"), std::string::npos) << h->str();
}

// Register A shared by two in-flight operations with different accumulators is legal (attention's P.V); an
// in-flight accumulator reused by an mma_async of another shape is not.
std::string share_a_kernel(bool other_shape) {
  std::string s = header();
  s += R"(.visible .entry sa(.param .u64 p_img, .param .u64 p_a, .param .u64 p_out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .f32 %x<8>;
  .reg .f32 %y<4>;
  .reg .b32 %a<4>;
  .shared .align 1024 .b8 smem[4096];
  mov.u32 %r0, %tid.x;
  ld.param.u64 %rd0, [p_img];
  mul.wide.u32 %rd1, %r0, 32;
  add.s64 %rd0, %rd0, %rd1;
  mov.u32 %r5, smem;
  shl.b32 %r6, %r0, 5;
  add.s32 %r6, %r6, %r5;
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd0];
  st.shared.v4.b32 [%r6], {%r1, %r2, %r3, %r4};
  ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd0+16];
  st.shared.v4.b32 [%r6+16], {%r1, %r2, %r3, %r4};
  fence.proxy.async.shared::cta;
  bar.sync 0;
  ld.param.u64 %rd5, [p_a];
  mul.wide.u32 %rd6, %r0, 4;
  add.s64 %rd5, %rd5, %rd6;
  ld.global.b32 %a0, [%rd5];
  ld.global.b32 %a1, [%rd5+512];
  ld.global.b32 %a2, [%rd5+1024];
  ld.global.b32 %a3, [%rd5+1536];
  cvt.u64.u32 %rd2, %r5;
  shr.u64 %rd2, %rd2, 4;
  or.b64 %rd3, %rd2, 0x0000001000080000;
  add.s64 %rd4, %rd3, 128;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, {%a0, %a1, %a2, %a3}, %rd4, 0, 1, 1, 0;
)";
  s += other_shape
           ? "  wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%x0, %x1, %x2, %x3, %x4, %x5, %x6, %x7}, "
             "{%a0, %a1, %a2, %a3}, %rd4, 1, 1, 1, 0;\n"
           : "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%y0, %y1, %y2, %y3}, "
             "{%a0, %a1, %a2, %a3}, %rd4, 0, -1, 1, 0;\n";
  s += R"(  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd5, [p_out];
  mul.wide.u32 %rd6, %r0, 32;
  add.s64 %rd5, %rd5, %rd6;
  st.global.v4.f32 [%rd5], {%x0, %x1, %x2, %x3};
  st.global.v4.f32 [%rd5+16], {%y0, %y1, %y2, %y3};
  ret;
}
)";
  return s;
}

TEST(EmuPtxWgmma, SharedRegisterAAndShapeMismatch) {
  iptx::MatrixDescriptor db{2048, 128, 256, 0, SwizzleMode::none};
  std::vector<uint16_t> a(64 * 16), b(16 * 16);
  std::vector<uint8_t> img(4096, 0);
  for (auto& x : img)
    x = uint8_t(rand_u32()); // every byte written (the region outside B is not read)
  for (auto& x : a)
    x = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
  for (uint32_t n = 0; n < 16; ++n)
    for (uint32_t k = 0; k < 16; ++k) {
      b[n * 16 + k] = std::bit_cast<uint16_t>(_Float16(rand_float(-2, 2)));
      uint32_t at = iptx::canonical_address(db, iptx::WgmmaOperand::b, iptx::OperandMajor::k, 2, n, k);
      std::memcpy(&img[at], &b[n * 16 + k], 2);
    }
  std::vector<uint32_t> frag(4 * 128);
  for (uint32_t t = 0; t < 128; ++t)
    for (uint32_t r = 0; r < 4; ++r)
      for (uint32_t h = 0; h < 2; ++h) {
        iptx::MatrixCoord m = iptx::wgmma_a_16bit(t, r, h);
        frag[r * 128 + t] |= uint32_t(a[m.row * 16 + m.col]) << (16 * h);
      }
  std::string module = header();
  for (bool other : {false, true}) {
    const std::string text = share_a_kernel(other);
    std::string body = text.substr(header().size());
    body.replace(body.find("entry sa("), 9, std::string("entry sa") + (other ? "1(" : "0("));
    module += body;
    Runner r;
    r.load(text);
    uint64_t pi = r.upload(img), pa = r.upload(frag), po = r.upload(std::vector<float>(128 * 8));
    r.launch("sa", {1, 1, 1}, {128, 1, 1}, Runner::Args().add(pi).add(pa).add(po));
    if (other) {
      const HazardReport* h = r.find(HazardKind::async_pending);
      ASSERT_NE(h, nullptr) << r.all_reports();
      EXPECT_NE(h->disassembly.find("m64n16k16"), std::string::npos) << h->str();
      continue;
    }
    EXPECT_TRUE(r.reports().empty()) << r.all_reports();
    auto out = r.download<float>(po, 128 * 8);
    size_t bad = 0;
    for (uint32_t t = 0; t < 128; ++t)
      for (uint32_t i = 0; i < 4; ++i) {
        iptx::MatrixCoord m = iptx::wgmma_d_f32(8, t, i);
        double ref = 0;
        for (uint32_t k = 0; k < 16; ++k)
          ref += double(std::bit_cast<_Float16>(a[m.row * 16 + k])) *
                 double(std::bit_cast<_Float16>(b[m.col * 16 + k]));
        bad += std::fabs(out[t * 8 + i] - ref) > 1e-6 * (std::fabs(ref) + 1);
        bad += std::fabs(out[t * 8 + 4 + i] + ref) > 1e-6 * (std::fabs(ref) + 1);
      }
    EXPECT_EQ(bad, 0u);
  }
  EXPECT_EQ(ptxas_rejects(module), "");
}

// The four warps of a warpgroup must issue the same mma_async with the same descriptors.
TEST(EmuPtxWgmma, DescriptorsDifferAcrossWarps) {
  Case c = base_case();
  c.n = 8;
  Problem p = make_problem(c);
  std::string text = kernel(p);
  const std::string first = "  add.s64 %rd9, %rd9, %rd7;\n";
  ASSERT_NE(text.find(first), std::string::npos);
  text.insert(text.find(first) + first.size(),
              "  setp.ge.u32 %p3, %r0, 32;\n  @%p3 add.s64 %rd9, %rd9, 2;\n");
  Runner r;
  run(r, p, text);
  const HazardReport* h = r.find(HazardKind::divergence);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_NE(h->message.find("other descriptors"), std::string::npos) << h->str();
  EXPECT_NE(h->disassembly.find("wgmma.mma_async"), std::string::npos) << h->str();
}

// Forms the emulator does not run are rejected at load, naming the line.
TEST(EmuPtxWgmma, UnsupportedFormsRejectedAtLoad) {
  const char* forms[] = {
      "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%d0, %d1, %d2, %d3}, %rd0, %rd1, 1, 1, 1;",
      "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%s0, %s1, %s2, %s3}, %rd0, %rd1, 1;",
      "wgmma.mma_async.sync.aligned.m64n12k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3, %d4, %d5}, %rd0, %rd1, 1, "
      "1, 1, "
      "0, 0;",
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%d0, %d1, %d2, %d3}, %rd0, %rd1, 1, 1, 1, 0, 2;",
  };
  for (const char* f : forms) {
    std::string s = header() +
                    ".visible .entry k()\n{\n  .reg .f32 %d<8>;\n  .reg .s32 %s<4>;\n  .reg .b64 %rd<2>;\n"
                    "  wgmma.fence.sync.aligned;\n  " +
                    f + "\n  ret;\n}\n";
    Runner r;
    try {
      r.load(s);
      ADD_FAILURE() << "accepted: " << f;
    } catch (const isatune::emu::EmulationError& e) {
      EXPECT_NE(std::string(e.what()).find("test.ptx:10:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("wgmma.mma_async"), std::string::npos) << e.what();
    }
  }
}

} // namespace

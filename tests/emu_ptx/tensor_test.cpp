// The sm_80 tensor instructions: mma.sync (every shape and type) against a float64 reference on random
// inputs, ldmatrix (x1/x2/x4, .trans) and stmatrix element by element. Fragments are built and read on the
// host through isatune/ptx/fragments.h (the ISA's formulas, tested on their own in tests/ptx), not through
// the emulator's code.
#include <cmath>

#include "emu_ptx_test.h"
#include "isatune/ptx/fragments.h"

using namespace emu_ptx_test;
namespace frag = isatune::ptx;

namespace {

// f16 / bf16 bit patterns to double, written out here (independent of the emulator's number.cpp).
double f16_value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double s = (h & 0x8000) ? -1 : 1;
  if (e == 0)
    return s * std::ldexp(m, -24);
  return s * std::ldexp(1024 + m, e - 25);
}
double bf16_value(uint16_t b) {
  const int e = (b >> 7) & 255, m = b & 127;
  const double s = (b & 0x8000) ? -1 : 1;
  if (e == 0)
    return s * std::ldexp(m, -133);
  return s * std::ldexp(128 + m, e - 134);
}
// Random finite nonzero values of moderate size (|x| in [2^-4, 2^4)).
uint16_t rand_f16() {
  return uint16_t((rand_u32() & 0x8000) | uint32_t(11 + rand_u32() % 8) << 10 | (rand_u32() & 1023));
}
uint16_t rand_bf16() {
  return uint16_t((rand_u32() & 0x8000) | uint32_t(123 + rand_u32() % 8) << 7 | (rand_u32() & 127));
}

struct MmaCase {
  frag::MmaShape shape;
  bool bf16;
  bool d_f16, c_f16;
  bool tf32 = false; // m16n8k8 .tf32 inputs (one element per register)
};
uint32_t a_regs(const MmaCase& c) {
  return c.tf32 ? 4 : frag::mma_a_registers(c.shape);
}
uint32_t b_regs(const MmaCase& c) {
  return c.tf32 ? 2 : frag::mma_b_registers(c.shape);
}
// Random tf32 values (f32 bits with the low 13 mantissa bits zero), |x| in [2^-4, 2^4).
uint32_t rand_tf32() {
  return (rand_u32() & 0x80000000u) | uint32_t(123 + rand_u32() % 8) << 23 | (rand_u32() & 0x7fe000u);
}

std::string mma_opcode(const MmaCase& c) {
  std::string ab = c.tf32 ? "tf32" : c.bf16 ? "bf16" : "f16";
  return std::string("mma.sync.aligned.") + (c.shape == frag::MmaShape::m16n8k16 ? "m16n8k16" : "m16n8k8") +
         ".row.col." + (c.d_f16 ? "f16" : "f32") + "." + ab + "." + ab + "." + (c.c_f16 ? "f16" : "f32");
}

// One warp per tile: thread t loads its A, B, C registers (na, nb, nc words from a, b, c at t * n), runs
// the mma, stores its D registers.
std::string mma_kernel(const MmaCase& c, const char* target = "sm_80") {
  const uint32_t na = a_regs(c), nb = b_regs(c);
  const uint32_t nc = c.c_f16 ? 2 : 4, nd = c.d_f16 ? 2 : 4;
  auto list = [](const char* r, uint32_t n) {
    std::string s = "{";
    for (uint32_t i = 0; i < n; ++i)
      s += (i ? ", %" : "%") + std::string(r) + std::to_string(i);
    return s + "}";
  };
  std::string s = header(target);
  s += ".visible .entry mma_k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n";
  s += "  .reg .b32 %a<4>, %b<2>, %c<4>, %d<4>, %t;\n  .reg .f32 %fc<4>, %fd<4>;\n  .reg .b64 %ra, %rb, %rc, "
       "%rd, %off;\n";
  s += "  mov.u32 %t, %tid.x;\n";
  const char* names[4] = {"a", "b", "c", "d"};
  const uint32_t counts[4] = {na, nb, nc, nd};
  for (int k = 0; k < 4; ++k) {
    s += std::string("  ld.param.u64 %r") + names[k] + ", [p" + names[k] + "];\n";
    s += "  mul.wide.u32 %off, %t, " + std::to_string(4 * counts[k]) + ";\n";
    s += std::string("  add.s64 %r") + names[k] + ", %r" + names[k] + ", %off;\n";
  }
  for (uint32_t i = 0; i < na; ++i)
    s += "  ld.global.b32 %a" + std::to_string(i) + ", [%ra+" + std::to_string(4 * i) + "];\n";
  for (uint32_t i = 0; i < nb; ++i)
    s += "  ld.global.b32 %b" + std::to_string(i) + ", [%rb+" + std::to_string(4 * i) + "];\n";
  const char* cr = c.c_f16 ? "c" : "fc";
  const char* dr = c.d_f16 ? "d" : "fd";
  for (uint32_t i = 0; i < nc; ++i)
    s += std::string("  ld.global.") + (c.c_f16 ? "b32 %c" : "f32 %fc") + std::to_string(i) + ", [%rc+" +
         std::to_string(4 * i) + "];\n";
  s += "  " + mma_opcode(c) + " " + list(dr, nd) + ", " + list("a", na) + ", " + list("b", nb) + ", " +
       list(cr, nc) + ";\n";
  for (uint32_t i = 0; i < nd; ++i)
    s += std::string("  st.global.") + (c.d_f16 ? "b32" : "f32") + " [%rd+" + std::to_string(4 * i) + "], %" +
         dr + std::to_string(i) + ";\n";
  s += "  ret;\n}\n";
  return s;
}

void run_mma_case(const MmaCase& c, uint32_t warps) {
  SCOPED_TRACE(mma_opcode(c));
  const uint32_t K = frag::mma_k(c.shape), na = a_regs(c), nb = b_regs(c);
  const uint32_t nc = c.c_f16 ? 2 : 4, nd = c.d_f16 ? 2 : 4;
  const uint32_t T = 32 * warps;
  std::vector<uint32_t> a(T * na), b(T * nb), cw(T * nc);
  std::vector<std::vector<double>> A(warps, std::vector<double>(16 * K)),
      B(warps, std::vector<double>(K * 8)), C(warps, std::vector<double>(16 * 8));
  auto val = [&](uint16_t x) { return c.bf16 ? bf16_value(x) : f16_value(x); };
  for (uint32_t w = 0; w < warps; ++w) {
    // The matrices element by element; each element placed into its (lane, register, half) slot.
    std::vector<uint16_t> Ab(16 * K), Bb(K * 8);
    for (auto& x : Ab)
      x = c.bf16 ? rand_bf16() : rand_f16();
    for (auto& x : Bb)
      x = c.bf16 ? rand_bf16() : rand_f16();
    if (c.tf32) { // one f32-format element per register
      for (uint32_t l = 0; l < 32; ++l) {
        for (uint32_t r = 0; r < na; ++r) {
          frag::MatrixCoord x = frag::mma_a_tf32(l, r);
          uint32_t v = rand_tf32();
          a[(w * 32 + l) * na + r] = v;
          A[w][x.row * K + x.col] = double(std::bit_cast<float>(v));
        }
        for (uint32_t r = 0; r < nb; ++r) {
          frag::MatrixCoord x = frag::mma_b_tf32(l, r);
          uint32_t v = rand_tf32();
          b[(w * 32 + l) * nb + r] = v;
          B[w][x.row * 8 + x.col] = double(std::bit_cast<float>(v));
        }
      }
    }
    for (uint32_t l = 0; l < 32 && !c.tf32; ++l) {
      for (uint32_t r = 0; r < na; ++r)
        for (uint32_t h = 0; h < 2; ++h) {
          frag::MatrixCoord x = frag::mma_a(c.shape, l, r, h);
          a[(w * 32 + l) * na + r] |= uint32_t(Ab[x.row * K + x.col]) << (16 * h);
        }
      for (uint32_t r = 0; r < nb; ++r)
        for (uint32_t h = 0; h < 2; ++h) {
          frag::MatrixCoord x = frag::mma_b(c.shape, l, r, h);
          b[(w * 32 + l) * nb + r] |= uint32_t(Bb[x.row * 8 + x.col]) << (16 * h);
        }
    }
    for (uint32_t i = 0; i < 16 * K && !c.tf32; ++i)
      A[w][i] = val(Ab[i]);
    for (uint32_t i = 0; i < K * 8 && !c.tf32; ++i)
      B[w][i] = val(Bb[i]);
    for (uint32_t l = 0; l < 32; ++l) {
      if (c.c_f16) {
        for (uint32_t r = 0; r < 2; ++r)
          for (uint32_t h = 0; h < 2; ++h) {
            uint16_t x = rand_f16();
            frag::MatrixCoord p = frag::mma_c_f16(l, r, h);
            cw[(w * 32 + l) * 2 + r] |= uint32_t(x) << (16 * h);
            C[w][p.row * 8 + p.col] = f16_value(x);
          }
      } else {
        for (uint32_t r = 0; r < 4; ++r) {
          float x = rand_float(-8, 8);
          frag::MatrixCoord p = frag::mma_c_f32(l, r);
          std::memcpy(&cw[(w * 32 + l) * 4 + r], &x, 4);
          C[w][p.row * 8 + p.col] = double(x);
        }
      }
    }
  }
  Runner r;
  r.load(mma_kernel(c));
  uint64_t pa = r.upload(a), pb = r.upload(b), pc = r.upload(cw),
           pd = r.upload(std::vector<uint32_t>(T * nd));
  r.launch("mma_k", {1, 1, 1}, {T, 1, 1}, Runner::Args().add(pa).add(pb).add(pc).add(pd));
  auto d = r.download<uint32_t>(pd, T * nd);
  EXPECT_TRUE(r.reports().empty()) << r.all_reports();
  for (uint32_t w = 0; w < warps; ++w)
    for (uint32_t l = 0; l < 32; ++l)
      for (uint32_t i = 0; i < 4; ++i) {
        frag::MatrixCoord p = c.d_f16 ? frag::mma_c_f16(l, i / 2, i % 2) : frag::mma_c_f32(l, i);
        double ref = C[w][p.row * 8 + p.col], mag = std::fabs(ref);
        for (uint32_t k = 0; k < K; ++k) {
          ref += A[w][p.row * K + k] * B[w][k * 8 + p.col];
          mag += std::fabs(A[w][p.row * K + k] * B[w][k * 8 + p.col]);
        }
        uint32_t word = d[(w * 32 + l) * nd + (c.d_f16 ? i / 2 : i)];
        double got;
        if (c.d_f16) {
          got = f16_value(uint16_t(word >> (16 * (i % 2))));
        } else {
          float f;
          std::memcpy(&f, &word, 4);
          got = f;
        }
        // One rounding to the accumulator type (the emulator's documented order); a GPU may differ in the
        // last bits, which this bound allows for as well.
        const double tol = (c.d_f16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -22)) * mag;
        ASSERT_NEAR(got, ref, tol) << "warp " << w << " lane " << l << " element " << i << " (" << p.row
                                   << "," << p.col << ")";
      }
}

TEST(EmuPtxTensor, MmaEveryShapeAndTypeAgainstFloat64) {
  for (auto shape : {frag::MmaShape::m16n8k16, frag::MmaShape::m16n8k8}) {
    // bf16 accumulates in f32 only; f16 in f32 or f16 (D and C of one type: ptxas rejects mixed ones).
    run_mma_case({shape, true, false, false}, 2);
    run_mma_case({shape, false, false, false}, 2);
    run_mma_case({shape, false, true, true}, 2);
  }
  run_mma_case({frag::MmaShape::m16n8k8, false, false, false, true}, 2);
}

// D may name C's registers (nvcc accumulates in place): every lane's fragment is read before any is written.
TEST(EmuPtxTensor, MmaAccumulatesInPlace) {
  std::string s = header("sm_80");
  s += ".visible .entry acc(.param .u64 pd)\n{\n  .reg .b32 %a<4>, %b<2>, %t;\n  .reg .f32 %f<4>;\n  .reg "
       ".b64 "
       "%rd, %off;\n";
  s += "  mov.u32 %t, %tid.x;\n  mov.b32 %a0, 0x3c003c00;\n  mov.b32 %a1, 0x3c003c00;\n  mov.b32 %a2, "
       "0x3c003c00;\n  mov.b32 %a3, 0x3c003c00;\n";
  s += "  mov.b32 %b0, 0x3c003c00;\n  mov.b32 %b1, 0x3c003c00;\n  cvt.rn.f32.u32 %f0, %t;\n  mov.f32 %f1, "
       "%f0;\n  mov.f32 %f2, %f0;\n  mov.f32 %f3, %f0;\n";
  for (int i = 0; i < 3; ++i)
    s += "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%a0, %a1, %a2, %a3}, "
         "{%b0, %b1}, {%f0, %f1, %f2, %f3};\n";
  s += "  ld.param.u64 %rd, [pd];\n  mul.wide.u32 %off, %t, 16;\n  add.s64 %rd, %rd, %off;\n  "
       "st.global.v4.f32 "
       "[%rd], {%f0, %f1, %f2, %f3};\n  ret;\n}\n";
  Runner r;
  r.load(s);
  uint64_t pd = r.upload(std::vector<float>(128));
  r.launch("acc", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(pd));
  auto d = r.download<float>(pd, 128);
  // C starts as the lane's own id in every element, so D(m,n) = 48 + the id of the lane holding (m,n).
  for (uint32_t l = 0; l < 32; ++l)
    for (uint32_t i = 0; i < 4; ++i)
      ASSERT_EQ(d[l * 4 + i], float(l + 48)) << l << " " << i;
}

// A warp-wide .aligned instruction with a lane missing (exited, or a partial warp) is reported as divergence.
TEST(EmuPtxTensor, MmaWithoutTheWholeWarpIsDivergence) {
  MmaCase c{frag::MmaShape::m16n8k8, true, false, false};
  std::string s = mma_kernel(c);
  const std::string at = "  mov.u32 %t, %tid.x;\n";
  const uint32_t lane = rand_u32() % 32;
  s.replace(s.find(at), at.size(),
            at + "  { .reg .pred %x; setp.eq.u32 %x, %t, " + std::to_string(lane) + "; @%x ret; }\n");
  Runner r;
  r.load(s);
  std::vector<uint32_t> z(32 * 4, 0x3f803f80u);
  uint64_t pa = r.upload(z), pb = r.upload(z), pc = r.upload(z), pd = r.upload(z);
  r.launch("mma_k", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(pa).add(pb).add(pc).add(pd));
  const HazardReport* h = r.find(HazardKind::divergence);
  ASSERT_NE(h, nullptr) << r.all_reports();
  EXPECT_NE(h->disassembly.find("mma.sync"), std::string::npos) << h->str();
  // A partial last warp (48 threads: warp 1 has 16) lacks the fragments of its missing threads.
  Runner p;
  p.load(mma_kernel(c));
  std::vector<uint32_t> y(64 * 4, 0x3f803f80u);
  uint64_t qa = p.upload(y), qb = p.upload(y), qc = p.upload(y), qd = p.upload(y);
  p.launch("mma_k", {1, 1, 1}, {48, 1, 1}, Runner::Args().add(qa).add(qb).add(qc).add(qd));
  h = p.find(HazardKind::divergence);
  ASSERT_NE(h, nullptr) << p.all_reports();
  EXPECT_EQ(h->wave, 1u) << h->str();
  EXPECT_NE(h->message.find("partial"), std::string::npos) << h->str();
}

TEST(EmuPtxTensor, UnsupportedMmaFormsRejectedAtLoad) {
  for (const char* op : {"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, {%a0, "
                         "%a1}, {%b0}, {%f0, %f1, %f2, %f3};",
                         "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32 {%a0, %a1}, {%a0, %a1, %a2, "
                         "%a3}, {%b0, %b1}, {%f0, %f1, %f2, %f3};",
                         "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%a0, %a1, %a2, %a3}, {%a0, %a1}, "
                         "{%b0}, {%a0, %a1, %a2, %a3};"}) {
    std::string s = header("sm_80") +
                    ".visible .entry k()\n{\n  .reg .b32 %a<4>, %b<2>;\n  .reg .f32 %f<4>;\n  " + op +
                    "\n  ret;\n}\n";
    Runner r;
    try {
      r.load(s);
      FAIL() << op << " loaded";
    } catch (const isatune::emu::EmulationError& e) {
      std::string what = e.what();
      const long line = std::count(s.begin(), s.begin() + long(s.find("mma.sync")), '\n') + 1;
      EXPECT_NE(what.find("test.ptx:" + std::to_string(line) + ":"), std::string::npos) << what;
      EXPECT_NE(what.find("mma"), std::string::npos) << what;
    }
  }
}

// ---- ldmatrix / stmatrix

// Shared buffer of 1024 bytes filled from global memory (thread t stores words t, t+32, ...), a barrier,
// then each lane gives the row address s + off[lane] to the matrix instruction.
// generic: the row address as a generic address (cvta.shared) and no state space on the ldmatrix.
std::string ldmatrix_kernel(uint32_t num, bool trans, bool fill = true, bool generic = false) {
  std::string s = header("sm_80");
  s += ".visible .entry ldm(.param .u64 psrc, .param .u64 poff, .param .u64 pout)\n{\n";
  s += "  .reg .b32 %t, %i, %v, %o, %sa, %r<4>;\n  .reg .b64 %src, %poff, %out, %x;\n  .reg .pred %p;\n";
  s += "  .shared .align 16 .b8 sm[1024];\n";
  s += "  mov.u32 %t, %tid.x;\n  ld.param.u64 %src, [psrc];\n  ld.param.u64 %poff, [poff];\n  ld.param.u64 "
       "%out, [pout];\n";
  if (fill) {
    s += "  mov.u32 %i, %t;\nFILL:\n  mul.wide.u32 %x, %i, 4;\n  add.s64 %x, %src, %x;\n  ld.global.b32 %v, "
         "[%x];\n";
    s += "  shl.b32 %o, %i, 2;\n  mov.u32 %sa, sm;\n  add.u32 %sa, %sa, %o;\n  st.shared.b32 [%sa], %v;\n";
    s += "  add.u32 %i, %i, 32;\n  setp.lt.u32 %p, %i, 256;\n  @%p bra FILL;\n";
  }
  s += "  bar.sync 0;\n";
  s +=
      "  mul.wide.u32 %x, %t, 4;\n  add.s64 %x, %poff, %x;\n  ld.global.b32 %o, [%x];\n  mov.u32 %sa, sm;\n  "
      "add.u32 %sa, %sa, %o;\n";
  std::string regs = "{";
  for (uint32_t i = 0; i < num; ++i)
    regs += (i ? ", %r" : "%r") + std::to_string(i);
  regs += "}";
  if (generic)
    s += "  cvt.u64.u32 %x, %sa;\n  cvta.shared.u64 %x, %x;\n  ldmatrix.sync.aligned.m8n8.x" +
         std::to_string(num) + (trans ? ".trans" : "") + ".b16 " + regs + ", [%x];\n";
  else
    s += "  ldmatrix.sync.aligned.m8n8.x" + std::to_string(num) + (trans ? ".trans" : "") + ".shared.b16 " +
         regs + ", [%sa];\n";
  s += "  mul.wide.u32 %x, %t, 16;\n  add.s64 %out, %out, %x;\n";
  for (uint32_t i = 0; i < num; ++i)
    s += "  st.global.b32 [%out+" + std::to_string(4 * i) + "], %r" + std::to_string(i) + ";\n";
  s += "  ret;\n}\n";
  return s;
}

// Random distinct 16-byte-aligned row offsets in the 1024-byte buffer, one per lane.
std::vector<uint32_t> random_rows() {
  std::vector<uint32_t> rows(64);
  for (uint32_t i = 0; i < 64; ++i)
    rows[i] = 16 * i;
  std::shuffle(rows.begin(), rows.end(), rng());
  rows.resize(32);
  return rows;
}

TEST(EmuPtxTensor, LdmatrixElementByElement) {
  for (auto sched : {eptx::Scheduler::lockstep, eptx::Scheduler::adversarial})
    for (uint32_t num : {1u, 2u, 4u})
      for (bool trans : {false, true}) {
        const bool generic = rand_u32() % 2;
        SCOPED_TRACE("x" + std::to_string(num) + (trans ? ".trans" : "") + (generic ? " generic" : ""));
        eptx::PtxEmuOptions o;
        o.target = "sm_80";
        o.scheduler = sched;
        Runner r(o);
        r.load(ldmatrix_kernel(num, trans, true, generic));
        auto src = random_vec<uint32_t>(256, [] { return rand_u32() | 1; });
        auto off = random_rows();
        uint64_t ps = r.upload(src), po = r.upload(off), pout = r.upload(std::vector<uint32_t>(32 * 4));
        r.launch("ldm", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(ps).add(po).add(pout));
        auto out = r.download<uint32_t>(pout, 32 * 4);
        EXPECT_TRUE(r.reports().empty()) << r.all_reports();
        auto stored = [&](const frag::MatrixElement& e) {
          uint32_t lane = frag::ldmatrix_address_lane(num, e.matrix, e.row);
          uint32_t byte = off[lane] + 2 * e.col;
          return uint16_t(src[byte / 4] >> (8 * (byte % 4)));
        };
        for (uint32_t l = 0; l < 32; ++l)
          for (uint32_t i = 0; i < num; ++i)
            for (uint32_t h = 0; h < 2; ++h)
              ASSERT_EQ(uint16_t(out[l * 4 + i] >> (16 * h)),
                        stored(frag::ldmatrix_element(num, trans, l, i, h)))
                  << "lane " << l << " register " << i << " half " << h;
      }
}

TEST(EmuPtxTensor, LdmatrixChecksRowsThroughTheShadow) {
  auto src = random_vec<uint32_t>(256, [] { return rand_u32(); });
  auto run = [&](std::vector<uint32_t> off, bool fill) {
    Runner r(eptx::PtxEmuOptions{});
    r.load(ldmatrix_kernel(4, false, fill));
    uint64_t ps = r.upload(src), po = r.upload(off), pout = r.upload(std::vector<uint32_t>(32 * 4));
    r.launch("ldm", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(ps).add(po).add(pout));
    return r.reports();
  };
  auto off = random_rows();
  const uint32_t bad = rand_u32() % 32;
  auto misaligned = off;
  misaligned[bad] += 8;
  auto kinds = [](const std::vector<HazardReport>& v, HazardKind k) {
    for (auto& h : v)
      if (h.kind == k)
        return &h - v.data();
    return long(-1);
  };
  auto rep = run(misaligned, true);
  long i = kinds(rep, HazardKind::unaligned);
  ASSERT_GE(i, 0);
  EXPECT_EQ(rep[size_t(i)].thread[0], bad) << rep[size_t(i)].str();
  EXPECT_NE(rep[size_t(i)].disassembly.find("ldmatrix"), std::string::npos);
  auto outside = off;
  outside[bad] = 1024 + 16 * (rand_u32() % 8);
  rep = run(outside, true);
  ASSERT_GE(kinds(rep, HazardKind::out_of_bounds), 0);
  rep = run(off, false); // nothing written to shared memory
  ASSERT_GE(kinds(rep, HazardKind::uninitialized), 0);
}

std::string stmatrix_kernel(uint32_t num, bool trans, const char* target) {
  std::string s = header(target);
  s += ".visible .entry stm(.param .u64 pin, .param .u64 poff, .param .u64 pout)\n{\n";
  s += "  .reg .b32 %t, %o, %sa, %v, %r<4>;\n  .reg .b64 %in, %poff, %out, %x;\n";
  s += "  .shared .align 16 .b8 sm[1024];\n";
  s += "  mov.u32 %t, %tid.x;\n  ld.param.u64 %in, [pin];\n  ld.param.u64 %poff, [poff];\n  ld.param.u64 "
       "%out, [pout];\n";
  s += "  mul.wide.u32 %x, %t, 16;\n  add.s64 %in, %in, %x;\n";
  std::string regs = "{";
  for (uint32_t i = 0; i < num; ++i) {
    s += "  ld.global.b32 %r" + std::to_string(i) + ", [%in+" + std::to_string(4 * i) + "];\n";
    regs += (i ? ", %r" : "%r") + std::to_string(i);
  }
  regs += "}";
  s +=
      "  mul.wide.u32 %x, %t, 4;\n  add.s64 %x, %poff, %x;\n  ld.global.b32 %o, [%x];\n  mov.u32 %sa, sm;\n  "
      "add.u32 %sa, %sa, %o;\n";
  s += "  stmatrix.sync.aligned.m8n8.x" + std::to_string(num) + (trans ? ".trans" : "") +
       ".shared.b16 [%sa], " + regs + ";\n";
  s += "  bar.sync 0;\n";
  // Each lane copies its address lane's row (16 bytes) back out, at out + 16 * lane: rows of lanes without an
  // address are not written.
  s += "  mul.wide.u32 %x, %t, 16;\n  add.s64 %out, %out, %x;\n";
  s += "  { .reg .pred %p; setp.ge.u32 %p, %t, " + std::to_string(8 * num) + "; @%p bra DONE; }\n";
  for (int i = 0; i < 4; ++i)
    s += "  ld.shared.b32 %v, [%sa+" + std::to_string(4 * i) + "];\n  st.global.b32 [%out+" +
         std::to_string(4 * i) + "], %v;\n";
  s += "DONE:\n  ret;\n}\n";
  return s;
}

TEST(EmuPtxTensor, StmatrixElementByElement) {
  for (uint32_t num : {1u, 2u, 4u})
    for (bool trans : {false, true}) {
      SCOPED_TRACE("x" + std::to_string(num) + (trans ? ".trans" : ""));
      Runner r;
      r.load(stmatrix_kernel(num, trans, "sm_90a"));
      auto in = random_vec<uint32_t>(32 * 4, [] { return rand_u32(); });
      auto off = random_rows();
      uint64_t pi = r.upload(in), po = r.upload(off), pout = r.upload(std::vector<uint32_t>(32 * 4));
      r.launch("stm", {1, 1, 1}, {32, 1, 1}, Runner::Args().add(pi).add(po).add(pout));
      auto out = r.download<uint32_t>(pout, 32 * 4);
      EXPECT_TRUE(r.reports().empty()) << r.all_reports();
      for (uint32_t m = 0; m < num; ++m)
        for (uint32_t row = 0; row < 8; ++row)
          for (uint32_t col = 0; col < 8; ++col) {
            uint32_t lane = frag::ldmatrix_address_lane(num, m, row);
            uint16_t got = uint16_t(out[lane * 4 + col / 2] >> (16 * (col % 2)));
            frag::FragmentSlot f = frag::stmatrix_source(num, trans, {m, row, col});
            uint16_t want = uint16_t(in[f.lane * 4 + f.reg] >> (16 * f.part));
            ASSERT_EQ(got, want) << "matrix " << m << " row " << row << " col " << col;
          }
    }
}

// stmatrix is sm_90: an sm_80 module using it is rejected at load, naming the line.
TEST(EmuPtxTensor, StmatrixRejectedOnSm80) {
  const std::string s = stmatrix_kernel(4, false, "sm_80");
  const size_t at = s.find("stmatrix");
  const long line = std::count(s.begin(), s.begin() + long(at), '\n') + 1;
  for (const char* device : {"sm_80", "sm_90a"}) {
    eptx::PtxEmuOptions o;
    o.target = device;
    Runner r(o);
    try {
      r.load(s);
      FAIL() << "loaded on " << device;
    } catch (const isatune::emu::EmulationError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("test.ptx:" + std::to_string(line) + ":"), std::string::npos) << what;
      EXPECT_NE(what.find("sm_90"), std::string::npos) << what;
    }
  }
}

} // namespace

// mma.sync.aligned.{m16n8k16,m16n8k8}.row.col with .f16/.bf16 inputs (#warp-level-matrix-instructions-mma,
// fragments #warp-level-matrix-fragment-mma-16816-float and -1688): one warp computes D = A*B + C for a
// 16x8 tile. The register fragments come from isatune/ptx/fragments.h (the ISA formulas), tabulated once.
//
// Arithmetic: every product of two f16/bf16 values is exact in double; the K products of one element are
// summed in double in k order, C is added last, and the sum is rounded once (round to nearest even) to the
// accumulator type. The ISA does not specify the tensor core's internal order or rounding (published
// measurements of A100 show truncated, non-IEEE partial sums), so results can differ from a GPU in the last
// bits of the f32 (or f16) result; tests compare against a float64 reference with a tolerance.
#include <algorithm>
#include <cstdio>

#include "isatune/ptx/fragments.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace frag = isatune::ptx;

namespace {

struct MmaTables {
  frag::MatrixCoord a[32][4][2], b[32][2][2], c[32][4];
};

const MmaTables& tables(frag::MmaShape s) {
  static const auto build = [](frag::MmaShape sh) {
    MmaTables t{};
    for (uint32_t l = 0; l < 32; ++l) {
      for (uint32_t r = 0; r < frag::mma_a_registers(sh); ++r)
        for (uint32_t h = 0; h < 2; ++h)
          t.a[l][r][h] = frag::mma_a(sh, l, r, h);
      for (uint32_t r = 0; r < frag::mma_b_registers(sh); ++r)
        for (uint32_t h = 0; h < 2; ++h)
          t.b[l][r][h] = frag::mma_b(sh, l, r, h);
      for (uint32_t r = 0; r < 4; ++r)
        t.c[l][r] = frag::mma_c_f32(l, r);
    }
    return t;
  };
  static const MmaTables k16 = build(frag::MmaShape::m16n8k16), k8 = build(frag::MmaShape::m16n8k8);
  return s == frag::MmaShape::m16n8k16 ? k16 : k8;
}

// D's f32 rounding: the host's conversion rounds to nearest even (handlers that change the host rounding mode
// restore it), a NaN becomes the canonical one as in to_f32.
uint32_t round_f32(double x) {
  return std::isnan(x) ? kNanF32 : std::bit_cast<uint32_t>(float(x));
}

double half_value(uint64_t bits, bool bf) {
  return bf ? double(bf16_to_f32(uint16_t(bits))) : double(half_to_f32(uint16_t(bits)));
}

// .tf32 fragments (one element per register) of m16n8k8.
struct Tf32Tables {
  frag::MatrixCoord a[32][4], b[32][2];
};
const Tf32Tables& tf32_tables() {
  static const Tf32Tables t = [] {
    Tf32Tables x{};
    for (uint32_t l = 0; l < 32; ++l) {
      for (uint32_t r = 0; r < 4; ++r)
        x.a[l][r] = frag::mma_a_tf32(l, r);
      for (uint32_t r = 0; r < 2; ++r)
        x.b[l][r] = frag::mma_b_tf32(l, r);
    }
    return x;
  }();
  return t;
}
// A .tf32 element: the register's f32 bits with the 13 mantissa bits below tf32's 10 ignored (truncated).
// (unverified) The ISA says the registers hold .tf32 data (cvt.rna.tf32.f32 makes it); what the tensor core
// does with other low bits is not specified there: tests give exact tf32 values.
double tf32_value(uint64_t bits) {
  return double(std::bit_cast<float>(uint32_t(bits) & 0xffffe000u));
}

// in.op: 0 m16n8k16, 1 m16n8k8, 2 m16n8k8 with .tf32 inputs; in.type2: the A/B type (f16, bf16); in.type: D's
// type, in.op2: C's type (0 f32, 1 f16). f32 accumulators are 4 registers, f16 ones 2 .f16x2 registers
// (element 2r+h placed as f32 register 2r+h: frag::mma_c_f16).
void mma(Warp& w, const Inst& in, uint32_t act) {
  warp_wide_check(w, act);
  const frag::MmaShape s = in.op == 0 ? frag::MmaShape::m16n8k16 : frag::MmaShape::m16n8k8;
  const MmaTables& t = tables(s);
  const bool tf32 = in.op == 2;
  const uint32_t K = frag::mma_k(s), na = tf32 ? 4 : frag::mma_a_registers(s),
                 nb = tf32 ? 2 : frag::mma_b_registers(s);
  const bool bf = in.type2 == Ty::bf16;
  const Opnd &d = in.ops[0], &a = in.ops[1], &b = in.ops[2], &c = in.ops[3];
  double A[16][16], B[16][8], C[16][8];
  // Every lane's fragment is read before any is written (D may be C).
  for (unsigned l = 0; l < 32; ++l) {
    if (tf32) {
      const Tf32Tables& x = tf32_tables();
      for (uint32_t r = 0; r < na; ++r)
        A[x.a[l][r].row][x.a[l][r].col] = tf32_value(read(w, a.elems[r], l));
      for (uint32_t r = 0; r < nb; ++r)
        B[x.b[l][r].row][x.b[l][r].col] = tf32_value(read(w, b.elems[r], l));
    }
    for (uint32_t r = 0; !tf32 && r < na; ++r) {
      uint64_t v = read(w, a.elems[r], l);
      for (uint32_t h = 0; h < 2; ++h)
        A[t.a[l][r][h].row][t.a[l][r][h].col] = half_value(v >> (16 * h), bf);
    }
    for (uint32_t r = 0; !tf32 && r < nb; ++r) {
      uint64_t v = read(w, b.elems[r], l);
      for (uint32_t h = 0; h < 2; ++h)
        B[t.b[l][r][h].row][t.b[l][r][h].col] = half_value(v >> (16 * h), bf);
    }
    for (uint32_t i = 0; i < 4; ++i) {
      const frag::MatrixCoord x = t.c[l][i];
      if (in.op2 == 0)
        C[x.row][x.col] = double(as<float>(read(w, c.elems[i], l)));
      else
        C[x.row][x.col] = half_value(read(w, c.elems[i / 2], l) >> (16 * (i % 2)), false);
    }
  }
  double D[16][8];
  for (uint32_t m = 0; m < 16; ++m)
    for (uint32_t n = 0; n < 8; ++n) {
      double sum = 0;
      for (uint32_t k = 0; k < K; ++k)
        sum += A[m][k] * B[k][n];
      D[m][n] = sum + C[m][n];
    }
  for_lanes(act, [&](unsigned l) {
    if (in.type == Ty::f32) {
      for (uint32_t i = 0; i < 4; ++i)
        write(w, d.elems[i], l, round_f32(D[t.c[l][i].row][t.c[l][i].col]));
    } else {
      for (uint32_t r = 0; r < 2; ++r) {
        const frag::MatrixCoord lo = t.c[l][2 * r], hi = t.c[l][2 * r + 1];
        write(w, d.elems[r], l,
              uint64_t(to_f16(D[lo.row][lo.col], Rnd::rn)) | uint64_t(to_f16(D[hi.row][hi.col], Rnd::rn))
                                                                 << 16);
      }
    }
  });
}

} // namespace

// Operand `op` must be a vector of n 32-bit registers (ptxas wants the braces for one register too).
void need_registers(Decoder& d, size_t op, size_t n, const char* what) {
  const Opnd& o = d.in.ops[op];
  bool ok = o.kind == Opnd::Kind::vec && o.elems.size() == n;
  if (ok)
    for (const Opnd& e : o.elems)
      ok = ok && e.kind == Opnd::Kind::reg && e.rbits == 32;
  if (!ok)
    d.error(std::string(what) + " must be a vector of " + std::to_string(n) + " 32-bit registers");
}

void warp_wide_check(Warp& w, uint32_t act) {
  // All 32 lanes: a partial last warp of the CTA lacks the fragments of its missing threads too.
  if (act != 0xffffffffu) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "lanes 0x%08x execute this .aligned warp-wide instruction without lanes 0x%08x of the warp "
                  "(%s)",
                  act, ~act,
                  w.lanes < 32 ? "the CTA's last warp is partial"
                               : "exited, predicated off, or at other instructions");
    report(w, unsigned(std::countr_zero(act | (act ? 0 : 1u))), HazardKind::divergence, buf);
  }
}

void decode_mma(Decoder& d) {
  Inst& in = d.in;
  if (d.ai.qualifiers.empty() || d.ai.qualifiers[0] == "sp")
    d.not_yet(); // mma.sp (sparse)
  if (!d.take("sync") || !d.take("aligned"))
    d.error("mma needs .sync.aligned");
  if (d.take("m16n8k16"))
    in.op = 0;
  else if (d.take("m16n8k8"))
    in.op = 1;
  else
    d.not_yet(); // m8n8k4, m16n8k32, m16n8k4 (tf32/f64), integer and sub-byte shapes
  if (!d.take("row") || !d.take("col"))
    d.error("mma.m16n8 needs .row.col");
  const Ty td = d.take_type(), ta = d.take_type(), tb = d.take_type(), tc = d.take_type();
  // .tf32 is no Ty (a .b32 register format): taken by name; f32.tf32.tf32.f32 leaves ta = C's .f32.
  if (d.take("tf32") && d.take("tf32")) {
    if (in.op != 1 || td != Ty::f32 || ta != Ty::f32 || tb != Ty::none)
      d.error("mma with .tf32 inputs: the emulator runs m16n8k8.row.col.f32.tf32.tf32.f32");
    in.op = 2;
    in.type = Ty::f32;
    d.need_ops(4);
    need_registers(d, 0, 4, "mma D");
    need_registers(d, 1, 4, "mma A");
    need_registers(d, 2, 2, "mma B");
    need_registers(d, 3, 4, "mma C");
    in.sync = Sync::collective;
    in.aligned = true;
    in.fn = &mma;
    d.finish();
    return;
  }
  if (ta != tb || (ta != Ty::f16 && ta != Ty::bf16))
    d.not_yet();                                    // integer, f64, fp8 inputs
  if ((td != Ty::f32 && td != Ty::f16) || td != tc) // ptxas: ".dtype must be '.f16' when .ctype is '.f16'"
    d.error("mma accumulators D and C must both be .f32 or both .f16");
  if (ta == Ty::bf16 && (td != Ty::f32 || tc != Ty::f32))
    d.error("mma with .bf16 inputs needs .f32 accumulators (D and C)");
  in.type = td;
  in.type2 = ta;
  in.op2 = tc == Ty::f16;
  d.need_ops(4);
  need_registers(d, 0, td == Ty::f32 ? 4 : 2, "mma D");
  need_registers(d, 1, in.op == 0 ? 4 : 2, "mma A");
  need_registers(d, 2, in.op == 0 ? 2 : 1, "mma B");
  need_registers(d, 3, tc == Ty::f32 ? 4 : 2, "mma C");
  in.sync = Sync::collective; // the whole warp (mask_op -1): divergence is reported by the scheduler
  in.aligned = true;
  in.fn = &mma;
  d.finish();
}

} // namespace isatune::emu::ptx

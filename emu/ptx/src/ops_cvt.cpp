// Data movement and conversion (#data-movement-and-conversion-instructions-cvt, -cvta, -mov): every
// int/float width with every rounding mode and .sat, f16/bf16 and the x2 packing forms (first source in the
// upper half), generic address windows, and mov with vector pack/unpack.
#include <cfenv>
#include <limits>

#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

struct RoundScope {
  int old = -1;
  explicit RoundScope(Rnd r) {
    int m = r == Rnd::rz ? FE_TOWARDZERO : r == Rnd::rm ? FE_DOWNWARD : r == Rnd::rp ? FE_UPWARD : -1;
    if (m >= 0) {
      old = std::fegetround();
      std::fesetround(m);
    }
  }
  ~RoundScope() {
    if (old >= 0)
      std::fesetround(old);
  }
};

// The source as a double (floats; exact) or an integer (ints), per its type.
struct Val {
  bool is_float;
  double f;
  __int128 i;
};

Val get(uint64_t bits, Ty t) {
  Val v{is_float(t), 0, 0};
  switch (t) {
  case Ty::f16:
    v.f = half_to_f32(uint16_t(bits));
    break;
  case Ty::bf16:
    v.f = bf16_to_f32(uint16_t(bits));
    break;
  case Ty::f32:
    v.f = std::bit_cast<float>(uint32_t(bits));
    break;
  case Ty::f64:
    v.f = std::bit_cast<double>(bits);
    break;
  default: {
    unsigned b = type_bits(t);
    uint64_t u = bits & width_mask(b);
    if (is_signed(t) && b < 64 && (u >> (b - 1) & 1))
      v.i = __int128(int64_t(u | ~width_mask(b)));
    else if (is_signed(t))
      v.i = __int128(int64_t(u));
    else
      v.i = __int128(u);
  }
  }
  return v;
}

double round_integral(double x, Rnd r) {
  switch (r) {
  case Rnd::rzi:
    return std::trunc(x);
  case Rnd::rmi:
    return std::floor(x);
  case Rnd::rpi:
    return std::ceil(x);
  default:
    return std::nearbyint(x); // rni: ties to even (the default rounding mode)
  }
}

uint64_t int_result(__int128 v, Ty d, bool sat) {
  unsigned b = type_bits(d);
  if (sat) {
    __int128 lo = is_signed(d) ? -(__int128(1) << (b - 1)) : 0;
    __int128 hi = is_signed(d) ? (__int128(1) << (b - 1)) - 1 : (__int128(1) << b) - 1;
    v = std::min(std::max(v, lo), hi);
  }
  return uint64_t(v) & width_mask(b);
}

uint64_t convert(uint64_t bits, const Inst& in) {
  const Ty d = in.type, s = in.type2;
  Val v = get(bits, s);
  if (v.is_float && in.ftz && s == Ty::f32 && std::fpclassify(v.f) == FP_SUBNORMAL)
    v.f = std::copysign(0.0, v.f);
  if (!is_float(d)) {
    if (!v.is_float)
      return int_result(v.i, d, in.sat);
    // Float to integer: rounded as the modifier says, clamped to the destination range, NaN gives 0.
    if (std::isnan(v.f))
      return 0;
    double r = round_integral(v.f, in.rnd);
    unsigned b = type_bits(d);
    double lo = is_signed(d) ? -std::ldexp(1.0, int(b) - 1) : 0.0;
    double hi = is_signed(d) ? std::ldexp(1.0, int(b) - 1) : std::ldexp(1.0, int(b));
    if (r <= lo)
      return int_result(__int128(lo), d, false);
    if (r >= hi)
      return int_result(is_signed(d) ? (__int128(1) << (b - 1)) - 1 : (__int128(1) << b) - 1, d, false);
    return int_result(__int128(r), d, false);
  }
  // To a float. Widening keeps a NaN's payload (it is exact); narrowing gives the canonical NaN.
  if (v.is_float && std::isnan(v.f) && type_bits(d) >= type_bits(s)) {
    if (d == Ty::f32 && s == Ty::f32)
      return bits & 0xffffffffu;
    if (d == Ty::f32)
      return s == Ty::bf16 ? (bits & 0xffff) << 16 : std::bit_cast<uint32_t>(half_to_f32(uint16_t(bits)));
    if (d == Ty::f64 && s == Ty::f64)
      return bits;
    if (d == Ty::f64)
      return std::bit_cast<uint64_t>(s == Ty::f32 ? double(std::bit_cast<float>(uint32_t(bits))) : v.f);
  }
  Rnd r = in.rnd;
  if (r == Rnd::none)
    r = Rnd::rn;
  double x;
  if (!v.is_float) {
    if (d == Ty::f32) {
      RoundScope rs(r);
      float f = is_signed(s) ? float(int64_t(v.i)) : float(uint64_t(v.i));
      if (in.sat)
        f = std::min(std::max(f, 0.0f), 1.0f);
      return std::bit_cast<uint32_t>(f);
    }
    if (d == Ty::f64) {
      RoundScope rs(r);
      double f = is_signed(s) ? double(int64_t(v.i)) : double(uint64_t(v.i));
      if (in.sat)
        f = std::min(std::max(f, 0.0), 1.0);
      return std::bit_cast<uint64_t>(f);
    }
    x = double(int64_t(v.i)); // f16/bf16: any integer past 2^53 overflows the format anyway
    if (!is_signed(s))
      x = double(uint64_t(v.i));
  } else {
    x = v.f;
    if (r >= Rnd::rni)
      x = std::isnan(x) ? x : round_integral(x, r); // same-size rounding to an integer
  }
  if (in.sat)
    x = std::isnan(x) ? 0.0 : std::min(std::max(x, 0.0), 1.0);
  if (in.op == 1 && x < 0)
    x = 0.0; // .relu (NaN stays NaN)
  const Rnd fr = r >= Rnd::rni ? Rnd::rn : r;
  switch (d) {
  case Ty::f16:
    return to_f16(x, fr, in.op2 == 1);
  case Ty::bf16:
    return to_bf16(x, fr, in.op2 == 1);
  case Ty::f32: {
    uint32_t f = to_f32(x, fr);
    if (in.ftz && (f & 0x7f800000u) == 0)
      f &= 0x80000000u;
    return f;
  }
  case Ty::f64:
    return std::bit_cast<uint64_t>(x);
  default:
    return 0;
  }
}

// A narrower integer result is extended to the register's width by the destination type's signedness
// (#data-movement-and-conversion-instructions-cvt).
uint64_t extend_result(uint64_t v, Ty d) {
  unsigned b = type_bits(d);
  if (is_signed(d) && b < 64 && (v >> (b - 1) & 1))
    v |= ~width_mask(b);
  return v;
}

void cvt(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    write(w, in.ops[0], l, extend_result(convert(read(w, in.ops[1], l), in), in.type));
  });
}

// cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b: d = {cvt(a) in the upper half, cvt(b) in the lower}.
void cvt_x2(Warp& w, const Inst& in, uint32_t act) {
  Inst half = in;
  half.type = in.type == Ty::f16x2 ? Ty::f16 : Ty::bf16;
  for_lanes(act, [&](unsigned l) {
    uint64_t hi = convert(read(w, in.ops[1], l), half), lo = convert(read(w, in.ops[2], l), half);
    write(w, in.ops[0], l, (hi & 0xffff) << 16 | (lo & 0xffff));
  });
}

uint64_t window(Space s) {
  return s == Space::shared || s == Space::shared_cluster ? kSharedWindow
         : s == Space::local                              ? kLocalWindow
         : s == Space::param                              ? kParamWindow
                                                          : 0;
}

// cvta.<space> d, a (state-space address to generic) and cvta.to.<space> (generic to state space).
void cvta(Warp& w, const Inst& in, uint32_t act) {
  const uint64_t base = window(in.space);
  const uint64_t mask = width_mask(type_bits(in.type));
  for_lanes(act, [&](unsigned l) {
    uint64_t a = read(w, in.ops[1], l);
    write(w, in.ops[0], l, (in.op ? a - base : a + base) & mask);
  });
}

// mov: registers, immediates, special registers, symbol addresses; {a, b} packs (element 0 lowest) and
// unpacks.
void mov(Warp& w, const Inst& in, uint32_t act) {
  const Opnd &d = in.ops[0], &a = in.ops[1];
  const uint64_t mask = width_mask(type_bits(in.type));
  for_lanes(act, [&](unsigned l) { write(w, d, l, read(w, a, l) & mask); });
}
void mov_pack(Warp& w, const Inst& in, uint32_t act) {
  const Opnd &d = in.ops[0], &a = in.ops[1];
  const unsigned part = type_bits(in.type) / unsigned(a.elems.size());
  for_lanes(act, [&](unsigned l) {
    uint64_t v = 0;
    for (size_t k = 0; k < a.elems.size(); ++k)
      v |= (read(w, a.elems[k], l) & width_mask(part)) << (part * k);
    write(w, d, l, v);
  });
}
void mov_unpack(Warp& w, const Inst& in, uint32_t act) {
  const Opnd &d = in.ops[0], &a = in.ops[1];
  const unsigned part = type_bits(in.type) / unsigned(d.elems.size());
  for_lanes(act, [&](unsigned l) {
    uint64_t v = read(w, a, l);
    for (size_t k = 0; k < d.elems.size(); ++k)
      write(w, d.elems[k], l, (v >> (part * k)) & width_mask(part));
  });
}

} // namespace

void decode_cvt(Decoder& d) {
  Inst& in = d.in;
  if (d.ai.mnemonic == "cvta") {
    in.op = d.take("to");
    in.space = take_space(d);
    if (in.space == Space::generic)
      d.error("cvta needs a state space");
    in.type = d.take_type();
    if (in.type != Ty::u32 && in.type != Ty::u64)
      d.error("cvta needs .u32 or .u64");
    d.need_ops(2);
    in.fn = &cvta;
    d.finish();
    return;
  }
  in.rnd = d.take_rnd();
  in.ftz = d.take("ftz");
  in.sat = d.take("sat");
  in.op = d.take("relu");
  in.op2 = d.take("satfinite");
  in.type = d.take_type();
  in.type2 = d.take_type();
  const Ty t = in.type, s = in.type2;
  if (t == Ty::none || s == Ty::none)
    d.error("cvt needs a destination and a source type");
  if (t == Ty::b128 || s == Ty::b128 || t == Ty::pred || s == Ty::pred)
    d.error("type not allowed in cvt");
  if (t == Ty::f16x2 || t == Ty::bf16x2) {
    if (s != Ty::f32)
      d.error("packing cvt needs .f32 sources");
    d.need_ops(3);
    if (in.rnd == Rnd::none)
      in.rnd = Rnd::rn;
    in.fn = &cvt_x2;
    for (size_t i = 1; i < 3; ++i)
      d.float_imm(i, Ty::f32);
  } else {
    if (s == Ty::f16x2 || s == Ty::bf16x2)
      d.error("cvt from a packed type is not an instruction");
    d.need_ops(2);
    // #data-movement-and-conversion-instructions-cvt: float->int needs an integer rounding (.rni ...),
    // int->float and narrowing float->float a float rounding (.rn ...).
    if (is_float(s) && !is_float(t) && in.rnd != Rnd::none && in.rnd < Rnd::rni)
      d.error("float-to-integer cvt rounds with .rni, .rzi, .rmi or .rpi");
    if (is_float(s) && !is_float(t) && in.rnd == Rnd::none)
      d.error("float-to-integer cvt needs .rni/.rzi/.rmi/.rpi");
    if (!is_float(s) && is_float(t) && in.rnd >= Rnd::rni)
      d.error("integer-to-float cvt rounds with .rn .rz .rm .rp");
    if (is_float(s) && is_float(t) && type_bits(t) < type_bits(s) && in.rnd >= Rnd::rni)
      d.error("narrowing float cvt rounds with .rn .rz .rm .rp");
    in.fn = &cvt;
    d.float_imm(1, s);
  }
  d.finish();
}

void decode_mov(Decoder& d) {
  Inst& in = d.in;
  in.type = d.take_type();
  if (in.type == Ty::none)
    d.error("mov needs a type");
  if (in.type == Ty::b128)
    d.not_yet();
  d.need_ops(2);
  for (const Opnd& o : in.ops)
    if (o.kind == Opnd::Kind::vec && (o.elems.size() < 2 || type_bits(in.type) % o.elems.size()))
      d.error("mov packs or unpacks 2 or 4 equal parts of its type");
  if (in.ops[1].kind == Opnd::Kind::vec)
    in.fn = &mov_pack;
  else if (in.ops[0].kind == Opnd::Kind::vec)
    in.fn = &mov_unpack;
  else
    in.fn = &mov;
  d.float_imm(1, in.type);
  d.finish();
}

} // namespace isatune::emu::ptx

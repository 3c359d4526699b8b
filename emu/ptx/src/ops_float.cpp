// Floating-point instructions (#floating-point-instructions, #half-precision-floating-point-instructions):
// f32/f64 add sub mul fma mad div min max abs neg rcp sqrt rsqrt ex2 lg2 sin cos tanh copysign testp with
// rounding modifiers (the host's rounding mode set for the instruction), .ftz and .sat; f16/bf16 and their
// x2 forms computed exactly in double and rounded once.
//
// Approximate instructions compute the correctly rounded (or libm) value, which lies inside each one's
// documented error bound: rcp/sqrt .approx.f32 (1 ulp), rsqrt.approx.f32 (2^-22.9 relative), ex2.approx (2
// ulp), lg2/sin/cos .approx (2^-22 / 2^-20.5 absolute), tanh.approx.f32 (2^-10.987 relative), div.approx.f32
// (2 ulp: a * (1/b), 0 when |b| > 2^126), div.full.f32 (2 ulp: the IEEE quotient).
#include <cfenv>
#include <limits>

#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

enum FOp : uint8_t {
  f_add,
  f_sub,
  f_mul,
  f_fma,
  f_div,
  f_min,
  f_max,
  f_abs,
  f_neg,
  f_rcp,
  f_sqrt,
  f_rsqrt,
  f_ex2,
  f_lg2,
  f_sin,
  f_cos,
  f_tanh,
  f_copysign,
  f_testp,
  f_div_approx,
  f_min_nan,
  f_max_nan
};

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

template <class T> T fmin_ptx(T a, T b, bool nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == 0 && b == 0)
    return std::signbit(a) ? a : b; // -0 < +0
  return a < b ? a : b;
}
template <class T> T fmax_ptx(T a, T b, bool nan) {
  if (std::isnan(a) || std::isnan(b)) {
    if (nan || (std::isnan(a) && std::isnan(b)))
      return std::numeric_limits<T>::quiet_NaN();
    return std::isnan(a) ? b : a;
  }
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <class T> inline T ftz(T x, bool on) {
  if constexpr (std::is_same_v<T, float>)
    if (on)
      return flush_f32(x);
  return x;
}

template <class T> T compute(uint8_t op, T a, T b, T c) {
  switch (op) {
  case f_add:
    return a + b;
  case f_sub:
    return a - b;
  case f_mul:
    return a * b;
  case f_fma:
    return std::fma(a, b, c);
  case f_div:
    return a / b;
  case f_div_approx:
    if (std::fabs(b) > T(std::ldexp(1.0, 126)) && std::fabs(b) < std::numeric_limits<T>::infinity())
      return T(0);
    return a * (T(1) / b);
  case f_min:
    return fmin_ptx(a, b, false);
  case f_max:
    return fmax_ptx(a, b, false);
  case f_min_nan:
    return fmin_ptx(a, b, true);
  case f_max_nan:
    return fmax_ptx(a, b, true);
  case f_abs:
    return std::fabs(a);
  case f_neg:
    return -a;
  case f_rcp:
    return T(1) / a;
  case f_sqrt:
    return std::sqrt(a);
  case f_rsqrt:
    return T(1.0 / std::sqrt(double(a)));
  case f_ex2:
    return T(std::exp2(a));
  case f_lg2:
    return T(std::log2(a));
  case f_sin:
    return T(std::sin(a));
  case f_cos:
    return T(std::cos(a));
  case f_tanh:
    return T(std::tanh(a));
  case f_copysign:
    return std::copysign(b, a);
  default:
    return a;
  }
}

unsigned arity(uint8_t op) {
  switch (op) {
  case f_add:
  case f_sub:
  case f_mul:
  case f_div:
  case f_div_approx:
  case f_min:
  case f_max:
  case f_min_nan:
  case f_max_nan:
  case f_copysign:
    return 2;
  case f_fma:
    return 3;
  default:
    return 1;
  }
}

template <class T> void farith(Warp& w, const Inst& in, uint32_t act) {
  RoundScope rs(in.rnd);
  const unsigned n = arity(in.op);
  for_lanes(act, [&](unsigned l) {
    T a = ftz(as<T>(read(w, in.ops[1], l)), in.ftz);
    T b = n > 1 ? ftz(as<T>(read(w, in.ops[2], l)), in.ftz) : T(0);
    T c = n > 2 ? ftz(as<T>(read(w, in.ops[3], l)), in.ftz) : T(0);
    T r = ftz(compute<T>(in.op, a, b, c), in.ftz);
    // .sat clamps to [0, 1], NaN to +0 (#floating-point-instructions-add).
    if (in.sat)
      r = std::isnan(r) ? T(0) : std::min(std::max(r, T(0)), T(1));
    write(w, in.ops[0], l, bits_of(r));
  });
}

// testp.<op>.f32/f64 p, a.
template <class T> void testp(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    T a = as<T>(read(w, in.ops[1], l));
    bool r = false;
    switch (in.op2) {
    case 0:
      r = std::isfinite(a);
      break;
    case 1:
      r = std::isinf(a);
      break;
    case 2:
      r = !std::isnan(a);
      break;
    case 3:
      r = std::isnan(a);
      break;
    case 4:
      r = std::isnormal(a);
      break;
    case 5:
      r = std::fpclassify(a) == FP_SUBNORMAL;
      break;
    }
    write(w, in.ops[0], l, r);
  });
}

// f16 / bf16 (x2): each half in double (exact for add, sub, mul), rounded once to the format.
double half_value(uint16_t h, bool bf) {
  return bf ? double(bf16_to_f32(h)) : double(half_to_f32(h));
}

template <bool BF, unsigned N> void half_arith(Warp& w, const Inst& in, uint32_t act) {
  const unsigned n = arity(in.op);
  const Rnd rnd = in.rnd == Rnd::none ? Rnd::rn : in.rnd;
  for_lanes(act, [&](unsigned l) {
    uint64_t A = read(w, in.ops[1], l), B = n > 1 ? read(w, in.ops[2], l) : 0,
             C = n > 2 ? read(w, in.ops[3], l) : 0;
    uint64_t out = 0;
    for (unsigned k = 0; k < N; ++k) {
      auto flush = [&](double v) {
        if (!in.ftz || v == 0)
          return v;
        double smallest = BF ? std::ldexp(1.0, -126) : std::ldexp(1.0, -14);
        return std::fabs(v) < smallest ? std::copysign(0.0, v) : v;
      };
      uint16_t ha = uint16_t(A >> (16 * k)), hb = uint16_t(B >> (16 * k)), hc = uint16_t(C >> (16 * k));
      double a = flush(half_value(ha, BF)), b = flush(half_value(hb, BF)), c = flush(half_value(hc, BF));
      uint16_t r;
      if (in.op == f_neg)
        r = ha ^ 0x8000;
      else if (in.op == f_abs)
        r = ha & 0x7fff;
      else {
        double v = compute<double>(in.op, a, b, c);
        v = flush(v);
        if (in.sat)
          v = std::isnan(v) ? 0.0 : std::min(std::max(v, 0.0), 1.0);
        r = BF ? to_bf16(v, rnd) : to_f16(v, rnd);
        if (in.ftz && !BF && (r & 0x7c00) == 0)
          r &= 0x8000;
        if (in.ftz && BF && (r & 0x7f80) == 0)
          r &= 0x8000;
      }
      out |= uint64_t(r) << (16 * k);
    }
    write(w, in.ops[0], l, out);
  });
}

Handler pick(Ty t) {
  switch (t) {
  case Ty::f32:
    return &farith<float>;
  case Ty::f64:
    return &farith<double>;
  case Ty::f16:
    return &half_arith<false, 1>;
  case Ty::f16x2:
    return &half_arith<false, 2>;
  case Ty::bf16:
    return &half_arith<true, 1>;
  case Ty::bf16x2:
    return &half_arith<true, 2>;
  default:
    return nullptr;
  }
}

} // namespace

void decode_float_arith(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  static const std::pair<const char*, FOp> ops[] = {
      {"add", f_add}, {"sub", f_sub},   {"mul", f_mul},     {"fma", f_fma},           {"mad", f_fma},
      {"div", f_div}, {"min", f_min},   {"max", f_max},     {"abs", f_abs},           {"neg", f_neg},
      {"rcp", f_rcp}, {"sqrt", f_sqrt}, {"rsqrt", f_rsqrt}, {"ex2", f_ex2},           {"lg2", f_lg2},
      {"sin", f_sin}, {"cos", f_cos},   {"tanh", f_tanh},   {"copysign", f_copysign}, {"testp", f_testp}};
  in.op = 255;
  for (auto& [name, op] : ops)
    if (m == name)
      in.op = op;
  in.rnd = d.take_rnd();
  in.ftz = d.take("ftz");
  in.sat = d.take("sat");
  in.approx = d.take("approx");
  bool full = d.take("full");
  bool nan = d.take("NaN");
  d.take("xorsign"); // min/max.xorsign.abs: rejected below
  if (in.op == f_testp) {
    static const char* kinds[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
    in.op2 = 255;
    for (unsigned i = 0; i < 6; ++i)
      if (d.take(kinds[i]))
        in.op2 = uint8_t(i);
    if (in.op2 == 255)
      d.error("testp needs a test (.finite, .infinite, ...)");
  }
  Ty t = d.take_type();
  in.type = t;
  if (in.op == 255)
    d.error("not a float instruction");
  if (in.rnd == Rnd::rna || in.rnd >= Rnd::rni)
    d.error("rounding modifier not allowed here");
  const bool transcendental = in.op >= f_ex2 && in.op <= f_tanh;
  if (transcendental && !in.approx)
    d.error(m + " needs .approx");
  if ((in.op == f_rcp || in.op == f_sqrt) && t == Ty::f32 && !in.approx && in.rnd == Rnd::none)
    d.error(m + ".f32 needs .approx or a rounding modifier");
  if (in.op == f_rsqrt && !in.approx)
    d.error("rsqrt needs .approx");
  if (in.op == f_div) {
    if (is_float(t) && t == Ty::f32 && !in.approx && !full && in.rnd == Rnd::none)
      d.error("div.f32 needs .approx, .full or a rounding modifier");
    if (t == Ty::f64 && in.rnd == Rnd::none)
      d.error("div.f64 needs a rounding modifier");
    if (in.approx && t == Ty::f32)
      in.op = f_div_approx;
  }
  if (m == "tanh" && t != Ty::f32 && !is_half(t))
    d.error("tanh.approx needs .f32 or a half type");
  if (nan) {
    if (in.op == f_min)
      in.op = f_min_nan;
    else if (in.op == f_max)
      in.op = f_max_nan;
    else
      d.error(".NaN only on min/max");
  }
  if (t == Ty::f64 && in.ftz && !(in.op == f_rcp || in.op == f_rsqrt))
    d.error(".ftz is not allowed on .f64");
  if (in.op == f_testp) {
    d.need_ops(2);
    if (t == Ty::f32)
      in.fn = &testp<float>;
    else if (t == Ty::f64)
      in.fn = &testp<double>;
  } else {
    d.need_ops(arity(in.op) + 1);
    in.fn = pick(t);
    // Half types have add sub mul fma min max neg abs, ex2.approx and tanh.approx.
    if (is_half(t) && (in.op == f_div || in.op == f_div_approx ||
                       (in.op >= f_rcp && in.op <= f_cos && in.op != f_ex2) || in.op == f_copysign))
      d.error(m + " is not supported on " + d.ai.opcode.substr(d.ai.opcode.rfind('.') + 1) +
              " by the emulator");
    if (is_half(t) && in.rnd != Rnd::none && in.rnd != Rnd::rn)
      d.error("half-precision arithmetic rounds .rn only");
  }
  if (!in.fn)
    d.error("type of '" + d.ai.opcode + "' is not supported");
  for (size_t i = 1; i < in.ops.size(); ++i)
    d.float_imm(i, t);
  d.finish();
}

void decode_float(Decoder& d) {
  decode_float_arith(d);
}

} // namespace isatune::emu::ptx

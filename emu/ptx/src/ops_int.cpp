// Integer arithmetic (#integer-arithmetic-instructions): add sub mul mad mul24 mad24 sad div rem abs neg min
// max popc clz bfind brev, with .lo/.hi/.wide, .sat and the carry forms (.cc, addc, subc, madc).
#include <limits>

#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

enum IntOp : uint8_t { op_add, op_sub, op_min, op_max, op_div, op_rem, op_abs, op_neg, op_sad };
enum MulMode : uint8_t { mul_lo, mul_hi, mul_wide };

template <class T> using Wide = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;

template <class T> T sat_s32(__int128 v) {
  if (v > std::numeric_limits<int32_t>::max())
    return T(std::numeric_limits<int32_t>::max());
  if (v < std::numeric_limits<int32_t>::min())
    return T(std::numeric_limits<int32_t>::min());
  return T(v);
}

template <class T> struct Add {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    if (in.sat)
      lanes2<T>(w, in, act, [](T a, T b) { return sat_s32<T>(__int128(a) + b); });
    else
      lanes2<T>(w, in, act,
                [](T a, T b) { return T(std::make_unsigned_t<T>(a) + std::make_unsigned_t<T>(b)); });
  }
};
template <class T> struct Sub {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    if (in.sat)
      lanes2<T>(w, in, act, [](T a, T b) { return sat_s32<T>(__int128(a) - b); });
    else
      lanes2<T>(w, in, act,
                [](T a, T b) { return T(std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b)); });
  }
};
template <class T> struct Min {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) { return a < b ? a : b; });
  }
};
template <class T> struct Max {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) { return a > b ? a : b; });
  }
};
// #integer-arithmetic-instructions-div: division by zero gives an unspecified value; the emulator returns
// all ones (as the hardware's unsigned divide does) and the most negative / 1 overflow wraps.
template <class T> struct Div {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) -> T {
      if (b == 0)
        return T(~std::make_unsigned_t<T>(0));
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == T(-1))
          return a;
      return T(a / b);
    });
  }
};
// rem by zero: the dividend (unspecified in the ISA).
template <class T> struct Rem {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) -> T {
      if (b == 0)
        return a;
      if constexpr (std::is_signed_v<T>)
        if (a == std::numeric_limits<T>::min() && b == T(-1))
          return 0;
      return T(a % b);
    });
  }
};
template <class T> struct Abs {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes1<T>(w, in, act, [](T a) { return a < 0 ? T(-std::make_unsigned_t<T>(a)) : a; });
  }
};
template <class T> struct Neg {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes1<T>(w, in, act, [](T a) { return T(-std::make_unsigned_t<T>(a)); });
  }
};
template <class T> struct Sad {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes3<T>(w, in, act, [](T a, T b, T c) {
      std::make_unsigned_t<T> d = a < b ? std::make_unsigned_t<T>(b) - std::make_unsigned_t<T>(a)
                                        : std::make_unsigned_t<T>(a) - std::make_unsigned_t<T>(b);
      return T(d + std::make_unsigned_t<T>(c));
    });
  }
};

// mul / mad (#integer-arithmetic-instructions-mul, -mad): .lo low half, .hi high half, .wide double width.
template <class T> struct Mul {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr unsigned bits = sizeof(T) * 8;
    const bool mad = in.op == 1;
    const Opnd &d = in.ops[0], &a = in.ops[1], &b = in.ops[2];
    for_lanes(act, [&](unsigned l) {
      Wide<T> p = Wide<T>(as<T>(read(w, a, l))) * Wide<T>(as<T>(read(w, b, l)));
      uint64_t out;
      if (in.op2 == mul_wide) {
        if (mad) {
          using W2 = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
          W2 c = W2(read(w, in.ops[3], l));
          if constexpr (bits < 32)
            c = W2(c << (64 - 2 * bits)) >> (64 - 2 * bits);
          p += Wide<T>(c);
        }
        out = uint64_t(p) & width_mask(2 * bits);
      } else if (in.op2 == mul_hi) {
        Wide<T> h = p >> bits;
        if (mad) {
          h += Wide<T>(as<T>(read(w, in.ops[3], l)));
          if (in.sat)
            h = Wide<T>(sat_s32<int32_t>(__int128(h)));
        }
        out = uint64_t(h) & width_mask(bits);
      } else {
        if (mad)
          p += Wide<T>(as<T>(read(w, in.ops[3], l)));
        out = uint64_t(p) & width_mask(bits);
      }
      write(w, d, l, out);
    });
  }
};

// mul24 / mad24: 24-bit operands, 48-bit product; .lo bits 31..0, .hi bits 47..16.
template <class T> struct Mul24 {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    const bool mad = in.op == 1;
    for_lanes(act, [&](unsigned l) {
      int64_t a, b;
      if constexpr (std::is_signed_v<T>) {
        a = int64_t(uint64_t(read(w, in.ops[1], l)) << 40) >> 40;
        b = int64_t(uint64_t(read(w, in.ops[2], l)) << 40) >> 40;
      } else {
        a = int64_t(read(w, in.ops[1], l) & 0xffffff);
        b = int64_t(read(w, in.ops[2], l) & 0xffffff);
      }
      int64_t p = a * b;
      uint32_t r = in.op2 == mul_hi ? uint32_t(uint64_t(p) >> 16) : uint32_t(p);
      if (mad) {
        int64_t s = int64_t(T(r)) + int64_t(T(read(w, in.ops[3], l)));
        r = in.sat ? uint32_t(sat_s32<int32_t>(s)) : uint32_t(s);
      }
      write(w, in.ops[0], l, r);
    });
  }
};

// Extended-precision add/sub/mad with the carry flag (#extended-precision-integer-arithmetic-instructions).
template <class T> struct AddCarry {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr unsigned bits = sizeof(T) * 8;
    // op: 0 add, 1 sub, 2 mad.lo, 3 mad.hi; op2 bit 0: consume carry, bit 1: produce carry.
    for_lanes(act, [&](unsigned l) {
      unsigned __int128 a = uint64_t(read(w, in.ops[1], l)) & width_mask(bits);
      unsigned __int128 b = uint64_t(read(w, in.ops[2], l)) & width_mask(bits);
      unsigned __int128 cin = (in.op2 & 1) ? w.cc[l] : 0;
      unsigned __int128 r;
      if (in.op == 1)
        r = a - b - cin;
      else if (in.op >= 2) {
        unsigned __int128 c = uint64_t(read(w, in.ops[3], l)) & width_mask(bits);
        unsigned __int128 p = a * b;
        if (in.op == 3)
          p >>= bits;
        else
          p &= (unsigned __int128)width_mask(bits);
        r = p + c + cin;
      } else
        r = a + b + cin;
      if (in.op2 & 2)
        w.cc[l] = uint8_t((r >> bits) & 1);
      write(w, in.ops[0], l, uint64_t(r) & width_mask(bits));
    });
  }
};

template <class T> struct Popc {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    for_lanes(act, [&](unsigned l) {
      write(w, in.ops[0], l, uint64_t(std::popcount(std::make_unsigned_t<T>(read(w, in.ops[1], l)))));
    });
  }
};
template <class T> struct Clz {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    for_lanes(act, [&](unsigned l) {
      write(w, in.ops[0], l, uint64_t(std::countl_zero(std::make_unsigned_t<T>(read(w, in.ops[1], l)))));
    });
  }
};
template <class T> struct Brev {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    for_lanes(act, [&](unsigned l) {
      std::make_unsigned_t<T> x = std::make_unsigned_t<T>(read(w, in.ops[1], l)), r = 0;
      for (unsigned i = 0; i < sizeof(T) * 8; ++i)
        r |= std::make_unsigned_t<T>((x >> i) & 1) << (sizeof(T) * 8 - 1 - i);
      write(w, in.ops[0], l, r);
    });
  }
};
// bfind: position of the most significant non-sign bit; 0xffffffff when none; .shiftamt: 31 - position.
template <class T> struct Bfind {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr int bits = sizeof(T) * 8;
    for_lanes(act, [&](unsigned l) {
      T x = as<T>(read(w, in.ops[1], l));
      std::make_unsigned_t<T> u = std::make_unsigned_t<T>(x);
      if constexpr (std::is_signed_v<T>)
        if (x < 0)
          u = ~u;
      uint32_t r = u ? uint32_t(bits - 1 - std::countl_zero(u)) : 0xffffffffu;
      if (in.op && r != 0xffffffffu)
        r = uint32_t(bits - 1) - r;
      write(w, in.ops[0], l, r);
    });
  }
};

} // namespace

void decode_float_arith(Decoder& d); // ops_float.cpp

void decode_int(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  // add/sub/mul/mad/div/min/max/abs/neg on a float type are float instructions.
  for (const auto& q : d.ai.qualifiers)
    if (is_float(parse_type(q)))
      return decode_float_arith(d);
  // .cc: the carry-out form (#extended-precision-integer-arithmetic-instructions).
  const bool cc = (m == "add" || m == "sub" || m == "mad") && d.take("cc");
  if (m == "add" || m == "sub") {
    d.in.sat = d.take("sat");
    Ty t = d.take_type();
    d.need_ops(3);
    if (cc) {
      if (type_bits(t) != 32 && type_bits(t) != 64)
        d.error(".cc needs a 32- or 64-bit integer type");
      in.op = m == "sub" ? 1 : 0;
      in.op2 = 2;
      in.fn = (type_bits(t) == 64) ? &AddCarry<uint64_t>::run : &AddCarry<uint32_t>::run;
    } else {
      if (in.sat && t != Ty::s32)
        d.error(".sat needs .s32");
      in.fn = m == "add" ? pick_int<Add>(t) : pick_int<Sub>(t);
    }
    in.type = t;
  } else if (m == "mul" || m == "mad") {
    in.op = m == "mad";
    in.op2 = d.take("hi") ? mul_hi : d.take("wide") ? mul_wide : (d.take("lo"), mul_lo);
    in.sat = d.take("sat");
    Ty t = d.take_type();
    d.need_ops(m == "mad" ? 4 : 3);
    in.type = t;
    if (cc) {
      if (type_bits(t) != 32 && type_bits(t) != 64)
        d.error(".cc needs a 32- or 64-bit integer type");
      in.op = in.op2 == mul_hi ? 3 : 2;
      in.op2 = 2;
      in.fn = (type_bits(t) == 64) ? &AddCarry<uint64_t>::run : &AddCarry<uint32_t>::run;
    } else {
      if (in.op2 == mul_wide && type_bits(t) == 64)
        d.error(".wide needs a 16- or 32-bit type");
      if (in.sat && !(t == Ty::s32 && in.op2 == mul_hi && m == "mad"))
        d.error(".sat needs mad.hi.sat.s32");
      in.fn = pick_int<Mul>(t);
    }
  } else if (m == "mul24" || m == "mad24") {
    in.op = m == "mad24";
    in.op2 = d.take("hi") ? mul_hi : (d.take("lo"), mul_lo);
    in.sat = d.take("sat");
    Ty t = d.take_type();
    if (t != Ty::s32 && t != Ty::u32)
      d.error(std::string(m) + " needs .s32 or .u32");
    d.need_ops(m == "mad24" ? 4 : 3);
    in.type = t;
    in.fn = t == Ty::s32 ? &Mul24<int32_t>::run : &Mul24<uint32_t>::run;
  } else if (m == "sad") {
    Ty t = d.take_type();
    d.need_ops(4);
    in.fn = pick_int<Sad>(t);
  } else if (m == "div" || m == "rem" || m == "min" || m == "max") {
    Ty t = d.take_type();
    d.need_ops(3);
    in.fn = m == "div"   ? pick_int<Div>(t)
            : m == "rem" ? pick_int<Rem>(t)
            : m == "min" ? pick_int<Min>(t)
                         : pick_int<Max>(t);
    if (type_bits(t) == 8 || (t >= Ty::b8 && t <= Ty::b128))
      in.fn = nullptr;
  } else if (m == "abs" || m == "neg") {
    Ty t = d.take_type();
    d.need_ops(2);
    if (!is_signed(t) || t == Ty::s8)
      d.error(m + " needs .s16, .s32 or .s64");
    in.fn = m == "abs" ? pick_int<Abs>(t) : pick_int<Neg>(t);
  } else if (m == "popc" || m == "clz" || m == "brev") {
    Ty t = d.take_type();
    if (t != Ty::b32 && t != Ty::b64)
      d.error(m + " needs .b32 or .b64");
    d.need_ops(2);
    in.fn = m == "popc" ? pick_int<Popc>(t) : m == "clz" ? pick_int<Clz>(t) : pick_int<Brev>(t);
  } else if (m == "bfind") {
    in.op = d.take("shiftamt");
    Ty t = d.take_type();
    if (t != Ty::u32 && t != Ty::s32 && t != Ty::u64 && t != Ty::s64)
      d.error("bfind needs .u32 .s32 .u64 or .s64");
    d.need_ops(2);
    in.fn = pick_int<Bfind>(t);
  }
  if (!in.fn)
    d.error("type of '" + d.ai.opcode + "' is not supported");
  d.finish();
}

void decode_carry(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  bool cc = d.take("cc");
  if (m == "madc")
    in.op = d.take("hi") ? 3 : (d.take("lo"), 2);
  else
    in.op = m == "subc" ? 1 : 0;
  in.op2 = uint8_t(1 | (cc ? 2 : 0));
  Ty t = d.take_type();
  if (t != Ty::u32 && t != Ty::s32 && t != Ty::u64 && t != Ty::s64)
    d.error(m + " needs a 32- or 64-bit integer type");
  d.need_ops(m == "madc" ? 4 : 3);
  in.fn = type_bits(t) == 64 ? &AddCarry<uint64_t>::run : &AddCarry<uint32_t>::run;
  d.finish();
}

} // namespace isatune::emu::ptx

// Logic and shift instructions (#logic-and-shift-instructions) and bit-field ones (#integer-arithmetic-
// instructions-bfe, -bfi, #data-movement-and-conversion-instructions-prmt): and or xor not cnot shl shr bfe
// bfi prmt lop3 shf.
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

template <class T> struct And {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) { return T(a & b); });
  }
};
template <class T> struct Or {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) { return T(a | b); });
  }
};
template <class T> struct Xor {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes2<T>(w, in, act, [](T a, T b) { return T(a ^ b); });
  }
};
template <class T> struct Not {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes1<T>(w, in, act, [](T a) { return T(~a); });
  }
};
template <class T> struct Cnot {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    lanes1<T>(w, in, act, [](T a) { return T(a == 0); });
  }
};
void not_pred(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) { write(w, in.ops[0], l, (read(w, in.ops[1], l) & 1) ^ 1); });
}

// Shift amounts are unsigned 32-bit; amounts beyond the width give 0 (shl, shr.u) or the sign (shr.s).
template <class T> struct Shl {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr uint32_t bits = sizeof(T) * 8;
    for_lanes(act, [&](unsigned l) {
      uint32_t s = uint32_t(read(w, in.ops[2], l));
      T a = as<T>(read(w, in.ops[1], l));
      write(w, in.ops[0], l, bits_of(T(s >= bits ? 0 : std::make_unsigned_t<T>(a) << s)));
    });
  }
};
template <class T> struct Shr {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr uint32_t bits = sizeof(T) * 8;
    for_lanes(act, [&](unsigned l) {
      uint32_t s = uint32_t(read(w, in.ops[2], l));
      T a = as<T>(read(w, in.ops[1], l));
      T r;
      if constexpr (std::is_signed_v<T>)
        r = T(a >> (s >= bits ? bits - 1 : s));
      else
        r = s >= bits ? T(0) : T(a >> s);
      write(w, in.ops[0], l, bits_of(r));
    });
  }
};

// bfe: pos = b[7:0], len = c[7:0]; signed forms fill with the sign of bit min(pos+len-1, msb) (len 0: 0).
template <class T> struct Bfe {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr uint32_t bits = sizeof(T) * 8;
    for_lanes(act, [&](unsigned l) {
      uint64_t a = read(w, in.ops[1], l) & width_mask(bits);
      uint32_t pos = uint32_t(read(w, in.ops[2], l)) & 0xff, len = uint32_t(read(w, in.ops[3], l)) & 0xff;
      uint64_t r = 0;
      bool sbit = false;
      if constexpr (std::is_signed_v<T>) {
        uint32_t msb = len == 0 ? 0 : std::min(pos + len - 1, bits - 1);
        sbit = len != 0 && ((a >> msb) & 1);
      }
      for (uint32_t i = 0; i < bits; ++i) {
        bool bit = (i < len && pos + i < bits) ? ((a >> (pos + i)) & 1) : sbit;
        r |= uint64_t(bit) << i;
      }
      write(w, in.ops[0], l, r);
    });
  }
};
// bfi: insert a[len-1:0] into b at pos.
template <class T> struct Bfi {
  static void run(Warp& w, const Inst& in, uint32_t act) {
    constexpr uint32_t bits = sizeof(T) * 8;
    for_lanes(act, [&](unsigned l) {
      uint64_t a = read(w, in.ops[1], l), b = read(w, in.ops[2], l) & width_mask(bits);
      uint32_t pos = uint32_t(read(w, in.ops[3], l)) & 0xff, len = uint32_t(read(w, in.ops[4], l)) & 0xff;
      for (uint32_t i = 0; i < len && pos + i < bits; ++i)
        b = (b & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
      write(w, in.ops[0], l, b);
    });
  }
};

// prmt.b32 d, a, b, c: bytes {b, a} = b7..b0; each selector nibble picks a byte (bit 3: replicate its sign).
// Modes f4e (forward 4 extract), b4e, rc8 (replicate), ecl, ecr (edge clamp), rc16.
void prmt(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint64_t x = (read(w, in.ops[1], l) & 0xffffffffu) | (read(w, in.ops[2], l) & 0xffffffffu) << 32;
    uint32_t c = uint32_t(read(w, in.ops[3], l));
    auto byte = [&](unsigned i) { return uint32_t(x >> (8 * (i & 7))) & 0xff; };
    uint32_t sel[4];
    unsigned s = c & 3;
    switch (in.op) {
    case 1:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = (s + i) & 7;
      break; // f4e
    case 2:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = (s - i) & 7;
      break; // b4e
    case 3:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = s;
      break; // rc8
    case 4:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = std::max<unsigned>(i, s);
      break; // ecl
    case 5:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = std::min<unsigned>(i, s);
      break; // ecr
    case 6:
      for (unsigned i = 0; i < 4; ++i)
        sel[i] = (c & 1) * 2 + (i & 1);
      break; // rc16
    default:
      break;
    }
    uint32_t r = 0;
    for (unsigned i = 0; i < 4; ++i) {
      uint32_t v;
      if (in.op == 0) {
        uint32_t n = (c >> (4 * i)) & 0xf;
        v = byte(n & 7);
        if (n & 8)
          v = (v & 0x80) ? 0xff : 0;
      } else {
        v = byte(sel[i]);
      }
      r |= v << (8 * i);
    }
    write(w, in.ops[0], l, r);
  });
}

// lop3.b32 d, a, b, c, immLut: bit i of d = immLut[(a_i << 2) | (b_i << 1) | c_i] with F0/CC/AA for a/b/c.
void lop3(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint32_t a = uint32_t(read(w, in.ops[1], l)), b = uint32_t(read(w, in.ops[2], l)),
             c = uint32_t(read(w, in.ops[3], l));
    uint32_t lut = uint32_t(read(w, in.ops[4], l)) & 0xff, r = 0;
    for (unsigned k = 0; k < 8; ++k) {
      if (!(lut >> k & 1))
        continue;
      uint32_t ta = (k & 4) ? a : ~a, tb = (k & 2) ? b : ~b, tc = (k & 1) ? c : ~c;
      r |= ta & tb & tc;
    }
    write(w, in.ops[0], l, r);
  });
}

// shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: funnel shift of {b:a} by c (wrap: c & 31; clamp: min(c, 32)).
void shf(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint64_t v = (read(w, in.ops[1], l) & 0xffffffffu) | (read(w, in.ops[2], l) & 0xffffffffu) << 32;
    uint32_t c = uint32_t(read(w, in.ops[3], l));
    uint32_t n = in.op2 ? std::min<uint32_t>(c, 32) : (c & 31);
    uint32_t r = in.op ? uint32_t(v >> n) : uint32_t((v << n) >> 32);
    write(w, in.ops[0], l, r);
  });
}

} // namespace

void decode_bits(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  if (m == "and" || m == "or" || m == "xor" || m == "not" || m == "cnot") {
    Ty t = d.take_type();
    d.need_ops(m == "not" || m == "cnot" ? 2 : 3);
    if (t == Ty::pred) {
      if (m == "and")
        in.fn = &And<uint8_t>::run;
      else if (m == "or")
        in.fn = &Or<uint8_t>::run;
      else if (m == "xor")
        in.fn = &Xor<uint8_t>::run;
      else if (m == "not")
        in.fn = &not_pred;
    } else if (t == Ty::b16 || t == Ty::b32 || t == Ty::b64) {
      in.fn = m == "and"   ? pick_int<And>(t)
              : m == "or"  ? pick_int<Or>(t)
              : m == "xor" ? pick_int<Xor>(t)
              : m == "not" ? pick_int<Not>(t)
                           : pick_int<Cnot>(t);
    }
    if (!in.fn)
      d.error(m + " needs .pred, .b16, .b32 or .b64");
  } else if (m == "shl" || m == "shr") {
    Ty t = d.take_type();
    d.need_ops(3);
    if (type_bits(t) < 16 || type_bits(t) > 64 || is_float(t) || (m == "shl" && is_signed(t)))
      d.error("bad type");
    in.fn = m == "shl" ? pick_int<Shl>(t) : pick_int<Shr>(t);
  } else if (m == "bfe") {
    Ty t = d.take_type();
    if (t != Ty::u32 && t != Ty::s32 && t != Ty::u64 && t != Ty::s64)
      d.error("bfe needs .u32 .s32 .u64 or .s64");
    d.need_ops(4);
    in.fn = pick_int<Bfe>(t);
  } else if (m == "bfi") {
    Ty t = d.take_type();
    if (t != Ty::b32 && t != Ty::b64)
      d.error("bfi needs .b32 or .b64");
    d.need_ops(5);
    in.fn = pick_int<Bfi>(t);
  } else if (m == "prmt") {
    static const char* modes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
    for (unsigned i = 0; i < 6; ++i)
      if (d.take(modes[i]))
        in.op = uint8_t(i + 1);
    if (d.take_type() != Ty::b32)
      d.error("prmt needs .b32");
    d.need_ops(4);
    in.fn = &prmt;
  } else if (m == "lop3") {
    if (d.take_type() != Ty::b32)
      d.error("lop3 needs .b32");
    d.need_ops(5);
    in.fn = &lop3;
  } else if (m == "shf") {
    in.op = d.take("r") ? 1 : (d.take("l") ? 0 : 2);
    if (in.op == 2)
      d.error("shf needs .l or .r");
    in.op2 = d.take("clamp") ? 1 : (d.take("wrap") ? 0 : 2);
    if (in.op2 == 2)
      d.error("shf needs .wrap or .clamp");
    if (d.take_type() != Ty::b32)
      d.error("shf needs .b32");
    d.need_ops(4);
    in.fn = &shf;
  }
  d.finish();
}

} // namespace isatune::emu::ptx

// Comparison and selection (#comparison-and-selection-instructions): setp (every compare, the .and/.or/.xor
// forms with a predicate third source, p|q outputs, half types and x2), set, selp, slct.
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

enum Cmp : uint8_t { eq, ne, lt, le, gt, ge, lo, ls, hi, hs, equ, neu, ltu, leu, gtu, geu, num, nan };
enum Bool : uint8_t { b_none, b_and, b_or, b_xor };

template <class T> bool compare(uint8_t c, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    bool un = std::isnan(a) || std::isnan(b);
    switch (c) {
    case eq:
      return !un && a == b;
    case ne:
      return !un && a != b;
    case lt:
      return !un && a < b;
    case le:
      return !un && a <= b;
    case gt:
      return !un && a > b;
    case ge:
      return !un && a >= b;
    case equ:
      return un || a == b;
    case neu:
      return un || a != b;
    case ltu:
      return un || a < b;
    case leu:
      return un || a <= b;
    case gtu:
      return un || a > b;
    case geu:
      return un || a >= b;
    case num:
      return !un;
    case nan:
      return un;
    default:
      return false;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    switch (c) {
    case eq:
      return a == b;
    case ne:
      return a != b;
    case lt:
      return a < b;
    case le:
      return a <= b;
    case gt:
      return a > b;
    case ge:
      return a >= b;
    case lo:
      return U(a) < U(b);
    case ls:
      return U(a) <= U(b);
    case hi:
      return U(a) > U(b);
    case hs:
      return U(a) >= U(b);
    default:
      return false;
    }
  }
}

inline bool combine(uint8_t op, bool x, bool c) {
  switch (op) {
  case b_and:
    return x && c;
  case b_or:
    return x || c;
  case b_xor:
    return x != c;
  default:
    return x;
  }
}

// Writes p (and q = !cmp combined) for one comparison result.
inline void set_pq(Warp& w, const Inst& in, unsigned l, bool r) {
  const Opnd& d = in.ops[0];
  bool c = in.op2 != b_none ? (read(w, in.ops[3], l) & 1) : false;
  if (d.kind == Opnd::Kind::vec) {
    write(w, d.elems[0], l, combine(in.op2, r, c));
    if (d.elems.size() > 1)
      write(w, d.elems[1], l, combine(in.op2, !r, c));
  } else {
    write(w, d, l, combine(in.op2, r, c));
  }
}

template <class T> void setp(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    T a = as<T>(read(w, in.ops[1], l)), b = as<T>(read(w, in.ops[2], l));
    if constexpr (std::is_same_v<T, float>)
      if (in.ftz)
        a = flush_f32(a), b = flush_f32(b);
    set_pq(w, in, l, compare<T>(in.op, a, b));
  });
}

// setp.f16 / bf16: one compare; .f16x2 / .bf16x2: p|q take the low and high halves' results.
template <bool BF, unsigned N> void setp_half(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint64_t A = read(w, in.ops[1], l), B = read(w, in.ops[2], l);
    bool r[2];
    for (unsigned k = 0; k < N; ++k) {
      uint16_t ha = uint16_t(A >> (16 * k)), hb = uint16_t(B >> (16 * k));
      float a = BF ? bf16_to_f32(ha) : half_to_f32(ha), b = BF ? bf16_to_f32(hb) : half_to_f32(hb);
      r[k] = compare<float>(in.op, a, b);
    }
    if (N == 1) {
      set_pq(w, in, l, r[0]);
      return;
    }
    bool c = in.op2 != b_none ? (read(w, in.ops[3], l) & 1) : false;
    const Opnd& d = in.ops[0];
    write(w, d.kind == Opnd::Kind::vec ? d.elems[0] : d, l, combine(in.op2, r[0], c));
    if (d.kind == Opnd::Kind::vec && d.elems.size() > 1)
      write(w, d.elems[1], l, combine(in.op2, r[1], c));
  });
}

// set.<cmp>.<dtype>.<stype>: all ones (integer) or 1.0f (f32) when true.
template <class T> void set(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    T a = as<T>(read(w, in.ops[1], l)), b = as<T>(read(w, in.ops[2], l));
    bool c = in.op2 != b_none ? (read(w, in.ops[3], l) & 1) : false;
    bool r = combine(in.op2, compare<T>(in.op, a, b), c);
    uint64_t v = in.type == Ty::f32 ? (r ? 0x3f800000u : 0) : (r ? 0xffffffffu : 0);
    write(w, in.ops[0], l, v);
  });
}

void selp(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    write(w, in.ops[0], l, (read(w, in.ops[3], l) & 1) ? read(w, in.ops[1], l) : read(w, in.ops[2], l));
  });
}

template <class C> void slct(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    C c = as<C>(read(w, in.ops[3], l));
    if constexpr (std::is_same_v<C, float>)
      if (in.ftz)
        c = flush_f32(c);
    write(w, in.ops[0], l, c >= C(0) ? read(w, in.ops[1], l) : read(w, in.ops[2], l));
  });
}

template <template <class> class H> struct Unused {};

Handler pick_setp(Ty t) {
  switch (t) {
  case Ty::u16:
  case Ty::b16:
    return &setp<uint16_t>;
  case Ty::s16:
    return &setp<int16_t>;
  case Ty::u32:
  case Ty::b32:
    return &setp<uint32_t>;
  case Ty::s32:
    return &setp<int32_t>;
  case Ty::u64:
  case Ty::b64:
    return &setp<uint64_t>;
  case Ty::s64:
    return &setp<int64_t>;
  case Ty::f32:
    return &setp<float>;
  case Ty::f64:
    return &setp<double>;
  case Ty::f16:
    return &setp_half<false, 1>;
  case Ty::f16x2:
    return &setp_half<false, 2>;
  case Ty::bf16:
    return &setp_half<true, 1>;
  case Ty::bf16x2:
    return &setp_half<true, 2>;
  default:
    return nullptr;
  }
}
Handler pick_set(Ty t) {
  switch (t) {
  case Ty::u16:
  case Ty::b16:
    return &set<uint16_t>;
  case Ty::s16:
    return &set<int16_t>;
  case Ty::u32:
  case Ty::b32:
    return &set<uint32_t>;
  case Ty::s32:
    return &set<int32_t>;
  case Ty::u64:
  case Ty::b64:
    return &set<uint64_t>;
  case Ty::s64:
    return &set<int64_t>;
  case Ty::f32:
    return &set<float>;
  case Ty::f64:
    return &set<double>;
  default:
    return nullptr;
  }
}

} // namespace

void decode_compare(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  if (m == "selp") {
    in.type = d.take_type();
    if (in.type == Ty::none || in.type == Ty::pred)
      d.error("selp needs a data type");
    d.need_ops(4);
    in.fn = &selp;
    for (size_t i = 1; i < 3; ++i)
      d.float_imm(i, in.type);
    d.finish();
    return;
  }
  if (m == "slct") {
    in.ftz = d.take("ftz");
    in.type = d.take_type();
    in.type2 = d.take_type();
    d.need_ops(4);
    if (in.type2 == Ty::s32)
      in.fn = &slct<int32_t>;
    else if (in.type2 == Ty::f32)
      in.fn = &slct<float>;
    else
      d.error("slct needs .s32 or .f32 as its last type");
    for (size_t i = 1; i < 3; ++i)
      d.float_imm(i, in.type);
    d.float_imm(3, in.type2);
    d.finish();
    return;
  }
  static const char* cmps[] = {"eq", "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls",  "hi",
                               "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  in.op = 255;
  for (unsigned i = 0; i < 18; ++i)
    if (d.take(cmps[i]))
      in.op = uint8_t(i);
  if (in.op == 255)
    d.error(m + " needs a comparison");
  in.op2 = d.take("and") ? b_and : d.take("or") ? b_or : d.take("xor") ? b_xor : b_none;
  in.ftz = d.take("ftz");
  Ty t = d.take_type();
  Ty t2 = Ty::none;
  if (m == "set") {
    t2 = d.take_type();
    in.type = t;
    in.type2 = t2;
    std::swap(t, t2); // compare in the source type
  }
  if (is_float(t) && in.op >= lo && in.op <= hs)
    d.error("unsigned comparison on a float type");
  if (!is_float(t) && in.op >= equ)
    d.error("unordered comparison on an integer type");
  if (is_signed(t) && in.op >= lo && in.op <= hs)
    d.error("lo/ls/hi/hs need an unsigned or bit type");
  d.need_ops(in.op2 != b_none ? 4 : 3);
  in.fn = m == "set" ? pick_set(t) : pick_setp(t);
  if (m == "set" && in.type != Ty::u32 && in.type != Ty::s32 && in.type != Ty::f32)
    in.fn = nullptr;
  if (!in.fn)
    d.error("type of '" + d.ai.opcode + "' is not supported");
  if (m == "setp")
    in.type = t;
  for (size_t i = 1; i < 3; ++i)
    d.float_imm(i, t);
  d.finish();
}

} // namespace isatune::emu::ptx

// Memory instructions (#data-movement-and-conversion-instructions-ld, -st, -ldu, -prefetch,
// #parallel-synchronization-and-communication-instructions-atom, -red): every state space, .v2/.v4, atomics
// on global (host atomics: CTAs run on several host threads) and shared memory.
#include <atomic>

#include "guest_access.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

Space effective_space(const Inst& in, const Opnd& a) {
  Space s = in.space;
  // A .func's parameters and the .param variables of a call live in the thread's local memory.
  if (a.sym_space == Space::local && (s == Space::param || s == Space::generic))
    return Space::local;
  if (s == Space::generic && !a.has_base && a.sym_space != Space::generic)
    return a.sym_space;
  return s;
}

// ld and st go through relaxed host atomics (guest_access.h): a guest race must not be a C++ data race.
uint64_t extend(uint64_t v, Ty t, unsigned bytes) {
  if (is_signed(t) && bytes < 8 && (v >> (bytes * 8 - 1) & 1))
    v |= ~width_mask(bytes * 8);
  return v;
}

void ld(Warp& w, const Inst& in, uint32_t act) {
  const Opnd &d = in.ops[0], &a = in.ops[1];
  const unsigned esize = std::max(1u, type_bits(in.type) / 8);
  const unsigned n = in.vec;
  const Space sp = effective_space(in, a);
  for_lanes(act, [&](unsigned l) {
    const uint8_t* p = access(w, l, sp, address_of(w, a, l), esize * n, false);
    for (unsigned k = 0; k < n; ++k) {
      const Opnd& dk = n == 1 ? (d.kind == Opnd::Kind::vec ? d.elems[0] : d) : d.elems[k];
      uint64_t v = p ? extend(load_bits(p + k * esize, esize), in.type, esize) : 0;
      write(w, dk, l, v);
    }
  });
}

void st(Warp& w, const Inst& in, uint32_t act) {
  const Opnd &a = in.ops[0], &b = in.ops[1];
  const unsigned esize = std::max(1u, type_bits(in.type) / 8);
  const unsigned n = in.vec;
  const Space sp = effective_space(in, a);
  for_lanes(act, [&](unsigned l) {
    uint8_t* p = access(w, l, sp, address_of(w, a, l), esize * n, true);
    if (!p)
      return;
    for (unsigned k = 0; k < n; ++k) {
      const Opnd& bk = n == 1 ? (b.kind == Opnd::Kind::vec ? b.elems[0] : b) : b.elems[k];
      store_bits(p + k * esize, read(w, bk, l), esize);
    }
  });
}

enum AtomOp : uint8_t { a_add, a_min, a_max, a_inc, a_dec, a_and, a_or, a_xor, a_exch, a_cas };

uint16_t half_add(uint16_t x, uint16_t y, bool bf) {
  double s =
      bf ? double(bf16_to_f32(x)) + double(bf16_to_f32(y)) : double(half_to_f32(x)) + double(half_to_f32(y));
  return bf ? to_bf16(s, Rnd::rn) : to_f16(s, Rnd::rn);
}

uint64_t atomic_new(const Inst& in, uint64_t old, uint64_t b, uint64_t c) {
  const Ty t = in.type;
  const unsigned bits = type_bits(t);
  const uint64_t m = width_mask(bits);
  auto sx = [&](uint64_t v) { return bits < 64 ? int64_t(v << (64 - bits)) >> (64 - bits) : int64_t(v); };
  switch (in.op) {
  case a_add:
    if (t == Ty::f32) {
      float r = flush_f32(flush_f32(std::bit_cast<float>(uint32_t(old))) +
                          flush_f32(std::bit_cast<float>(uint32_t(b))));
      return std::bit_cast<uint32_t>(r);
    }
    if (t == Ty::f64)
      return std::bit_cast<uint64_t>(std::bit_cast<double>(old) + std::bit_cast<double>(b));
    if (t == Ty::f16 || t == Ty::bf16)
      return half_add(uint16_t(old), uint16_t(b), t == Ty::bf16);
    if (t == Ty::f16x2 || t == Ty::bf16x2) {
      bool bf = t == Ty::bf16x2;
      return uint64_t(half_add(uint16_t(old), uint16_t(b), bf)) |
             uint64_t(half_add(uint16_t(old >> 16), uint16_t(b >> 16), bf)) << 16;
    }
    return (old + b) & m;
  case a_min:
    return (is_signed(t) ? (sx(old) < sx(b)) : ((old & m) < (b & m))) ? old : b & m;
  case a_max:
    return (is_signed(t) ? (sx(old) > sx(b)) : ((old & m) > (b & m))) ? old : b & m;
  // #parallel-synchronization-and-communication-instructions-atom: inc ((old >= b) ? 0 : old + 1),
  // dec (((old == 0) || (old > b)) ? b : old - 1).
  case a_inc:
    return ((old & m) >= (b & m)) ? 0 : (old + 1) & m;
  case a_dec:
    return ((old & m) == 0 || (old & m) > (b & m)) ? b & m : (old - 1) & m;
  case a_and:
    return old & b & m;
  case a_or:
    return (old | b) & m;
  case a_xor:
    return (old ^ b) & m;
  case a_exch:
    return b & m;
  case a_cas:
    return (old & m) == (b & m) ? c & m : old & m;
  }
  return old;
}

template <class U> uint64_t host_atomic(uint8_t* p, const Inst& in, uint64_t b, uint64_t c) {
  std::atomic_ref<U> ref(*reinterpret_cast<U*>(p));
  U old = ref.load(std::memory_order_relaxed);
  for (;;) {
    U nv = U(atomic_new(in, old, b, c));
    if (ref.compare_exchange_weak(old, nv, std::memory_order_seq_cst))
      return old;
  }
}

void atom(Warp& w, const Inst& in, uint32_t act) {
  const bool red = in.op2 == 1;
  const Opnd& a = in.ops[red ? 0 : 1];
  const unsigned bytes = type_bits(in.type) / 8;
  const Space sp = effective_space(in, a);
  Cta& c = *w.cta;
  for_lanes(act, [&](unsigned l) {
    uint8_t* p = access(w, l, sp, address_of(w, a, l), bytes, true, true);
    uint64_t old = 0;
    if (p) {
      uint64_t b = read(w, in.ops[red ? 1 : 2], l);
      uint64_t cc = in.op == a_cas ? read(w, in.ops[3], l) : 0;
      bool local = (p >= c.shared.data() && p < c.shared.data() + c.shared.size()) ||
                   (p >= c.local.data() && p < c.local.data() + c.local.size());
      if (local) { // one host thread runs the CTA: a plain read-modify-write is atomic
        old = load_bits(p, bytes);
        uint64_t nv = atomic_new(in, old, b, cc);
        std::memcpy(p, &nv, bytes);
      } else if (bytes == 8)
        old = host_atomic<uint64_t>(p, in, b, cc);
      else if (bytes == 4)
        old = host_atomic<uint32_t>(p, in, b, cc);
      else
        old = host_atomic<uint16_t>(p, in, b, cc);
    }
    if (!red)
      write(w, in.ops[0], l, extend(old, in.type, bytes));
  });
}

void nothing(Warp&, const Inst&, uint32_t) {}

} // namespace

Space take_space(Decoder& d) {
  if (d.take("shared") || d.take("shared::cta"))
    return Space::shared;
  if (d.take("global"))
    return Space::global;
  if (d.take("local"))
    return Space::local;
  if (d.take("param") || d.take("param::entry") || d.take("param::func"))
    return Space::param;
  if (d.take("const"))
    return Space::const_;
  if (d.take("shared::cluster"))
    return Space::shared_cluster;
  return Space::generic;
}


void decode_memory(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  if (m == "prefetch") {
    d.drop_hints();
    take_space(d);
    d.take_any({"L1", "L2", "tensormap"});
    in.fn = &nothing;
    d.finish();
    return;
  }
  d.drop_hints();
  in.space = take_space(d);
  if (m == "ld" || m == "ldu" || m == "st") {
    in.vec = d.take("v2") ? 2 : d.take("v4") ? 4 : 1;
    if (d.take("v8"))
      d.not_yet();
    in.type = d.take_type();
    if (in.type == Ty::none || in.type == Ty::pred)
      d.error(m + " needs a data type");
    if (in.type == Ty::b128)
      d.not_yet();
    if (in.type == Ty::f16x2 || in.type == Ty::bf16x2)
      in.type = Ty::b32;
    d.need_ops(2);
    const Opnd& addr = in.ops[m == "st" ? 0 : 1];
    const Opnd& data = in.ops[m == "st" ? 1 : 0];
    if (addr.kind != Opnd::Kind::addr)
      d.error("the address operand must be [a]");
    if ((in.vec > 1 || data.kind == Opnd::Kind::vec) &&
        (data.kind != Opnd::Kind::vec || data.elems.size() != in.vec))
      d.error(".v" + std::to_string(in.vec) + " needs a vector of " + std::to_string(in.vec) + " registers");
    if (in.space == Space::const_ && m == "st")
      d.error("st to .const");
    in.fn = m == "st" ? &st : &ld;
    in.cost = in.space == Space::shared || in.space == Space::shared_cluster ? 2
              : in.space == Space::param || in.space == Space::local         ? 1
                                                                             : 8;
    if (m == "st")
      d.float_imm(1, in.type);
    d.finish();
    return;
  }
  // atom / red
  static const char* ops[] = {"add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas"};
  in.op = 255;
  for (unsigned i = 0; i < 10; ++i)
    if (d.take(ops[i]))
      in.op = uint8_t(i);
  if (in.op == 255)
    d.error(m + " needs an operation");
  in.op2 = m == "red";
  d.take("noftz");
  if (d.take_any({"v2", "v4", "v8"}))
    d.not_yet();
  in.type = d.take_type();
  const Ty t = in.type;
  bool ok = false;
  switch (in.op) {
  case a_add:
    ok = t == Ty::u32 || t == Ty::s32 || t == Ty::u64 || t == Ty::f32 || t == Ty::f64 || is_half(t);
    break;
  case a_min:
  case a_max:
    ok = t == Ty::u32 || t == Ty::s32 || t == Ty::u64 || t == Ty::s64;
    break;
  case a_inc:
  case a_dec:
    ok = t == Ty::u32;
    break;
  case a_and:
  case a_or:
  case a_xor:
    ok = t == Ty::b32 || t == Ty::b64;
    break;
  case a_exch:
    ok = t == Ty::b32 || t == Ty::b64;
    break;
  case a_cas:
    ok = t == Ty::b32 || t == Ty::b64 || t == Ty::b16;
    break;
  }
  if (!ok)
    d.error("'" + d.ai.opcode + "': type not defined for this atomic operation");
  if (in.space != Space::generic && in.space != Space::global && in.space != Space::shared &&
      in.space != Space::shared_cluster)
    d.error("atomics work on .global and .shared memory");
  d.need_ops((in.op2 ? 2 : 3) + (in.op == a_cas ? 1 : 0));
  if (in.ops[in.op2 ? 0 : 1].kind != Opnd::Kind::addr)
    d.error("the address operand must be [a]");
  in.fn = &atom;
  in.cost = in.space == Space::shared ? 4 : 16;
  for (size_t i = 1; i < in.ops.size(); ++i)
    d.float_imm(i, t);
  d.finish();
}

} // namespace isatune::emu::ptx

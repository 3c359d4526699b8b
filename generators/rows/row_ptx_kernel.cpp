// The PTX row-kernel emitter (docs/row-kernels.md, "NVIDIA (PTX)"). One kernel holds every form a launch may
// take, chosen per launch from N and uniform across the CTA: resident (the row in registers), looped over
// global memory, or staged once into shared memory (cp.async, or cp.async.bulk + mbarrier on sm_90a) and
// looped over shared memory.
#include "row_ptx_kernel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <optional>

#include "isatune/error.h"
#include "isatune/ptx/module.h"

namespace isatune::gen::rows {

using ptx::Address;
using ptx::Cmp;
using ptx::Label;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

namespace {

constexpr float kLog2e = 1.4426950408889634f;

const char* op_label(RowOp op) {
  return op == RowOp::softmax ? "softmax" : op == RowOp::rmsnorm ? "rmsnorm" : "layernorm";
}

int log2i(int v) {
  return std::countr_zero(unsigned(v));
}

enum class Combine { max, add };

class RowPtxEmitter {
public:
  RowPtxEmitter(ptx::Kernel& k, RowOp op, const RowPtxParams& p)
      : k_(k), op_(op), p_(p), size_(int(size_of(p.dtype))), threads_row_(32 * p.warps_per_row),
        chunk_bytes_(int64_t(threads_row_) * p.vec * size_) {}

  void emit();

private:
  Reg f() { return k_.reg(RegClass::f32); }
  Reg r() { return k_.reg(RegClass::b32); }
  Reg rd() { return k_.reg(RegClass::b64); }
  Reg pr() { return k_.reg(RegClass::pred); }
  std::vector<Reg> fs(int n) { return k_.regs(RegClass::f32, uint32_t(n)); }

  // Predicate: rem >= vec (a whole chunk of valid elements), and the row aligned for vector access.
  Reg full_chunk(Reg rem, std::optional<Reg> aligned);
  void widen(const std::vector<Reg>& raw, const std::vector<Reg>& v);
  // v[0..vec) from base + off: one vector load for a full aligned chunk, else the valid elements one by one;
  // positions past the row's end get `identity` (-inf or 0: exact in every dtype).
  void load_chunk(ptx::Space sp, Reg base, int64_t off, Reg rem, std::optional<Reg> aligned, float identity,
                  const std::vector<Reg>& v);
  std::string half_bits(float identity) const {
    if (identity == 0)
      return "0x0000";
    return p_.dtype == DType::f16 ? "0xFC00" : "0xFF80"; // -inf
  }
  void store_chunk(Reg base, int64_t off, Reg rem, std::optional<Reg> aligned, const std::vector<Reg>& v);
  void copy_chunk(Reg gbase, Reg sbase, int64_t off, Reg rem);
  void combine(Combine c, Reg acc, Reg b) {
    k_.binary(c == Combine::max ? "max" : "add", Type::f32, acc, acc, b);
  }
  // acc over the row's threads, in every thread: warp butterfly, then through shared memory (slot: its own
  // region per reduction, so no barrier is needed before a region is written).
  void reduce(Combine c, Reg acc, int slot);
  // Steps of `chunks` chunks over the row; body(rem per chunk, cursors) with each cursor advanced by a step.
  void loop(const std::vector<Reg>& cursors,
            const std::function<void(const std::vector<Reg>&, const std::vector<Reg>&)>& body);
  std::vector<std::vector<Reg>> chunk_regs() {
    std::vector<std::vector<Reg>> v;
    for (int j = 0; j < p_.chunks; ++j)
      v.push_back(fs(p_.vec));
    return v;
  }
  void exp_shifted(Reg d, Reg v) { // exp(v - max) = 2^(v*log2e - max*log2e)
    k_.fma_rn(Type::f32, d, v, Operand::f32(kLog2e), neg_max_l2e_);
    k_.unary("ex2.approx.ftz", Type::f32, d, d);
  }
  void looped(ptx::Space sp, Reg src);
  void resident();
  void staged_copy(Reg sbase);
  Reg staged_bulk(Reg srow_base, Reg group);
  // The row's named barrier `1 + row in CTA` over its threads (0 stays the CTA's). Immediate ids, each under
  // a predicate uniform across a warp: ptxas then counts rows_per_cta + 1 barriers, not 16 as for a register
  // id.
  void row_barrier() {
    for (int g = 0; g < p_.rows_per_cta; ++g) {
      auto& b = k_.bar_sync(uint32_t(1 + g), uint32_t(threads_row_));
      if (p_.rows_per_cta > 1)
        b.pred(in_group_[g]);
    }
  }

  ptx::Kernel& k_;
  RowOp op_;
  RowPtxParams p_;
  int size_, threads_row_;
  int64_t chunk_bytes_;
  Reg n_, tpos_, xp_, yp_, wp_, bp_, eps_, rcp_n_;
  std::optional<Reg> fast_x_, fast_y_;
  Reg red_write_, red_read_, lane0_;
  std::vector<Reg> in_group_; // in_group_[g]: this thread works on the CTA's row g
  Reg xrow_, t_;              // x row address, thread within the row
  Reg neg_max_l2e_, inv_, mean_;
};

Reg RowPtxEmitter::full_chunk(Reg rem, std::optional<Reg> aligned) {
  Reg full = pr();
  k_.setp(Cmp::ge, Type::s32, full, rem, p_.vec);
  if (aligned)
    k_.raw("and.pred", {full, full, *aligned});
  return full;
}

// 16-bit pairs (lower element in the low half) -> f32 values; bf16 -> f32 is exact: the bits in the upper
// half.
void RowPtxEmitter::widen(const std::vector<Reg>& raw, const std::vector<Reg>& v) {
  for (size_t i = 0; i < raw.size(); ++i) {
    if (p_.dtype == DType::f16) {
      std::vector<Reg> h = k_.regs(RegClass::b16, 2);
      k_.unpack(Type::b32, h, raw[i]);
      k_.cvt(ptx::Rounding::none, Type::f32, Type::f16, v[2 * i], h[0]);
      k_.cvt(ptx::Rounding::none, Type::f32, Type::f16, v[2 * i + 1], h[1]);
    } else {
      Reg lo = r(), hi = r();
      k_.binary("shl", Type::b32, lo, raw[i], 16);
      k_.binary("and", Type::b32, hi, raw[i], Operand::sym("0xFFFF0000"));
      k_.mov(Type::b32, v[2 * i], lo);
      k_.mov(Type::b32, v[2 * i + 1], hi);
    }
  }
}

// Both paths of a chunk fill the same registers (f32 values, or the packed 16-bit pairs converted once after
// the join), so ptxas, which if-converts the branch, keeps one set live.
void RowPtxEmitter::load_chunk(ptx::Space sp, Reg base, int64_t off, Reg rem, std::optional<Reg> aligned,
                               float identity, const std::vector<Reg>& v) {
  Reg full = full_chunk(rem, aligned);
  Label slow = k_.new_label("ld_part"), done = k_.new_label("ld_done");
  const bool half = p_.dtype != DType::f32;
  std::vector<Reg> raw;
  if (half)
    raw = k_.regs(RegClass::b32, uint32_t(p_.vec / 2));
  k_.bra(slow).pred(full, true);
  k_.ld(sp, half ? Type::b32 : Type::f32, half ? raw : v, Address(base, off));
  k_.bra(done);
  k_.place(slow);
  std::vector<Reg> h;
  if (half)
    h = k_.regs(RegClass::b16, uint32_t(p_.vec));
  for (int e = 0; e < p_.vec; ++e) {
    Reg valid = pr();
    k_.setp(Cmp::gt, Type::s32, valid, rem, e);
    const Address a(base, off + e * size_);
    if (!half) {
      k_.mov(Type::f32, v[e], Operand::f32(identity));
      k_.ld(sp, Type::f32, {v[e]}, a).pred(valid);
    } else {
      k_.mov(Type::b16, h[e], Operand::sym(half_bits(identity)));
      k_.ld(sp, Type::b16, {h[e]}, a).pred(valid);
    }
  }
  for (size_t i = 0; i < raw.size(); ++i)
    k_.pack(Type::b32, raw[i], {h[2 * i], h[2 * i + 1]});
  k_.place(done);
  if (half)
    widen(raw, v);
}

void RowPtxEmitter::store_chunk(Reg base, int64_t off, Reg rem, std::optional<Reg> aligned,
                                const std::vector<Reg>& v) {
  const bool half = p_.dtype != DType::f32;
  std::vector<Reg> raw;
  if (half) {
    raw = k_.regs(RegClass::b32, uint32_t(p_.vec / 2));
    for (size_t i = 0; i < raw.size(); ++i)
      k_.cvt_pack(p_.dtype == DType::f16 ? Type::f16x2 : Type::bf16x2, raw[i], v[2 * i + 1], v[2 * i]);
  }
  Reg full = full_chunk(rem, aligned);
  Label slow = k_.new_label("st_part"), done = k_.new_label("st_done");
  k_.bra(slow).pred(full, true);
  k_.st(ptx::Space::global, half ? Type::b32 : Type::f32, Address(base, off), half ? raw : v);
  k_.bra(done);
  k_.place(slow);
  std::vector<Reg> h;
  if (half) {
    h = k_.regs(RegClass::b16, uint32_t(p_.vec));
    for (size_t i = 0; i < raw.size(); ++i)
      k_.unpack(Type::b32, {h[2 * i], h[2 * i + 1]}, raw[i]);
  }
  for (int e = 0; e < p_.vec; ++e) {
    Reg valid = pr();
    k_.setp(Cmp::gt, Type::s32, valid, rem, e);
    const Address a(base, off + e * size_);
    if (!half)
      k_.st(ptx::Space::global, Type::f32, a, {v[e]}).pred(valid);
    else
      k_.st(ptx::Space::global, Type::b16, a, {h[e]}).pred(valid);
  }
  k_.place(done);
}

void RowPtxEmitter::copy_chunk(Reg gbase, Reg sbase, int64_t off, Reg rem) {
  Reg full = full_chunk(rem, fast_x_);
  Label slow = k_.new_label("cp_part"), done = k_.new_label("cp_done");
  k_.bra(slow).pred(full, true);
  k_.cp_async(ptx::CacheOp::ca, Address(sbase, off), Address(gbase, off), uint32_t(p_.vec * size_));
  k_.bra(done);
  k_.place(slow);
  const Type t = p_.dtype == DType::f32 ? Type::b32 : Type::b16;
  for (int e = 0; e < p_.vec; ++e) {
    Reg valid = pr();
    k_.setp(Cmp::gt, Type::s32, valid, rem, e);
    Reg v = k_.reg(t == Type::b32 ? RegClass::b32 : RegClass::b16);
    k_.ld(ptx::Space::global, t, {v}, Address(gbase, off + e * size_)).pred(valid);
    k_.st(ptx::Space::shared, t, Address(sbase, off + e * size_), {v}).pred(valid);
  }
  k_.place(done);
}

void RowPtxEmitter::reduce(Combine c, Reg acc, int slot) {
  for (int lanes = 16; lanes >= 1; lanes /= 2) {
    Reg other = f();
    k_.shfl_sync(ptx::ShflMode::bfly, other, acc, lanes, 0x1f);
    combine(c, acc, other);
  }
  if (p_.warps_per_row == 1)
    return;
  const int64_t slot_off = int64_t(slot) * p_.rows_per_cta * p_.warps_per_row * 4;
  k_.st(ptx::Space::shared, Type::f32, Address(red_write_, slot_off), {acc}).pred(lane0_);
  row_barrier();
  for (int w = 0; w < p_.warps_per_row; ++w) {
    Reg part = w == 0 ? acc : f();
    k_.ld(ptx::Space::shared, Type::f32, {part}, Address(red_read_, slot_off + 4 * w));
    if (w > 0)
      combine(c, acc, part);
  }
}

void RowPtxEmitter::loop(const std::vector<Reg>& bases,
                         const std::function<void(const std::vector<Reg>&, const std::vector<Reg>&)>& body) {
  Reg cur = r();
  k_.mov(Type::u32, cur, tpos_);
  std::vector<Reg> cursors;
  for (Reg b : bases) {
    Reg c = k_.reg(b.cls);
    k_.mov(b.cls == RegClass::b64 ? Type::u64 : Type::u32, c, b);
    cursors.push_back(c);
  }
  Label top = k_.new_label("loop"), end = k_.new_label("loop_end");
  k_.place(top);
  Reg past = pr();
  k_.setp(Cmp::ge, Type::u32, past, cur, n_);
  k_.bra(end).pred(past);
  std::vector<Reg> rems;
  for (int j = 0; j < p_.chunks; ++j) {
    Reg pos = r(), rem = r();
    k_.add(Type::u32, pos, cur, int(j * threads_row_ * p_.vec));
    k_.sub(Type::s32, rem, n_, pos);
    rems.push_back(rem);
  }
  body(rems, cursors);
  k_.add(Type::u32, cur, cur, int(p_.chunks * threads_row_ * p_.vec));
  for (Reg c : cursors)
    k_.add(c.cls == RegClass::b64 ? Type::u64 : Type::u32, c, c, int(p_.chunks * chunk_bytes_));
  k_.bra(top);
  k_.place(end);
}

// Every pass re-reads x from `src` (global memory, or this thread's staged chunks in shared memory).
void RowPtxEmitter::looped(ptx::Space sp, Reg src) {
  const Operand zero = Operand::f32(0);
  const float neg_inf = -INFINITY;
  auto load_all = [&](const std::vector<Reg>& rems, Reg base, float identity) {
    auto v = chunk_regs();
    for (int j = 0; j < p_.chunks; ++j)
      load_chunk(sp, base, j * chunk_bytes_, rems[j], fast_x_, identity, v[j]);
    return v;
  };
  if (op_ == RowOp::softmax) {
    Reg m = f();
    k_.mov(Type::f32, m, Operand::f32(neg_inf));
    loop({src}, [&](auto& rems, auto& c) {
      for (auto& ch : load_all(rems, c[0], neg_inf))
        for (Reg v : ch)
          combine(Combine::max, m, v);
    });
    reduce(Combine::max, m, 0);
    neg_max_l2e_ = f();
    k_.binary("mul", Type::f32, neg_max_l2e_, m, Operand::f32(-kLog2e));
    Reg sum = f();
    k_.mov(Type::f32, sum, zero);
    loop({src}, [&](auto& rems, auto& c) {
      for (auto& ch : load_all(rems, c[0], neg_inf))
        for (Reg v : ch) {
          exp_shifted(v, v);
          combine(Combine::add, sum, v);
        }
    });
    reduce(Combine::add, sum, 1);
    inv_ = f();
    k_.unary("rcp.rn", Type::f32, inv_, sum);
    loop({src, yp_}, [&](auto& rems, auto& c) {
      auto vals = load_all(rems, c[0], neg_inf);
      for (int j = 0; j < p_.chunks; ++j) {
        for (Reg v : vals[j]) {
          exp_shifted(v, v);
          k_.binary("mul", Type::f32, v, v, inv_);
        }
        store_chunk(c[1], j * chunk_bytes_, rems[j], fast_y_, vals[j]);
      }
    });
    return;
  }
  Reg acc = f();
  k_.mov(Type::f32, acc, zero);
  loop({src}, [&](auto& rems, auto& c) {
    for (auto& ch : load_all(rems, c[0], 0.0f))
      for (Reg v : ch) {
        if (op_ == RowOp::rmsnorm)
          k_.fma_rn(Type::f32, acc, v, v, acc);
        else
          combine(Combine::add, acc, v);
      }
  });
  reduce(Combine::add, acc, 0);
  Reg stat = f();
  k_.binary("mul", Type::f32, stat, acc, rcp_n_);
  if (op_ == RowOp::layernorm) {
    mean_ = stat;
    Reg var = f();
    k_.mov(Type::f32, var, zero);
    loop({src}, [&](auto& rems, auto& c) {
      auto vals = load_all(rems, c[0], 0.0f);
      for (int j = 0; j < p_.chunks; ++j)
        for (int e = 0; e < p_.vec; ++e) {
          Reg v = vals[j][e], valid = pr();
          k_.sub(Type::f32, v, v, mean_);
          k_.setp(Cmp::gt, Type::s32, valid, rems[j], e);
          k_.selp(Type::f32, v, v, zero, valid); // past the end: no contribution
          k_.fma_rn(Type::f32, var, v, v, var);
        }
    });
    reduce(Combine::add, var, 1);
    stat = f();
    k_.binary("mul", Type::f32, stat, var, rcp_n_);
  }
  inv_ = f();
  k_.add(Type::f32, stat, stat, eps_);
  k_.unary("rsqrt.approx", Type::f32, inv_, stat);
  std::vector<Reg> bases{src, wp_, yp_};
  if (op_ == RowOp::layernorm)
    bases.push_back(bp_);
  loop(bases, [&](auto& rems, auto& c) {
    auto vals = load_all(rems, c[0], 0.0f);
    for (int j = 0; j < p_.chunks; ++j) {
      auto w = fs(p_.vec);
      load_chunk(ptx::Space::global, c[1], j * chunk_bytes_, rems[j], std::nullopt, 0.0f, w);
      std::vector<Reg> b;
      if (op_ == RowOp::layernorm) {
        b = fs(p_.vec);
        load_chunk(ptx::Space::global, c[3], j * chunk_bytes_, rems[j], std::nullopt, 0.0f, b);
      }
      for (int e = 0; e < p_.vec; ++e) {
        Reg v = vals[j][e];
        if (op_ == RowOp::layernorm) {
          k_.sub(Type::f32, v, v, mean_);
          k_.binary("mul", Type::f32, v, v, inv_);
          k_.fma_rn(Type::f32, v, v, w[e], b[e]);
        } else {
          k_.binary("mul", Type::f32, v, v, inv_);
          k_.binary("mul", Type::f32, v, v, w[e]);
        }
      }
      store_chunk(c[2], j * chunk_bytes_, rems[j], fast_y_, vals[j]);
    }
  });
}

// The row in registers: one read of x, every pass over registers, chunks past the end hold identities.
void RowPtxEmitter::resident() {
  const Operand neg_inf = Operand::f32(-INFINITY), zero = Operand::f32(0);
  const float identity = op_ == RowOp::softmax ? -INFINITY : 0.0f;
  auto vals = chunk_regs();
  std::vector<Reg> rems;
  for (int j = 0; j < p_.chunks; ++j) {
    Reg pos = r(), rem = r();
    k_.add(Type::u32, pos, tpos_, int(j * threads_row_ * p_.vec));
    k_.sub(Type::s32, rem, n_, pos);
    rems.push_back(rem);
    load_chunk(ptx::Space::global, xp_, j * chunk_bytes_, rem, fast_x_, identity, vals[j]);
  }
  if (op_ == RowOp::softmax) {
    Reg m = f();
    k_.mov(Type::f32, m, neg_inf);
    for (auto& ch : vals)
      for (Reg v : ch)
        combine(Combine::max, m, v);
    reduce(Combine::max, m, 0);
    neg_max_l2e_ = f();
    k_.binary("mul", Type::f32, neg_max_l2e_, m, Operand::f32(-kLog2e));
    Reg sum = f();
    k_.mov(Type::f32, sum, zero);
    for (auto& ch : vals)
      for (Reg v : ch) {
        exp_shifted(v, v);
        combine(Combine::add, sum, v);
      }
    reduce(Combine::add, sum, 1);
    inv_ = f();
    k_.unary("rcp.rn", Type::f32, inv_, sum);
    for (int j = 0; j < p_.chunks; ++j) {
      for (Reg v : vals[j])
        k_.binary("mul", Type::f32, v, v, inv_);
      store_chunk(yp_, j * chunk_bytes_, rems[j], fast_y_, vals[j]);
    }
    return;
  }
  Reg acc = f();
  k_.mov(Type::f32, acc, zero);
  for (auto& ch : vals)
    for (Reg v : ch) {
      if (op_ == RowOp::rmsnorm)
        k_.fma_rn(Type::f32, acc, v, v, acc);
      else
        combine(Combine::add, acc, v);
    }
  reduce(Combine::add, acc, 0);
  Reg stat = f();
  k_.binary("mul", Type::f32, stat, acc, rcp_n_);
  if (op_ == RowOp::layernorm) {
    mean_ = stat;
    Reg var = f();
    k_.mov(Type::f32, var, zero);
    for (int j = 0; j < p_.chunks; ++j)
      for (int e = 0; e < p_.vec; ++e) {
        Reg v = vals[j][e], valid = pr();
        k_.sub(Type::f32, v, v, mean_);
        k_.setp(Cmp::gt, Type::s32, valid, rems[j], e);
        k_.selp(Type::f32, v, v, zero, valid); // past the end: no contribution
        k_.fma_rn(Type::f32, var, v, v, var);
      }
    reduce(Combine::add, var, 1);
    stat = f();
    k_.binary("mul", Type::f32, stat, var, rcp_n_);
  }
  inv_ = f();
  k_.add(Type::f32, stat, stat, eps_);
  k_.unary("rsqrt.approx", Type::f32, inv_, stat);
  for (int j = 0; j < p_.chunks; ++j) {
    auto w = fs(p_.vec);
    load_chunk(ptx::Space::global, wp_, j * chunk_bytes_, rems[j], std::nullopt, 0.0f, w);
    std::vector<Reg> b;
    if (op_ == RowOp::layernorm) {
      b = fs(p_.vec);
      load_chunk(ptx::Space::global, bp_, j * chunk_bytes_, rems[j], std::nullopt, 0.0f, b);
    }
    for (int e = 0; e < p_.vec; ++e) {
      Reg v = vals[j][e];
      k_.binary("mul", Type::f32, v, v, inv_);
      if (op_ == RowOp::layernorm)
        k_.fma_rn(Type::f32, v, v, w[e], b[e]);
      else
        k_.binary("mul", Type::f32, v, v, w[e]);
    }
    store_chunk(yp_, j * chunk_bytes_, rems[j], fast_y_, vals[j]);
  }
}

// Each thread copies its own chunks into the row's shared buffer (cp.async for whole aligned chunks, element
// copies otherwise) and waits for its copies: it reads back exactly what it wrote, so no barrier is needed.
void RowPtxEmitter::staged_copy(Reg sbase) {
  loop({xp_, sbase}, [&](auto& rems, auto& c) {
    for (int j = 0; j < p_.chunks; ++j)
      copy_chunk(c[0], c[1], j * chunk_bytes_, rems[j]);
  });
  k_.cp_async_wait_all();
}

// The row keeps its global address modulo 16 in shared memory (element p at srow + p * size, srow = base +
// (x row address mod 16)), so the 16-byte aligned middle [A, B) of the row is one cp.async.bulk that
// completes on the row's mbarrier, and a thread's vector reads from shared memory are aligned exactly when
// its global ones would be. Threads copy the head [G, A) and tail [B, E) (under 16 bytes each; the whole row
// when it has no aligned block). Returns srow.
Reg RowPtxEmitter::staged_bulk(Reg srow_base, Reg group) {
  const Operand size = size_;
  Reg g16 = r(), srow = r(), nbytes = r(), a_off = r(), b_off = r(), end = r();
  k_.cvt(ptx::Rounding::none, Type::u32, Type::u64, g16, xrow_);
  k_.binary("and", Type::b32, g16, g16, 15);
  k_.add(Type::u32, srow, srow_base, g16);
  k_.mul_lo(Type::u32, nbytes, n_, size);
  k_.sub(Type::u32, a_off, 16, g16);
  k_.binary("and", Type::b32, a_off, a_off, 15);
  k_.add(Type::u32, end, g16, nbytes);
  k_.binary("and", Type::b32, end, end, Operand::sym("0xFFFFFFF0"));
  k_.sub(Type::s32, b_off, end, g16);
  Reg has_bulk = pr(), leader = pr();
  k_.setp(Cmp::gt, Type::s32, has_bulk, b_off, a_off);
  k_.setp(Cmp::eq, Type::u32, leader, t_, 0);
  Reg bulk_bytes = r(), head = r(), tail = r(), tmp = r();
  k_.sub(Type::u32, tmp, b_off, a_off);
  k_.selp(Type::u32, bulk_bytes, tmp, 0, has_bulk);
  k_.binary("shr", Type::u32, tmp, a_off, log2i(size_));
  k_.selp(Type::u32, head, tmp, n_, has_bulk); // elements in the head
  k_.binary("shr", Type::u32, tmp, b_off, log2i(size_));
  k_.selp(Type::u32, tail, tmp, n_, has_bulk); // first element of the tail
  Reg mb = r();
  k_.mov_addr(mb, "mbar");
  k_.mad_lo(Type::u32, mb, group, 8, mb);
  k_.mbarrier_init(Address(mb), 1).pred(leader);
  k_.fence_mbarrier_init().pred(leader);
  row_barrier();
  k_.mbarrier_arrive_expect_tx(Address(mb), bulk_bytes).pred(leader);
  Reg issue = pr(), dst = r(), src = rd(), off64 = rd();
  k_.raw("and.pred", {issue, leader, has_bulk});
  k_.add(Type::u32, dst, srow, a_off);
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, off64, a_off);
  k_.add(Type::u64, src, xrow_, off64);
  k_.raw("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
         {Operand::sym("[" + dst.name() + "]"), Operand::sym("[" + src.name() + "]"), bulk_bytes,
          Operand::sym("[" + mb.name() + "]")},
         {80, 90, false, "cp.async.bulk"})
      .pred(issue);
  // Head element t and tail element tail + t (each under 16 bytes, so the row's first 16 threads suffice).
  const Type t16 = size_ == 4 ? Type::b32 : Type::b16;
  for (int part = 0; part < 2; ++part) {
    Reg e = r(), valid = pr(), soff = r(), gaddr = rd(),
        v = k_.reg(size_ == 4 ? RegClass::b32 : RegClass::b16);
    if (part == 0) {
      k_.mov(Type::u32, e, t_);
      k_.setp(Cmp::lt, Type::u32, valid, e, head);
    } else {
      k_.add(Type::u32, e, tail, t_);
      k_.setp(Cmp::lt, Type::u32, valid, e, n_);
    }
    k_.mad_lo(Type::u32, soff, e, size, srow);
    k_.mul_wide(Type::u32, gaddr, e, size);
    k_.add(Type::u64, gaddr, gaddr, xrow_);
    k_.ld(ptx::Space::global, t16, {v}, Address(gaddr)).pred(valid);
    k_.st(ptx::Space::shared, t16, Address(soff), {v}).pred(valid);
  }
  row_barrier(); // the head and tail are other threads' chunks
  Label wait = k_.new_label("bulk_wait");
  k_.place(wait);
  Reg landed = pr();
  k_.mbarrier_try_wait_parity(landed, Address(mb), 0);
  k_.bra(wait).pred(landed, true);
  return srow;
}

void RowPtxEmitter::emit() {
  const bool norm = op_ != RowOp::softmax;
  const int threads = threads_per_cta(p_);
  std::vector<ptx::Param> ptrs{k_.param("x", Type::u64)};
  if (norm)
    ptrs.push_back(k_.param("weight", Type::u64));
  if (op_ == RowOp::layernorm)
    ptrs.push_back(k_.param("bias", Type::u64));
  ptrs.push_back(k_.param("y", Type::u64));
  const ptx::Param rows_p = k_.param("rows", Type::u32), n_p = k_.param("N", Type::u32),
                   ld_p = k_.param("ld", Type::u32), ldy_p = k_.param("ldy", Type::u32);
  std::optional<ptx::Param> eps_p;
  if (norm)
    eps_p = k_.param("eps", Type::f32);
  k_.reqntid(uint32_t(threads));
  // With .reqntid alone ptxas 13.0 capped registers below 65536 / threads (80 for 256 threads, 32 for 1024)
  // and spilled; the estimate, which the constraints keep within the SM's registers, is the cap instead.
  k_.maxnreg(uint32_t(std::min(255, (ptx_register_estimate(op_, p_) + 7) / 8 * 8)));
  if (p_.warps_per_row > 1)
    k_.shared("red", ptx_reduction_bytes(op_, p_), 16);
  if (p_.staging == RowStaging::bulk)
    k_.shared("mbar", uint32_t(8 * p_.rows_per_cta), 8);
  if (p_.staging != RowStaging::none)
    k_.dynamic_shared("stage", 16);

  std::vector<Reg> gptr;
  for (auto& prm : ptrs) {
    Reg a = rd();
    k_.ld_param(Type::u64, a, prm);
    k_.cvta_to_global(a, a);
    gptr.push_back(a);
  }
  Reg rows = r(), ld = r(), ldy = r();
  n_ = r();
  k_.ld_param(Type::u32, rows, rows_p);
  k_.ld_param(Type::u32, n_, n_p);
  k_.ld_param(Type::u32, ld, ld_p);
  k_.ld_param(Type::u32, ldy, ldy_p);
  if (norm) {
    eps_ = f();
    k_.ld_param(Type::f32, eps_, *eps_p);
    Reg nf = f();
    rcp_n_ = f();
    k_.cvt(ptx::Rounding::rn, Type::f32, Type::u32, nf, n_);
    k_.unary("rcp.rn", Type::f32, rcp_n_, nf);
  }

  Reg tid = r(), cta = r(), group = r(), t = r(), row = r();
  k_.mov_sreg(tid, ptx::SpecialReg::tid_x);
  k_.mov_sreg(cta, ptx::SpecialReg::ctaid_x);
  k_.binary("shr", Type::u32, group, tid, log2i(threads_row_)); // the CTA's row this thread works on
  k_.binary("and", Type::b32, t, tid, threads_row_ - 1);        // thread within the row
  k_.mad_lo(Type::u32, row, cta, p_.rows_per_cta, group);
  Reg past = pr();
  k_.setp(Cmp::ge, Type::u32, past, row, rows);
  k_.ret().pred(past); // whole warp groups: nothing waits for them

  auto row_base = [&](Reg base, Reg stride, std::optional<Reg>& aligned) {
    Reg off = rd(), out = rd();
    k_.mul_wide(Type::u32, off, row, stride);
    k_.binary("shl", Type::b64, off, off, log2i(size_));
    k_.add(Type::u64, out, base, off);
    if (p_.vec > 1) { // vector access needs row * stride to be a multiple of vec
      Reg lo = r();
      aligned = pr();
      k_.mul_lo(Type::u32, lo, row, stride);
      k_.binary("and", Type::b32, lo, lo, p_.vec - 1);
      k_.setp(Cmp::eq, Type::u32, *aligned, lo, 0);
    }
    return out;
  };
  Reg xrow = row_base(gptr.front(), ld, fast_x_);
  xrow_ = xrow;
  t_ = t;
  Reg yrow = row_base(gptr.back(), ldy, fast_y_);
  tpos_ = r();
  k_.mul_lo(Type::u32, tpos_, t, p_.vec);
  Reg tb = rd();
  k_.mul_wide(Type::u32, tb, t, p_.vec * size_);
  xp_ = rd();
  k_.add(Type::u64, xp_, xrow, tb);
  yp_ = rd();
  k_.add(Type::u64, yp_, yrow, tb);
  if (norm) {
    wp_ = rd();
    k_.add(Type::u64, wp_, gptr[1], tb);
  }
  if (op_ == RowOp::layernorm) {
    bp_ = rd();
    k_.add(Type::u64, bp_, gptr[2], tb);
  }
  if (p_.warps_per_row > 1 || p_.staging == RowStaging::bulk) {
    if (p_.rows_per_cta > 1)
      for (int g = 0; g < p_.rows_per_cta; ++g) {
        in_group_.push_back(pr());
        k_.setp(Cmp::eq, Type::u32, in_group_.back(), group, g);
      }
  }
  if (p_.warps_per_row > 1) {
    Reg lane = r(), warp_in_row = r(), red = r();
    k_.binary("and", Type::b32, lane, tid, 31);
    k_.binary("shr", Type::u32, warp_in_row, t, 5);
    lane0_ = pr();
    k_.setp(Cmp::eq, Type::u32, lane0_, lane, 0);
    k_.mov_addr(red, "red");
    red_read_ = r();
    k_.mad_lo(Type::u32, red_read_, group, p_.warps_per_row * 4, red);
    red_write_ = r();
    k_.mad_lo(Type::u32, red_write_, warp_in_row, 4, red_read_);
  }

  Label res = k_.new_label("resident"), stg = k_.new_label("staged");
  if (p_.resident) {
    Reg fits = pr();
    k_.setp(Cmp::le, Type::u32, fits, n_, threads_row_ * p_.vec * p_.chunks);
    k_.bra(res).pred(fits);
  }
  Reg stride;
  if (p_.staging != RowStaging::none) { // the same rule as ptx_stage_cta_bytes
    stride = r();
    Reg fits = pr();
    k_.mad_lo(Type::u32, stride, n_, size_, 15);
    k_.binary("and", Type::b32, stride, stride, Operand::sym("0xFFFFFFF0"));
    if (p_.staging == RowStaging::bulk)
      k_.add(Type::u32, stride, stride, 16);
    k_.setp(Cmp::le, Type::u32, fits, stride, kRowStageLimit / uint32_t(p_.rows_per_cta));
    k_.bra(stg).pred(fits);
  }
  looped(ptx::Space::global, xp_);
  k_.ret();
  if (p_.resident) {
    k_.place(res);
    resident();
    k_.ret();
  }
  if (p_.staging != RowStaging::none) {
    k_.place(stg);
    Reg sbase = r(), tboff = r();
    k_.mov_addr(sbase, "stage");
    k_.mad_lo(Type::u32, sbase, group, stride, sbase);
    if (p_.staging == RowStaging::bulk)
      sbase = staged_bulk(sbase, group);
    k_.mul_lo(Type::u32, tboff, t, p_.vec * size_);
    k_.add(Type::u32, sbase, sbase, tboff);
    if (p_.staging == RowStaging::cp_async)
      staged_copy(sbase);
    looped(ptx::Space::shared, sbase);
    k_.ret();
  }
}

} // namespace

int threads_per_cta(const RowPtxParams& p) {
  return 32 * p.warps_per_row * p.rows_per_cta;
}

// ptxas 13.0 on sm_80/sm_90a without a register cap used at most 32 + 2 per value in flight (the resident
// layernorm, which also holds a weight and a bias chunk and the centred values); softmax and looped forms
// less.
int ptx_register_estimate(RowOp, const RowPtxParams& p) {
  return 32 + 2 * p.chunks * p.vec;
}

bool ptx_row_valid(RowOp op, const RowPtxParams& p, std::string* why) {
  auto fail = [&](std::string s) {
    if (why)
      *why = std::move(s);
    return false;
  };
  const int bytes = p.vec * int(size_of(p.dtype));
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return fail("vec * element size must be 4, 8 or 16 bytes (one vector load), got " +
                std::to_string(bytes));
  if (threads_per_cta(p) > 1024)
    return fail("rows_per_cta * warps_per_row * 32 must be at most 1024 threads");
  const int regs = ptx_register_estimate(op, p);
  if (regs > 255)
    return fail("estimated registers " + std::to_string(regs) + " exceed 255");
  if (((regs + 7) / 8 * 8) * threads_per_cta(p) > 65536)
    return fail("estimated registers x threads per CTA exceed the SM's 65536 registers");
  return true;
}

uint32_t ptx_stage_row_bytes(const RowPtxParams& p, int64_t n) {
  return uint32_t((n * int64_t(size_of(p.dtype)) + 15) / 16 * 16 + (p.staging == RowStaging::bulk ? 16 : 0));
}

const char* staging_name(RowStaging s) {
  return s == RowStaging::none ? "none" : s == RowStaging::cp_async ? "cp.async" : "tma-bulk";
}

uint32_t ptx_stage_cta_bytes(const RowPtxParams& p, int64_t n) {
  if (p.staging == RowStaging::none)
    return 0;
  const uint64_t row = ptx_stage_row_bytes(p, n);
  return row <= kRowStageLimit / uint32_t(p.rows_per_cta) ? uint32_t(row * uint32_t(p.rows_per_cta)) : 0;
}

uint32_t ptx_reduction_bytes(RowOp op, const RowPtxParams& p) {
  const int reductions = op == RowOp::rmsnorm ? 1 : 2;
  return uint32_t(reductions * p.rows_per_cta * p.warps_per_row * 4);
}

std::string ptx_row_kernel_name(RowOp op, const RowPtxParams& p) {
  const char* staging = p.staging == RowStaging::cp_async ? "_cpa"
                        : p.staging == RowStaging::bulk   ? "_bulk"
                                                          : "";
  return std::string(op_label(op)) + "_" + std::string(to_string(p.dtype)) + "_v" + std::to_string(p.vec) +
         "_r" + std::to_string(p.rows_per_cta) + "_w" + std::to_string(p.warps_per_row) + "_c" +
         std::to_string(p.chunks) + (p.resident ? "_res" : "") + staging;
}

std::string emit_row_ptx(RowOp op, const std::string& isa, const RowPtxParams& p) {
  std::string why;
  if (!ptx_row_valid(op, p, &why))
    throw InputError(std::string(op_label(op)) + ": " + why);
  ptx::Module m(isa);
  ptx::Kernel& k = m.add_kernel(ptx_row_kernel_name(op, p));
  RowPtxEmitter(k, op, p).emit();
  return ptx::print(m);
}

} // namespace isatune::gen::rows

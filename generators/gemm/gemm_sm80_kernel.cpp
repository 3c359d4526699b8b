// The mma.sync GEMM kernel (gemm_sm80_kernel.h). Column-major BLAS operands (gemm_params.h) are copied to
// shared memory in their stored orientation: a tile is "rows" of the stored contiguous dimension (k for A 'T'
// and B 'N', m or n otherwise), 16-byte chunks per row. ldmatrix reads k-contiguous tiles as they are and the
// others with .trans, so all four layouts share one pipeline. The swizzle XORs a row's chunk index with bits
// of its row number (row & 7 for rows of 8+ chunks, (row >> 1) & 3 for rows of 4), so the 8 rows one
// ldmatrix matrix reads fall in 8 distinct 16-byte bank groups.
#include "gemm_sm80_kernel.h"

#include <algorithm>
#include <vector>

#include "isatune/error.h"
#include "isatune/ptx/module.h"

namespace isatune::gen::gemm {

namespace {

using ptx::Address;
using ptx::Cmp;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

int log2i(int v) {
  int l = 0;
  while ((1 << l) < v)
    ++l;
  return l;
}

// One operand's tile in shared memory and its global source.
struct OperandTile {
  bool is_a = true;
  bool kcontig = false; // stored rows run along k (A 'T', B 'N')
  int tile_mn = 0;      // tile extent in m (A) or n (B)
  int rows = 0;         // stored rows in the tile
  int row_bytes = 0;    // bytes of one stored row
  int chunks = 0;       // 16-byte chunks per row
  int base = 0;         // byte offset of the tile within a stage
  int frag_tiles = 0;   // 16-wide fragment tiles per warp (mma_m for A, mma_n / 2 for B)
};

class Emitter {
public:
  Emitter(ptx::Kernel& k, const GemmSig& s, const Sm80Config& c, const Sm80Plan& p)
      : k_(k), s_(s), c_(c), p_(p) {}

  Reg r32() { return k_.reg(RegClass::b32); }
  Reg r64() { return k_.reg(RegClass::b64); }
  Reg rf() { return k_.reg(RegClass::f32); }
  Reg rp() { return k_.reg(RegClass::pred); }

  void emit_main();
  void emit_reduce();

private:
  // Swizzle source bits of a tile row for the chunk XOR (0 without swizzle).
  Reg swizzle_bits(const OperandTile& t, Reg row);
  // Issues the copies of one operand's tile for k tile starting at k0 into the stage at shared address
  // `slot`.
  void load_tile(const OperandTile& t, Reg slot, Reg k0);
  // The per-lane ldmatrix offsets of a tile (relative to the tile base, k step 0).
  std::vector<Reg> ldmatrix_offsets(const OperandTile& t, Reg lane, Reg warp_mn);
  void epilogue();

  ptx::Kernel& k_;
  const GemmSig& s_;
  const Sm80Config& c_;
  const Sm80Plan& p_;

  // Kernel state shared by the parts.
  Reg pa_, pb_, pc_, pd_, pw_;
  Reg m_, n_, kk_, lda_, ldb_, ldc_, ldd_, alpha_, beta_, fast_a_, fast_b_, tiles_m_, kchunk_;
  Reg tid_, lane_, warp_m_idx_, warp_n_idx_, m0_, n0_, z_;
  Reg row0_a_, chunk_a_, row0_b_, chunk_b_;        // this thread's copy slot in each tile
  std::vector<std::vector<std::vector<Reg>>> acc_; // [i][j][4]
  OperandTile ta_, tb_;
};

Reg Emitter::swizzle_bits(const OperandTile& t, Reg row) {
  Reg f = r32();
  if (!c_.swizzle) {
    k_.mov(Type::u32, f, 0);
  } else if (t.chunks >= 8) {
    k_.binary("and", Type::b32, f, row, 7);
  } else {
    k_.binary("shr", Type::u32, f, row, 1);
    k_.binary("and", Type::b32, f, f, 3);
  }
  return f;
}

void Emitter::load_tile(const OperandTile& t, Reg slot, Reg k0) {
  const int step = p_.threads / t.chunks; // rows covered by one pass of all threads
  const int passes = (t.rows + step - 1) / step;
  Reg row0 = t.is_a ? row0_a_ : row0_b_, chunk = t.is_a ? chunk_a_ : chunk_b_;
  Reg ptr = t.is_a ? pa_ : pb_, ld = t.is_a ? lda_ : ldb_, fast = t.is_a ? fast_a_ : fast_b_;
  Reg mn0 = t.is_a ? m0_ : n0_, mn_ext = t.is_a ? m_ : n_;
  // outer = the stored row's global index (mn or k), inner = the chunk's first contiguous index (k or mn)
  Reg outer_base = r32(), inner = r32(), inner_ext = t.kcontig ? kk_ : mn_ext,
      outer_ext = t.kcontig ? mn_ext : kk_;
  k_.add(Type::u32, outer_base, t.kcontig ? mn0 : k0, row0);
  k_.binary("shl", Type::b32, inner, chunk, 3);
  k_.add(Type::u32, inner, inner, t.kcontig ? k0 : mn0);
  // valid bytes of the chunk along the contiguous dimension: clamp(ext - inner, 0, 8) * 2
  Reg left = r32();
  k_.sub(Type::s32, left, inner_ext, inner);
  k_.binary("max", Type::s32, left, left, 0);
  k_.binary("min", Type::s32, left, left, 8);
  k_.binary("shl", Type::b32, left, left, 1);
  Reg inner64 = r64();
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, inner64, inner);

  // fast: 2 = 16-byte cp.async, 1 = 4-byte cp.async, 0 = element by element (launches() decides per operand)
  Reg pfast = rp();
  k_.setp(Cmp::eq, Type::u32, pfast, fast, 2);
  auto slow = k_.new_label("slow"), done = k_.new_label("loaded");
  k_.bra(slow, true).pred(pfast, true);
  // One stored row of the pass: its global address and valid bytes, and its shared destination.
  auto row_copy = [&](Reg outer, Reg row, Reg& addr, Reg& bytes, Reg& dst) {
    Reg pv = rp(), pz = rp(), off = r64();
    addr = r64(), bytes = r32(), dst = r32();
    k_.setp(Cmp::lt, Type::u32, pv, outer, outer_ext);
    k_.selp(Type::u32, bytes, left, 0, pv);
    k_.ternary("mad.wide", Type::u32, off, outer, ld, inner64);
    k_.binary("shl", Type::b64, off, off, 1);
    k_.add(Type::u64, addr, ptr, off);
    k_.setp(Cmp::ne, Type::u32, pz, bytes, 0);
    k_.selp(Type::b64, addr, addr, ptr, pz);
    // slot + row * row_bytes + (chunk ^ swizzle(row)) * 16 (+ the tile base, in the address)
    Reg f = swizzle_bits(t, row);
    k_.binary("xor", Type::b32, f, f, chunk);
    k_.binary("shl", Type::b32, f, f, 4);
    k_.mad_lo(Type::u32, dst, row, t.row_bytes, f);
    k_.add(Type::u32, dst, dst, slot);
  };
  // fast path: 16-byte cp.async, src-size zero-filling past the edges; passes unrolled
  for (int pass = 0; pass < passes; ++pass) {
    const bool tail = (pass + 1) * step > t.rows; // the last pass covers rows past the tile
    Reg prow;
    if (tail) {
      prow = rp();
      k_.setp(Cmp::lt, Type::u32, prow, row0, t.rows - pass * step);
    }
    Reg outer = r32(), row = r32(), addr, bytes, dst;
    k_.add(Type::u32, outer, outer_base, pass * step);
    k_.add(Type::u32, row, row0, pass * step);
    row_copy(outer, row, addr, bytes, dst);
    auto& in = k_.cp_async(ptx::CacheOp::cg, Address(dst, t.base), Address(addr), 16, Operand(bytes));
    if (tail)
      in.pred(prow);
  }
  k_.bra(done, true);
  // the other paths, a loop over the passes each (copies per pass differ, the layout does not): 4-byte
  // cp.async when the leading dimension is even (every pair of elements 4-byte aligned), else element by
  // element
  auto pass_loop = [&](bool words) {
    Reg outer = r32(), row = r32(), addr, bytes, dst;
    k_.mov(Type::u32, outer, outer_base);
    k_.mov(Type::u32, row, row0);
    auto pass_top = k_.new_label(words ? "wpass" : "epass");
    k_.place(pass_top);
    Reg prow = rp();
    k_.setp(Cmp::lt, Type::u32, prow, row, t.rows);
    row_copy(outer, row, addr, bytes, dst);
    if (words) {
      for (int e = 0; e < 4; ++e) {
        // this word's valid bytes, clamp(bytes - 4e, 0, 4); a word with none copies zeros from the base
        Reg wb = r32(), pw = rp(), src = r64();
        k_.sub(Type::s32, wb, bytes, 4 * e);
        k_.binary("max", Type::s32, wb, wb, 0);
        k_.binary("min", Type::s32, wb, wb, 4);
        k_.setp(Cmp::ne, Type::u32, pw, wb, 0);
        k_.add(Type::u64, src, addr, 4 * e);
        k_.selp(Type::b64, src, src, ptr, pw);
        k_.cp_async(ptx::CacheOp::ca, Address(dst, t.base + 4 * e), Address(src), 4, Operand(wb)).pred(prow);
      }
    } else {
      for (int e = 0; e < 8; ++e) {
        Reg pe = rp(), h = k_.reg(RegClass::b16);
        k_.setp(Cmp::gt, Type::u32, pe, bytes, 2 * e);
        k_.mov(Type::b16, h, 0);
        k_.ld(ptx::Space::global, Type::b16, {h}, Address(addr, 2 * e)).pred(pe);
        k_.st(ptx::Space::shared, Type::b16, Address(dst, t.base + 2 * e), {h}).pred(prow);
      }
    }
    Reg pnext = rp();
    k_.add(Type::u32, outer, outer, step);
    k_.add(Type::u32, row, row, step);
    k_.setp(Cmp::lt, Type::u32, pnext, row, passes * step);
    k_.bra(pass_top).pred(pnext);
  };
  k_.place(slow);
  {
    Reg pword = rp();
    auto elements = k_.new_label("elements");
    k_.setp(Cmp::eq, Type::u32, pword, fast, 1);
    k_.bra(elements, true).pred(pword, true);
    pass_loop(true);
    k_.bra(done, true);
    k_.place(elements);
    pass_loop(false);
  }
  k_.place(done);
}

std::vector<Reg> Emitter::ldmatrix_offsets(const OperandTile& t, Reg lane, Reg warp_mn) {
  // lane L gives row L % 8 of matrix j = L / 8. A: matrices (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15),
  // (m 8-15, k 8-15) = a0a1, a2a3, a4a5, a6a7. B (two n8 blocks): (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15,
  // k 0-7), (n 8-15, k 8-15) = b0b1, b2b3 of block 0, then of block 1.
  Reg j = r32(), r = r32(), mn_off = r32(), kb = r32();
  k_.binary("shr", Type::u32, j, lane, 3);
  k_.binary("and", Type::b32, r, lane, 7);
  if (t.is_a) {
    k_.binary("and", Type::b32, mn_off, j, 1);
    k_.binary("shr", Type::u32, kb, j, 1);
  } else {
    k_.binary("shr", Type::u32, mn_off, j, 1);
    k_.binary("and", Type::b32, kb, j, 1);
  }
  k_.binary("shl", Type::b32, mn_off, mn_off, 3);
  k_.add(Type::u32, mn_off, mn_off, warp_mn); // the matrix's first m (n) within the tile
  Reg f = swizzle_bits(t, r);                 // every matrix row index is 8q + r
  std::vector<Reg> out;
  if (t.kcontig) {
    // row = mn, chunk = kb (+ 2 per k step, applied as XOR with 32 bytes per step)
    Reg row = r32(), o = r32();
    k_.add(Type::u32, row, mn_off, r);
    k_.binary("xor", Type::b32, o, kb, f);
    k_.binary("shl", Type::b32, o, o, 4);
    k_.mad_lo(Type::u32, o, row, t.row_bytes, o);
    out.push_back(o); // fragment tile i adds 16 * i * row_bytes
  } else {
    // row = k = 8 kb + r, chunk = mn / 8 + 2 i
    Reg row = r32(), cw = r32();
    k_.mad_lo(Type::u32, row, kb, 8, r);
    k_.binary("shr", Type::u32, cw, mn_off, 3);
    for (int i = 0; i < t.frag_tiles; ++i) {
      Reg ch = r32(), o = r32();
      k_.add(Type::u32, ch, cw, 2 * i);
      k_.binary("xor", Type::b32, ch, ch, f);
      k_.binary("shl", Type::b32, ch, ch, 4);
      k_.mad_lo(Type::u32, o, row, t.row_bytes, ch);
      out.push_back(o);
    }
  }
  return out;
}

void Emitter::emit_main() {
  // ---- parameters
  std::vector<ptx::Param> ptrs;
  for (const char* nm : {"pA", "pB", "pC", "pD", "pW"})
    ptrs.push_back(k_.param_ptr(nm));
  std::vector<ptx::Param> ints;
  for (const char* nm : {"M", "N", "K", "lda", "ldb", "ldc", "ldd"})
    ints.push_back(k_.param(nm, Type::u32));
  auto p_alpha = k_.param("alpha", Type::f32), p_beta = k_.param("beta", Type::f32);
  std::vector<ptx::Param> flags;
  for (const char* nm : {"fast_a", "fast_b", "tiles_m", "kchunk"})
    flags.push_back(k_.param(nm, Type::u32));
  k_.dynamic_shared("smem", 16);
  // .minnctapersm 1: with the thread count alone (.reqntid or .maxntid 128) ptxas 13.0 held small variants to
  // 32 registers (full occupancy) and spilled 12-32 bytes; asking for one CTA per SM lets it take what it
  // needs
  k_.reqntid(uint32_t(p_.threads));
  k_.minnctapersm(1);

  Reg* ptr_regs[] = {&pa_, &pb_, &pc_, &pd_, &pw_};
  for (int i = 0; i < 5; ++i) {
    *ptr_regs[i] = r64();
    k_.ld_param(Type::u64, *ptr_regs[i], ptrs[size_t(i)]);
    k_.cvta_to_global(*ptr_regs[i], *ptr_regs[i]);
  }
  Reg* int_regs[] = {&m_, &n_, &kk_, &lda_, &ldb_, &ldc_, &ldd_};
  for (int i = 0; i < 7; ++i) {
    *int_regs[i] = r32();
    k_.ld_param(Type::u32, *int_regs[i], ints[size_t(i)]);
  }
  alpha_ = rf(), beta_ = rf();
  k_.ld_param(Type::f32, alpha_, p_alpha);
  k_.ld_param(Type::f32, beta_, p_beta);
  Reg* flag_regs[] = {&fast_a_, &fast_b_, &tiles_m_, &kchunk_};
  for (int i = 0; i < 4; ++i) {
    *flag_regs[i] = r32();
    k_.ld_param(Type::u32, *flag_regs[i], flags[size_t(i)]);
  }

  // ---- geometry
  tid_ = r32(), lane_ = r32();
  Reg warp = r32(), bid = r32();
  z_ = r32();
  k_.mov_sreg(tid_, ptx::SpecialReg::tid_x);
  k_.mov_sreg(bid, ptx::SpecialReg::ctaid_x);
  k_.mov_sreg(z_, ptx::SpecialReg::ctaid_y);
  k_.binary("and", Type::b32, lane_, tid_, 31);
  k_.binary("shr", Type::u32, warp, tid_, 5);
  warp_m_idx_ = r32(), warp_n_idx_ = r32();
  k_.binary("rem", Type::u32, warp_m_idx_, warp, c_.warps_m);
  k_.binary("div", Type::u32, warp_n_idx_, warp, c_.warps_m);
  Reg tmi = r32(), tni = r32();
  k_.binary("rem", Type::u32, tmi, bid, tiles_m_);
  k_.binary("div", Type::u32, tni, bid, tiles_m_);
  m0_ = r32(), n0_ = r32();
  k_.mul_lo(Type::u32, m0_, tmi, c_.tile_m);
  k_.mul_lo(Type::u32, n0_, tni, c_.tile_n);
  // this split's k range [kb, ke) and its k tiles
  Reg kb = r32(), ke = r32(), ktiles = r32();
  k_.mul_lo(Type::u32, kb, z_, kchunk_);
  k_.binary("min", Type::u32, kb, kb, kk_);
  k_.add(Type::u32, ke, kb, kchunk_);
  k_.binary("min", Type::u32, ke, ke, kk_);
  k_.sub(Type::u32, ktiles, ke, kb);
  k_.add(Type::u32, ktiles, ktiles, c_.tile_k - 1);
  k_.binary("shr", Type::u32, ktiles, ktiles, log2i(c_.tile_k));

  // ---- tiles
  auto tile = [&](bool is_a) {
    OperandTile t;
    t.is_a = is_a;
    t.kcontig = is_a ? s_.a_trans : !s_.b_trans;
    t.tile_mn = is_a ? c_.tile_m : c_.tile_n;
    t.rows = t.kcontig ? t.tile_mn : c_.tile_k;
    t.row_bytes = 2 * (t.kcontig ? c_.tile_k : t.tile_mn);
    t.chunks = t.row_bytes / 16;
    t.base = is_a ? 0 : p_.a_tile_bytes;
    t.frag_tiles = is_a ? p_.mma_m : p_.mma_n / 2;
    return t;
  };
  ta_ = tile(true), tb_ = tile(false);
  auto copy_slot = [&](const OperandTile& t, Reg& row0, Reg& chunk) {
    row0 = r32(), chunk = r32();
    k_.binary("shr", Type::u32, row0, tid_, log2i(t.chunks));
    k_.binary("and", Type::b32, chunk, tid_, t.chunks - 1);
  };
  copy_slot(ta_, row0_a_, chunk_a_);
  copy_slot(tb_, row0_b_, chunk_b_);

  Reg sbase = r32();
  k_.mov_addr(sbase, "smem");
  Reg wm_off = r32(), wn_off = r32();
  k_.mul_lo(Type::u32, wm_off, warp_m_idx_, p_.warp_m);
  k_.mul_lo(Type::u32, wn_off, warp_n_idx_, p_.warp_n);
  std::vector<Reg> offs_a = ldmatrix_offsets(ta_, lane_, wm_off),
                   offs_b = ldmatrix_offsets(tb_, lane_, wn_off);

  // ---- accumulators
  acc_.assign(size_t(p_.mma_m), std::vector<std::vector<Reg>>(size_t(p_.mma_n)));
  for (auto& row : acc_)
    for (auto& a : row) {
      a = k_.regs(RegClass::f32, 4);
      for (Reg r : a)
        k_.mov(Type::f32, r, Operand::f32(0.0f));
    }

  // ---- the pipeline: iteration `it` loads tile it (when it < ktiles) and, from it = stages - 1 on, computes
  // tile kt = it - (stages - 1); one commit group per iteration (empty past the last tile) keeps "all but the
  // newest stages - 2 groups" = tile kt.
  const int stage_bytes = p_.stage_bytes;
  const int ring_end = c_.stages * stage_bytes;
  Reg kload = r32(), wr = r32(), rd = r32(), it = r32(), kt = r32(), ring_top = r32();
  k_.mov(Type::u32, kload, kb);
  k_.mov(Type::u32, wr, sbase);
  k_.mov(Type::u32, rd, sbase);
  k_.mov(Type::u32, it, 0);
  k_.mov(Type::s32, kt, -(c_.stages - 1));
  k_.add(Type::u32, ring_top, sbase, ring_end);
  auto top = k_.new_label("ktile");
  Reg pcompute = rp();
  k_.place(top);
  k_.setp(Cmp::ge, Type::s32, pcompute, kt, 0);
  {
    auto nowait = k_.new_label("nowait");
    k_.bra(nowait, true).pred(pcompute, true);
    k_.cp_async_wait_group(uint32_t(c_.stages - 2)); // this thread's copies of tile kt landed
    k_.bar_sync(0);                                  // everyone's landed; everyone finished tile kt - 1
    k_.place(nowait);
  }
  {
    // refill the slot tile kt - 1 used (or, in the prologue, a fresh one)
    Reg pl = rp();
    auto skip = k_.new_label("noload");
    k_.setp(Cmp::ge, Type::u32, pl, it, ktiles);
    k_.bra(skip, true).pred(pl);
    load_tile(ta_, wr, kload);
    load_tile(tb_, wr, kload);
    k_.place(skip);
    k_.cp_async_commit_group();
    Reg pw = rp();
    k_.add(Type::u32, it, it, 1);
    k_.add(Type::u32, kload, kload, c_.tile_k);
    k_.add(Type::u32, wr, wr, stage_bytes);
    k_.setp(Cmp::ge, Type::u32, pw, wr, ring_top);
    k_.sub(Type::u32, wr, wr, ring_end).pred(pw);
  }
  auto nocompute = k_.new_label("nocompute");
  k_.bra(nocompute, true).pred(pcompute, true);
  // compute tile kt from slot rd
  {
    std::vector<Reg> base_a, base_b; // per fragment tile (trans) or one (k-contiguous) shared addresses
    auto bases = [&](const OperandTile& t, const std::vector<Reg>& offs, std::vector<Reg>& out) {
      if (t.kcontig)
        return;
      for (Reg o : offs) {
        Reg b = r32();
        k_.add(Type::u32, b, rd, o);
        out.push_back(b);
      }
    };
    bases(ta_, offs_a, base_a);
    bases(tb_, offs_b, base_b);
    std::vector<std::vector<Reg>> fa(size_t(p_.mma_m)), fb(size_t(p_.mma_n));
    for (auto& f : fa)
      f = k_.regs(RegClass::b32, 4);
    for (auto& f : fb)
      f = k_.regs(RegClass::b32, 2);
    for (int ks = 0; ks < c_.tile_k / 16; ++ks) {
      auto frag_address = [&](const OperandTile& t, const std::vector<Reg>& offs,
                              const std::vector<Reg>& based, int i) -> Address {
        if (t.kcontig) {
          return Address(offs[0], t.base + 16 * i * t.row_bytes); // offs[0] is this k step's address
        }
        return Address(based[size_t(i)], t.base + 16 * ks * t.row_bytes);
      };
      // k-contiguous tiles: this k step's chunk = lane chunk ^ 2 ks (32 bytes per step)
      std::vector<Reg> step_a, step_b;
      auto step_addr = [&](const OperandTile& t, const std::vector<Reg>& offs, std::vector<Reg>& out) {
        if (!t.kcontig)
          return;
        Reg a = r32();
        if (ks == 0) {
          k_.add(Type::u32, a, rd, offs[0]);
        } else {
          k_.binary("xor", Type::b32, a, offs[0], 32 * ks);
          k_.add(Type::u32, a, a, rd);
        }
        out.push_back(a);
      };
      step_addr(ta_, offs_a, step_a);
      step_addr(tb_, offs_b, step_b);
      for (int i = 0; i < p_.mma_m; ++i)
        k_.ldmatrix(4, !ta_.kcontig, fa[size_t(i)], frag_address(ta_, step_a, base_a, i));
      for (int i = 0; i < p_.mma_n / 2; ++i) {
        std::vector<Reg> d{fb[size_t(2 * i)][0], fb[size_t(2 * i)][1], fb[size_t(2 * i + 1)][0],
                           fb[size_t(2 * i + 1)][1]};
        k_.ldmatrix(4, !tb_.kcontig, d, frag_address(tb_, step_b, base_b, i));
      }
      const auto type = s_.a == DType::bf16 ? ptx::MmaType::bf16 : ptx::MmaType::f16;
      for (int i = 0; i < p_.mma_m; ++i)
        for (int j = 0; j < p_.mma_n; ++j)
          k_.mma_m16n8k16(type, acc_[size_t(i)][size_t(j)], fa[size_t(i)], fb[size_t(j)],
                          acc_[size_t(i)][size_t(j)]);
    }
  }
  {
    Reg pw = rp();
    k_.add(Type::u32, rd, rd, stage_bytes);
    k_.setp(Cmp::ge, Type::u32, pw, rd, ring_top);
    k_.sub(Type::u32, rd, rd, ring_end).pred(pw);
  }
  k_.place(nocompute);
  {
    Reg pn = rp();
    k_.add(Type::s32, kt, kt, 1);
    k_.setp(Cmp::lt, Type::s32, pn, kt, ktiles);
    k_.bra(top, true).pred(pn);
  }
  k_.cp_async_wait_all(); // the empty groups past the last tile

  epilogue();
  k_.ret();
}

void Emitter::epilogue() {
  // accumulator c_i of an m16n8 tile: row g + 8 (i / 2), column 2t + (i % 2)
  Reg g = r32(), t = r32(), row_base = r32(), col_base = r32();
  k_.binary("shr", Type::u32, g, lane_, 2);
  k_.binary("and", Type::b32, t, lane_, 3);
  k_.mad_lo(Type::u32, row_base, warp_m_idx_, p_.warp_m, g);
  k_.add(Type::u32, row_base, row_base, m0_);
  k_.binary("shl", Type::b32, t, t, 1);
  k_.mad_lo(Type::u32, col_base, warp_n_idx_, p_.warp_n, t);
  k_.add(Type::u32, col_base, col_base, n0_);
  // rows of this thread: row_base + 16 i + 8 h
  std::vector<Reg> prow;
  for (int i = 0; i < p_.mma_m; ++i)
    for (int h = 0; h < 2; ++h) {
      Reg pr = rp(), row = r32();
      k_.add(Type::u32, row, row_base, 16 * i + 8 * h);
      k_.setp(Cmp::lt, Type::u32, pr, row, m_);
      prow.push_back(pr);
    }
  const bool partial = c_.split_k > 1;
  const int es = partial ? 4 : int(size_of(s_.cd));
  const Type ct = s_.cd == DType::f32 ? Type::f32 : s_.cd == DType::f16 ? Type::f16 : Type::bf16;
  Reg pbeta = rp();
  k_.setp(Cmp::ne, Type::f32, pbeta, beta_, Operand::f32(0.0f));
  Reg row64 = r64();
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, row64, row_base);
  Reg zn = r32();
  if (partial)
    k_.mul_lo(Type::u32, zn, z_, n_); // partial tile z: workspace[z][n][m]
  for (int j = 0; j < p_.mma_n; ++j)
    for (int e = 0; e < 2; ++e) {
      Reg col = r32(), pcol = rp();
      k_.add(Type::u32, col, col_base, 8 * j + e);
      k_.setp(Cmp::lt, Type::u32, pcol, col, n_);
      // element (row, col) lives at base + (col * ld + row) * es
      auto column = [&](Reg base, Reg ld, int esize, Reg col_index) {
        Reg o = r64(), a = r64();
        k_.ternary("mad.wide", Type::u32, o, col_index, ld, row64);
        k_.binary("shl", Type::b64, o, o, log2i(esize));
        k_.add(Type::u64, a, base, o);
        return a;
      };
      Reg dcol, ccol;
      if (partial) {
        Reg zc = r32();
        k_.add(Type::u32, zc, zn, col);
        dcol = column(pw_, m_, 4, zc);
      } else {
        dcol = column(pd_, ldd_, es, col);
        ccol = column(pc_, ldc_, es, col);
      }
      for (int i = 0; i < p_.mma_m; ++i)
        for (int h = 0; h < 2; ++h) {
          Reg p = rp();
          k_.raw("and.pred", {p, prow[size_t(2 * i + h)], pcol});
          Reg v = acc_[size_t(i)][size_t(j)][size_t(2 * h + e)];
          const int imm = (16 * i + 8 * h) * es;
          if (partial) {
            k_.st(ptx::Space::global, Type::f32, Address(dcol, imm), {v}).pred(p);
            continue;
          }
          Reg out = rf();
          k_.binary("mul.rn", Type::f32, out, v, alpha_);
          // C is read only when beta != 0 (beta = 0 must not turn NaN in C into NaN in D)
          Reg pc = rp();
          k_.raw("and.pred", {pc, p, pbeta});
          Reg cv = rf();
          if (s_.cd == DType::f32) {
            k_.mov(Type::f32, cv, Operand::f32(0.0f));
            k_.ld(ptx::Space::global, Type::f32, {cv}, Address(ccol, imm)).pred(pc);
          } else {
            Reg h16 = k_.reg(RegClass::b16);
            k_.mov(Type::b16, h16, 0);
            k_.ld(ptx::Space::global, Type::b16, {h16}, Address(ccol, imm)).pred(pc);
            k_.cvt(ptx::Rounding::none, Type::f32, ct, cv, h16);
          }
          k_.fma_rn(Type::f32, out, cv, beta_, out);
          if (s_.cd == DType::f32) {
            k_.st(ptx::Space::global, Type::f32, Address(dcol, imm), {out}).pred(p);
          } else {
            Reg h16 = k_.reg(RegClass::b16);
            k_.cvt(ptx::Rounding::rn, ct, Type::f32, h16, out);
            k_.st(ptx::Space::global, Type::b16, Address(dcol, imm), {h16}).pred(p);
          }
        }
    }
}

void Emitter::emit_reduce() {
  // one thread per element of D: sum the split partial tiles, then alpha * sum + beta * C
  auto p_w = k_.param_ptr("pW"), p_c = k_.param_ptr("pC"), p_d = k_.param_ptr("pD");
  std::vector<ptx::Param> ints;
  for (const char* nm : {"M", "N", "ldc", "ldd", "split"})
    ints.push_back(k_.param(nm, Type::u32));
  auto p_alpha = k_.param("alpha", Type::f32), p_beta = k_.param("beta", Type::f32);
  k_.maxntid(kSm80ReduceThreads);
  Reg w = r64(), cptr = r64(), dptr = r64();
  k_.ld_param(Type::u64, w, p_w);
  k_.cvta_to_global(w, w);
  k_.ld_param(Type::u64, cptr, p_c);
  k_.cvta_to_global(cptr, cptr);
  k_.ld_param(Type::u64, dptr, p_d);
  k_.cvta_to_global(dptr, dptr);
  std::vector<Reg> v;
  for (auto& pr : ints) {
    v.push_back(r32());
    k_.ld_param(Type::u32, v.back(), pr);
  }
  Reg m = v[0], n = v[1], ldc = v[2], ldd = v[3], split = v[4];
  Reg alpha = rf(), beta = rf();
  k_.ld_param(Type::f32, alpha, p_alpha);
  k_.ld_param(Type::f32, beta, p_beta);
  Reg tid = r32(), bid = r32(), idx = r32(), mn = r32();
  k_.mov_sreg(tid, ptx::SpecialReg::tid_x);
  k_.mov_sreg(bid, ptx::SpecialReg::ctaid_x);
  k_.mad_lo(Type::u32, idx, bid, kSm80ReduceThreads, tid);
  k_.mul_lo(Type::u32, mn, m, n);
  Reg pout = rp();
  auto done = k_.new_label("done");
  k_.setp(Cmp::ge, Type::u32, pout, idx, mn);
  k_.bra(done).pred(pout);
  Reg sum = rf(), idx64 = r64(), step = r64(), a = r64();
  k_.mov(Type::f32, sum, Operand::f32(0.0f));
  k_.mul_wide(Type::u32, idx64, idx, 4);
  k_.add(Type::u64, a, w, idx64);
  k_.mul_wide(Type::u32, step, mn, 4);
  Reg zi = r32();
  k_.mov(Type::u32, zi, 0);
  auto loop = k_.new_label("sum");
  k_.place(loop);
  {
    Reg x = rf(), pl = rp();
    k_.ld(ptx::Space::global, Type::f32, {x}, Address(a));
    k_.add(Type::f32, sum, sum, x);
    k_.add(Type::u64, a, a, step);
    k_.add(Type::u32, zi, zi, 1);
    k_.setp(Cmp::lt, Type::u32, pl, zi, split);
    k_.bra(loop).pred(pl);
  }
  Reg row = r32(), col = r32();
  k_.binary("rem", Type::u32, row, idx, m);
  k_.binary("div", Type::u32, col, idx, m);
  const int es = int(size_of(s_.cd));
  const Type ct = s_.cd == DType::f32 ? Type::f32 : s_.cd == DType::f16 ? Type::f16 : Type::bf16;
  Reg row64 = r64();
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, row64, row);
  auto element = [&](Reg base, Reg ld) {
    Reg o = r64(), ad = r64();
    k_.ternary("mad.wide", Type::u32, o, col, ld, row64);
    k_.binary("shl", Type::b64, o, o, log2i(es));
    k_.add(Type::u64, ad, base, o);
    return ad;
  };
  Reg out = rf(), cv = rf(), pbeta = rp();
  k_.binary("mul.rn", Type::f32, out, sum, alpha);
  k_.setp(Cmp::ne, Type::f32, pbeta, beta, Operand::f32(0.0f));
  Reg ca = element(cptr, ldc), da = element(dptr, ldd);
  if (s_.cd == DType::f32) {
    k_.mov(Type::f32, cv, Operand::f32(0.0f));
    k_.ld(ptx::Space::global, Type::f32, {cv}, Address(ca)).pred(pbeta);
  } else {
    Reg h = k_.reg(RegClass::b16);
    k_.mov(Type::b16, h, 0);
    k_.ld(ptx::Space::global, Type::b16, {h}, Address(ca)).pred(pbeta);
    k_.cvt(ptx::Rounding::none, Type::f32, ct, cv, h);
  }
  k_.fma_rn(Type::f32, out, cv, beta, out);
  if (s_.cd == DType::f32) {
    k_.st(ptx::Space::global, Type::f32, Address(da), {out});
  } else {
    Reg h = k_.reg(RegClass::b16);
    k_.cvt(ptx::Rounding::rn, ct, Type::f32, h, out);
    k_.st(ptx::Space::global, Type::b16, Address(da), {h});
  }
  k_.place(done);
  k_.ret();
}

} // namespace

std::vector<Parameter> sm80_parameters() {
  auto nums = [](std::initializer_list<double> v) {
    std::vector<Value> out;
    for (double x : v)
      out.push_back(Value::num(x));
    return out;
  };
  return {
      {"tile_m", nums({32, 64, 128, 256}), true},
      {"tile_n", nums({32, 64, 128, 256}), true},
      {"tile_k", nums({32, 64}), true},
      {"warps_m", nums({1, 2, 4}), true},
      {"warps_n", nums({1, 2, 4}), true},
      {"stages", nums({2, 3, 4}), true},
      {"swizzle", nums({0, 1}), true},
      {"split_k", nums({1, 2, 4}), true},
  };
}

Sm80Config sm80_decode(const Params& p) {
  Sm80Config c;
  c.tile_m = int(param_int(p, "tile_m"));
  c.tile_n = int(param_int(p, "tile_n"));
  c.tile_k = int(param_int(p, "tile_k"));
  c.warps_m = int(param_int(p, "warps_m"));
  c.warps_n = int(param_int(p, "warps_n"));
  c.stages = int(param_int(p, "stages"));
  c.swizzle = param_int(p, "swizzle") != 0;
  c.split_k = int(param_int(p, "split_k"));
  return c;
}

Sm80Plan sm80_plan(const Sm80Config& c) {
  Sm80Plan p;
  p.threads = 32 * c.warps_m * c.warps_n;
  p.warp_m = c.tile_m / c.warps_m;
  p.warp_n = c.tile_n / c.warps_n;
  p.mma_m = p.warp_m / 16;
  p.mma_n = p.warp_n / 8;
  p.accumulators = 4 * p.mma_m * p.mma_n;
  p.fragments = 4 * p.mma_m + 2 * p.mma_n;
  // addressing (pointers, sizes, ring, ldmatrix offsets) and the epilogue's temporaries: about 40
  p.est_registers = p.accumulators + p.fragments + 40;
  p.a_tile_bytes = 2 * c.tile_m * c.tile_k;
  p.b_tile_bytes = 2 * c.tile_n * c.tile_k;
  p.stage_bytes = p.a_tile_bytes + p.b_tile_bytes;
  p.shared_bytes = c.stages * p.stage_bytes;
  return p;
}

int sm80_shared_limit(const std::string& isa) {
  return isa == "sm_80" ? 163 * 1024 : 227 * 1024;
}

std::string sm80_why_invalid(const std::string& isa, const Sm80Config& c) {
  const Sm80Plan p = sm80_plan(c);
  if (p.threads > kSm80MaxThreads)
    return "warps_m * warps_n = " + std::to_string(c.warps_m * c.warps_n) + " warps: at most " +
           std::to_string(kSm80MaxThreads / 32) + " (" + std::to_string(kSm80MaxThreads) + " threads)";
  if (c.tile_m % (16 * c.warps_m))
    return "tile_m " + std::to_string(c.tile_m) + " is not a multiple of 16 * warps_m";
  if (c.tile_n % (16 * c.warps_n))
    return "tile_n " + std::to_string(c.tile_n) + " is not a multiple of 16 * warps_n";
  if (p.accumulators > kSm80MaxAccumulators)
    return std::to_string(p.accumulators) + " accumulators per thread: at most " +
           std::to_string(kSm80MaxAccumulators);
  if (p.est_registers > kSm80MaxRegisters)
    return "estimated " + std::to_string(p.est_registers) + " registers per thread: at most " +
           std::to_string(kSm80MaxRegisters);
  if (p.shared_bytes > sm80_shared_limit(isa))
    return "shared memory " + std::to_string(p.shared_bytes) +
           " bytes (stages * (tile_m + tile_n) * tile_k * 2): " + "at most " +
           std::to_string(sm80_shared_limit(isa)) + " on " + isa;
  // (each pass of the copy covers whole rows: threads, >= 32, is a multiple of the chunks per row, <= 32)
  return {};
}

std::string sm80_kernel_name(const GemmSig& sig, const Sm80Config& c) {
  return "gemm_mma_" + std::string(to_string(sig.a)) + "_" + std::string(to_string(sig.cd)) + "_" +
         sig.layout + "_" + std::to_string(c.tile_m) + "x" + std::to_string(c.tile_n) + "x" +
         std::to_string(c.tile_k) + "_w" + std::to_string(c.warps_m) + "x" + std::to_string(c.warps_n) +
         "_s" + std::to_string(c.stages) + "_z" + std::to_string(int(c.swizzle)) + "_k" +
         std::to_string(c.split_k);
}

std::string sm80_reduce_kernel_name(const GemmSig& sig, const Sm80Config& c) {
  return sm80_kernel_name(sig, c) + "_reduce";
}

std::string emit_sm80_module(const std::string& isa, const GemmSig& sig, const Sm80Config& c) {
  ptx::Module m(isa);
  const Sm80Plan p = sm80_plan(c);
  {
    ptx::Kernel& k = m.add_kernel(sm80_kernel_name(sig, c));
    Emitter e(k, sig, c, p);
    e.emit_main();
  }
  if (c.split_k > 1) {
    ptx::Kernel& k = m.add_kernel(sm80_reduce_kernel_name(sig, c));
    Emitter e(k, sig, c, p);
    e.emit_reduce();
  }
  return ptx::print(m);
}

} // namespace isatune::gen::gemm

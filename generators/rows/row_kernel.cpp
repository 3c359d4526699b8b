// The row kernel emitter shared by softmax, rmsnorm and layernorm (docs/row-kernels.md).
//
// Layout. A workgroup holds rows_per_wg wave groups of waves_per_row waves; wave group g handles row
// wg_id * rows_per_wg + g (rows past the end recompute the last row and store nothing, so every wave meets
// the same barriers). The W = 64 * waves_per_row lanes of a row read it in chunks of `vec` elements: chunk j
// of a group at frame position a covers positions a + j*W*vec + lane*vec + [0, vec). A group is `unroll`
// chunks.
//
// Frame. 16-bit rows may start at an odd element (odd ld), so loads use a frame that starts at the row's
// dword-aligned address: frame position p holds element p - s, s = 0 or 1. Every chunk of the frame is
// aligned; the other streams (weight, bias, y) use the same per-lane offsets from base - 2*s, and vector
// access to them needs that base to be dword aligned too (flag `aligned`, per row).
//
// Ragged tails. A group whose positions all hold elements (and whose streams are aligned) takes the fast
// path: one vector load/store per chunk. Otherwise the slow path accesses element by element under an EXEC
// mask of the lanes whose position is valid, filling invalid positions with an identity value.
//
// Forms. Register-resident when N + s fits row_chunk elements per lane: x is loaded once and every pass runs
// over registers. Otherwise looped: every pass re-reads x from global memory, group by group.
#include <array>
#include <cmath>
#include <cstring>
#include <functional>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/waits.h"
#include "isatune/error.h"
#include "row_common.h"

namespace isatune::gen::rows {

using namespace cdna;

namespace {

int log2i(int v) {
  int l = 0;
  while ((1 << l) < v)
    ++l;
  return l;
}

constexpr uint32_t kNegInf32 = 0xff800000u;
constexpr float kLog2e = 1.44269504088896340736f;

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Where a group lies: resident groups at a constant frame position, looped ones at sP (a = 0 relative).
struct Loc {
  bool looped = false;
  int64_t a = 0;
};

struct Addr {
  Reg v;
  int imm;
};

class Emitter {
public:
  Emitter(RowOp op, const std::string& isa, const RowParams& p, const std::string& name)
      : op_(op), p_(p), b_(parse_target_id(isa), name) {
    size_ = int(size_of(p.dtype));
    half_ = size_ == 2;
    w_ = 64 * p.waves_per_row;
    dw_ = p.vec * size_ / 4;
    chunk_elems_ = w_ * p.vec;
    gu_ = p.unroll * chunk_elems_;
    nred_ = op == RowOp::rmsnorm ? 1 : 2;
  }

  Kernel run() {
    setup();
    Label looped = b_.label("looped"), end = b_.label("end");
    end_ = end;
    if (p_.row_chunk > 0) {
      const int64_t cap = int64_t(w_) * p_.row_chunk - (half_ ? 1 : 0);
      b_.emit("s_cmp_gt_u32", {sN_, Operand(cap)});
      b_.s_cbranch("scc1", looped);
      red_ = 0;
      resident();
      b_.s_branch(end);
    }
    b_.bind(looped);
    red_ = 0;
    looped_form();
    b_.bind(end);
    b_.s_endpgm();
    Kernel k = b_.finish();
    insert_waits(k);
    return k;
  }

private:
  bool norm() const { return op_ != RowOp::softmax; }

  // ---- setup: kernel arguments, row addressing, frames, per-lane offsets ----
  void setup() {
    const int threads = p_.rows_per_wg * p_.waves_per_row * 64;
    b_.set_workgroup_size(uint32_t(threads));
    if (p_.waves_per_row > 1)
      b_.set_lds_bytes(uint32_t(nred_ * p_.rows_per_wg * p_.waves_per_row * 4));
    const uint32_t off_x = b_.add_arg("x", 8, 8, ArgKind::global_buffer, "read_only");
    uint32_t off_w = 0, off_b = 0;
    if (norm())
      off_w = b_.add_arg("weight", 8, 8, ArgKind::global_buffer, "read_only");
    if (op_ == RowOp::layernorm)
      off_b = b_.add_arg("bias", 8, 8, ArgKind::global_buffer, "read_only");
    const uint32_t off_y = b_.add_arg("y", 8, 8, ArgKind::global_buffer, "write_only");
    const uint32_t off_dims = b_.add_arg("rows", 4, 4, ArgKind::by_value);
    b_.add_arg("n", 4, 4, ArgKind::by_value);
    b_.add_arg("ldx", 4, 4, ArgKind::by_value);
    b_.add_arg("ldy", 4, 4, ArgKind::by_value);
    uint32_t off_eps = 0;
    if (norm())
      off_eps = b_.add_arg("eps", 4, 4, ArgKind::by_value);

    Reg kp = b_.kernarg_ptr();
    sX_ = b_.alloc_s(2, "x");
    sY_ = b_.alloc_s(2, "y");
    Reg dims = b_.alloc_s(4, "dims");
    b_.s_load(sX_, kp, int(off_x));
    b_.s_load(sY_, kp, int(off_y));
    b_.s_load(dims, kp, int(off_dims));
    if (norm()) {
      sW_ = b_.alloc_s(2, "weight");
      b_.s_load(sW_, kp, int(off_w));
      sEps_ = b_.alloc_s(1, "eps");
      b_.s_load(sEps_, kp, int(off_eps));
    }
    if (op_ == RowOp::layernorm) {
      sB_ = b_.alloc_s(2, "bias");
      b_.s_load(sB_, kp, int(off_b));
    }
    Reg rows = dims.sub(0), ldx = dims.sub(2), ldy = dims.sub(3);
    sN_ = dims.sub(1);
    sT_ = b_.alloc_s(1, "t");
    sT2_ = b_.alloc_s(1, "t2");
    sF_ = b_.alloc_s(1, "fast");
    sP_ = b_.alloc_s(1, "pos");
    sSave_ = b_.alloc_s(2, "save");
    for (auto& r : sRd_)
      r = b_.alloc_s(1, "lane");

    // Wave, wave group and row.
    Reg v0 = b_.workitem_ids();
    vT_ = b_.alloc_v(1, "t");
    vT2_ = b_.alloc_v(1, "t2");
    Reg sWave = b_.alloc_s(1, "wave"), sG = b_.alloc_s(1, "group"), sRow = b_.alloc_s(1, "row");
    b_.emit("v_lshrrev_b32", {vT_, 6, v0});
    b_.emit("v_readfirstlane_b32", {sWave, vT_});
    const int lw = log2i(p_.waves_per_row);
    b_.emit("s_lshr_b32", {sG, sWave, lw});
    b_.emit("s_mul_i32", {sRow, b_.workgroup_id(0), p_.rows_per_wg});
    b_.emit("s_add_u32", {sRow, sRow, sG});
    sRowOk_ = b_.alloc_s(1, "row_ok");
    b_.emit("s_cmp_lt_u32", {sRow, rows});
    b_.emit("s_cselect_b32", {sRowOk_, 1, 0});
    b_.emit("s_sub_u32", {sT_, rows, 1});
    b_.emit("s_min_u32", {sRow, sRow, sT_});

    // Row addresses: base + row * ld * size (64-bit).
    auto row_addr = [&](Reg base, Reg ld) {
      Reg t = b_.alloc_s(2, "rowoff");
      b_.emit("s_mul_i32", {t.sub(0), sRow, ld});
      b_.emit("s_mul_hi_u32", {t.sub(1), sRow, ld});
      b_.emit("s_lshl_b64", {t, t, log2i(size_)});
      b_.emit("s_add_u32", {base.sub(0), base.sub(0), t.sub(0)});
      b_.emit("s_addc_u32", {base.sub(1), base.sub(1), t.sub(1)});
      b_.free(t);
    };
    row_addr(sX_, ldx);
    row_addr(sY_, ldy);

    sS_ = b_.alloc_s(1, "shift");
    sAligned_ = b_.alloc_s(1, "aligned");
    if (half_) {
      b_.emit("s_lshr_b32", {sS_, sX_.sub(0), 1});
      b_.emit("s_and_b32", {sS_, sS_, 1});
      b_.emit("s_and_b32", {sX_.sub(0), sX_.sub(0), -4});
      // Other streams: base - 2*s, as a 64-bit add of (-2s, -s).
      Reg lo = b_.alloc_s(1), hi = b_.alloc_s(1);
      b_.emit("s_mul_i32", {lo, sS_, -2});
      b_.emit("s_sub_u32", {hi, 0, sS_});
      std::vector<Reg> streams{sY_};
      if (norm())
        streams.push_back(sW_);
      if (op_ == RowOp::layernorm)
        streams.push_back(sB_);
      for (Reg r : streams) {
        b_.emit("s_add_u32", {r.sub(0), r.sub(0), lo});
        b_.emit("s_addc_u32", {r.sub(1), r.sub(1), hi});
      }
      b_.s_mov(sT_, streams[0].sub(0));
      for (size_t i = 1; i < streams.size(); ++i)
        b_.emit("s_or_b32", {sT_, sT_, streams[i].sub(0)});
      b_.emit("s_and_b32", {sT_, sT_, 3});
      b_.emit("s_cmp_eq_u32", {sT_, 0});
      b_.emit("s_cselect_b32", {sAligned_, 1, 0});
      b_.free(lo);
      b_.free(hi);
      sSel_ = b_.alloc_s(1, "sel");
      b_.s_mov(sSel_, Operand(int64_t(0x05040100)));
      if (p_.dtype == DType::bf16 && b_.gfx() != Gfx::gfx950) {
        sSelHi_ = b_.alloc_s(1, "selhi");
        b_.s_mov(sSelHi_, Operand(int64_t(0x07060302)));
        s7fff_ = b_.alloc_s(1, "rne");
        b_.s_mov(s7fff_, Operand(int64_t(0x7fff)));
      }
    } else {
      b_.s_mov(sS_, 0);
      b_.s_mov(sAligned_, 1);
    }
    sN1_ = b_.alloc_s(1, "n1");
    b_.emit("s_add_u32", {sN1_, sN_, sS_});
    Reg sNegS = b_.alloc_s(1, "negs");
    b_.emit("s_sub_u32", {sNegS, 0, sS_});

    // Per-lane: lane in the row, byte offset of its first chunk, frame position minus s.
    Reg vL = b_.alloc_v(1, "lane");
    b_.emit("v_and_b32", {vL, 63, v0});
    if (p_.waves_per_row > 1) {
      Reg sWr = b_.alloc_s(1);
      b_.emit("s_and_b32", {sWr, sWave, p_.waves_per_row - 1});
      b_.emit("s_lshl_b32", {sWr, sWr, 6});
      b_.emit("v_add_u32", {vL, sWr, vL});
      b_.free(sWr);
      vLdsW_ = b_.alloc_v(1, "ldsw");
      vLdsR_ = b_.alloc_v(1, "ldsr");
      b_.emit("s_lshl_b32", {sT_, sWave, 2});
      b_.v_mov(vLdsW_, sT_);
      b_.emit("s_lshl_b32", {sT_, sG, lw + 2});
      b_.v_mov(vLdsR_, sT_);
      for (auto& r : vRed_)
        r = b_.alloc_v(1, "red");
    }
    vOff_ = b_.alloc_v(1, "off");
    b_.emit("v_lshlrev_b32", {vOff_, log2i(p_.vec * size_), vL});
    vQ0_ = b_.alloc_v(1, "q0");
    b_.emit("v_lshlrev_b32", {vQ0_, log2i(p_.vec), vL});
    b_.emit("v_add_u32", {vQ0_, sNegS, vQ0_});
    b_.free(vL);
    b_.free(sNegS);
    b_.free(sWave);
    b_.free(sRow);
    // Uniform statistics (VGPRs, same value in every lane).
    vAcc_ = b_.alloc_v(1, "acc");
    vStat1_ = b_.alloc_v(1, "stat1");
    vStat2_ = b_.alloc_v(1, "stat2");
    vInvN_ = b_.alloc_v(1, "invn");
    vE_ = b_.alloc_v(1, "e");
    if (norm()) {
      // 1/N with one Newton step.
      Reg vN = vE_;
      b_.emit("v_cvt_f32_u32", {vN, sN_});
      recip(vInvN_, vN);
    }
  }

  // r = 1/x: v_rcp_f32 refined by one Newton step (uses vT_, vT2_).
  void recip(Reg r, Reg x) {
    b_.emit("v_rcp_f32", {r, x});
    b_.emit("v_sub_f32", {vT2_, 0, x});        // -x
    b_.emit("v_fma_f32", {vT_, vT2_, r, 1.0}); // e = 1 - x r
    b_.emit("v_fma_f32", {r, vT_, r, r});      // r + r e
  }
  // r = 1/sqrt(x): v_rsq_f32 refined by one Newton step (uses vT_, vT2_).
  void rsqrt(Reg r, Reg x) {
    b_.emit("v_rsq_f32", {r, x});
    b_.emit("v_mul_f32", {vT_, r, r});
    b_.emit("v_mul_f32", {vT_, x, vT_});   // x r^2
    b_.emit("v_sub_f32", {vT_, 1.0, vT_}); // e = 1 - x r^2
    b_.emit("v_mul_f32", {vT2_, 0.5, r});
    b_.emit("v_fma_f32", {r, vT2_, vT_, r}); // r + r e / 2
  }

  // ---- reductions ----
  // Reduces vAcc_ over the row's lanes into `out` (uniform).
  void reduce(Reg out, bool is_max) {
    const char* dpp = is_max ? "v_max_f32_dpp" : "v_add_f32_dpp";
    const char* op = is_max ? "v_max_f32" : "v_add_f32";
    Reg v = vAcc_;
    b_.dpp(dpp, {v, v, v}, DppControl::quad_perm(1, 0, 3, 2));
    b_.dpp(dpp, {v, v, v}, DppControl::quad_perm(2, 3, 0, 1));
    b_.dpp(dpp, {v, v, v}, DppControl::row_half_mirror());
    b_.dpp(dpp, {v, v, v}, DppControl::row_mirror());
    for (int i = 0; i < 4; ++i)
      b_.emit("v_readlane_b32", {sRd_[i], v, 16 * i});
    b_.v_mov(out, sRd_[0]);
    for (int i = 1; i < 4; ++i)
      b_.emit(op, {out, sRd_[i], out});
    if (p_.waves_per_row > 1) {
      const int region = red_++ * p_.rows_per_wg * p_.waves_per_row * 4;
      b_.s_mov(exec(), 1);
      b_.ds_write(vLdsW_, out, uint16_t(region));
      b_.s_mov(exec(), -1);
      b_.s_barrier();
      for (int i = 0; i < p_.waves_per_row; ++i)
        b_.ds_read(vRed_[i], vLdsR_, uint16_t(region + 4 * i));
      b_.v_mov(out, vRed_[0]);
      for (int i = 1; i < p_.waves_per_row; ++i)
        b_.emit(op, {out, vRed_[i], out});
    }
  }

  // ---- groups ----
  // Per-chunk addresses (VGPR + immediate) of a group; large offsets go through vA_.
  std::vector<Addr> addrs(const Loc& l) {
    std::vector<Addr> out;
    Reg base = l.looped ? vCur_ : vOff_;
    for (int j = 0; j < p_.unroll; ++j) {
      const int64_t k = (l.a + int64_t(j) * chunk_elems_) * size_;
      if (k + 16 <= 4095) {
        out.push_back({base, int(k)});
      } else {
        b_.emit("v_add_u32", {vA_[size_t(j)], Operand(k), base});
        out.push_back({vA_[size_t(j)], 0});
      }
    }
    return out;
  }

  // sF = the group at l is full (every position holds an element) [and the streams are aligned].
  void fast_flag(const Loc& l, bool need_aligned) {
    Operand a = l.looped ? Operand(sP_) : Operand(l.a);
    const Operand yes = need_aligned && half_ ? Operand(sAligned_) : Operand(1);
    if (!half_ || (!l.looped && l.a > 0)) {
      // a >= s always holds (s = 0 for f32; s <= 1 < a): only the end of the group matters.
      if (l.looped) {
        b_.emit("s_add_u32", {sT_, sP_, gu_});
        b_.emit("s_cmp_le_u32", {sT_, sN1_});
      } else {
        b_.emit("s_cmp_le_u32", {Operand(l.a + gu_), sN1_});
      }
      b_.emit("s_cselect_b32", {sF_, yes, 0});
      return;
    }
    b_.emit("s_cmp_ge_u32", {a, sS_});
    b_.emit("s_cselect_b32", {sF_, 1, 0});
    if (l.looped) {
      b_.emit("s_add_u32", {sT_, sP_, gu_});
      b_.emit("s_cmp_le_u32", {sT_, sN1_});
    } else {
      b_.emit("s_cmp_le_u32", {Operand(l.a + gu_), sN1_});
    }
    b_.emit("s_cselect_b32", {sT_, 1, 0});
    b_.emit("s_and_b32", {sF_, sF_, sT_});
    if (need_aligned)
      b_.emit("s_and_b32", {sF_, sF_, sAligned_});
  }
  void branch_if_slow(Label slow) {
    b_.emit("s_cmp_eq_u32", {sF_, 0});
    b_.s_cbranch("scc1", slow);
  }

  // VCC = the position of element e of chunk j holds an element of the row.
  void valid_vcc(const Loc& l, int j, int e) {
    Reg q = l.looped ? vQP_ : vQ0_;
    const int64_t c = l.a + int64_t(j) * chunk_elems_ + e;
    if (c != 0) {
      b_.emit("v_add_u32", {vT_, Operand(c), q});
      q = vT_;
    }
    b_.emit("v_cmp_gt_u32", {vcc(), sN_, q});
  }

  void load_fast(Reg frame, const std::vector<Addr>& ad, const std::vector<Reg>& raw) {
    for (int j = 0; j < p_.unroll; ++j)
      b_.global_load(raw[size_t(j)], ad[size_t(j)].v, frame, ad[size_t(j)].imm);
  }

  // Element by element under EXEC masks; invalid positions get `fill` (bits of the element type).
  void load_slow(Reg frame, const Loc& l, const std::vector<Addr>& ad, const std::vector<Reg>& raw,
                 uint32_t fill) {
    for (int j = 0; j < p_.unroll; ++j) {
      for (int e = 0; e < p_.vec; ++e) {
        Reg dst = half_ ? vTmp_[size_t(j * p_.vec + e)] : raw[size_t(j)].sub(uint8_t(e));
        b_.v_mov(dst, Operand(int64_t(fill)));
        valid_vcc(l, j, e);
        b_.s_and_saveexec_b64(sSave_, vcc());
        Modifiers m;
        const int off = ad[size_t(j)].imm + e * size_;
        if (off)
          m.offset = off;
        b_.emit(half_ ? "global_load_ushort" : "global_load_dword", {dst, ad[size_t(j)].v, frame}, m);
        b_.s_mov(exec(), sSave_);
      }
    }
    if (half_)
      for (int j = 0; j < p_.unroll; ++j)
        for (int i = 0; i < dw_; ++i)
          b_.emit("v_perm_b32", {raw[size_t(j)].sub(uint8_t(i)), vTmp_[size_t(j * p_.vec + 2 * i + 1)],
                                 vTmp_[size_t(j * p_.vec + 2 * i)], sSel_});
  }

  void store_fast(Reg frame, const std::vector<Addr>& ad, const std::vector<Reg>& raw) {
    for (int j = 0; j < p_.unroll; ++j)
      b_.global_store(ad[size_t(j)].v, raw[size_t(j)], frame, ad[size_t(j)].imm);
  }

  void store_slow(Reg frame, const Loc& l, const std::vector<Addr>& ad, const std::vector<Reg>& raw) {
    for (int j = 0; j < p_.unroll; ++j)
      for (int e = 0; e < p_.vec; ++e) {
        valid_vcc(l, j, e);
        b_.s_and_saveexec_b64(sSave_, vcc());
        Modifiers m;
        const int off = ad[size_t(j)].imm + e * size_;
        if (off)
          m.offset = off;
        if (half_)
          b_.emit(e % 2 ? "global_store_short_d16_hi" : "global_store_short",
                  {ad[size_t(j)].v, raw[size_t(j)].sub(uint8_t(e / 2)), frame}, m);
        else
          b_.emit("global_store_dword", {ad[size_t(j)].v, raw[size_t(j)].sub(uint8_t(e)), frame}, m);
        b_.s_mov(exec(), sSave_);
      }
  }

  // Loads one stream of a group, fast or slow by sF_ (already computed).
  void load_group(Reg frame, const Loc& l, const std::vector<Addr>& ad, const std::vector<Reg>& raw,
                  uint32_t fill) {
    Label slow = b_.label("ls"), join = b_.label("lj");
    branch_if_slow(slow);
    load_fast(frame, ad, raw);
    b_.s_branch(join);
    b_.bind(slow);
    load_slow(frame, l, ad, raw, fill);
    b_.bind(join);
  }
  // Several streams at once (one branch).
  void load_groups(const std::vector<std::pair<Reg, std::vector<Reg>>>& streams, const Loc& l,
                   const std::vector<Addr>& ad, const std::vector<uint32_t>& fills) {
    Label slow = b_.label("ls"), join = b_.label("lj");
    branch_if_slow(slow);
    for (const auto& [frame, raw] : streams)
      load_fast(frame, ad, raw);
    b_.s_branch(join);
    b_.bind(slow);
    for (size_t i = 0; i < streams.size(); ++i)
      load_slow(streams[i].first, l, ad, streams[i].second, fills[i]);
    b_.bind(join);
  }
  void store_group(const Loc& l, const std::vector<Addr>& ad, const std::vector<Reg>& raw) {
    Label slow = b_.label("ss"), join = b_.label("sj");
    branch_if_slow(slow);
    store_fast(sY_, ad, raw);
    b_.s_branch(join);
    b_.bind(slow);
    store_slow(sY_, l, ad, raw);
    b_.bind(join);
  }

  // Element e of a chunk as f32: f32 streams are used in place, 16-bit ones converted into `tmp`.
  Reg elem_f32(Reg raw, int e, Reg tmp) {
    if (!half_)
      return raw.sub(uint8_t(e));
    Reg r = raw.sub(uint8_t(e / 2));
    if (p_.dtype == DType::f16) {
      if (e % 2) {
        b_.emit("v_lshrrev_b32", {tmp, 16, r});
        b_.emit("v_cvt_f32_f16", {tmp, tmp});
      } else {
        b_.emit("v_cvt_f32_f16", {tmp, r});
      }
    } else {
      if (e % 2)
        b_.emit("v_and_b32", {tmp, Operand(int64_t(0xffff0000)), r});
      else
        b_.emit("v_lshlrev_b32", {tmp, 16, r});
    }
    return tmp;
  }
  // x chunk -> f32 slots (16-bit only; f32 slots are the raw registers).
  void convert_in(Reg raw, const std::vector<Reg>& f) {
    if (!half_)
      return;
    for (int e = 0; e < p_.vec; ++e)
      elem_f32(raw, e, f[size_t(e)]);
  }
  // f32 slots -> raw chunk of the output type (16-bit only; in place for f32). Clobbers the slots.
  void convert_out(const std::vector<Reg>& f, Reg raw) {
    if (!half_)
      return;
    for (int i = 0; i < dw_; ++i) {
      Reg lo = f[size_t(2 * i)], hi = f[size_t(2 * i + 1)], d = raw.sub(uint8_t(i));
      if (p_.dtype == DType::f16) {
        b_.emit("v_cvt_f16_f32", {lo, lo});
        b_.emit("v_cvt_f16_f32", {hi, hi});
        b_.emit("v_perm_b32", {d, hi, lo, sSel_});
      } else if (b_.gfx() == Gfx::gfx950) {
        b_.emit("v_cvt_pk_bf16_f32", {d, lo, hi});
      } else {
        // Round to nearest even (finite values): x + 0x7fff + bit 16, then the high halves.
        for (Reg x : {lo, hi}) {
          b_.emit("v_bfe_u32", {vT_, x, 16, 1});
          b_.emit("v_add3_u32", {x, x, vT_, s7fff_});
        }
        b_.emit("v_perm_b32", {d, hi, lo, sSelHi_});
      }
    }
  }

  uint32_t fill_bits() const {
    if (op_ != RowOp::softmax)
      return 0;
    if (p_.dtype == DType::f32)
      return kNegInf32;
    return p_.dtype == DType::f16 ? 0xfc00u : 0xff80u;
  }

  // Data registers of a group: raw chunks and f32 slots (chunk j, element e) for `chunks` chunks.
  struct Data {
    std::vector<Reg> raw;            // per chunk, dw_ dwords
    std::vector<std::vector<Reg>> f; // per chunk, vec slots
  };
  Data alloc_data(int chunks) {
    Data d;
    for (int c = 0; c < chunks; ++c) {
      Reg r = b_.alloc_v(uint8_t(dw_), "x");
      d.raw.push_back(r);
      std::vector<Reg> f;
      for (int e = 0; e < p_.vec; ++e)
        f.push_back(half_ ? b_.alloc_v(1, "xf") : r.sub(uint8_t(e)));
      d.f.push_back(f);
    }
    return d;
  }
  void free_data(const Data& d) {
    for (size_t c = 0; c < d.raw.size(); ++c) {
      b_.free(d.raw[c]);
      if (half_)
        for (Reg f : d.f[c])
          b_.free(f);
    }
  }
  std::vector<Reg> alloc_chunks(const char* what) {
    std::vector<Reg> v;
    for (int j = 0; j < p_.unroll; ++j)
      v.push_back(b_.alloc_v(uint8_t(dw_), what));
    return v;
  }
  void alloc_group_temps() {
    vA_.clear();
    for (int j = 0; j < p_.unroll; ++j)
      vA_.push_back(b_.alloc_v(1, "addr"));
    vTmp_.clear();
    if (half_)
      for (int i = 0; i < p_.unroll * p_.vec; ++i)
        vTmp_.push_back(b_.alloc_v(1, "elem"));
    if (norm())
      wraw_ = alloc_chunks("w");
    if (op_ == RowOp::layernorm)
      braw_ = alloc_chunks("b");
  }
  void free_group_temps() {
    for (Reg r : vA_)
      b_.free(r);
    for (Reg r : vTmp_)
      b_.free(r);
    for (Reg r : wraw_)
      b_.free(r);
    for (Reg r : braw_)
      b_.free(r);
    wraw_.clear();
    braw_.clear();
  }

  // Per-element work on the slots of chunks [c0, c0 + unroll).
  using SlotFn = std::function<void(Reg f)>;
  void each_slot(const Data& d, int c0, const SlotFn& fn) {
    for (int j = 0; j < p_.unroll; ++j)
      for (Reg f : d.f[size_t(c0 + j)])
        fn(f);
  }
  std::vector<Reg> raws(const Data& d, int c0) const {
    return {d.raw.begin() + c0, d.raw.begin() + c0 + p_.unroll};
  }

  // Sets invalid positions of a partial group to `value` (for the variance pass).
  void fixup(const Loc& l, const Data& d, int c0, Reg value) {
    for (int j = 0; j < p_.unroll; ++j)
      for (int e = 0; e < p_.vec; ++e) {
        valid_vcc(l, j, e);
        Reg f = d.f[size_t(c0 + j)][size_t(e)];
        b_.emit("v_cndmask_b32", {f, value, f, vcc()});
      }
  }

  void exp_slot(Reg f) { // f = exp(f - max)
    b_.emit("v_sub_f32", {f, f, vStat1_});
    b_.emit("v_mul_f32", {f, Operand(int64_t(float_bits(kLog2e))), f});
    b_.emit("v_exp_f32", {f, f});
  }

  // Statistics after the first reduction: max (softmax), sum (norms).
  void stats1() {
    if (op_ == RowOp::softmax) {
      reduce(vStat1_, true); // max
    } else if (op_ == RowOp::rmsnorm) {
      reduce(vStat1_, false); // sum x^2
      b_.emit("v_fma_f32", {vStat1_, vStat1_, vInvN_, sEps_});
      rsqrt(vStat2_, vStat1_); // stat2 = 1/rms
    } else {
      reduce(vStat1_, false);
      b_.emit("v_mul_f32", {vStat1_, vStat1_, vInvN_}); // mean
    }
  }
  void stats2() {
    if (op_ == RowOp::softmax) {
      reduce(vE_, false); // sum of exp
      recip(vStat2_, vE_);
    } else if (op_ == RowOp::layernorm) {
      reduce(vE_, false); // sum (x - mean)^2
      b_.emit("v_fma_f32", {vE_, vE_, vInvN_, sEps_});
      rsqrt(vStat2_, vE_);
    }
  }
  void acc_init(bool max) { b_.v_mov(vAcc_, max ? Operand(int64_t(kNegInf32)) : Operand(0)); }
  void acc1(Reg f) { // first pass accumulation
    if (op_ == RowOp::softmax)
      b_.emit("v_max_f32", {vAcc_, f, vAcc_});
    else if (op_ == RowOp::rmsnorm)
      b_.emit("v_fmac_f32", {vAcc_, f, f});
    else
      b_.emit("v_add_f32", {vAcc_, f, vAcc_});
  }
  void acc2(Reg f) { // second pass accumulation (softmax: in place exp)
    if (op_ == RowOp::softmax) {
      exp_slot(f);
      b_.emit("v_add_f32", {vAcc_, f, vAcc_});
    } else {
      b_.emit("v_sub_f32", {vT2_, f, vStat1_});
      b_.emit("v_fmac_f32", {vAcc_, vT2_, vT2_});
    }
  }
  // Output values of a group in the f32 slots (weights and bias already loaded); softmax slots hold exp.
  void output_values(const Data& d, int c0) {
    for (int j = 0; j < p_.unroll; ++j)
      for (int e = 0; e < p_.vec; ++e) {
        Reg f = d.f[size_t(c0 + j)][size_t(e)];
        if (op_ == RowOp::softmax) {
          b_.emit("v_mul_f32", {f, f, vStat2_});
        } else if (op_ == RowOp::rmsnorm) {
          Reg w = elem_f32(wraw_[size_t(j)], e, vT2_);
          b_.emit("v_mul_f32", {f, f, vStat2_});
          b_.emit("v_mul_f32", {f, w, f});
        } else {
          Reg w = elem_f32(wraw_[size_t(j)], e, vT2_);
          b_.emit("v_sub_f32", {f, f, vStat1_});
          b_.emit("v_mul_f32", {f, f, vStat2_});
          Reg bb = elem_f32(braw_[size_t(j)], e, vT_);
          b_.emit("v_fma_f32", {f, f, w, bb});
        }
      }
    for (int j = 0; j < p_.unroll; ++j)
      convert_out(d.f[size_t(c0 + j)], d.raw[size_t(c0 + j)]);
  }
  // Weight/bias streams of the output phase.
  std::vector<std::pair<Reg, std::vector<Reg>>> param_streams() {
    std::vector<std::pair<Reg, std::vector<Reg>>> s;
    if (norm())
      s.push_back({sW_, wraw_});
    if (op_ == RowOp::layernorm)
      s.push_back({sB_, braw_});
    return s;
  }
  void skip_output_if_no_row() {
    b_.emit("s_cmp_eq_u32", {sRowOk_, 0});
    b_.s_cbranch("scc1", end_);
  }

  // ---- register-resident form ----
  void resident() {
    const int chunks = p_.row_chunk / p_.vec;
    const int groups = chunks / p_.unroll;
    Data d = alloc_data(chunks);
    alloc_group_temps();
    auto loc = [&](int g) { return Loc{false, int64_t(g) * gu_}; };
    // Passes over the groups that hold elements (groups past the row's end are skipped, all later ones too).
    auto pass = [&](const std::function<void(int g)>& fn) {
      Label done = b_.label("pass_done");
      for (int g = 0; g < groups; ++g) {
        if (g > 0) {
          b_.emit("s_cmp_ge_u32", {Operand(loc(g).a), sN1_});
          b_.s_cbranch("scc1", done);
        }
        fn(g);
      }
      b_.bind(done);
    };
    // Load every chunk of x: all loads in flight.
    pass([&](int g) {
      auto ad = addrs(loc(g));
      fast_flag(loc(g), false);
      load_group(sX_, loc(g), ad, raws(d, g * p_.unroll), fill_bits());
    });
    acc_init(op_ == RowOp::softmax);
    pass([&](int g) {
      for (int j = 0; j < p_.unroll; ++j)
        convert_in(d.raw[size_t(g * p_.unroll + j)], d.f[size_t(g * p_.unroll + j)]);
      each_slot(d, g * p_.unroll, [&](Reg f) { acc1(f); });
    });
    stats1();
    if (op_ != RowOp::rmsnorm) {
      acc_init(false);
      pass([&](int g) {
        if (op_ == RowOp::layernorm) {
          Label full = b_.label("full");
          fast_flag(loc(g), false);
          b_.emit("s_cmp_eq_u32", {sF_, 1});
          b_.s_cbranch("scc1", full);
          fixup(loc(g), d, g * p_.unroll, vStat1_);
          b_.bind(full);
        }
        each_slot(d, g * p_.unroll, [&](Reg f) { acc2(f); });
      });
      stats2();
    }
    skip_output_if_no_row();
    pass([&](int g) {
      auto ad = addrs(loc(g));
      fast_flag(loc(g), true);
      auto ps = param_streams();
      if (!ps.empty())
        load_groups(ps, loc(g), ad, std::vector<uint32_t>(ps.size(), 0));
      output_values(d, g * p_.unroll);
      store_group(loc(g), ad, raws(d, g * p_.unroll));
    });
    free_group_temps();
    free_data(d);
  }

  // ---- looped form ----
  void looped_form() {
    Data d = alloc_data(p_.unroll);
    alloc_group_temps();
    vCur_ = b_.alloc_v(1, "cur");
    vQP_ = b_.alloc_v(1, "qp");
    const Loc l{true, 0};
    auto loop = [&](const std::function<void()>& body) {
      b_.s_mov(sP_, 0);
      b_.v_mov(vCur_, vOff_);
      b_.v_mov(vQP_, vQ0_);
      Label top = b_.label("loop");
      b_.bind(top);
      body();
      b_.emit("s_add_u32", {sP_, sP_, gu_});
      b_.emit("v_add_u32", {vCur_, Operand(int64_t(gu_) * size_), vCur_});
      b_.emit("v_add_u32", {vQP_, Operand(int64_t(gu_)), vQP_});
      b_.emit("s_cmp_lt_u32", {sP_, sN1_});
      b_.s_cbranch("scc1", top);
    };
    auto load_x = [&](bool aligned) {
      auto ad = addrs(l);
      fast_flag(l, aligned);
      std::vector<std::pair<Reg, std::vector<Reg>>> s{{sX_, d.raw}};
      std::vector<uint32_t> fills{fill_bits()};
      if (aligned)
        for (auto& ps : param_streams()) {
          s.push_back(ps);
          fills.push_back(0);
        }
      load_groups(s, l, ad, fills);
      for (int j = 0; j < p_.unroll; ++j)
        convert_in(d.raw[size_t(j)], d.f[size_t(j)]);
      return ad;
    };
    acc_init(op_ == RowOp::softmax);
    loop([&] {
      load_x(false);
      each_slot(d, 0, [&](Reg f) { acc1(f); });
    });
    stats1();
    if (op_ != RowOp::rmsnorm) {
      acc_init(false);
      loop([&] {
        load_x(false);
        if (op_ == RowOp::layernorm) {
          Label full = b_.label("full");
          b_.emit("s_cmp_eq_u32", {sF_, 1});
          b_.s_cbranch("scc1", full);
          fixup(l, d, 0, vStat1_);
          b_.bind(full);
        }
        each_slot(d, 0, [&](Reg f) { acc2(f); });
      });
      stats2();
    }
    skip_output_if_no_row();
    loop([&] {
      auto ad = load_x(true);
      if (op_ == RowOp::softmax)
        each_slot(d, 0, [&](Reg f) { exp_slot(f); });
      output_values(d, 0);
      store_group(l, ad, d.raw);
    });
    b_.free(vCur_);
    b_.free(vQP_);
    free_group_temps();
    free_data(d);
  }

  RowOp op_;
  RowParams p_;
  Builder b_;
  int size_ = 4, w_ = 64, dw_ = 1, chunk_elems_ = 64, gu_ = 64, nred_ = 1, red_ = 0;
  bool half_ = false;
  Label end_;
  Reg sX_, sY_, sW_, sB_, sN_, sN1_, sS_, sEps_, sT_, sT2_, sF_, sP_, sSave_, sAligned_, sRowOk_, sSel_,
      sSelHi_, s7fff_;
  std::array<Reg, 4> sRd_{};
  Reg vT_, vT2_, vOff_, vQ0_, vLdsW_, vLdsR_, vAcc_, vStat1_, vStat2_, vInvN_, vE_, vCur_, vQP_;
  std::array<Reg, 4> vRed_{};
  std::vector<Reg> vA_, vTmp_, wraw_, braw_;
};

} // namespace

cdna::Kernel emit_row_kernel(RowOp op, const std::string& isa, const RowParams& p, const std::string& name) {
  if (!row_valid(op, p))
    throw InputError("row kernel " + name + ": the parameters break a constraint of the space");
  return Emitter(op, isa, p, name).run();
}

} // namespace isatune::gen::rows

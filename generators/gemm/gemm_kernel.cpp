// CDNA code emission of the GEMM (docs/gemm.md). Structure of a workgroup:
//   1. kernel arguments -> SGPRs; buffer resources (V#) for A, B, C, D and the workspace with num_records;
//   2. workgroup id -> output tile (row / column / grouped order), split index -> K range;
//   3. main loop over K in steps of `depth`: each thread loads `slots` vectors of A and B (fast path: one
//      buffer_load_dword{,x2,x4} per slot when the stored matrix allows whole aligned vectors; slow path: one
//      buffer_load_ushort per element), masked by pointing the offset past num_records (the hardware returns
//      zeros); writes them to LDS as [m][k] and [n][k] rows (K contiguous, padded); then every wave reads MFMA
//      fragments from LDS and accumulates in f32 VGPRs;
//   4. epilogue per accumulator element: D = alpha * acc + beta * C (C not read when beta == 0), or, with
//      split-K, the raw partial sum into the workspace (mode 0) and a second launch (mode 1) that sums the
//      partials and applies the epilogue.
// No s_waitcnt or s_nop is placed here: cdna::insert_waits computes them on the finished kernel.
#include "gemm_kernel.h"

#include <bit>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/waits.h"
#include "isatune/error.h"

namespace isatune::gen::gemm {

using namespace isatune::cdna;

namespace {

constexpr uint32_t kOob = 0x80000000u; // an offset past every num_records (matrices < 2 GiB)

int log2i(int x) { return std::countr_zero(unsigned(x)); }

Modifiers offen(int32_t offset = 0) {
  Modifiers m;
  m.offen = true;
  if (offset)
    m.offset = offset;
  return m;
}

struct Emitter {
  const std::string& isa;
  const GemmSig& sig;
  const GemmConfig& c;
  Plan p;
  Builder b;

  // SGPRs
  Reg rs_a, rs_b, rs_c, rs_d, rs_w;
  Reg s_m, s_n, s_k, s_lda, s_ldb, s_ldc, s_ldd, s_alpha, s_beta, s_fast_a, s_fast_b, s_tiles_m, s_tiles_n,
      s_kchunk, s_mode;
  Reg s_m0, s_n0, s_wave_m, s_wave_n, s_kbeg, s_kend, s_kcur, s_iters, s_rd, s_wr, s_tmp, s_tmp2, s_pair,
      s_soff;
  // VGPRs
  Reg v_tid, v_lane, v_oob, v_t, v_t2;
  std::vector<Reg> acc; // bm * bn blocks, block (i, j) at i * bn + j

  struct Slot {
    Reg g;        // e dwords (fast path uses the first vw)
    Reg off;      // byte offset at k = kbeg
    Reg vk;       // k of the slot within the tile, or 0x7fffffff when its M/N is outside the matrix
    Reg vmn;      // global m/n of the slot's first element (!kcontig only)
    Reg lds;      // LDS byte address in stage 0
  };
  struct Operand {
    const OperandPlan* o;
    bool is_a;
    Reg rs, ld, fast, ext; // ext: M for A, N for B
    std::vector<Slot> slots;
    Reg rd0, rd;           // fragment read base (stage 0) and current
    std::vector<std::vector<Reg>> frag; // [set][block]
  };
  Operand A, B;

  Emitter(const std::string& isa_, const GemmSig& sig_, const GemmConfig& c_, std::string name)
      : isa(isa_), sig(sig_), c(c_), p(make_plan(sig_, c_)), b(parse_target_id(isa_), std::move(name), entry(c_)) {}

  static EntryOptions entry(const GemmConfig& c) {
    EntryOptions e;
    e.workgroup_id_y = c.split_k > 1;
    return e;
  }

  void load_arg(Reg dst, uint32_t offset) { b.s_load(dst, b.kernarg_ptr(), int(offset)); }

  void setup_args() {
    using L = KernargLayout;
    b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
    b.add_arg("b", 8, 8, ArgKind::global_buffer, "read_only");
    b.add_arg("c", 8, 8, ArgKind::global_buffer, "read_only");
    b.add_arg("d", 8, 8, ArgKind::global_buffer, "write_only");
    b.add_arg("w", 8, 8, ArgKind::global_buffer, "read_write");
    for (const char* n : {"m", "n", "k", "lda", "ldb", "ldc", "ldd", "alpha", "beta", "nrec_a", "nrec_b", "nrec_c",
                          "nrec_d", "nrec_w", "fast_a", "fast_b", "tiles_m", "tiles_n", "kchunk", "mode"})
      b.add_arg(n, 4, 4, ArgKind::by_value);
    if (b.kernel().kernarg_size != L::size)
      throw Error("gemm: kernarg layout mismatch");
    b.set_workgroup_size(uint32_t(p.threads));
    b.set_lds_bytes(uint32_t(p.lds_bytes));

    rs_a = b.alloc_s(4, "rs_a"), rs_b = b.alloc_s(4, "rs_b"), rs_c = b.alloc_s(4, "rs_c");
    rs_d = b.alloc_s(4, "rs_d"), rs_w = b.alloc_s(4, "rs_w");
    const std::pair<Reg*, uint32_t> rs[] = {{&rs_a, L::a}, {&rs_b, L::b}, {&rs_c, L::c}, {&rs_d, L::d}, {&rs_w, L::w}};
    const uint32_t nrec[] = {L::nrec_a, L::nrec_b, L::nrec_c, L::nrec_d, L::nrec_w};
    for (int i = 0; i < 5; ++i) {
      load_arg(rs[i].first->sub(0, 2), rs[i].second);
      load_arg(rs[i].first->sub(2), nrec[i]);
      b.s_mov(rs[i].first->sub(3), int64_t(0x00020000));
    }
    auto one = [&](Reg& r, uint32_t off, const char* what) {
      r = b.alloc_s(1, what);
      load_arg(r, off);
    };
    one(s_m, L::m, "m"), one(s_n, L::n, "n"), one(s_k, L::k, "k");
    one(s_lda, L::lda, "lda"), one(s_ldb, L::ldb, "ldb"), one(s_ldc, L::ldc, "ldc"), one(s_ldd, L::ldd, "ldd");
    one(s_alpha, L::alpha, "alpha"), one(s_beta, L::beta, "beta");
    one(s_fast_a, L::fast_a, "fast_a"), one(s_fast_b, L::fast_b, "fast_b");
    one(s_tiles_m, L::tiles_m, "tiles_m"), one(s_tiles_n, L::tiles_n, "tiles_n");
    one(s_kchunk, L::kchunk, "kchunk"), one(s_mode, L::mode, "mode");
    for (Reg* r : {&s_m0, &s_n0, &s_wave_m, &s_wave_n, &s_kbeg, &s_kend, &s_kcur, &s_iters, &s_rd, &s_wr, &s_tmp,
                   &s_tmp2, &s_soff})
      *r = b.alloc_s(1);
    s_pair = b.alloc_s(2);
  }

  // q = n / d, r = n % d for uniform n < 2^24, d >= 1 (in VALU, read back to SGPRs).
  void udiv(Reg q, Reg r, Reg n, Reg d) {
    Reg fq = b.alloc_v(), fd = b.alloc_v(), vq = b.alloc_v(), vr = b.alloc_v(), t = b.alloc_v();
    b.emit("v_cvt_f32_u32", {fq, n});
    b.emit("v_cvt_f32_u32", {fd, d});
    b.emit("v_rcp_f32", {fd, fd});
    b.emit("v_mul_f32", {fq, fq, fd});
    b.emit("v_cvt_u32_f32", {vq, fq});
    b.emit("v_mul_lo_u32", {t, vq, d});
    b.emit("v_sub_u32", {vr, n, t}); // n - q * d
    b.emit("v_cmp_gt_i32", {vcc(), 0, vr});
    b.emit("v_add_u32", {t, d, vr});
    b.emit("v_cndmask_b32", {vr, vr, t, vcc()});
    b.emit("v_add_u32", {t, -1, vq});
    b.emit("v_cndmask_b32", {vq, vq, t, vcc()});
    b.emit("s_sub_u32", {s_tmp2, 0, d});
    b.emit("v_cmp_le_u32", {vcc(), d, vr});
    b.emit("v_add_u32", {t, s_tmp2, vr});
    b.emit("v_cndmask_b32", {vr, vr, t, vcc()});
    b.emit("v_add_u32", {t, 1, vq});
    b.emit("v_cndmask_b32", {vq, vq, t, vcc()});
    b.emit("v_readfirstlane_b32", {q, vq});
    b.emit("v_readfirstlane_b32", {r, vr});
    for (Reg x : {fq, fd, vq, vr, t}) b.free(x);
  }

  // Output tile of this workgroup: s_m0, s_n0 (element offsets).
  void tile_coords() {
    Reg id = b.workgroup_id(0);
    Reg tm = b.alloc_s(), tn = b.alloc_s();
    if (c.wg_order == "row") {
      udiv(tm, tn, id, s_tiles_n);
    } else if (c.wg_order == "col") {
      udiv(tn, tm, id, s_tiles_m);
    } else {
      const int g = c.wg_order == "g4" ? 4 : 8;
      Reg width = b.alloc_s(), group = b.alloc_s(), local = b.alloc_s(), gsz = b.alloc_s(), first = b.alloc_s();
      b.emit("s_mul_i32", {width, s_tiles_n, g});
      udiv(group, local, id, width);
      b.emit("s_mul_i32", {first, group, g});
      b.emit("s_sub_u32", {gsz, s_tiles_m, first});
      b.emit("s_min_u32", {gsz, gsz, g});
      udiv(tn, tm, local, gsz);
      b.emit("s_add_u32", {tm, tm, first});
      for (Reg x : {width, group, local, gsz, first}) b.free(x);
    }
    b.emit("s_mul_i32", {s_m0, tm, c.tile_m});
    b.emit("s_mul_i32", {s_n0, tn, c.tile_n});
    b.free(tm), b.free(tn);
  }

  void setup_ids() {
    v_tid = b.workitem_ids();
    b.emit("v_and_b32", {v_tid, 0x3ff, v_tid});
    // accumulators first (even-sized, even-aligned), then the rest
    for (int i = 0; i < p.bm * p.bn; ++i) acc.push_back(b.alloc_v(uint8_t(c.shape.cd_regs), "acc"));
    v_lane = b.alloc_v(1, "lane");
    v_oob = b.alloc_v(1, "oob");
    v_t = b.alloc_v(1, "t");
    v_t2 = b.alloc_v(1, "t2");
    b.emit("v_and_b32", {v_lane, 63, v_tid});
    b.emit("v_mov_b32", {v_oob, int64_t(kOob)});
    // wave index -> position in the waves_m x waves_n arrangement (wave_m fastest)
    b.emit("v_lshrrev_b32", {v_t, 6, v_tid});
    Reg w = b.alloc_s();
    b.emit("v_readfirstlane_b32", {w, v_t});
    b.emit("s_and_b32", {s_wave_m, w, c.waves_m - 1});
    b.emit("s_lshr_b32", {s_wave_n, w, log2i(c.waves_m)});
    b.free(w);
  }

  void setup_operand(Operand& X, bool is_a) {
    const OperandPlan& o = is_a ? p.a : p.b;
    X.o = &o;
    X.is_a = is_a;
    X.rs = is_a ? rs_a : rs_b;
    X.ld = is_a ? s_lda : s_ldb;
    X.fast = is_a ? s_fast_a : s_fast_b;
    X.ext = is_a ? s_m : s_n;
    Reg mn0 = is_a ? s_m0 : s_n0;
    const int groups = o.tc / o.e; // vectors along the contiguous dimension
    for (int i = 0; i < o.slots; ++i) {
      Slot s;
      s.g = b.alloc_v(uint8_t(o.e), "g");
      s.off = b.alloc_v(1, "off");
      s.vk = b.alloc_v(1, "vk");
      s.lds = b.alloc_v(1, "lds_w");
      if (!o.kcontig)
        s.vmn = b.alloc_v(1, "vmn");
      // v = tid + i * threads; cv = v % groups, sv = v / groups
      Reg cv = v_t, sv = v_t2;
      b.emit("v_add_u32", {sv, i * p.threads, v_tid});
      b.emit("v_and_b32", {cv, groups - 1, sv});
      b.emit("v_lshlrev_b32", {cv, log2i(o.e), cv}); // element index along the contiguous dimension
      b.emit("v_lshrrev_b32", {sv, log2i(groups), sv});
      Reg mn = o.kcontig ? sv : cv, k = o.kcontig ? cv : sv;
      // LDS address: (mn * row + k) * es + base
      b.emit("v_mul_u32_u24", {s.lds, p.row_bytes, mn});
      b.emit("v_lshl_add_u32", {s.lds, k, log2i(p.es), s.lds});
      if (!is_a)
        b.emit("v_add_u32", {s.lds, p.lds_b_base, s.lds});
      // global mn
      b.emit("v_add_u32", {mn, mn0, mn});
      if (!o.kcontig)
        b.emit("v_mov_b32", {s.vmn, mn});
      b.emit("v_cmp_gt_u32", {vcc(), X.ext, mn});
      b.emit("v_mov_b32", {s.off, 0x7fffffff});
      b.emit("v_cndmask_b32", {s.vk, s.off, k, vcc()});
      // byte offset at k = kbeg: kcontig (mn * ld + kbeg + k) * es, else (mn + (kbeg + k) * ld) * es
      b.emit("v_add_u32", {k, s_kbeg, k});
      if (o.kcontig) {
        b.emit("v_mul_lo_u32", {s.off, mn, X.ld});
        b.emit("v_add_u32", {s.off, s.off, k});
      } else {
        b.emit("v_mul_lo_u32", {s.off, k, X.ld});
        b.emit("v_add_u32", {s.off, s.off, mn});
      }
      if (p.es > 1)
        b.emit("v_lshlrev_b32", {s.off, log2i(p.es), s.off});
      X.slots.push_back(s);
    }
  }

  // Fragment read bases (stage 0): ((wave_mn * W + lane % mm) * row + (lane / mm) * epl) * es (+ B base).
  void setup_frag_reads(Operand& X, bool is_a) {
    const int mm = is_a ? c.shape.m : c.shape.n;
    const int W = is_a ? p.wm : p.wn;
    X.rd0 = b.alloc_v(1, "rd0");
    X.rd = c.pgr ? b.alloc_v(1, "rd") : X.rd0;
    b.emit("v_and_b32", {v_t, mm - 1, v_lane});
    b.emit("s_mul_i32", {s_tmp, is_a ? s_wave_m : s_wave_n, W});
    b.emit("v_add_u32", {v_t, s_tmp, v_t});
    b.emit("v_mul_u32_u24", {X.rd0, p.row_bytes, v_t});
    b.emit("v_lshrrev_b32", {v_t, log2i(mm), v_lane});
    b.emit("v_mul_u32_u24", {v_t, c.shape.epl() * p.es, v_t});
    b.emit("v_add_u32", {X.rd0, X.rd0, v_t});
    if (!is_a)
      b.emit("v_add_u32", {X.rd0, p.lds_b_base, X.rd0});
    const int sets = c.plr ? 2 : 1;
    const int blocks = is_a ? p.bm : p.bn;
    X.frag.assign(sets, {});
    for (int s = 0; s < sets; ++s)
      for (int i = 0; i < blocks; ++i) X.frag[s].push_back(b.alloc_v(uint8_t(c.shape.ab_regs), "frag"));
  }

  // Global loads of one operand for the K block at s_kcur; the offset is masked past num_records for
  // elements outside the matrix (k >= kend or m/n >= extent).
  void global_loads(Operand& X, bool fast) {
    const OperandPlan& o = *X.o;
    // soffset = (kcur - kbeg) * (kcontig ? es : ld * es); kleft = kend - kcur
    b.emit("s_sub_u32", {s_soff, s_kcur, s_kbeg});
    if (!o.kcontig)
      b.emit("s_mul_i32", {s_soff, s_soff, X.ld});
    if (p.es > 1)
      b.emit("s_lshl_b32", {s_soff, s_soff, log2i(p.es)});
    b.emit("s_sub_u32", {s_tmp, s_kend, s_kcur}); // kleft (may be <= 0 on a prefetch past the end)
    for (const Slot& s : X.slots) {
      if (fast) {
        b.emit("v_cmp_gt_i32", {vcc(), s_tmp, s.vk});
        b.emit("v_cndmask_b32", {v_t, v_oob, s.off, vcc()});
        b.buffer_load(s.g.sub(0, uint8_t(c.vw)), v_t, X.rs, s_soff, offen());
        continue;
      }
      for (int e = 0; e < o.e; ++e) {
        if (o.kcontig) {
          b.emit("s_sub_u32", {s_tmp2, s_tmp, e});
          b.emit("v_cmp_gt_i32", {vcc(), s_tmp2, s.vk});
        } else {
          b.emit("v_cmp_gt_i32_e64", {s_pair, s_tmp, s.vk});
          b.emit("s_sub_u32", {s_tmp2, X.ext, e});
          b.emit("v_cmp_gt_i32", {vcc(), s_tmp2, s.vmn});
          b.emit("s_and_b64", {vcc(), vcc(), s_pair});
        }
        b.emit("v_cndmask_b32", {v_t, v_oob, s.off, vcc()});
        // the slot's elements are contiguous in memory: element e is e * es bytes further
        b.emit(p.es == 1 ? "buffer_load_ubyte" : "buffer_load_ushort", {s.g.sub(uint8_t(e)), v_t, X.rs, s_soff},
               offen(p.es * e));
      }
    }
  }

  // LDS writes of one operand into the stage at s_wr (byte offset) when prefetching, else stage 0.
  void lds_writes(Operand& X, bool fast) {
    const OperandPlan& o = *X.o;
    for (const Slot& s : X.slots) {
      Reg addr = s.lds;
      if (c.pgr) {
        b.emit("v_add_u32", {v_t2, s_wr, s.lds});
        addr = v_t2;
      }
      if (!fast && p.es == 1 && o.kcontig) {
        // bytes, one per register, packed in place into vw dwords (dword j of bytes 4j..4j+3; register j is
        // free once dword j/4 is built), then written as the fast path writes them
        for (int j = 0; j < c.vw; ++j)
          for (int q = 1; q < 4; ++q)
            b.emit("v_lshl_or_b32",
                   {s.g.sub(uint8_t(j)), s.g.sub(uint8_t(4 * j + q)), 8 * q, s.g.sub(uint8_t(q == 1 ? 4 * j : j))});
      } else if (!fast) {
        for (int e = 0; e < o.e; ++e) {
          Modifiers m;
          int off = o.kcontig ? p.es * e : e * p.row_bytes;
          if (off)
            m.offset = off;
          b.emit(p.es == 1 ? "ds_write_b8" : "ds_write_b16", {addr, s.g.sub(uint8_t(e))}, m);
        }
        continue;
      }
      if (o.kcontig) {
        // 4 * vw bytes at addr: chunks of the largest width the row stride keeps aligned
        const int bytes = 4 * c.vw;
        int chunk = bytes;
        while (p.row_bytes % chunk != 0) chunk /= 2;
        for (int off = 0; off < bytes; off += chunk)
          b.ds_write(addr, s.g.sub(uint8_t(off / 4), uint8_t(chunk / 4)), uint16_t(off));
      } else if (p.es == 1) {
        for (int e = 0; e < o.e; ++e) {
          Modifiers m;
          int off = e * p.row_bytes;
          if (off)
            m.offset = off;
          // byte e of the vector: ds_write_b8 stores the low byte
          Reg data = s.g.sub(uint8_t(e / 4));
          if (e % 4) {
            b.emit("v_lshrrev_b32", {v_t, 8 * (e % 4), data});
            data = v_t;
          }
          b.emit("ds_write_b8", {addr, data}, m);
        }
      } else {
        for (int e = 0; e < o.e; ++e) {
          Modifiers m;
          int off = e * p.row_bytes;
          if (off)
            m.offset = off;
          // the high half through a shift (the emulator does not model ds_write_b16_d16_hi)
          Reg data = s.g.sub(uint8_t(e / 2));
          if (e % 2) {
            b.emit("v_lshrrev_b32", {v_t, 16, data});
            data = v_t;
          }
          b.emit("ds_write_b16", {addr, data}, m);
        }
      }
    }
  }

  // Branch on the operand's fast flag around the two versions of `body`.
  template <class F>
  void fast_or_slow(Operand& X, const char* what, F body) {
    Label slow = b.label(std::string(what) + "_slow"), done = b.label(std::string(what) + "_done");
    b.emit("s_cmp_eq_u32", {X.fast, 0});
    b.s_cbranch("scc1", slow);
    body(true);
    b.s_branch(done);
    b.bind(slow);
    body(false);
    b.bind(done);
  }

  void load_tiles(const char* tag) {
    fast_or_slow(A, (std::string(tag) + "_ga").c_str(), [&](bool f) { global_loads(A, f); });
    fast_or_slow(B, (std::string(tag) + "_gb").c_str(), [&](bool f) { global_loads(B, f); });
  }
  void write_tiles(const char* tag) {
    fast_or_slow(A, (std::string(tag) + "_wa").c_str(), [&](bool f) { lds_writes(A, f); });
    fast_or_slow(B, (std::string(tag) + "_wb").c_str(), [&](bool f) { lds_writes(B, f); });
  }

  void read_frags(Operand& X, int set, int ks) {
    const int mm = X.is_a ? c.shape.m : c.shape.n;
    const bool b128 = c.shape.ab_regs == 4 && p.row_bytes % 16 == 0;
    for (size_t i = 0; i < X.frag[set].size(); ++i) {
      const int off = (int(i) * mm * p.row + ks * c.shape.k) * p.es;
      Reg f = X.frag[set][i];
      if (c.shape.ab_regs == 2 || b128) {
        b.ds_read(f, X.rd, uint16_t(off));
      } else {
        b.ds_read(f.sub(0, 2), X.rd, uint16_t(off));
        b.ds_read(f.sub(2, 2), X.rd, uint16_t(off + 8));
      }
    }
  }

  void compute() {
    if (c.pgr) {
      b.emit("v_add_u32", {A.rd, s_rd, A.rd0});
      b.emit("v_add_u32", {B.rd, s_rd, B.rd0});
    }
    const std::string form = mfma_form(c.shape, sig);
    auto mfmas = [&](int set) {
      for (int i = 0; i < p.bm; ++i)
        for (int j = 0; j < p.bn; ++j) {
          Reg d = acc[size_t(i * p.bn + j)];
          b.mfma(form, d, A.frag[set][size_t(i)], B.frag[set][size_t(j)], d);
        }
    };
    if (c.plr) {
      read_frags(A, 0, 0), read_frags(B, 0, 0);
      for (int ks = 0; ks < p.nks; ++ks) {
        if (ks + 1 < p.nks)
          read_frags(A, (ks + 1) % 2, ks + 1), read_frags(B, (ks + 1) % 2, ks + 1);
        mfmas(ks % 2);
      }
    } else {
      for (int ks = 0; ks < p.nks; ++ks) {
        read_frags(A, 0, ks), read_frags(B, 0, ks);
        mfmas(0);
      }
    }
  }

  void main_loop() {
    Label skip = b.label("loop_skip"), loop = b.label("loop");
    // iterations = ceil((kend - kbeg) / depth), none when kbeg >= kend
    b.emit("s_cmp_ge_u32", {s_kbeg, s_kend});
    b.s_cbranch("scc1", skip);
    b.emit("s_sub_u32", {s_iters, s_kend, s_kbeg});
    b.emit("s_add_u32", {s_iters, s_iters, c.depth - 1});
    b.emit("s_lshr_b32", {s_iters, s_iters, log2i(c.depth)});
    b.s_mov(s_kcur, s_kbeg);
    if (c.pgr) {
      const int stage = p.stage_bytes;
      b.s_mov(s_rd, 0);
      b.s_mov(s_wr, 0);
      load_tiles("pro");
      write_tiles("pro");
      b.s_barrier();
      b.bind(loop);
      b.emit("s_add_u32", {s_kcur, s_kcur, c.depth});
      load_tiles("pf");
      compute();
      b.emit("s_xor_b32", {s_wr, s_wr, stage});
      write_tiles("pf");
      b.s_barrier();
      b.emit("s_xor_b32", {s_rd, s_rd, stage});
    } else {
      b.bind(loop);
      load_tiles("ld");
      b.s_barrier();
      write_tiles("ld");
      b.s_barrier();
      compute();
      b.emit("s_add_u32", {s_kcur, s_kcur, c.depth});
    }
    b.emit("s_sub_u32", {s_iters, s_iters, 1});
    b.emit("s_cmp_lg_u32", {s_iters, 0});
    b.s_cbranch("scc1", loop);
    b.bind(skip);
  }

  void free_loop_regs() {
    for (Operand* X : {&A, &B}) {
      for (const Slot& s : X->slots) {
        b.free(s.g), b.free(s.off), b.free(s.vk), b.free(s.lds);
        if (!X->o->kcontig)
          b.free(s.vmn);
      }
      for (auto& set : X->frag)
        for (Reg r : set) b.free(r);
      b.free(X->rd0);
      if (c.pgr)
        b.free(X->rd);
    }
  }

  // Row of accumulator register r inside an MFMA block, relative to the lane's base row.
  int row_of(int r) const { return c.shape.m == 32 ? 8 * (r / 4) + r % 4 : r; }

  // Epilogue. mode: 0 final (D = alpha*acc + beta*C), 1 partial into the workspace (split s_wgy).
  struct Epi {
    Reg m_lane, n_lane;
    std::vector<Reg> col; // per bj: column byte offset (or OOB) for the target buffer
  };

  void lane_coords(Epi& e) {
    e.m_lane = b.alloc_v(1, "m_lane");
    e.n_lane = b.alloc_v(1, "n_lane");
    b.emit("v_lshrrev_b32", {e.m_lane, log2i(c.shape.m == 32 ? 32 : 16), v_lane});
    b.emit("v_lshlrev_b32", {e.m_lane, 2, e.m_lane});
    b.emit("s_mul_i32", {s_tmp, s_wave_m, p.wm});
    b.emit("s_add_u32", {s_tmp, s_tmp, s_m0});
    b.emit("v_add_u32", {e.m_lane, s_tmp, e.m_lane});
    b.emit("v_and_b32", {e.n_lane, c.shape.n - 1, v_lane});
    b.emit("s_mul_i32", {s_tmp, s_wave_n, p.wn});
    b.emit("s_add_u32", {s_tmp, s_tmp, s_n0});
    b.emit("v_add_u32", {e.n_lane, s_tmp, e.n_lane});
  }

  // col[bj] = n < N ? n * ld * esize : OOB, for column n = n_lane + bj * nn; ld an SGPR.
  std::vector<Reg> columns(const Epi& e, Reg ld, int esize) {
    std::vector<Reg> out;
    for (int j = 0; j < p.bn; ++j) {
      Reg r = b.alloc_v(1, "col");
      b.emit("v_add_u32", {v_t, j * c.shape.n, e.n_lane});
      b.emit("v_cmp_gt_u32", {vcc(), s_n, v_t});
      b.emit("v_mul_lo_u32", {r, v_t, ld});
      b.emit("v_lshlrev_b32", {r, log2i(esize), r});
      b.emit("v_cndmask_b32", {r, v_oob, r, vcc()});
      out.push_back(r);
    }
    return out;
  }

  // dst = (m < M) ? m * esize + col : OOB, m = m_lane + dm.
  void elem_offset(Reg dst, const Epi& e, int dm, Reg col, int esize) {
    b.emit("v_add_u32", {v_t, dm, e.m_lane});
    b.emit("v_cmp_gt_u32", {vcc(), s_m, v_t});
    b.emit("v_lshl_add_u32", {dst, v_t, log2i(esize), col});
    b.emit("v_cndmask_b32", {dst, v_oob, dst, vcc()});
  }

  void store_partials(const Epi& e) {
    // workspace[split][n][m] (f32, ld = M), split stride M * N * 4 bytes in soffset
    std::vector<Reg> col = columns(e, s_m, 4);
    b.emit("s_mul_i32", {s_soff, s_m, s_n});
    b.emit("s_lshl_b32", {s_soff, s_soff, 2});
    b.emit("s_mul_i32", {s_soff, s_soff, b.workgroup_id(1)});
    Reg off = b.alloc_v(1, "off");
    for (int i = 0; i < p.bm; ++i)
      for (int j = 0; j < p.bn; ++j)
        for (int r = 0; r < c.shape.cd_regs; ++r) {
          elem_offset(off, e, i * c.shape.m + row_of(r), col[size_t(j)], 4);
          b.buffer_store(acc[size_t(i * p.bn + j)].sub(uint8_t(r)), off, rs_w, s_soff, offen());
        }
    b.free(off);
    for (Reg r : col) b.free(r);
  }

  void sum_partials(const Epi& e) {
    std::vector<Reg> col = columns(e, s_m, 4);
    b.emit("s_mul_i32", {s_tmp2, s_m, s_n});
    b.emit("s_lshl_b32", {s_tmp2, s_tmp2, 2});
    Reg off = b.alloc_v(1, "off"), x = b.alloc_v(1, "x");
    for (int i = 0; i < p.bm; ++i)
      for (int j = 0; j < p.bn; ++j)
        for (int r = 0; r < c.shape.cd_regs; ++r) {
          Reg a = acc[size_t(i * p.bn + j)].sub(uint8_t(r));
          elem_offset(off, e, i * c.shape.m + row_of(r), col[size_t(j)], 4);
          b.emit("v_mov_b32", {a, 0});
          b.s_mov(s_soff, 0);
          for (int s = 0; s < c.split_k; ++s) {
            b.buffer_load(x, off, rs_w, s_soff, offen());
            b.emit("v_add_f32", {a, a, x});
            if (s + 1 < c.split_k)
              b.emit("s_add_u32", {s_soff, s_soff, s_tmp2});
          }
        }
    b.free(off), b.free(x);
    for (Reg r : col) b.free(r);
  }

  void convert_store(Reg x, Reg off, Reg t) {
    const int es = int(size_of(sig.cd));
    (void)es;
    if (sig.cd == DType::f32) {
      b.buffer_store(x, off, rs_d, 0, offen());
    } else if (sig.cd == DType::f16) {
      b.emit("v_cvt_f16_f32", {t, x});
      b.emit("buffer_store_short", {t, off, rs_d, 0}, offen());
    } else if (b.gfx() == Gfx::gfx950) {
      b.emit("v_cvt_pk_bf16_f32", {t, x, x});
      b.emit("buffer_store_short", {t, off, rs_d, 0}, offen());
    } else {
      // round to nearest even (LLVM's sequence), NaN kept quiet
      Reg q = v_t2;
      b.emit("v_bfe_u32", {t, x, 16, 1});
      b.emit("v_add3_u32", {t, t, x, s_tmp2}); // s_tmp2 = 0x7fff
      b.emit("v_or_b32", {q, 0x400000, x});
      b.emit("v_cmp_u_f32", {vcc(), x, x});
      b.emit("v_cndmask_b32", {t, t, q, vcc()});
      b.emit("v_lshrrev_b32", {t, 16, t});
      b.emit("buffer_store_short", {t, off, rs_d, 0}, offen());
    }
  }

  void final_epilogue(const Epi& e, bool with_c) {
    const int es = int(size_of(sig.cd));
    std::vector<Reg> col_d = columns(e, s_ldd, es);
    std::vector<Reg> col_c;
    if (with_c)
      col_c = columns(e, s_ldc, es);
    const int R = c.shape.cd_regs;
    std::vector<Reg> offc, offd, cv;
    for (int r = 0; r < R; ++r) {
      offd.push_back(b.alloc_v(1, "offd"));
      if (with_c)
        offc.push_back(b.alloc_v(1, "offc")), cv.push_back(b.alloc_v(1, "cval"));
    }
    Reg t = b.alloc_v(1, "t");
    if (sig.cd == DType::bf16 && b.gfx() != Gfx::gfx950)
      b.s_mov(s_tmp2, 0x7fff);
    for (int i = 0; i < p.bm; ++i)
      for (int j = 0; j < p.bn; ++j) {
        Reg blk = acc[size_t(i * p.bn + j)];
        for (int r = 0; r < R; ++r) {
          int dm = i * c.shape.m + row_of(r);
          elem_offset(offd[size_t(r)], e, dm, col_d[size_t(j)], es);
          if (with_c) {
            elem_offset(offc[size_t(r)], e, dm, col_c[size_t(j)], es);
            if (sig.cd == DType::f32)
              b.buffer_load(cv[size_t(r)], offc[size_t(r)], rs_c, 0, offen());
            else
              b.emit("buffer_load_ushort", {cv[size_t(r)], offc[size_t(r)], rs_c, 0}, offen());
          }
        }
        for (int r = 0; r < R; ++r) {
          Reg x = blk.sub(uint8_t(r));
          b.emit("v_mul_f32", {x, s_alpha, x});
          if (with_c) {
            Reg cr = cv[size_t(r)];
            if (sig.cd == DType::f16)
              b.emit("v_cvt_f32_f16", {cr, cr});
            else if (sig.cd == DType::bf16)
              b.emit("v_lshlrev_b32", {cr, 16, cr});
            b.emit("v_fmac_f32", {x, s_beta, cr});
          }
          convert_store(x, offd[size_t(r)], t);
        }
      }
    for (Reg r : offd) b.free(r);
    for (Reg r : offc) b.free(r);
    for (Reg r : cv) b.free(r);
    for (Reg r : col_d) b.free(r);
    for (Reg r : col_c) b.free(r);
    b.free(t);
  }

  Kernel run() {
    setup_args();
    setup_ids();
    tile_coords();
    // K range of this split: [kbeg, kend) = [split * kchunk, min(K, (split + 1) * kchunk))
    if (c.split_k > 1) {
      b.emit("s_mul_i32", {s_kbeg, b.workgroup_id(1), s_kchunk});
      b.emit("s_add_u32", {s_kend, s_kbeg, s_kchunk});
      b.emit("s_min_u32", {s_kend, s_kend, s_k});
    } else {
      b.s_mov(s_kbeg, 0);
      b.s_mov(s_kend, s_k);
    }
    for (Reg a : acc)
      for (int r = 0; r < c.shape.cd_regs; ++r) b.emit("v_mov_b32", {a.sub(uint8_t(r)), 0});
    Epi e;
    Label reduce = b.label("reduce"), epilogue = b.label("epilogue"), end = b.label("end");
    if (c.split_k > 1) {
      b.emit("s_cmp_lg_u32", {s_mode, 0});
      b.s_cbranch("scc1", reduce);
    }
    setup_operand(A, true);
    setup_operand(B, false);
    setup_frag_reads(A, true);
    setup_frag_reads(B, false);
    main_loop();
    free_loop_regs();
    lane_coords(e);
    if (c.split_k > 1) {
      store_partials(e);
      b.s_branch(end);
      b.bind(reduce);
      // mode 1: no main loop; the lane coordinates again (same registers: the allocator gives them back)
      b.free(e.m_lane), b.free(e.n_lane);
      lane_coords(e);
      sum_partials(e);
    }
    b.bind(epilogue);
    Label no_c = b.label("no_c");
    b.emit("s_and_b32", {s_tmp, s_beta, int64_t(0x7fffffff)});
    b.emit("s_cmp_eq_u32", {s_tmp, 0});
    b.s_cbranch("scc1", no_c);
    final_epilogue(e, true);
    b.s_branch(end);
    b.bind(no_c);
    final_epilogue(e, false);
    b.bind(end);
    b.s_endpgm();
    Kernel k = b.finish();
    insert_waits(k);
    return k;
  }
};

} // namespace

std::string kernel_name(const GemmSig& sig, const Params& p) {
  auto i = [&](const char* n) { return std::to_string(param_int(p, n)); };
  std::string in(to_string(sig.a));
  if (sig.b != sig.a)
    in += "_" + std::string(to_string(sig.b));
  return "gemm_" + in + "_" + std::string(to_string(sig.cd)) + "_" + sig.layout + "_" +
         i("tile_m") + "x" + i("tile_n") + "x" + i("depth") + "_w" + i("waves_m") + "x" + i("waves_n") + "_m" +
         param_str(p, "mfma") + "_v" + i("vw") + "_p" + i("lds_pad") + "_g" + i("prefetch_global") + "_l" +
         i("prefetch_local") + "_s" + i("split_k") + "_" + param_str(p, "wg_order");
}

cdna::Kernel emit_kernel(const std::string& isa, const GemmSig& sig, const GemmConfig& c, const Params& params) {
  Emitter e(isa, sig, c, kernel_name(sig, params));
  return e.run();
}

} // namespace isatune::gen::gemm

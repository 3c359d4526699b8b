// The CDNA flash-attention forward kernel (gfx942, gfx950; docs/attention.md).
//
// Workgroup = (query block, query head, batch); each of its waves owns `tile` (32 or 16) query rows. Per key
// block of block_n keys every thread loads 16-byte chunks of K and V (buffer loads: rows past the buffer read
// 0), K is stored row-major in LDS and V transposed (Vt[d][j]), then each wave computes
//   S^T = K Q^T     (tile keys x tile queries per MFMA tile, Q fragments resident in VGPRs),
// so that lane l holds query l % tile and tile^2/64 of the tile's keys: the row max is a max over registers
// and ds_bpermutes with lanes l ^ 32 (and l ^ 16 for 16x16 tiles), and the online softmax's rescale factors
// are per lane. The scores are scaled by
// softmax_scale * log2 e (one v_fma) and exponentiated with v_exp_f32 (2^x); P is rounded to the input type
// (bf16: round-to-nearest-even or truncation) and used as the B operand of
//   O^T += V^T P^T  (tile dims x tile queries per MFMA tile),
// whose k layout is exactly the S^T result's register layout (no shuffle). At the end O is divided by the row
// sum (the two half-waves' partial sums added) and stored masked to the real query rows; LSE = ln 2 * (m +
// log2 l).
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "attention_common.h"
#include "isatune/cdna/builder.h"
#include "isatune/cdna/waits.h"
#include "isatune/error.h"

namespace isatune::gen::attention {

using namespace cdna;

namespace {

constexpr uint32_t kOob = 0x80000000u; // an offset past every num_records (buffers < 2 GiB)
constexpr int kFixedVgprs = 26;        // lane ids, addresses, statistics, temporaries

int log2i(int x) {
  return std::countr_zero(unsigned(x));
}

Modifiers offen(int32_t offset = 0) {
  Modifiers m;
  m.offen = true;
  if (offset)
    m.offset = offset;
  return m;
}

// Sizes of one variant, in elements, registers and bytes.
struct Geometry {
  // tile T; G = 64 / T lane groups; R = T * T / 64 accumulator registers per tile; e = kdim / G elements of
  // an A/B operand per lane (kregs = e / 2 VGPRs). Lane group hg = lane / T holds k = [hg * e, hg * e + e) of
  // a chunk and, in an accumulator, rows 4G * (r / 4) + 4 hg + r % 4 of register r.
  // dqk: head dim of q and k (S = K Q^T runs over it: Q/K fragments, K rows); dv: of v and o (O tiles, V rows)
  int dqk, dv, bn, kdim, tile, groups, regs, e, nt, kchunks, kregs, ot, pchunks, threads, kp, vp, ks_bytes, lds,
      buf;
  // The cooperative load of one block of K or V: 16-byte chunks, split into column segments whose width in
  // chunks (cpr) is a power of two so that a thread's row and chunk are a shift and a mask of its id (head
  // dim 192 = 128 + 64 columns). Segment s covers columns [col0, col0 + 8 cpr); a workgroup pass loads rpp =
  // threads / cpr rows of it, each thread nch chunks (rows j, j + rpp, ...).
  struct Seg {
    int col0, cpr, rpp, nch;
  };
  std::vector<Seg> kseg, vseg;
  int nch_k = 0, nch_v = 0, stage_chunks = 0; // chunks per thread of K, of V; staging VGPRs / 4
  // lds_dma: dma_k / dma_v load K / V straight into LDS, row-major with pitch 2 d
  bool dma_k, dma_v;
  Geometry(const AttnSig& sig, const CdnaParams& p) {
    dqk = sig.head_dim, dv = sig.head_dim_v, bn = p.block_n, kdim = p.mfma_k, tile = p.tile;
    groups = 64 / tile, regs = tile * tile / 64, e = kdim / groups;
    nt = bn / tile, kchunks = dqk / kdim, kregs = e / 2, ot = dv / tile, pchunks = bn / kdim;
    threads = 64 * p.waves;
    kseg = segments(dqk), vseg = segments(dv);
    for (const Seg& s : kseg)
      nch_k += s.nch;
    for (const Seg& s : vseg)
      nch_v += s.nch;
    kp = dqk * 2 + 16, vp = bn * 2 + 16; // LDS row pitches (16-byte aligned, off the bank period)
    dma_k = p.dma_k, dma_v = p.dma_v;
    stage_chunks = std::max(dma_k ? 0 : nch_k, dma_v ? 0 : nch_v);
    if (dma_k)
      kp = dqk * 2;
    ks_bytes = bn * kp;
    lds = ks_bytes + dv * vp;
    if (dma_v)
      lds = ks_bytes + bn * dv * 2;
    buf = lds; // one K + Vt buffer; pingpong keeps two (block j is read while block j + 1 is written)
    if (p.pingpong)
      lds *= 2;
  }
  std::vector<Seg> segments(int d) const { // widest first: 192 -> 128 + 64 columns
    std::vector<Seg> v;
    int col0 = 0;
    for (const int cpr : cdna_segment_chunks(d)) {
      v.push_back({col0, cpr, threads / cpr, bn * cpr / threads});
      col0 += 8 * cpr;
    }
    return v;
  }
};

// One tensor's cooperative load in registers: per column segment, the lane's first memory offset (voff) and
// LDS address (vlds) and the memory step between its chunks (s_step = row stride * rpp).
struct CoopSeg {
  Geometry::Seg g;
  Reg voff, vlds, s_step;
};
using Coop = std::vector<CoopSeg>;

// pingpong=1: waves [0, waves/2) form group 0, the rest group 1. Both run the same loop, two barriers per key
// block j: half X_j (K of block j + 1 loaded and written to the other K buffer, S^T MFMAs on K_j, softmax)
// and half Y_j (V of block j + 1 loaded and written to the other Vt buffer, O MFMAs on V_j). Group 1 takes
// one extra barrier after the prologue (which stores block 0) and group 0 one after the loop, so every wave
// executes 2 + 2 nkb barriers and barrier event E pairs group 0's half e with group 1's half e - 1: with
// X_j between E_{2j+1} and E_{2j+2} for group 0 (one event later for group 1), every write of K_{j+1}
// (V_{j+1}) lands after the last read of K_{j-1} (V_{j-1}) in its buffer and before the first read of K_{j+1}
// (V_{j+1}).
struct PingPong {
  Builder& b;
  const Geometry& g;
  const CdnaParams& p;
  Reg rs_k, rs_v;
  const Coop &kc, &vc;
  Reg v_ksrd, v_vsrd, stage, v_t, v_t2;
  Reg s_kbstep, s_vbstep, s_kb, s_nkb, s_t, s_wave;
  Reg s_delta; // the read buffer's distance to the write buffer: +buf or -buf

  void load(Reg rsrc, const Coop& c) { // 16-byte chunk u of a segment: row j + u * rpp; staged in order
    int u0 = 0;
    for (const CoopSeg& s : c) {
      b.emit("v_mov_b32", {v_t, s.voff});
      for (int u = 0; u < s.g.nch; ++u) {
        b.buffer_load(stage.sub(uint8_t(4 * (u0 + u)), 4), v_t, rsrc, 0, offen());
        if (u + 1 < s.g.nch)
          b.emit("v_add_u32", {v_t, s.s_step, v_t});
      }
      u0 += s.g.nch;
    }
  }
  void write_k() {
    int u0 = 0;
    for (const CoopSeg& s : kc) {
      for (int u = 0; u < s.g.nch; ++u)
        b.ds_write(s.vlds, stage.sub(uint8_t(4 * (u0 + u)), 4), uint16_t(u * s.g.rpp * g.kp));
      u0 += s.g.nch;
    }
  }
  void write_v() { // transposed, 16 bits at a time
    int u0 = 0;
    for (const CoopSeg& s : vc) {
      for (int u = 0; u < s.g.nch; ++u)
        for (int e = 0; e < 8; ++e) {
          Reg data = stage.sub(uint8_t(4 * (u0 + u) + e / 2));
          if (e % 2) {
            b.emit("v_lshrrev_b32", {v_t2, 16, data});
            data = v_t2;
          }
          Modifiers m;
          const int off = u * s.g.rpp * 2 + e * g.vp;
          if (off)
            m.offset = off;
          b.emit("ds_write_b16", {s.vlds, data}, m);
        }
      u0 += s.g.nch;
    }
  }
  // jumps to `skip` when block j + 1 does not exist (s_kb = j)
  void branch_if_last(Label skip) {
    b.emit("s_add_u32", {s_t, s_kb, 1});
    b.emit("s_cmp_lt_u32", {s_t, s_nkb});
    b.s_cbranch("scc0", skip);
  }
  // one barrier, taken by group 1 only (second) or group 0 only
  void stagger(bool second) {
    Label skip = b.label(second ? "pp_stagger_start" : "pp_stagger_end");
    b.emit(second ? "s_cmp_ge_u32" : "s_cmp_lt_u32", {s_wave, p.waves / 2});
    b.s_cbranch("scc0", skip);
    b.s_barrier();
    b.bind(skip);
  }
  void prologue() { // block 0 into buffer 0, the resources to block 1, the writes to buffer 1
    load(rs_k, kc);
    write_k();
    load(rs_v, vc);
    write_v();
    for (auto [r, step] : {std::pair{rs_k, s_kbstep}, std::pair{rs_v, s_vbstep}}) {
      b.emit("s_add_u32", {r.sub(0), r.sub(0), step});
      b.emit("s_addc_u32", {r.sub(1), r.sub(1), 0});
      b.emit("s_sub_u32", {r.sub(2), r.sub(2), step});
    }
    s_delta = b.alloc_s(1, "pp_delta");
    b.s_mov(s_delta, int64_t(g.buf));
    for (const Coop* c : {&kc, &vc})
      for (const CoopSeg& s : *c)
        b.emit("v_add_u32", {s.vlds, g.buf, s.vlds});
    b.s_barrier();
    stagger(true);
  }
  void load_next(Reg rsrc, const Coop& c) {
    Label skip = b.label(rsrc == rs_k ? "pp_no_next_k" : "pp_no_next_v");
    branch_if_last(skip);
    load(rsrc, c);
    b.bind(skip);
  }
  void store_next_k() {
    Label skip = b.label("pp_no_store_k");
    branch_if_last(skip);
    write_k();
    b.bind(skip);
  }
  void half(Reg rsrc, const Coop& c) { // end of X_j, start of Y_j
    b.s_barrier();
    load_next(rsrc, c);
  }
  void end_iteration() { // end of Y_j: reads move to the buffer just written, writes to the one just read
    Label skip = b.label("pp_no_store_v");
    branch_if_last(skip);
    write_v();
    b.bind(skip);
    b.s_barrier();
    for (Reg r : {v_ksrd, v_vsrd})
      b.emit("v_add_u32", {r, s_delta, r});
    b.emit("s_sub_u32", {s_delta, 0, s_delta});
    for (const Coop* c : {&kc, &vc})
      for (const CoopSeg& s : *c)
        b.emit("v_add_u32", {s.vlds, s_delta, s.vlds});
  }
};

struct Emitter {
  const std::string& isa;
  const AttnSig& sig;
  const CdnaParams& p;
  Geometry g;
  Builder b;

  Emitter(const std::string& isa_, const AttnSig& sig_, const CdnaParams& p_)
      : isa(isa_), sig(sig_), p(p_), g(sig_, p_),
        b(parse_target_id(isa_), cdna_kernel_name(sig_, p_), EntryOptions{true, true, true, true, 1}) {}

  std::string mfma_name() const {
    const std::string t = std::to_string(g.tile);
    return "v_mfma_f32_" + t + "x" + t + "x" + std::to_string(g.kdim) +
           (sig.dtype == DType::bf16 ? "_bf16" : "_f16");
  }
  // the row (within its tile) of accumulator register r, less the lane group's 4 hg
  int acc_row(int r) const { return 4 * g.groups * (r / 4) + r % 4; }

  // Packs two f32 values into one register of two 16-bit values (lo = a): bf16 by round-to-nearest-even
  // (finite values) or truncation, f16 by v_cvt_f16_f32 (round to nearest).
  void pack(Reg dst, Reg a, Reg b2, bool rtz, Reg t, Reg t2, Reg s_7fff, Reg s_sel_hi, Reg s_sel_lo) {
    if (sig.dtype == DType::f16) {
      b.emit("v_cvt_f16_f32", {t, a});
      b.emit("v_cvt_f16_f32", {t2, b2});
      b.emit("v_perm_b32", {dst, t2, t, s_sel_lo});
      return;
    }
    if (rtz) {
      b.emit("v_perm_b32", {dst, b2, a, s_sel_hi});
      return;
    }
    if (b.gfx() == Gfx::gfx950) {
      b.emit("v_cvt_pk_bf16_f32", {dst, a, b2});
      return;
    }
    b.emit("v_bfe_u32", {t, a, 16, 1});
    b.emit("v_add3_u32", {t, t, a, s_7fff});
    b.emit("v_bfe_u32", {t2, b2, 16, 1});
    b.emit("v_add3_u32", {t2, t2, b2, s_7fff});
    b.emit("v_perm_b32", {dst, t2, t, s_sel_hi});
  }

  // O *= alpha for O in AGPRs: read, multiply, write back, through `ntmp` rotating VGPRs of `tmp`
  void scale_agprs(Reg acc, int nacc, Reg alpha, Reg tmp, int ntmp) {
    for (int r = 0; r < nacc; ++r) {
      Reg t = tmp.sub(uint8_t(r % ntmp));
      b.emit("v_accvgpr_read_b32", {t, acc.sub(uint8_t(r))});
      b.emit("v_mul_f32", {t, alpha, t});
      b.emit("v_accvgpr_write_b32", {acc.sub(uint8_t(r)), t});
    }
  }
  // ---- lds_dma (docs/attention.md, "Direct-to-LDS K/V"): K and/or V go from memory straight into LDS with
  // buffer_load_dword ... lds (gfx942: 4 bytes per lane) or buffer_load_dwordx4 ... lds (gfx950: 16), one
  // instruction filling dma_bytes() contiguous LDS bytes at M0 + lane * size. The tile is row-major with
  // pitch 2 d bytes (no padding: an instruction's bytes are contiguous); instruction u of wave w fills
  // segment u * waves + w, so its lane l reads row (u * waves + w) * rows + l * size / (2 d) at byte
  // (l * size) % (2 d) of the row (rows = dma_bytes / (2 d)): whole rows, contiguous in memory.
  int dma_bytes() const { return b.gfx() == Gfx::gfx950 ? 1024 : 256; }
  struct DmaStream {
    Reg voff, s_m0, s_step; // the lane's first memory offset, the wave's first M0, the offset step
  };
  DmaStream dma_setup(int d_head, Reg tid, Reg s_wave, Reg s_stride, int lds_base, Reg v_t, Reg v_t2) {
    const int seg = dma_bytes(), rows = seg / (2 * d_head);
    DmaStream d{b.alloc_v(1, "dma_off"), b.alloc_s(1, "dma_m0"), b.alloc_s(1, "dma_step")};
    b.emit("v_and_b32", {v_t, 63, tid});
    b.emit("v_lshlrev_b32", {v_t, log2i(seg / 64), v_t}); // the lane's byte in the segment
    b.emit("v_lshrrev_b32", {v_t2, log2i(2 * d_head), v_t}); // its row
    b.emit("v_and_b32", {v_t, 2 * d_head - 1, v_t});         // its byte in the row
    b.emit("s_mul_i32", {d.s_m0, s_wave, rows});          // the wave's first row
    b.emit("v_add_u32", {v_t2, d.s_m0, v_t2});
    b.emit("v_mul_lo_u32", {d.voff, v_t2, s_stride});
    b.emit("v_add_u32", {d.voff, d.voff, v_t});
    b.emit("s_mul_i32", {d.s_m0, s_wave, seg});
    if (lds_base)
      b.emit("s_add_u32", {d.s_m0, d.s_m0, lds_base});
    b.emit("s_mul_i32", {d.s_step, s_stride, rows * p.waves});
    return d;
  }
  // One block of a tensor into LDS (the resource already points at the block's first row).
  void dma_load(int d_head, const DmaStream& d, Reg rs, Reg v_t) {
    const int seg = dma_bytes(), n = g.bn * d_head * 2 / (seg * p.waves);
    const char* op = seg == 1024 ? "buffer_load_dwordx4_lds" : "buffer_load_dword_lds";
    b.s_mov(m0(), d.s_m0);
    b.emit("v_mov_b32", {v_t, d.voff});
    for (int u = 0; u < n; ++u) {
      b.emit(op, {v_t, rs, 0}, offen());
      if (u + 1 < n) {
        b.emit("s_add_u32", {m0(), m0(), seg * p.waves});
        b.emit("v_add_u32", {v_t, d.s_step, v_t});
      }
    }
  }
  // O^T += V^T P^T with V row-major in LDS (lds_dma v, kv): a dword holds dims 2 dp and 2 dp + 1 of one
  // key, so the O^T tiles go in pairs: row i of tile 2u is dim 2 (u T + i), of tile 2u + 1 dim 2 (u T + i) +
  // 1. Lane (i, hg) reads, for each quad of keys k..k+3 of its P^T fragment, the four dwords (key k + x, dim
  // pair u T + i) and v_perm_b32 splits them into the even tile's A registers (keys k, k+1 | k+2, k+3 of dim
  // 2 dp) and the odd tile's (dim 2 dp + 1). v_vsrd = V base + 4 i + 4 hg rows.
  void pv_paired(const std::string& mf, Reg acc, Reg pk, Reg vf, Reg vf_odd, Reg v_vsrd, Reg v_t,
                 Reg s_sel_lo, Reg s_sel_hi) {
    for (int u = 0; u < g.ot / 2; ++u) {
      for (int c = 0; c < g.pchunks; ++c)
        for (int q = 0; q < g.e / 4; ++q) {
          const int f = c * g.e + 4 * q, key = (f / g.regs) * g.tile + acc_row(f % g.regs);
          for (int x = 0; x < 4; ++x)
            b.ds_read((x % 2 ? vf_odd : vf).sub(uint8_t(c * g.kregs + 2 * q + x / 2)), v_vsrd,
                      uint16_t(u * g.tile * 4 + (key + x) * 2 * g.dv));
        }
      for (int r = 0; r < g.pchunks * g.kregs; ++r) {
        Reg ev = vf.sub(uint8_t(r)), od = vf_odd.sub(uint8_t(r));
        b.emit("v_perm_b32", {v_t, od, ev, s_sel_lo}); // lo halves: dim 2 dp of keys k, k + 1
        b.emit("v_perm_b32", {od, od, ev, s_sel_hi});  // hi halves: dim 2 dp + 1
        b.emit("v_mov_b32", {ev, v_t});
      }
      for (int par = 0; par < 2; ++par) {
        Reg ot = acc.sub(uint8_t(g.regs * (2 * u + par)), uint8_t(g.regs));
        for (int c = 0; c < g.pchunks; ++c)
          b.mfma(mf, ot, (par ? vf_odd : vf).sub(uint8_t(c * g.kregs), uint8_t(g.kregs)),
                 pk.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)), ot);
      }
    }
  }
  // The O store with paired tiles: register r of tiles 2u and 2u + 1 hold dims 2 (u T + row) and + 1, so
  // four rows of a pair are 8 consecutive dims, one 16-byte store (v_ooff = query row + 16 hg bytes).
  void store_o_paired(Reg acc, Reg out4, Reg v_ooff, Reg rs_o, Reg v_t, Reg v_t2, Reg s_7fff, Reg s_sel_hi,
                      Reg s_sel_lo) {
    for (int u = 0; u < g.ot / 2; ++u)
      for (int q4 = 0; q4 < g.regs / 4; ++q4) {
        for (int x = 0; x < 4; ++x) {
          const int r = g.regs * 2 * u + 4 * q4 + x;
          pack(out4.sub(uint8_t(x)), acc.sub(uint8_t(r)), acc.sub(uint8_t(r + g.regs)), false, v_t, v_t2,
               s_7fff, s_sel_hi, s_sel_lo);
        }
        b.buffer_store(out4, v_ooff, rs_o, 0, offen(4 * (u * g.tile + acc_row(4 * q4))));
      }
  }

  Kernel run() {
    const char* ptrs[] = {"q", "k", "v", "o", "lse"};
    const char* access[] = {"read_only", "read_only", "read_only", "write_only", "write_only"};
    for (int i = 0; i < 5; ++i)
      b.add_arg(ptrs[i], 8, 8, ArgKind::global_buffer, access[i]);
    const char* names[] = {"sq",   "sk",     "group_magic", "q_sb",   "q_ss",   "q_sh",  "k_sb", "k_ss",
                           "k_sh", "v_sb",   "v_ss",        "v_sh",   "o_sb",   "o_ss",  "o_sh", "l_sb",
                           "l_sh", "nrec_q", "nrec_k",      "nrec_v", "nrec_o", "nrec_l"};
    for (const char* n : names)
      b.add_arg(n, 4, 4, ArgKind::by_value);
    b.add_arg("scale_log2", 4, 4, ArgKind::by_value);
    if (b.kernel().kernarg_size != kKernargBytes)
      throw Error("attention: kernarg layout mismatch");
    b.set_workgroup_size(uint32_t(g.threads));
    b.set_lds_bytes(uint32_t(g.lds));

    // ---- arguments and buffer resources
    Reg rs[5];
    const int nrec_arg[5] = {kNrecQ, kNrecK, kNrecV, kNrecO, kNrecL};
    const int nbuf = sig.lse ? 5 : 4;
    for (int i = 0; i < nbuf; ++i) {
      rs[i] = b.alloc_s(4, std::string("rs_") + ptrs[i]);
      b.s_load(rs[i].sub(0, 2), b.kernarg_ptr(), int(8 * i));
      b.s_load(rs[i].sub(2), b.kernarg_ptr(), int(u32_arg_offset(nrec_arg[i])));
      b.s_mov(rs[i].sub(3), int64_t(0x00020000));
    }
    auto arg = [&](int i, const char* what) {
      Reg r = b.alloc_s(1, what);
      b.s_load(r, b.kernarg_ptr(), int(u32_arg_offset(i)));
      return r;
    };
    Reg s_sq = arg(kSq, "sq"), s_sk = arg(kSk, "sk"), s_magic = arg(kGroupMagic, "magic");
    Reg s_qsb = arg(kQsb, "q_sb"), s_qss = arg(kQss, "q_ss"), s_qsh = arg(kQsh, "q_sh");
    Reg s_ksb = arg(kKsb, "k_sb"), s_kss = arg(kKss, "k_ss"), s_ksh = arg(kKsh, "k_sh");
    Reg s_vsb = arg(kVsb, "v_sb"), s_vss = arg(kVss, "v_ss"), s_vsh = arg(kVsh, "v_sh");
    Reg s_osb = arg(kOsb, "o_sb"), s_oss = arg(kOss, "o_ss"), s_osh = arg(kOsh, "o_sh");
    Reg s_lsb, s_lsh;
    if (sig.lse)
      s_lsb = arg(kLsb, "l_sb"), s_lsh = arg(kLsh, "l_sh");
    Reg s_c = b.alloc_s(1, "scale_log2");
    b.s_load(s_c, b.kernarg_ptr(), int(kScaleOffset));
    Reg s_t = b.alloc_s(1), s_t2 = b.alloc_s(1), s_hkv = b.alloc_s(1), s_wave = b.alloc_s(1),
        s_q0 = b.alloc_s(1);
    Reg s_nkb = b.alloc_s(1), s_wlim = b.alloc_s(1), s_kb = b.alloc_s(1), s_j0 = b.alloc_s(1),
        s_negj0 = b.alloc_s(1);
    Reg s_kbstep = b.alloc_s(1), s_vbstep = b.alloc_s(1);
    Reg s_7fff = b.alloc_s(1), s_sel_hi = b.alloc_s(1), s_sel_lo = b.alloc_s(1), s_save = b.alloc_s(2);
    const Reg s_h = b.workgroup_id(1), s_b = b.workgroup_id(2);
    Reg s_bm = b.workgroup_id(0);
    b.s_mov(s_7fff, int64_t(0x7fff));
    b.s_mov(s_sel_hi, int64_t(0x07060302));
    b.s_mov(s_sel_lo, int64_t(0x05040100));

    // Moves a resource's base by b * sb + h * sh bytes (its num_records shrinks by as much).
    auto rebase = [&](Reg r, Reg head, Reg sb, Reg sh) {
      b.emit("s_mul_i32", {s_t, s_b, sb});
      b.emit("s_mul_i32", {s_t2, head, sh});
      b.emit("s_add_u32", {s_t, s_t, s_t2});
      b.emit("s_add_u32", {r.sub(0), r.sub(0), s_t});
      b.emit("s_addc_u32", {r.sub(1), r.sub(1), 0});
      b.emit("s_sub_u32", {r.sub(2), r.sub(2), s_t});
    };
    b.s_waitcnt(std::nullopt, 0);
    if (sig.causal) { // longest first: the last query blocks see the most keys, so they are dispatched first
      Reg s_rev = b.alloc_s(1, "bm");
      b.emit("s_add_u32", {s_t, s_sq, g.tile * p.waves - 1});
      b.emit("s_lshr_b32", {s_t, s_t, log2i(g.tile * p.waves)});
      b.emit("s_sub_u32", {s_t, s_t, 1});
      b.emit("s_sub_u32", {s_rev, s_t, s_bm}); // blocks - 1 - workgroup id x
      s_bm = s_rev;
    }
    b.emit("s_lshl_b32", {s_t, s_h, 1});
    b.emit("s_mul_hi_u32", {s_hkv, s_t, s_magic}); // h / (Hq / Hkv)
    rebase(rs[0], s_h, s_qsb, s_qsh);
    rebase(rs[1], s_hkv, s_ksb, s_ksh);
    rebase(rs[2], s_hkv, s_vsb, s_vsh);
    rebase(rs[3], s_h, s_osb, s_osh);
    if (sig.lse)
      rebase(rs[4], s_h, s_lsb, s_lsh);

    // ---- lane geometry
    const Reg tid = b.workitem_ids();
    Reg v_i = b.alloc_v(1, "i"), v_h = b.alloc_v(1, "h"), v_t = b.alloc_v(1, "t"), v_t2 = b.alloc_v(1, "t2");
    Reg v_q = b.alloc_v(1, "q"), v_bperm = b.alloc_v(1, "bperm"), v_neginf = b.alloc_v(1, "-inf");
    b.emit("v_and_b32", {v_i, g.tile - 1, tid});
    b.emit("v_bfe_u32", {v_h, tid, log2i(g.tile), log2i(g.groups)});
    b.emit("v_lshrrev_b32", {v_t, 6, tid});
    b.emit("v_readfirstlane_b32", {s_wave, v_t});
    b.emit("v_and_b32", {v_t, 63, tid});
    b.emit("v_xor_b32", {v_t, 32, v_t});
    b.emit("v_lshlrev_b32", {v_bperm, 2, v_t}); // ds_bpermute address of lane ^ 32
    Reg v_bperm16;                              // and of lane ^ 16 (16x16 tiles: four lane groups)
    if (g.groups == 4) {
      v_bperm16 = b.alloc_v(1, "bperm16");
      b.emit("v_and_b32", {v_t, 63, tid});
      b.emit("v_xor_b32", {v_t, 16, v_t});
      b.emit("v_lshlrev_b32", {v_bperm16, 2, v_t});
    }
    // x = op(x, x of the other lane groups holding the same query)
    auto across_groups = [&](const char* op, Reg x) {
      b.emit("ds_bpermute_b32", {v_t, v_bperm, x});
      b.emit(op, {x, x, v_t});
      if (g.groups == 4) {
        b.emit("ds_bpermute_b32", {v_t, v_bperm16, x});
        b.emit(op, {x, x, v_t});
      }
    };
    b.v_mov(v_neginf, int64_t(0xff800000u));
    b.emit("s_mul_i32", {s_q0, s_bm, g.tile * p.waves});
    b.emit("s_lshl_b32", {s_t, s_wave, log2i(g.tile)});
    b.emit("s_add_u32", {s_q0, s_q0, s_t});
    b.emit("v_add_u32", {v_q, s_q0, v_i});

    // ---- Q fragments: lane (i, hg) holds dims [c * kdim + hg * e, + e) of query q for each chunk c
    Reg qf = b.alloc_v(uint8_t(g.kchunks * g.kregs), "qf");
    {
      Reg v_off = b.alloc_v(1, "qoff");
      b.emit("v_mul_lo_u32", {v_off, v_q, s_qss});
      b.emit("v_lshlrev_b32", {v_t, log2i(2 * g.e), v_h});
      b.emit("v_add_u32", {v_off, v_off, v_t});
      b.v_mov(v_t, int64_t(kOob));
      b.emit("v_cmp_gt_u32", {vcc(), s_sq, v_q});
      b.emit("v_cndmask_b32", {v_off, v_t, v_off, vcc()});
      for (int c = 0; c < g.kchunks; ++c)
        b.buffer_load(qf.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)), v_off, rs[0], 0, offen(c * g.kdim * 2));
      b.free(v_off);
    }

    // ---- key range: blocks [0, nkb) for the workgroup; blocks ending at or below wlim need no mask in this
    // wave
    const int bm = g.tile * p.waves;
    Reg v_limh = b.alloc_v(1, "limh");
    if (sig.causal) {
      b.emit("s_mul_i32", {s_t, s_bm, bm});
      b.emit("s_add_u32", {s_t, s_t, bm});
      b.emit("s_min_u32", {s_t, s_t, s_sq});
      b.emit("s_add_u32", {s_t, s_t, s_sk});
      b.emit("s_sub_u32", {s_t, s_t, s_sq}); // min(end of block, Sq) + Sk - Sq <= Sk
      b.emit("s_sub_u32", {s_t2, s_sk, s_sq});
      b.emit("s_add_u32", {s_t2, s_t2, 1});      // Sk - Sq + 1
      b.emit("s_add_u32", {s_wlim, s_q0, s_t2}); // the wave's first query's key count
      b.emit("s_min_u32", {s_wlim, s_wlim, s_sk});
      b.emit("v_add_u32", {v_limh, s_t2, v_q});
      b.emit("v_min_u32", {v_limh, s_sk, v_limh});
    } else {
      b.s_mov(s_t, s_sk);
      b.s_mov(s_wlim, s_sk);
      b.v_mov(v_limh, s_sk);
    }
    b.emit("s_add_u32", {s_nkb, s_t, g.bn - 1});
    b.emit("s_lshr_b32", {s_nkb, s_nkb, log2i(g.bn)});
    b.emit("v_lshlrev_b32", {v_t, 2, v_h});
    b.emit("v_sub_u32", {v_limh, v_limh, v_t}); // keys of register r are 4 hg + (tile n + acc_row(r))

    // ---- cooperative K/V load addresses (the resources move by block_n rows per block)
    Reg v_ksrd = b.alloc_v(1, "ksrd"), v_vsrd = b.alloc_v(1, "vsrd");
    // per column segment: row j = tid / cpr, chunk tid % cpr; K row-major in LDS (pitch kp), V transposed
    // (Vt[d0][j] at d0 * vp + 2 j)
    auto coop = [&](const std::vector<Geometry::Seg>& segs, Reg s_ss, bool is_k) {
      Coop c;
      for (const Geometry::Seg& sg : segs) {
        const std::string n = std::string(is_k ? "k" : "v") + std::to_string(sg.col0);
        CoopSeg cs{sg, b.alloc_v(1, n + "off"), b.alloc_v(1, n + "lds"), b.alloc_s(1, n + "step")};
        b.emit("v_lshrrev_b32", {v_t, log2i(sg.cpr), tid}); // key row j
        b.emit("v_and_b32", {v_t2, sg.cpr - 1, tid});       // 8-element column chunk
        b.emit("v_lshlrev_b32", {v_t2, 4, v_t2});           // its byte offset in a row
        if (sg.col0)
          b.emit("v_add_u32", {v_t2, 2 * sg.col0, v_t2});
        b.emit("v_mul_lo_u32", {cs.voff, v_t, s_ss});
        b.emit("v_add_u32", {cs.voff, cs.voff, v_t2});
        if (is_k) {
          b.emit("v_mul_u32_u24", {cs.vlds, g.kp, v_t});
          b.emit("v_add_u32", {cs.vlds, cs.vlds, v_t2});
        } else {
          b.emit("v_lshlrev_b32", {cs.vlds, 1, v_t}); // Vt[d0][j]: j * 2
          b.emit("v_lshrrev_b32", {v_t2, 1, v_t2});   // d0 = column bytes / 2
          b.emit("v_mul_u32_u24", {v_t2, g.vp, v_t2});
          b.emit("v_add_u32", {cs.vlds, cs.vlds, v_t2});
          b.emit("v_add_u32", {cs.vlds, g.ks_bytes, cs.vlds});
        }
        b.emit("s_mul_i32", {cs.s_step, s_ss, sg.rpp});
        c.push_back(cs);
      }
      return c;
    };
    const Coop kc = coop(g.kseg, s_kss, true), vc = coop(g.vseg, s_vss, false);
    b.emit("s_mul_i32", {s_kbstep, s_kss, g.bn});
    b.emit("s_mul_i32", {s_vbstep, s_vss, g.bn});
    // fragment reads: K row i (tile n adds tile rows), dims hg * e; Vt row i (tile t adds tile), keys 4 hg
    b.emit("v_mul_u32_u24", {v_ksrd, g.kp, v_i});
    b.emit("v_lshlrev_b32", {v_t, log2i(2 * g.e), v_h});
    b.emit("v_add_u32", {v_ksrd, v_ksrd, v_t});
    b.emit("v_mul_u32_u24", {v_vsrd, g.vp, v_i});
    b.emit("v_lshlrev_b32", {v_t, 3, v_h});
    b.emit("v_add_u32", {v_vsrd, v_vsrd, v_t});
    b.emit("v_add_u32", {v_vsrd, g.ks_bytes, v_vsrd});
    DmaStream dma_k, dma_v;
    if (g.dma_k)
      dma_k = dma_setup(g.dqk, tid, s_wave, s_kss, 0, v_t, v_t2);
    if (g.dma_v) { // V row-major: lane (i, hg) reads dim pair i of keys 4 hg + ...
      dma_v = dma_setup(g.dv, tid, s_wave, s_vss, g.ks_bytes, v_t, v_t2);
      b.emit("v_lshlrev_b32", {v_vsrd, 2, v_i});
      b.emit("v_lshlrev_b32", {v_t, log2i(8 * g.dv), v_h});
      b.emit("v_add_u32", {v_vsrd, v_vsrd, v_t});
      b.emit("v_add_u32", {v_vsrd, g.ks_bytes, v_vsrd});
    }

    // ---- state
    const int nacc = g.ot * g.regs;
    Reg acc = p.o_agpr ? b.alloc_a(uint8_t(nacc), "o") : b.alloc_v(uint8_t(nacc), "o");
    Reg sacc = b.alloc_v(uint8_t(g.regs * g.nt), "s");
    Reg pk = b.alloc_v(uint8_t(g.regs * g.nt / 2), "p");
    Reg kf = b.alloc_v(uint8_t(g.kchunks * g.kregs), "kf");
    Reg vf = b.alloc_v(uint8_t(g.pchunks * g.kregs), "vf");
    Reg vf_odd = g.dma_v ? b.alloc_v(uint8_t(g.pchunks * g.kregs), "vf_odd") : Reg{};
    Reg stage = g.stage_chunks ? b.alloc_v(uint8_t(4 * g.stage_chunks), "stage") : Reg{};
    Reg v_m = b.alloc_v(1, "m"), v_l = b.alloc_v(1, "l"), v_mx = b.alloc_v(1, "mx"),
        v_alpha = b.alloc_v(1, "alpha");
    Reg v_nm = b.alloc_v(1, "-m"), v_limrel = b.alloc_v(1, "limrel");
    for (int r = 0; r < nacc; ++r)
      if (p.o_agpr)
        b.emit("v_accvgpr_write_b32", {acc.sub(uint8_t(r)), 0});
      else
        b.v_mov(acc.sub(uint8_t(r)), 0);
    b.v_mov(v_m, v_neginf);
    b.v_mov(v_l, 0);
    Reg lx = v_l; // with truncated P, l sums the weights O used and lx the exact ones
    const bool have_lx = p.p_rtz && sig.lse;
    if (have_lx) {
      lx = b.alloc_v(1, "l_exact");
      b.v_mov(lx, 0);
    }
    b.s_mov(s_kb, 0);
    b.s_mov(s_j0, 0);
    b.s_mov(s_negj0, 0);

    Label loop = b.label("kv_loop"), nomask = b.label("no_mask"), done = b.label("kv_done");
    b.emit("s_cmp_eq_u32", {s_nkb, 0});
    b.s_cbranch("scc1", done);
    PingPong pp{b,      g,       p,       rs[1], rs[2], kc,     vc,  v_ksrd, v_vsrd, stage, v_t,
                v_t2,   s_kbstep, s_vbstep, s_kb, s_nkb, s_t, s_wave, {}};
    if (p.pingpong)
      pp.prologue();
    b.bind(loop);
    if (p.pingpong)
      pp.load_next(rs[1], kc); // K of block j + 1, written to LDS after the S^T MFMAs
    if (!p.pingpong) {
      b.s_barrier(); // every wave is done with the previous block's LDS
      // K: chunk u is key row j + u * rpp
      if (g.dma_k) {
        dma_load(g.dqk, dma_k, rs[1], v_t);
      } else { // the same loads and LDS writes as the ping-pong schedule's (PingPong)
        pp.load(rs[1], kc);
        pp.write_k();
      }
      if (g.dma_v) {
        dma_load(g.dv, dma_v, rs[2], v_t);
      } else {
        pp.load(rs[2], vc);
        pp.write_v(); // transposed, 16 bits at a time (the emulator has no ds_write_b16_d16_hi)
      }
      b.s_barrier(); // (lds_dma: insert_waits puts the vmcnt wait for the LDS-DMA loads before it)
    }

    // S^T = K Q^T, one 32x32 tile per 32 keys
    const std::string mf = mfma_name();
    if (p.mfma_prio)
      b.emit("s_setprio", {1});
    for (int n = 0; n < g.nt; ++n) {
      for (int c = 0; c < g.kchunks; ++c)
        b.ds_read(kf.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)), v_ksrd,
                  uint16_t(n * g.tile * g.kp + c * g.kdim * 2));
      Reg sn = sacc.sub(uint8_t(g.regs * n), uint8_t(g.regs));
      for (int c = 0; c < g.kchunks; ++c) {
        Reg kc = kf.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)),
            qc = qf.sub(uint8_t(c * g.kregs), uint8_t(g.kregs));
        if (c == 0)
          b.mfma(mf, sn, kc, qc, 0);
        else
          b.mfma(mf, sn, kc, qc, sn);
      }
    }
    if (p.mfma_prio)
      b.emit("s_setprio", {0});
    if (p.pingpong)
      pp.store_next_k();
    // mask keys at or past this lane's limit (ragged tail, causal), only where the block reaches it
    b.emit("s_add_u32", {s_t, s_j0, g.bn});
    b.emit("s_cmp_le_u32", {s_t, s_wlim});
    b.s_cbranch("scc1", nomask);
    b.emit("v_add_u32", {v_limrel, s_negj0, v_limh});
    for (int n = 0; n < g.nt; ++n)
      for (int r = 0; r < g.regs; ++r) {
        Reg x = sacc.sub(uint8_t(g.regs * n + r));
        b.emit("v_cmp_lt_i32", {vcc(), g.tile * n + acc_row(r), v_limrel});
        b.emit("v_cndmask_b32", {x, v_neginf, x, vcc()});
      }
    b.bind(nomask);
    // online softmax in log2 units of the scaled scores
    const int ns = g.regs * g.nt;
    b.emit("v_max_f32", {v_mx, sacc.sub(0), sacc.sub(1)});
    for (int r = 2; r < ns; r += 2)
      b.emit("v_max3_f32", {v_mx, v_mx, sacc.sub(uint8_t(r)), sacc.sub(uint8_t(r + 1))});
    across_groups("v_max_f32", v_mx);
    b.emit("v_mul_f32", {v_mx, s_c, v_mx});
    b.emit("v_max_f32", {v_mx, v_m, v_mx}); // m_new (finite: key 0 is visible to every query)
    b.emit("v_sub_f32", {v_t, v_m, v_mx});
    b.emit("v_exp_f32", {v_alpha, v_t}); // 2^(m_old - m_new), 0 on the first block
    b.emit("v_mov_b32", {v_m, v_mx});
    b.emit("v_xor_b32", {v_nm, int64_t(0x80000000u), v_mx});
    for (int r = 0; r < ns; ++r) {
      Reg x = sacc.sub(uint8_t(r));
      b.emit("v_fma_f32", {x, x, s_c, v_nm});
      b.emit("v_exp_f32", {x, x});
    }
    if (have_lx) { // the exact sum, for the LSE
      b.emit("v_mul_f32", {lx, lx, v_alpha});
      for (int r = 0; r < ns; ++r)
        b.emit("v_add_f32", {lx, lx, sacc.sub(uint8_t(r))});
    }
    if (p.p_rtz) // truncate first and sum the truncated weights: O stays a weighted mean (no scale bias)
      for (int r = 0; r < ns; ++r)
        b.emit("v_and_b32", {sacc.sub(uint8_t(r)), int64_t(0xffff0000u), sacc.sub(uint8_t(r))});
    b.emit("v_mul_f32", {v_l, v_l, v_alpha});
    for (int r = 0; r < ns; ++r)
      b.emit("v_add_f32", {v_l, v_l, sacc.sub(uint8_t(r))});
    if (p.o_agpr)
      scale_agprs(acc, nacc, v_alpha, pk, g.regs * g.nt / 2);
    else
      for (int r = 0; r < nacc; ++r)
        b.emit("v_mul_f32", {acc.sub(uint8_t(r)), v_alpha, acc.sub(uint8_t(r))});
    for (int w = 0; w < ns / 2; ++w)
      pack(pk.sub(uint8_t(w)), sacc.sub(uint8_t(2 * w)), sacc.sub(uint8_t(2 * w + 1)), p.p_rtz, v_t, v_t2,
           s_7fff, s_sel_hi, s_sel_lo);
    if (p.pingpong)
      pp.half(rs[2], vc); // the other group's half iteration; V of block j + 1 is loaded
    // O^T += V^T P^T
    if (p.mfma_prio)
      b.emit("s_setprio", {1});
    if (g.dma_v) {
      pv_paired(mf, acc, pk, vf, vf_odd, v_vsrd, v_t, s_sel_lo, s_sel_hi);
    } else {
      for (int t = 0; t < g.ot; ++t) {
        // chunk c's k slots are P registers [c e, c e + e) = S registers whose keys the quads give
        for (int c = 0; c < g.pchunks; ++c)
          for (int q = 0; q < g.e / 4; ++q) {
            const int f = c * g.e + 4 * q, key = (f / g.regs) * g.tile + acc_row(f % g.regs);
            b.ds_read(vf.sub(uint8_t(c * g.kregs + 2 * q), 2), v_vsrd, uint16_t(t * g.tile * g.vp + key * 2));
          }
        Reg ot = acc.sub(uint8_t(g.regs * t), uint8_t(g.regs));
        for (int c = 0; c < g.pchunks; ++c)
          b.mfma(mf, ot, vf.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)),
                 pk.sub(uint8_t(c * g.kregs), uint8_t(g.kregs)), ot);
      }
    }
    if (p.mfma_prio)
      b.emit("s_setprio", {0});
    if (p.pingpong)
      pp.end_iteration();
    // next block
    for (auto [r, step] : {std::pair{rs[1], s_kbstep}, std::pair{rs[2], s_vbstep}}) {
      b.emit("s_add_u32", {r.sub(0), r.sub(0), step});
      b.emit("s_addc_u32", {r.sub(1), r.sub(1), 0});
      b.emit("s_sub_u32", {r.sub(2), r.sub(2), step});
    }
    b.emit("s_add_u32", {s_j0, s_j0, g.bn});
    b.emit("s_sub_u32", {s_negj0, s_negj0, g.bn});
    b.emit("s_add_u32", {s_kb, s_kb, 1});
    b.emit("s_cmp_lt_u32", {s_kb, s_nkb});
    b.s_cbranch("scc1", loop);
    if (p.pingpong)
      pp.stagger(false); // the first group's extra barrier: every wave executes as many
    b.bind(done);

    // ---- epilogue: O / l, stored for the real queries; LSE from lanes 0..31
    across_groups("v_add_f32", v_l);
    if (have_lx) {
      across_groups("v_add_f32", lx);
    }
    b.emit("v_rcp_f32", {v_alpha, v_l});
    if (!p.o_agpr)
      for (int r = 0; r < nacc; ++r)
        b.emit("v_mul_f32", {acc.sub(uint8_t(r)), v_alpha, acc.sub(uint8_t(r))});
    Reg v_ooff = v_limrel, out = b.alloc_v(g.dma_v ? 4 : 2, "out");
    Reg otmp = p.o_agpr ? b.alloc_v(4, "o_read") : Reg{};
    auto ov = [&](int r) { // O register r times 1/l (AGPRs: read into a VGPR first)
      if (!p.o_agpr)
        return acc.sub(uint8_t(r));
      Reg t = otmp.sub(uint8_t(r % 4));
      b.emit("v_accvgpr_read_b32", {t, acc.sub(uint8_t(r))});
      b.emit("v_mul_f32", {t, v_alpha, t});
      return t;
    };
    b.emit("v_mul_lo_u32", {v_ooff, v_q, s_oss});
    b.emit("v_lshlrev_b32", {v_t, g.dma_v ? 4 : 3, v_h}); // lds_dma v: paired tiles, 8 dims per lane group
    b.emit("v_add_u32", {v_ooff, v_ooff, v_t});
    b.emit("v_cmp_gt_u32", {vcc(), s_sq, v_q});
    b.s_and_saveexec_b64(s_save, vcc());
    if (g.dma_v) { // O in VGPRs: lds_dma needs o_regs=vgpr (a space rule)
      store_o_paired(acc, out, v_ooff, rs[3], v_t, v_t2, s_7fff, s_sel_hi, s_sel_lo);
    } else {
      for (int t = 0; t < g.ot; ++t)
        for (int q4 = 0; q4 < g.regs / 4; ++q4) {
          const int r0 = g.regs * t + 4 * q4;
          const Reg o0 = ov(r0), o1 = ov(r0 + 1), o2 = ov(r0 + 2), o3 = ov(r0 + 3);
          pack(out.sub(0), o0, o1, false, v_t, v_t2, s_7fff, s_sel_hi, s_sel_lo);
          pack(out.sub(1), o2, o3, false, v_t, v_t2, s_7fff, s_sel_hi, s_sel_lo);
          b.buffer_store(out, v_ooff, rs[3], 0, offen(2 * (t * g.tile + acc_row(4 * q4))));
        }
    }
    if (sig.lse) {
      b.emit("v_cmp_eq_u32", {vcc(), 0, v_h});
      b.s_and_saveexec_b64(s_save, vcc());
      b.emit("v_log_f32", {v_t, lx});
      b.emit("v_add_f32", {v_t, v_m, v_t});
      b.emit("v_mul_f32", {v_t, int64_t(0x3f317218), v_t}); // ln 2
      b.emit("v_lshlrev_b32", {v_t2, 2, v_q});
      b.buffer_store(v_t, v_t2, rs[4], 0, offen());
    }
    b.s_endpgm();
    Kernel k = b.finish();
    insert_waits(k);
    return k;
  }
};

} // namespace

std::vector<int> cdna_segment_chunks(int head_dim) {
  std::vector<int> chunks;
  for (int cpr = 32; cpr >= 1; cpr /= 2)
    if ((head_dim / 8) & cpr)
      chunks.push_back(cpr);
  return chunks;
}

int cdna_vgpr_estimate(const AttnSig& sig, const CdnaParams& p) {
  const Geometry g(sig, p);
  // lds_dma's offsets and odd-tile V fragments; column segments past one per tensor (192: K's 64-wide part)
  const int dma = g.dma_k + g.dma_v + (g.dma_v ? g.pchunks * g.kregs + 2 : 0);
  const int segs = 2 * int(g.kseg.size() + g.vseg.size() - 2);
  return 1 + kFixedVgprs + (g.groups == 4) + 2 * g.kchunks * g.kregs + (p.o_agpr ? 4 : g.ot * g.regs) +
         g.regs * g.nt * 3 / 2 + g.pchunks * g.kregs + 4 * g.stage_chunks + 2 + dma + segs;
}

int cdna_agpr_estimate(const AttnSig& sig, const CdnaParams& p) {
  const Geometry g(sig, p);
  return p.o_agpr ? g.ot * g.regs : 0;
}

int cdna_lds_bytes(const AttnSig& sig, const CdnaParams& p) {
  return Geometry(sig, p).lds;
}

cdna::Kernel emit_cdna_kernel(const std::string& isa, const AttnSig& sig, const CdnaParams& p) {
  if ((p.dma_k || p.dma_v) && (p.pingpong || p.o_agpr)) // the space refuses it; a direct caller is told too
    throw InputError("attention: lds_dma needs pingpong=0 and o_regs=vgpr");
  Emitter e(isa, sig, p);
  return e.run();
}

} // namespace isatune::gen::attention

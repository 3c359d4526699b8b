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
#include <bit>

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
  int d, bn, kdim, tile, groups, regs, e, nt, kchunks, kregs, ot, pchunks, threads, nch, rpp, kp, vp,
      ks_bytes, lds;
  Geometry(const AttnSig& sig, const CdnaParams& p) {
    d = sig.head_dim, bn = p.block_n, kdim = p.mfma_k, tile = p.tile;
    groups = 64 / tile, regs = tile * tile / 64, e = kdim / groups;
    nt = bn / tile, kchunks = d / kdim, kregs = e / 2, ot = d / tile, pchunks = bn / kdim;
    threads = 64 * p.waves;
    nch = bn * d / 8 / threads;        // 16-byte chunks of K (and of V) per thread and block
    rpp = threads / (d / 8);           // key rows one pass of the workgroup loads
    kp = d * 2 + 16, vp = bn * 2 + 16; // LDS row pitches (16-byte aligned, off the bank period)
    ks_bytes = bn * kp;
    lds = ks_bytes + d * vp;
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
    Reg s_kstep = b.alloc_s(1), s_vstep = b.alloc_s(1), s_kbstep = b.alloc_s(1), s_vbstep = b.alloc_s(1);
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
    const int cpr = g.d / 8;
    Reg v_koff = b.alloc_v(1, "koff"), v_voff = b.alloc_v(1, "voff"), v_klds = b.alloc_v(1, "klds");
    Reg v_vlds = b.alloc_v(1, "vlds"), v_ksrd = b.alloc_v(1, "ksrd"), v_vsrd = b.alloc_v(1, "vsrd");
    b.emit("v_lshrrev_b32", {v_t, log2i(cpr), tid}); // key row j
    b.emit("v_and_b32", {v_t2, cpr - 1, tid});       // 8-element column chunk
    b.emit("v_lshlrev_b32", {v_t2, 4, v_t2});        // its byte offset in a row
    b.emit("v_mul_lo_u32", {v_koff, v_t, s_kss});
    b.emit("v_add_u32", {v_koff, v_koff, v_t2});
    b.emit("v_mul_lo_u32", {v_voff, v_t, s_vss});
    b.emit("v_add_u32", {v_voff, v_voff, v_t2});
    b.emit("v_mul_u32_u24", {v_klds, g.kp, v_t});
    b.emit("v_add_u32", {v_klds, v_klds, v_t2});
    b.emit("v_lshlrev_b32", {v_vlds, 1, v_t}); // Vt[d0][j]: j * 2
    b.emit("v_lshrrev_b32", {v_t2, 1, v_t2});  // d0 = column bytes / 2
    b.emit("v_mul_u32_u24", {v_t2, g.vp, v_t2});
    b.emit("v_add_u32", {v_vlds, v_vlds, v_t2});
    b.emit("v_add_u32", {v_vlds, g.ks_bytes, v_vlds});
    b.emit("s_mul_i32", {s_kstep, s_kss, g.rpp});
    b.emit("s_mul_i32", {s_vstep, s_vss, g.rpp});
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

    // ---- state
    const int nacc = g.ot * g.regs;
    Reg acc = b.alloc_v(uint8_t(nacc), "o");
    Reg sacc = b.alloc_v(uint8_t(g.regs * g.nt), "s");
    Reg pk = b.alloc_v(uint8_t(g.regs * g.nt / 2), "p");
    Reg kf = b.alloc_v(uint8_t(g.kchunks * g.kregs), "kf");
    Reg vf = b.alloc_v(uint8_t(g.pchunks * g.kregs), "vf");
    Reg stage = b.alloc_v(uint8_t(4 * g.nch), "stage");
    Reg v_m = b.alloc_v(1, "m"), v_l = b.alloc_v(1, "l"), v_mx = b.alloc_v(1, "mx"),
        v_alpha = b.alloc_v(1, "alpha");
    Reg v_nm = b.alloc_v(1, "-m"), v_limrel = b.alloc_v(1, "limrel");
    for (int r = 0; r < nacc; ++r)
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
    b.bind(loop);
    b.s_barrier(); // every wave is done with the previous block's LDS
    // K: chunk u is key row j + u * rpp
    b.emit("v_mov_b32", {v_t, v_koff});
    for (int u = 0; u < g.nch; ++u) {
      b.buffer_load(stage.sub(uint8_t(4 * u), 4), v_t, rs[1], 0, offen());
      if (u + 1 < g.nch)
        b.emit("v_add_u32", {v_t, s_kstep, v_t});
    }
    for (int u = 0; u < g.nch; ++u)
      b.ds_write(v_klds, stage.sub(uint8_t(4 * u), 4), uint16_t(u * g.rpp * g.kp));
    b.emit("v_mov_b32", {v_t, v_voff});
    for (int u = 0; u < g.nch; ++u) {
      b.buffer_load(stage.sub(uint8_t(4 * u), 4), v_t, rs[2], 0, offen());
      if (u + 1 < g.nch)
        b.emit("v_add_u32", {v_t, s_vstep, v_t});
    }
    for (int u = 0; u < g.nch; ++u)
      for (int e = 0; e < 8; ++e) {
        Reg data = stage.sub(uint8_t(4 * u + e / 2));
        if (e % 2) {
          b.emit("v_lshrrev_b32",
                 {v_t2, 16, data}); // the high half (the emulator has no ds_write_b16_d16_hi)
          data = v_t2;
        }
        Modifiers m;
        const int off = u * g.rpp * 2 + e * g.vp;
        if (off)
          m.offset = off;
        b.emit("ds_write_b16", {v_vlds, data}, m);
      }
    b.s_barrier();

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
    for (int r = 0; r < nacc; ++r)
      b.emit("v_mul_f32", {acc.sub(uint8_t(r)), v_alpha, acc.sub(uint8_t(r))});
    for (int w = 0; w < ns / 2; ++w)
      pack(pk.sub(uint8_t(w)), sacc.sub(uint8_t(2 * w)), sacc.sub(uint8_t(2 * w + 1)), p.p_rtz, v_t, v_t2,
           s_7fff, s_sel_hi, s_sel_lo);
    // O^T += V^T P^T
    if (p.mfma_prio)
      b.emit("s_setprio", {1});
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
    if (p.mfma_prio)
      b.emit("s_setprio", {0});
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
    b.bind(done);

    // ---- epilogue: O / l, stored for the real queries; LSE from lanes 0..31
    across_groups("v_add_f32", v_l);
    if (have_lx) {
      across_groups("v_add_f32", lx);
    }
    b.emit("v_rcp_f32", {v_alpha, v_l});
    for (int r = 0; r < nacc; ++r)
      b.emit("v_mul_f32", {acc.sub(uint8_t(r)), v_alpha, acc.sub(uint8_t(r))});
    Reg v_ooff = v_limrel, out = b.alloc_v(2, "out");
    b.emit("v_mul_lo_u32", {v_ooff, v_q, s_oss});
    b.emit("v_lshlrev_b32", {v_t, 3, v_h});
    b.emit("v_add_u32", {v_ooff, v_ooff, v_t});
    b.emit("v_cmp_gt_u32", {vcc(), s_sq, v_q});
    b.s_and_saveexec_b64(s_save, vcc());
    for (int t = 0; t < g.ot; ++t)
      for (int q4 = 0; q4 < g.regs / 4; ++q4) {
        const int r0 = g.regs * t + 4 * q4;
        pack(out.sub(0), acc.sub(uint8_t(r0)), acc.sub(uint8_t(r0 + 1)), false, v_t, v_t2, s_7fff, s_sel_hi,
             s_sel_lo);
        pack(out.sub(1), acc.sub(uint8_t(r0 + 2)), acc.sub(uint8_t(r0 + 3)), false, v_t, v_t2, s_7fff,
             s_sel_hi, s_sel_lo);
        b.buffer_store(out, v_ooff, rs[3], 0, offen(2 * (t * g.tile + acc_row(4 * q4))));
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

int cdna_vgpr_estimate(const AttnSig& sig, const CdnaParams& p) {
  const Geometry g(sig, p);
  return 1 + kFixedVgprs + (g.groups == 4) + 2 * g.kchunks * g.kregs + g.ot * g.regs + g.regs * g.nt * 3 / 2 +
         g.pchunks * g.kregs + 4 * g.nch + 2;
}

int cdna_lds_bytes(const AttnSig& sig, const CdnaParams& p) {
  return Geometry(sig, p).lds;
}

cdna::Kernel emit_cdna_kernel(const std::string& isa, const AttnSig& sig, const CdnaParams& p) {
  Emitter e(isa, sig, p);
  return e.run();
}

} // namespace isatune::gen::attention

// The sm_80 flash-attention forward kernel (mma.sync.m16n8k16, the portable path; docs/attention.md).
//
// CTA = (query block, query head, batch), one warp per 16 query rows. Lane (g = lane / 4, t = lane % 4) holds
// rows g and g + 8 of its warp's tile. Q's A fragments stay in registers; each key block's K fragments are
// 32-bit loads straight from global memory (B = K^T: two consecutive dims of one key), S = Q K^T lands as
// rows g/g+8 x keys 2t, 2t+1 of each n8 tile, which is exactly the A fragment layout of P for P V (FA2's
// register reuse), so the online softmax needs only a max/sum over the 4 lanes of a quad (shfl.bfly 1, 2).
// V's B fragments (two consecutive keys of one dim) are gathered as 16-bit loads. Rows and keys past the ends
// are clamped to the last one for the loads (masked keys get -inf, so their weight is 0) and stores are
// predicated. This first version stages nothing in shared memory (no cp.async, no ldmatrix): it is the
// correct portable path, not a tuned one.
#include <cmath>

#include "attention_ptx_backend.h"
#include "isatune/error.h"
#include "isatune/ptx/module.h"

namespace isatune::gen::attention {

namespace {

using ptx::Address;
using ptx::Cmp;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

const std::vector<int> kWarps{1, 2, 4, 8}, kBlockN{16, 32, 64};

struct Sm80Params {
  int warps = 4, block_n = 32;
};

Sm80Params sm80_params(const Params& params) {
  return {int(param_int(params, "warps")), int(param_int(params, "block_n"))};
}

std::string sm80_kernel_name(const AttnSig& sig, const Sm80Params& p) {
  return "attn_fwd_sm80_" + std::string(to_string(sig.dtype)) + "_d" + head_dim_name(sig) +
         (sig.causal ? "_causal" : "") + (sig.lse ? "_lse" : "") + "_w" + std::to_string(p.warps) + "_n" +
         std::to_string(p.block_n);
}

// Registers the kernel keeps live per thread (Q fragments, O accumulators, S/P, statistics, addresses).
int sm80_register_estimate(const AttnSig& sig, const Sm80Params& p) {
  return sig.head_dim / 4 + sig.head_dim_v / 2 + p.block_n / 2 + p.block_n / 4 + 48;
}

// ptxas 13.0 keeps all of a block's V gathers in flight: on sm_80 head_dim 128 with 64 keys took 255
// registers and spilled 24-28 bytes (128 x 32 and 64 x 64 fit in 255 and 240); on sm_90 128 x 32 already
// spills 8 bytes.
int sm80_block_limit(const std::string& isa) {
  return isa == "sm_80" ? 4096 : 2048;
}

// Head dims 192 and 256 (ptxas 13.0, warps=4, bf16 causal): 192x128 at block_n 16 takes 232 registers on
// sm_80 and 222 on sm_90 without spills, at 32 both spill 4 bytes (255 registers), at 64 44-48 bytes; 256
// spills at every block_n (16: 8 bytes on sm_80, 16 on sm_90; Q's fragments 64 and O 128 registers).
std::string sm80_invalid(const std::string& isa, const AttnSig& sig, const Sm80Params& p) {
  if (sig.head_dim == 256)
    return "head_dim=256 does not fit the registers (Q fragments 64 + O 128 per thread): ptxas 13 spills "
           "8-16 bytes even at block_n 16";
  if (sig.head_dim == 192 && p.block_n > 16)
    return "head_dim=" + head_dim_name(sig) + " needs block_n 16 (ptxas 13 spills 4 bytes at 32, 44-48 at 64)";
  if (sm80_register_estimate(sig, p) > 232)
    return "estimated registers per thread above 232";
  if (sig.head_dim <= 128 && p.block_n * sig.head_dim > sm80_block_limit(isa))
    return "block_n * head_dim above " + std::to_string(sm80_block_limit(isa)) + " on " + isa +
           " (ptxas spills)";
  return {};
}

class Emitter {
public:
  Emitter(ptx::Kernel& k, const AttnSig& sig, const Sm80Params& p) : k_(k), s_(sig), p_(p) {}
  void run();

private:
  Reg r32() { return k_.reg(RegClass::b32); }
  Reg r64() { return k_.reg(RegClass::b64); }
  Reg rf() { return k_.reg(RegClass::f32); }
  Reg rp() { return k_.reg(RegClass::pred); }
  // base + row * stride (bytes, 64-bit)
  Reg row_address(Reg base, Reg row, Reg stride) {
    Reg off = r64(), a = r64();
    k_.mul_wide(Type::u32, off, row, stride);
    k_.add(Type::u64, a, base, off);
    return a;
  }
  // a pointer moved by b * sb + h * sh bytes
  Reg head_base(Reg ptr, Reg b, Reg sb, Reg h, Reg sh) {
    Reg o1 = r64(), o2 = r64(), a = r64();
    k_.mul_wide(Type::u32, o1, b, sb);
    k_.mul_wide(Type::u32, o2, h, sh);
    k_.add(Type::u64, a, ptr, o1);
    k_.add(Type::u64, a, a, o2);
    return a;
  }
  void pack2(Reg d, Reg lo, Reg hi) {
    k_.cvt_pack(s_.dtype == DType::bf16 ? Type::bf16x2 : Type::f16x2, d, hi, lo);
  }
  void quad_reduce(bool max, Reg x) {
    for (int lanes : {1, 2}) {
      Reg o = rf();
      k_.shfl_sync(ptx::ShflMode::bfly, o, x, lanes, 0x1f);
      k_.binary(max ? "max" : "add", Type::f32, x, x, o);
    }
  }

  ptx::Kernel& k_;
  const AttnSig& s_;
  const Sm80Params& p_;
};

void Emitter::run() {
  const int d = s_.head_dim, dv = s_.head_dim_v, bn = p_.block_n, threads = 32 * p_.warps;
  std::vector<ptx::Param> ptrs;
  for (const char* n : {"q", "k", "v", "o", "lse"})
    ptrs.push_back(k_.param(n, Type::u64));
  const char* names[] = {"sq",   "sk",     "group_magic", "q_sb",   "q_ss",   "q_sh",  "k_sb", "k_ss",
                         "k_sh", "v_sb",   "v_ss",        "v_sh",   "o_sb",   "o_ss",  "o_sh", "l_sb",
                         "l_sh", "nrec_q", "nrec_k",      "nrec_v", "nrec_o", "nrec_l"};
  std::vector<ptx::Param> ints;
  for (const char* n : names)
    ints.push_back(k_.param(n, Type::u32));
  auto p_scale = k_.param("scale_log2", Type::f32);
  k_.reqntid(uint32_t(threads));
  k_.minnctapersm(1);

  Reg ptr[5];
  for (int i = 0; i < (s_.lse ? 5 : 4); ++i) {
    ptr[i] = r64();
    k_.ld_param(Type::u64, ptr[i], ptrs[size_t(i)]);
    k_.cvta_to_global(ptr[i], ptr[i]);
  }
  Reg a[kNumU32];
  for (int i = 0; i < kNumU32; ++i) {
    a[i] = r32();
    k_.ld_param(Type::u32, a[i], ints[size_t(i)]);
  }
  Reg c = rf();
  k_.ld_param(Type::f32, c, p_scale);
  Reg sq = a[kSq], sk = a[kSk];

  // ---- geometry
  Reg tid = r32(), lane = r32(), warp = r32(), g = r32(), t = r32(), bm = r32(), h = r32(), b = r32(),
      hkv = r32();
  k_.mov_sreg(tid, ptx::SpecialReg::tid_x);
  k_.mov_sreg(bm, ptx::SpecialReg::ctaid_x);
  k_.mov_sreg(h, ptx::SpecialReg::ctaid_y);
  k_.mov_sreg(b, ptx::SpecialReg::ctaid_z);
  if (s_.causal) { // longest first: the last query blocks see the most keys, so they are dispatched first
    Reg nb = r32();
    k_.add(Type::u32, nb, sq, 16 * p_.warps - 1);
    k_.binary("shr", Type::u32, nb, nb, 4 + (p_.warps == 1 ? 0 : p_.warps == 2 ? 1 : p_.warps == 4 ? 2 : 3));
    k_.sub(Type::u32, nb, nb, 1);
    k_.sub(Type::u32, bm, nb, bm);
  }
  k_.binary("and", Type::b32, lane, tid, 31);
  k_.binary("shr", Type::u32, warp, tid, 5);
  k_.binary("shr", Type::u32, g, lane, 2);
  k_.binary("and", Type::b32, t, lane, 3);
  Reg h2 = r32();
  k_.binary("shl", Type::b32, h2, h, 1);
  k_.binary("mul.hi", Type::u32, hkv, h2, a[kGroupMagic]); // h / (Hq / Hkv)
  Reg qb = head_base(ptr[0], b, a[kQsb], h, a[kQsh]);
  Reg kb = head_base(ptr[1], b, a[kKsb], hkv, a[kKsh]);
  Reg vb = head_base(ptr[2], b, a[kVsb], hkv, a[kVsh]);
  Reg ob = head_base(ptr[3], b, a[kOsb], h, a[kOsh]);
  Reg q0 = r32(), row[2], row_c[2], sqm1 = r32(), skm1 = r32();
  k_.mul_lo(Type::u32, q0, bm, 16 * p_.warps);
  k_.mad_lo(Type::u32, q0, warp, 16, q0);
  k_.sub(Type::u32, sqm1, sq, 1);
  k_.sub(Type::u32, skm1, sk, 1);
  Reg lim[2]; // keys visible to each row
  Reg skmsq1 = r32();
  k_.sub(Type::u32, skmsq1, sk, sq);
  k_.add(Type::u32, skmsq1, skmsq1, 1);
  for (int i = 0; i < 2; ++i) {
    row[i] = r32(), row_c[i] = r32(), lim[i] = r32();
    k_.add(Type::u32, row[i], q0, g);
    if (i)
      k_.add(Type::u32, row[i], row[i], 8);
    k_.binary("min", Type::u32, row_c[i], row[i], sqm1);
    if (s_.causal) {
      k_.add(Type::u32, lim[i], row[i], skmsq1);
      k_.binary("min", Type::u32, lim[i], lim[i], sk);
    } else {
      k_.mov(Type::u32, lim[i], sk);
    }
  }

  // ---- Q fragments: a0 (row g, dims 16kc + 2t), a1 (row g + 8), a2 (row g, + 8), a3 (row g + 8, + 8)
  const int kcs = d / 16;
  std::vector<std::vector<Reg>> qf(static_cast<size_t>(kcs));
  Reg qrow[2] = {row_address(qb, row_c[0], a[kQss]), row_address(qb, row_c[1], a[kQss])};
  Reg t4 = r32(), t4w = r64();
  k_.binary("shl", Type::b32, t4, t, 2);
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, t4w, t4);
  for (int i = 0; i < 2; ++i)
    k_.add(Type::u64, qrow[i], qrow[i], t4w);
  for (int kc = 0; kc < kcs; ++kc) {
    for (int r = 0; r < 4; ++r)
      qf[size_t(kc)].push_back(r32());
    for (int r = 0; r < 4; ++r)
      k_.ld(ptx::Space::global, Type::b32, {qf[size_t(kc)][size_t(r)]},
            Address(qrow[r % 2], int64_t(kc) * 32 + (r / 2) * 16));
  }

  // ---- key blocks of the CTA: causal stops at min(end of block, Sq) + Sk - Sq
  Reg nkb = r32();
  if (s_.causal) {
    Reg e = r32();
    k_.mul_lo(Type::u32, e, bm, 16 * p_.warps);
    k_.add(Type::u32, e, e, 16 * p_.warps);
    k_.binary("min", Type::u32, e, e, sq);
    k_.add(Type::u32, e, e, sk);
    k_.sub(Type::u32, nkb, e, sq);
  } else {
    k_.mov(Type::u32, nkb, sk);
  }
  k_.add(Type::u32, nkb, nkb, bn - 1);
  k_.binary("shr", Type::u32, nkb, nkb, bn == 16 ? 4 : bn == 32 ? 5 : 6);

  // ---- state
  const int nt = bn / 8, od = dv / 8;
  std::vector<std::vector<Reg>> oacc(static_cast<size_t>(od)), sacc(static_cast<size_t>(nt));
  for (auto& o : oacc)
    for (int r = 0; r < 4; ++r) {
      o.push_back(rf());
      k_.mov(Type::f32, o.back(), Operand::f32(0.0f));
    }
  for (auto& s : sacc)
    for (int r = 0; r < 4; ++r)
      s.push_back(rf());
  Reg m[2], l[2];
  for (int i = 0; i < 2; ++i) {
    m[i] = rf(), l[i] = rf();
    k_.mov(Type::f32, m[i], Operand::f32(-INFINITY));
    k_.mov(Type::f32, l[i], Operand::f32(0.0f));
  }
  Reg j0 = r32(), it = r32();
  k_.mov(Type::u32, j0, 0);
  k_.mov(Type::u32, it, 0);
  const ptx::MmaType mt = s_.dtype == DType::bf16 ? ptx::MmaType::bf16 : ptx::MmaType::f16;
  auto loop = k_.new_label("kv_loop"), done = k_.new_label("kv_done");
  Reg pnone = rp();
  k_.setp(Cmp::eq, Type::u32, pnone, nkb, 0);
  k_.bra(done, true).pred(pnone);
  k_.place(loop);
  // S = Q K^T: B fragment of n8 tile n = key j0 + 8n + g, dims 16kc + 2t (+ 8)
  for (int n = 0; n < nt; ++n) {
    Reg key = r32();
    k_.add(Type::u32, key, j0, 8 * n);
    k_.add(Type::u32, key, key, g);
    k_.binary("min", Type::u32, key, key, skm1);
    Reg krow = row_address(kb, key, a[kKss]);
    k_.add(Type::u64, krow, krow, t4w);
    for (int r = 0; r < 4; ++r)
      k_.mov(Type::f32, sacc[size_t(n)][size_t(r)], Operand::f32(0.0f));
    for (int kc = 0; kc < kcs; ++kc) {
      Reg b0 = r32(), b1 = r32();
      k_.ld(ptx::Space::global, Type::b32, {b0}, Address(krow, int64_t(kc) * 32));
      k_.ld(ptx::Space::global, Type::b32, {b1}, Address(krow, int64_t(kc) * 32 + 16));
      k_.mma_m16n8k16(mt, sacc[size_t(n)], qf[size_t(kc)], {b0, b1}, sacc[size_t(n)]);
    }
  }
  // mask keys at or past each row's limit: element (n, r) is key j0 + 8n + 2t + r % 2 of row r / 2
  Reg kt = r32();
  k_.binary("shl", Type::b32, kt, t, 1);
  k_.add(Type::u32, kt, kt, j0);
  for (int n = 0; n < nt; ++n)
    for (int r = 0; r < 4; ++r) {
      Reg key = r32(), pm = rp();
      k_.add(Type::u32, key, kt, 8 * n + r % 2);
      k_.setp(Cmp::ge, Type::u32, pm, key, lim[r / 2]);
      k_.selp(Type::f32, sacc[size_t(n)][size_t(r)], Operand::f32(-INFINITY), sacc[size_t(n)][size_t(r)], pm);
    }
  // online softmax, per row (the quad's 4 lanes share it)
  Reg alpha[2], nm[2];
  for (int i = 0; i < 2; ++i) {
    Reg mx = rf();
    k_.mov(Type::f32, mx, sacc[0][size_t(2 * i)]);
    for (int n = 0; n < nt; ++n)
      for (int r = 0; r < 2; ++r)
        if (n || r)
          k_.binary("max", Type::f32, mx, mx, sacc[size_t(n)][size_t(2 * i + r)]);
    quad_reduce(true, mx);
    k_.binary("mul", Type::f32, mx, mx, c);
    k_.binary("max", Type::f32, mx, mx, m[i]); // finite: key 0 is visible to every row
    alpha[i] = rf(), nm[i] = rf();
    k_.sub(Type::f32, alpha[i], m[i], mx);
    k_.unary("ex2.approx.ftz", Type::f32, alpha[i], alpha[i]);
    k_.mov(Type::f32, m[i], mx);
    k_.unary("neg", Type::f32, nm[i], mx);
    k_.binary("mul", Type::f32, l[i], l[i], alpha[i]);
  }
  for (int n = 0; n < nt; ++n)
    for (int r = 0; r < 4; ++r) {
      Reg x = sacc[size_t(n)][size_t(r)];
      k_.fma_rn(Type::f32, x, x, c, nm[r / 2]);
      k_.unary("ex2.approx.ftz", Type::f32, x, x);
      k_.add(Type::f32, l[r / 2], l[r / 2], x);
    }
  for (auto& o : oacc)
    for (int r = 0; r < 4; ++r)
      k_.binary("mul", Type::f32, o[size_t(r)], o[size_t(r)], alpha[r / 2]);
  // O += P V per 16 keys: A = P from tiles 2kk, 2kk+1; B = V[keys 16kk + 2t (+1), (+8)][dim 8nd + g]
  Reg vt = r32();
  k_.binary("shl", Type::b32, vt, t, 1);
  k_.add(Type::u32, vt, vt, j0);
  Reg gw = r32(), g2 = r64();
  k_.binary("shl", Type::b32, gw, g, 1);
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, g2, gw);
  for (int kk = 0; kk < bn / 16; ++kk) {
    std::vector<Reg> pa;
    for (int r = 0; r < 4; ++r) {
      const auto& src = sacc[size_t(2 * kk + r / 2)];
      Reg x = r32();
      pack2(x, src[size_t(2 * (r % 2))], src[size_t(2 * (r % 2) + 1)]);
      pa.push_back(x);
    }
    Reg vrow[4];
    for (int e = 0; e < 4; ++e) { // keys 16kk + 2t + {0, 1, 8, 9}
      Reg key = r32();
      k_.add(Type::u32, key, vt, 16 * kk + (e / 2) * 8 + e % 2);
      k_.binary("min", Type::u32, key, key, skm1);
      vrow[e] = row_address(vb, key, a[kVss]);
      k_.add(Type::u64, vrow[e], vrow[e], g2);
    }
    for (int nd = 0; nd < od; ++nd) {
      Reg hv[4];
      for (int e = 0; e < 4; ++e) {
        hv[e] = k_.reg(RegClass::b16);
        k_.ld(ptx::Space::global, Type::b16, {hv[e]}, Address(vrow[e], int64_t(nd) * 16));
      }
      Reg b0 = r32(), b1 = r32();
      k_.pack(Type::b32, b0, {hv[0], hv[1]});
      k_.pack(Type::b32, b1, {hv[2], hv[3]});
      k_.mma_m16n8k16(mt, oacc[size_t(nd)], pa, {b0, b1}, oacc[size_t(nd)]);
    }
  }
  k_.add(Type::u32, j0, j0, bn);
  k_.add(Type::u32, it, it, 1);
  Reg pmore = rp();
  k_.setp(Cmp::lt, Type::u32, pmore, it, nkb);
  k_.bra(loop, true).pred(pmore);
  k_.place(done);

  // ---- epilogue: O / l for the real rows; LSE = ln 2 * (m + log2 l) from lane t == 0
  Reg pt0 = rp();
  k_.setp(Cmp::eq, Type::u32, pt0, t, 0);
  for (int i = 0; i < 2; ++i) {
    quad_reduce(false, l[i]);
    Reg inv = rf(), pin = rp();
    k_.unary("rcp.rn", Type::f32, inv, l[i]);
    k_.setp(Cmp::lt, Type::u32, pin, row[i], sq);
    Reg orow = row_address(ob, row[i], a[kOss]);
    k_.add(Type::u64, orow, orow, t4w);
    for (int nd = 0; nd < od; ++nd) {
      Reg x0 = rf(), x1 = rf(), pk = r32();
      k_.binary("mul", Type::f32, x0, oacc[size_t(nd)][size_t(2 * i)], inv);
      k_.binary("mul", Type::f32, x1, oacc[size_t(nd)][size_t(2 * i + 1)], inv);
      pack2(pk, x0, x1);
      k_.st(ptx::Space::global, Type::b32, Address(orow, int64_t(nd) * 16), {pk}).pred(pin);
    }
    if (s_.lse) {
      Reg lse = rf(), pl = rp(), idx = r32(), lrow = r64(), off = r64();
      k_.unary("lg2.approx.ftz", Type::f32, lse, l[i]);
      k_.add(Type::f32, lse, lse, m[i]);
      k_.binary("mul", Type::f32, lse, lse, Operand::f32(0.6931471805599453f));
      k_.binary("and", Type::pred, pl, pin, pt0);
      k_.mul_lo(Type::u32, idx, b, a[kLsb]);
      k_.mad_lo(Type::u32, idx, h, a[kLsh], idx);
      k_.mad_lo(Type::u32, idx, row_c[i], 4, idx);
      k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, off, idx);
      k_.add(Type::u64, lrow, ptr[4], off);
      k_.st(ptx::Space::global, Type::f32, Address(lrow), {lse}).pred(pl);
    }
  }
  k_.ret();
}

class Sm80Backend : public AttentionPtxBackend {
public:
  std::vector<std::string> targets() const override { return {"sm_80", "sm_90"}; } // sm_90: the portable path

  Space space(const std::string& isa, const AttnSig& sig) const override {
    std::vector<Value> w, n;
    for (int x : kWarps)
      w.push_back(Value::num(x));
    for (int x : kBlockN)
      n.push_back(Value::num(x));
    Constraint ok = [isa, sig](const Config& cfg) {
      return sm80_invalid(isa, sig, {kWarps[cfg[0]], kBlockN[cfg[1]]}).empty();
    };
    return Space({{"warps", w, true}, {"block_n", n, true}}, {ok});
  }

  std::vector<std::string> constraint_descriptions(const std::string& isa) const override {
    return {"estimated registers per thread (Q fragments d_qk/4, O d_v/2, S block_n/2, P block_n/4, 48 more) at "
            "most 232",
            "block_n * head_dim at most " + std::to_string(sm80_block_limit(isa)) +
                " (beyond it ptxas 13 spills: the V gathers of a block stay in flight)",
            "head_dim=192x128 only with block_n 16, head_dim=256 not at all (ptxas 13 spills beyond)"};
  }

  Generated generate(const std::string& isa, const AttnSig& sig, const Params& params) const override {
    config_of(space(isa, sig), params); // InputError naming a value outside the space
    const Sm80Params p = sm80_params(params);
    if (std::string why = sm80_invalid(isa, sig, p); !why.empty())
      throw InputError("attention: " + format(params) + " breaks a constraint: " + why);
    ptx::Module mod(isa);
    ptx::Kernel& k = mod.add_kernel(sm80_kernel_name(sig, p));
    Emitter(k, sig, p).run();
    Generated g;
    g.isa = isa;
    g.kernel_name = sm80_kernel_name(sig, p);
    g.text = ptx::print(mod);
    return g;
  }

  Launch launch(const std::string&, const AttnSig& sig, const Params& params, const AttnShape& s,
                std::span<const uint64_t>, std::vector<uint8_t> kernargs) const override {
    const Sm80Params p = sm80_params(params);
    Launch l;
    l.kernel = sm80_kernel_name(sig, p);
    const int64_t bm = 16 * p.warps;
    l.grid = {uint32_t((s.sq + bm - 1) / bm), uint32_t(s.hq), uint32_t(s.b)};
    l.block = {uint32_t(32 * p.warps), 1, 1};
    l.kernargs = std::move(kernargs);
    return l;
  }
};

} // namespace

std::unique_ptr<AttentionPtxBackend> make_attention_sm80_backend() {
  return std::make_unique<Sm80Backend>();
}

} // namespace isatune::gen::attention

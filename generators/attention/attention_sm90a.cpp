// The sm_90a flash-attention forward kernel (wgmma + TMA + mbarrier, warp-specialised; docs/attention.md).
//
// CTA = (query block of 64 * consumers rows, query head, batch), 128 * (1 + consumers) threads:
//   warpgroup 0        producer: setmaxnreg.dec; one thread loads the CTA's Q tile once (TMA, qfull
//                      mbarrier) and then, block by block, K and V tiles of block_n keys into a ring of
//                      `stages` stages (rank-4 tensor maps {d, seq, head, batch}, 128B swizzle, rows past Sk
//                      zero-filled), each with its own kfull / vfull mbarrier; a stage is reused after its
//                      empty mbarrier completes (every consumer thread arrives once it has finished with it).
//   warpgroups 1..c    consumers: setmaxnreg.inc; each owns 64 query rows. S = Q K^T is wgmma
//   m64n{block_n}k16
//                      with both operands from shared memory (Q and K K-major); its f32 accumulator layout
//                      (rows g, g + 8 of each warp's 16, keys 8i + 2t, + 1) is the register A fragment layout
//                      of m64nNk16, so P = exp2(S * scale_log2 - m) is packed to bf16/f16 in place and
//                      O += P V is wgmma with A from registers (FA3's RS form) and V MN-major (imm-trans-b
//                      1). The row statistics need only quad shuffles (shfl.bfly 1, 2).
// overlap=1 (FA3's intra-warpgroup overlap): block j's QK^T wgmma is issued, then O is rescaled and block
// j-1's P V wgmma issued behind it; the softmax of block j runs while P V is in flight (wait_group 1 retires
// the QK^T group only), and P is repacked after wait_group 0. overlap=0 runs QK^T, softmax, P V in turn.
// Keys past each row's limit (ragged Sk, causal bottom-right) get -inf only in blocks that reach the CTA's
// first limit; stores of rows past Sq are predicated. Causal query blocks run longest first.
// pingpong=1 (FA3's inter-warpgroup ping-pong, consumers=2 only): named barriers 1 and 2 (256 threads) hand
// a token between the two consumers; each issues its GEMMs only while it holds the token, so one warpgroup's
// softmax runs while the other's wgmma runs (see pingpong_init). pingpong=0 is the kernel without them.
// Not built: a persistent grid, TMA stores of O, fp8.
#include <cmath>

#include "attention_ptx_backend.h"
#include "isatune/error.h"
#include "isatune/ptx/module.h"
#include "sm90a_pieces.h"

namespace isatune::gen::attention {

namespace {

using ptx::Address;
using ptx::Cmp;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

const std::vector<int> kConsumers{1, 2}, kBlockN{32, 64, 128}, kStages{2, 3}, kOverlap{0, 1};
const std::vector<int> kPingpong{0, 1};
// The ping-pong's named barriers: consumer warpgroup c waits at kPingBarrier + c and arrives at the other's;
// barrier 0 is the CTA-wide bar.sync after the mbarrier inits (the kernel uses no other named barrier).
constexpr uint32_t kPingBarrier = 1;
const std::vector<std::string> kRegSplit{"24/240", "40/232"};

// Registers a consumer thread needs besides O, S and P (descriptors, addresses, statistics, loop state).
constexpr int kOverheadRegs = 56;
constexpr uint32_t kMaxShared = 227 * 1024;

struct Sm90aParams {
  int consumers = 2, block_n = 64, stages = 2;
  bool overlap = true;
  bool pingpong = false;
  int producer_regs = 24, consumer_regs = 240;
};

struct Plan {
  int threads = 384, block_m = 128, entry_regs = 168;
  uint32_t q_bytes = 0, kv_bytes = 0, stage_bytes = 0, bar_offset = 0, shared_bytes = 0;
  uint32_t v_bytes = 0; // kv_bytes: one K tile (block_n x d_qk), v_bytes: one V tile (block_n x d_v) after it
  // mbarrier offsets from the barrier base: qfull, then kfull[s], vfull[s], empty[s] at 8 * s further
  uint32_t kfull = 8, vfull = 0, empty = 0;
};

Plan plan_of(const AttnSig& sig, const Sm90aParams& p) {
  Plan pl;
  pl.threads = 128 * (1 + p.consumers);
  pl.block_m = 64 * p.consumers;
  pl.entry_regs = sm90a::entry_registers(pl.threads);
  pl.q_bytes = uint32_t(pl.block_m * sig.head_dim * 2);
  pl.kv_bytes = uint32_t(p.block_n * sig.head_dim * 2);
  pl.v_bytes = uint32_t(p.block_n * sig.head_dim_v * 2);
  pl.stage_bytes = pl.kv_bytes + pl.v_bytes;
  pl.bar_offset = pl.q_bytes + uint32_t(p.stages) * pl.stage_bytes;
  pl.vfull = 8 + 8 * uint32_t(p.stages);
  pl.empty = 8 + 16 * uint32_t(p.stages);
  pl.shared_bytes = pl.bar_offset + 8 * (1 + 3 * uint32_t(p.stages)) + 1024; // + base alignment slack
  return pl;
}

Sm90aParams sm90a_params(const Params& params) {
  Sm90aParams p;
  p.consumers = int(param_int(params, "consumers"));
  p.block_n = int(param_int(params, "block_n"));
  p.stages = int(param_int(params, "stages"));
  p.overlap = param_int(params, "overlap") != 0;
  p.pingpong = params.count("pingpong") && param_int(params, "pingpong") != 0;
  std::tie(p.producer_regs, p.consumer_regs) =
      sm90a::parse_reg_split(param_str(params, "reg_split"), "attention sm_90a");
  return p;
}

int consumer_register_estimate(const AttnSig& sig, const Sm90aParams& p) {
  return sig.head_dim_v / 2 + p.block_n / 2 + p.block_n / 4 + kOverheadRegs; // O, S, P
}

std::string sm90a_invalid(const AttnSig& sig, const Sm90aParams& p) {
  const Plan pl = plan_of(sig, p);
  if (p.pingpong && p.consumers != 2)
    return "pingpong=1 needs consumers=2 (the token passes between two consumer warpgroups)";
  if (std::string why =
          sm90a::reg_split_invalid(p.producer_regs, p.consumer_regs, p.consumers, pl.entry_regs);
      !why.empty())
    return why;
  if (consumer_register_estimate(sig, p) > p.consumer_regs)
    return "consumer registers (O d_v/2 + S block_n/2 + P block_n/4 + " + std::to_string(kOverheadRegs) +
           " = " + std::to_string(consumer_register_estimate(sig, p)) + ") above the consumer's " +
           std::to_string(p.consumer_regs);
  if (pl.shared_bytes > kMaxShared)
    return "shared memory (Q " + std::to_string(pl.q_bytes) + " + stages * (K + V) " +
           std::to_string(pl.stage_bytes) + " + mbarriers + 1024) = " + std::to_string(pl.shared_bytes) +
           " bytes exceeds 227 KiB";
  return {};
}

std::string sm90a_kernel_name(const AttnSig& sig, const Sm90aParams& p) {
  return "attn_fwd_sm90a_" + std::string(to_string(sig.dtype)) + "_d" + head_dim_name(sig) +
         (sig.causal ? "_causal" : "") + (sig.lse ? "_lse" : "") + "_c" + std::to_string(p.consumers) + "_n" +
         std::to_string(p.block_n) + "_s" + std::to_string(p.stages) + "_r" +
         std::to_string(p.producer_regs) + "_" + std::to_string(p.consumer_regs) + (p.overlap ? "_ov" : "") +
         (p.pingpong ? "_pp" : "");
}

int log2i(int x) {
  int r = 0;
  while ((1 << r) < x)
    ++r;
  return r;
}

class Emitter {
public:
  Emitter(ptx::Kernel& k, const AttnSig& sig, const Sm90aParams& p)
      : k_(k), s_(sig), p_(p), pl_(plan_of(sig, p)) {}
  void run();

private:
  Reg r32() { return k_.reg(RegClass::b32); }
  Reg r64() { return k_.reg(RegClass::b64); }
  Reg rf() { return k_.reg(RegClass::f32); }
  Reg rp() { return k_.reg(RegClass::pred); }
  Reg imm32(uint32_t v) {
    Reg r = r32();
    k_.mov(Type::u32, r, v);
    return r;
  }
  Reg row_address(Reg base, Reg row, Reg stride) { // base + row * stride (bytes, 64-bit)
    Reg off = r64(), a = r64();
    k_.mul_wide(Type::u32, off, row, stride);
    k_.add(Type::u64, a, base, off);
    return a;
  }
  Reg head_base(Reg ptr, Reg b, Reg sb, Reg h, Reg sh) { // ptr + b * sb + h * sh bytes
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
  Reg add_desc(Reg desc, uint32_t bytes) { // a descriptor moved by `bytes` (start address in 16-byte units)
    if (!bytes)
      return desc;
    Reg d = r64();
    k_.add(Type::u64, d, desc, bytes >> 4);
    return d;
  }

  void producer();
  void consumer();
  void issue_s(Reg stage_addr);
  void issue_pv(Reg stage_addr);
  void softmax(Reg j0);
  void rescale_o();
  void pack_p();
  void pingpong_init(Reg cw);
  void pingpong_sync();
  void pingpong_arrive(bool second = true, std::optional<Reg> second_more = std::nullopt);
  std::optional<Reg> pingpong_more(Reg it);

  ptx::Kernel& k_;
  const AttnSig& s_;
  const Sm90aParams& p_;
  Plan pl_;
  ptx::MmaType mt_ = ptx::MmaType::bf16;
  // shared by both roles
  Reg tm_q_, tm_k_, tm_v_, ptr_[5], a_[kNumU32], c_, tid_, base_, bars_, bm_, h_, b_, hkv_, nkb_;
  // consumers
  Reg qdesc_, t_, row_[2], lim_[2], m_[2], l_[2], alpha_[2], mask_from_;
  std::vector<Reg> o_, s_acc_;
  std::vector<std::vector<Reg>> p_frag_;
  Reg pp_second_; // ping-pong: "this is consumer 1"
};

void Emitter::run() {
  mt_ = s_.dtype == DType::bf16 ? ptx::MmaType::bf16 : ptx::MmaType::f16;
  auto tmQ = k_.param_tensor_map("tmQ");
  auto tmK = k_.param_tensor_map("tmK");
  auto tmV = k_.param_tensor_map("tmV");
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
  k_.dynamic_shared("smem", 1024);
  k_.reqntid(uint32_t(pl_.threads));
  k_.maxnreg(uint32_t(pl_.entry_regs));

  tm_q_ = r64(), tm_k_ = r64(), tm_v_ = r64();
  k_.cvta_param(tm_q_, tmQ);
  k_.cvta_param(tm_k_, tmK);
  k_.cvta_param(tm_v_, tmV);
  for (int i = 0; i < (s_.lse ? 5 : 4); ++i) {
    if (i == 0 || i > 2) { // q, k, v are read through the tensor maps
      ptr_[i] = r64();
      k_.ld_param(Type::u64, ptr_[i], ptrs[size_t(i)]);
      k_.cvta_to_global(ptr_[i], ptr_[i]);
    }
  }
  for (int i = 0; i < kNumU32; ++i) {
    a_[i] = r32();
    k_.ld_param(Type::u32, a_[i], ints[size_t(i)]);
  }
  c_ = rf();
  k_.ld_param(Type::f32, c_, p_scale);
  Reg sq = a_[kSq], sk = a_[kSk];

  // ---- geometry (both roles)
  tid_ = r32(), bm_ = r32(), h_ = r32(), b_ = r32(), hkv_ = r32();
  k_.mov_sreg(tid_, ptx::SpecialReg::tid_x);
  k_.mov_sreg(bm_, ptx::SpecialReg::ctaid_x);
  k_.mov_sreg(h_, ptx::SpecialReg::ctaid_y);
  k_.mov_sreg(b_, ptx::SpecialReg::ctaid_z);
  const int bm_shift = log2i(pl_.block_m);
  if (s_.causal) { // longest first: the last query blocks see the most keys
    Reg nb = r32();
    k_.add(Type::u32, nb, sq, pl_.block_m - 1);
    k_.binary("shr", Type::u32, nb, nb, bm_shift);
    k_.sub(Type::u32, nb, nb, 1);
    k_.sub(Type::u32, bm_, nb, bm_);
  }
  Reg h2 = r32();
  k_.binary("shl", Type::b32, h2, h_, 1);
  k_.binary("mul.hi", Type::u32, hkv_, h2, a_[kGroupMagic]); // h / (Hq / Hkv)
  // key blocks of the CTA: causal stops at min(end of block, Sq) + Sk - Sq (>= 1 since Sq <= Sk)
  nkb_ = r32();
  if (s_.causal) {
    Reg e = r32();
    k_.add(Type::u32, e, bm_, 1);
    k_.binary("shl", Type::b32, e, e, bm_shift);
    k_.binary("min", Type::u32, e, e, sq);
    k_.add(Type::u32, e, e, sk);
    k_.sub(Type::u32, nkb_, e, sq);
  } else {
    k_.mov(Type::u32, nkb_, sk);
  }
  k_.add(Type::u32, nkb_, nkb_, p_.block_n - 1);
  k_.binary("shr", Type::u32, nkb_, nkb_, log2i(p_.block_n));

  base_ = sm90a::aligned_dynamic_base(k_, "smem");
  bars_ = r32();
  k_.add(Type::u32, bars_, base_, pl_.bar_offset);
  {
    const ptx::Label done = k_.new_label("INIT_DONE");
    Reg not_first = rp();
    k_.setp(Cmp::ne, Type::u32, not_first, tid_, 0);
    k_.bra(done).pred(not_first);
    k_.mbarrier_init(Address(bars_, 0), 1); // qfull: the producer's arrive.expect_tx
    for (int st = 0; st < p_.stages; ++st) {
      k_.mbarrier_init(Address(bars_, pl_.kfull + 8 * st), 1);
      k_.mbarrier_init(Address(bars_, pl_.vfull + 8 * st), 1);
      k_.mbarrier_init(Address(bars_, pl_.empty + 8 * st), 128 * p_.consumers); // every consumer thread
    }
    k_.fence_mbarrier_init();
    k_.place(done);
    k_.bar_sync(0);
  }
  Reg wg = r32(), is_consumer = rp();
  const ptx::Label consumer_start = k_.new_label("CONSUMER");
  k_.binary("shr", Type::u32, wg, tid_, 7);
  k_.setp(Cmp::ne, Type::u32, is_consumer, wg, 0);
  k_.bra(consumer_start).pred(is_consumer);
  producer();
  k_.place(consumer_start);
  consumer();
}

void Emitter::producer() {
  k_.setmaxnreg(false, uint32_t(p_.producer_regs));
  const ptx::Label done = k_.new_label("PRODUCER_DONE"), loop = k_.new_label("PRODUCER_KV"),
                   tail = k_.new_label("PRODUCER_TAIL");
  Reg not_leader = rp();
  k_.setp(Cmp::ne, Type::u32, not_leader, tid_, 0);
  k_.bra(done).pred(not_leader);
  const int chunks = s_.head_dim / 64; // 128-byte boxes of 64 elements along d
  std::vector<Reg> dcoord;
  for (int c = 0; c < chunks; ++c)
    dcoord.push_back(imm32(uint32_t(64 * c)));
  Reg q0 = r32();
  k_.binary("shl", Type::b32, q0, bm_, log2i(pl_.block_m));
  k_.mbarrier_arrive_expect_tx(Address(bars_, 0), pl_.q_bytes);
  for (int c = 0; c < chunks; ++c)
    k_.tma_load(4, Address(base_, int64_t(c) * pl_.block_m * 128), tm_q_, {dcoord[size_t(c)], q0, h_, b_},
                Address(bars_, 0));
  Reg stage = r32(), phase = r32(), j0 = r32(), it = r32();
  k_.mov(Type::u32, stage, 0);
  k_.mov(Type::u32, phase, 0);
  k_.mov(Type::u32, j0, 0);
  k_.mov(Type::u32, it, 0);
  k_.place(loop);
  {
    Reg slot = r32(), parity = r32(), sa = r32();
    k_.mad_lo(Type::u32, slot, stage, 8, bars_);
    k_.binary("xor", Type::b32, parity, phase, 1);
    sm90a::wait_parity(k_, slot, pl_.empty, parity); // the consumers released this stage
    k_.mad_lo(Type::u32, sa, stage, pl_.stage_bytes, base_);
    k_.add(Type::u32, sa, sa, pl_.q_bytes);
    for (int kv = 0; kv < 2; ++kv) {
      const uint32_t bar = kv ? pl_.vfull : pl_.kfull;
      k_.mbarrier_arrive_expect_tx(Address(slot, bar), kv ? pl_.v_bytes : pl_.kv_bytes);
      for (int c = 0; c < (kv ? s_.head_dim_v / 64 : chunks); ++c)
        k_.tma_load(4, Address(sa, int64_t(kv) * pl_.kv_bytes + int64_t(c) * p_.block_n * 128),
                    kv ? tm_v_ : tm_k_, {dcoord[size_t(c)], j0, hkv_, b_}, Address(slot, bar));
    }
  }
  k_.add(Type::u32, j0, j0, p_.block_n);
  sm90a::advance_ring(k_, stage, phase, p_.stages);
  k_.add(Type::u32, it, it, 1);
  Reg more = rp();
  k_.setp(Cmp::lt, Type::u32, more, it, nkb_);
  k_.bra(loop).pred(more);
  // Exit only after the consumers released every stage: no TMA is in flight when the CTA ends.
  k_.place(tail);
  for (int st = 0; st < p_.stages; ++st) {
    Reg slot = r32(), parity = r32();
    k_.mad_lo(Type::u32, slot, stage, 8, bars_);
    k_.binary("xor", Type::b32, parity, phase, 1);
    sm90a::wait_parity(k_, slot, pl_.empty, parity);
    sm90a::advance_ring(k_, stage, phase, p_.stages);
  }
  k_.place(done);
  k_.ret();
}

// S = Q K^T: d/16 wgmma k-steps; K-major operands, 32 bytes per k-step inside a 128-byte row, the next
// 64-element chunk of d in the next box.
void Emitter::issue_s(Reg stage_addr) {
  Reg kdesc = sm90a::descriptor_128b(k_, stage_addr, 16, 1024);
  k_.wgmma_fence();
  for (int kk = 0; kk < s_.head_dim / 16; ++kk) {
    const uint32_t chunk = uint32_t(kk / 4), within = uint32_t(kk % 4) * 32;
    Reg ad = add_desc(qdesc_, chunk * uint32_t(pl_.block_m) * 128 + within);
    Reg bd = add_desc(kdesc, chunk * uint32_t(p_.block_n) * 128 + within);
    k_.wgmma_mma_async(mt_, uint32_t(p_.block_n), s_acc_, ad, bd, kk == 0 ? 0 : 1, 1, 1, 0, 0);
  }
  k_.wgmma_commit_group();
}

// O += P V: block_n/16 k-steps of 16 keys; A = P from registers, B = V MN-major (d contiguous: 64-element
// boxes LBO = block_n * 128 bytes apart, 8-key groups SBO = 1024), 16 keys = 2048 bytes per step.
void Emitter::issue_pv(Reg stage_addr) {
  Reg va = r32();
  k_.add(Type::u32, va, stage_addr, pl_.kv_bytes);
  Reg vdesc = sm90a::descriptor_128b(k_, va, uint32_t(p_.block_n) * 128, 1024);
  const std::string op = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(s_.head_dim_v) + "k16.f32." +
                         (mt_ == ptx::MmaType::bf16 ? "bf16.bf16" : "f16.f16");
  k_.wgmma_fence();
  for (int kk = 0; kk < p_.block_n / 16; ++kk)
    k_.raw(op,
           {Operand::vec(o_), Operand::vec(p_frag_[size_t(kk)]), add_desc(vdesc, uint32_t(kk) * 2048), 1, 1,
            1, 1},
           {80, 90, true, "wgmma"});
  k_.wgmma_commit_group();
}

// Masks keys at or past each row's limit (only in blocks past the CTA's first limit), then the online
// softmax: m, l and alpha per row; S becomes the unnormalised weights exp2(S * scale_log2 - m).
void Emitter::softmax(Reg j0) {
  const int nregs = p_.block_n / 2;
  const ptx::Label no_mask = k_.new_label("NO_MASK");
  Reg end = r32(), skip = rp();
  k_.add(Type::u32, end, j0, p_.block_n);
  k_.setp(Cmp::le, Type::u32, skip, end, mask_from_);
  k_.bra(no_mask, true).pred(skip);
  {
    Reg kt = r32();
    k_.binary("shl", Type::b32, kt, t_, 1);
    k_.add(Type::u32, kt, kt, j0);
    for (int i = 0; i < nregs; ++i) {
      Reg key = r32(), pm = rp();
      k_.add(Type::u32, key, kt, 8 * (i >> 2) + (i & 1));
      k_.setp(Cmp::ge, Type::u32, pm, key, lim_[(i >> 1) & 1]);
      k_.selp(Type::f32, s_acc_[size_t(i)], Operand::f32(-INFINITY), s_acc_[size_t(i)], pm);
    }
  }
  k_.place(no_mask);
  Reg nm[2];
  for (int r = 0; r < 2; ++r) {
    Reg mx = rf();
    bool first = true;
    for (int i = 0; i < nregs; ++i) {
      if (((i >> 1) & 1) != r)
        continue;
      if (first)
        k_.mov(Type::f32, mx, s_acc_[size_t(i)]);
      else
        k_.binary("max", Type::f32, mx, mx, s_acc_[size_t(i)]);
      first = false;
    }
    quad_reduce(true, mx);
    k_.binary("mul", Type::f32, mx, mx, c_);
    k_.binary("max", Type::f32, mx, mx, m_[r]); // finite: key 0 is visible to every row
    k_.sub(Type::f32, alpha_[r], m_[r], mx);
    k_.unary("ex2.approx.ftz", Type::f32, alpha_[r], alpha_[r]);
    k_.mov(Type::f32, m_[r], mx);
    nm[r] = rf();
    k_.unary("neg", Type::f32, nm[r], mx);
    k_.binary("mul", Type::f32, l_[r], l_[r], alpha_[r]);
  }
  for (int i = 0; i < nregs; ++i) {
    Reg x = s_acc_[size_t(i)];
    const int r = (i >> 1) & 1;
    k_.fma_rn(Type::f32, x, x, c_, nm[r]);
    k_.unary("ex2.approx.ftz", Type::f32, x, x);
    k_.add(Type::f32, l_[r], l_[r], x);
  }
}

void Emitter::rescale_o() {
  for (size_t i = 0; i < o_.size(); ++i)
    k_.binary("mul", Type::f32, o_[i], o_[i], alpha_[(i >> 1) & 1]);
}

// P's A fragments of k-step kk: registers 8kk + 2r, 8kk + 2r + 1 of S (rows g / g + 8, keys 16kk + 2t (+8)).
void Emitter::pack_p() {
  for (int kk = 0; kk < p_.block_n / 16; ++kk)
    for (int r = 0; r < 4; ++r)
      pack2(p_frag_[size_t(kk)][size_t(r)], s_acc_[size_t(8 * kk + 2 * r)],
            s_acc_[size_t(8 * kk + 2 * r + 1)]);
}

// FA3's inter-warpgroup ping-pong (warp_scheduler_barrier_sync/arrive): a token passes between the two
// consumer warpgroups through named barriers kPingBarrier + c (256 threads: the waiting warpgroup's 128 at
// bar.sync, the other's 128 at bar.arrive). A warpgroup issues a GEMM section (pingpong_sync ... wgmma ...
// commit ... pingpong_arrive) only while it holds the token, so consumer 0's and consumer 1's sections
// alternate and one's softmax runs under the other's wgmma. Consumer 1 arrives once at the start (consumer 0
// goes first) and skips its arrival after its last section, so every barrier generation has 256 threads and
// none is left half-arrived at exit. Both consumers run the same number of sections (nkb_ is per CTA). The
// barrier ids are immediates under a warpgroup-uniform predicate (a register id makes ptxas reserve all 16).
void Emitter::pingpong_init(Reg cw) {
  if (!p_.pingpong)
    return;
  pp_second_ = rp();
  k_.setp(Cmp::ne, Type::u32, pp_second_, cw, 0);
  k_.bar_arrive(kPingBarrier, 256).pred(pp_second_);
}

void Emitter::pingpong_sync() {
  if (!p_.pingpong)
    return;
  k_.bar_sync(kPingBarrier, 256).pred(pp_second_, true);
  k_.bar_sync(kPingBarrier + 1, 256).pred(pp_second_);
}

// second: whether consumer 1 arrives too (false after its last section); second_more: consumer 1 arrives only
// where this predicate holds.
void Emitter::pingpong_arrive(bool second, std::optional<Reg> second_more) {
  if (!p_.pingpong)
    return;
  k_.bar_arrive(kPingBarrier + 1, 256).pred(pp_second_, true);
  if (!second)
    return;
  Reg p = pp_second_;
  if (second_more) {
    p = rp();
    k_.binary("and", Type::pred, p, pp_second_, *second_more);
  }
  k_.bar_arrive(kPingBarrier, 256).pred(p);
}

// overlap=0: P V of key block `it` is the last section when it + 1 == nkb_.
std::optional<Reg> Emitter::pingpong_more(Reg it) {
  if (!p_.pingpong)
    return std::nullopt;
  Reg next = r32(), more = rp();
  k_.add(Type::u32, next, it, 1);
  k_.setp(Cmp::lt, Type::u32, more, next, nkb_);
  return more;
}

void Emitter::consumer() {
  k_.setmaxnreg(true, uint32_t(p_.consumer_regs));
  Reg sq = a_[kSq], sk = a_[kSk];
  Reg ct = r32(), cw = r32(), wl = r32(), warp = r32(), lane = r32(), g = r32();
  t_ = r32();
  k_.sub(Type::u32, ct, tid_, 128);
  k_.binary("shr", Type::u32, cw, ct, 7);
  k_.binary("and", Type::b32, wl, ct, 127);
  k_.binary("shr", Type::u32, warp, wl, 5);
  k_.binary("and", Type::b32, lane, wl, 31);
  k_.binary("shr", Type::u32, g, lane, 2);
  k_.binary("and", Type::b32, t_, lane, 3);
  Reg q0 = r32();
  k_.binary("shl", Type::b32, q0, bm_, log2i(pl_.block_m));
  Reg skmsq1 = r32();
  k_.sub(Type::u32, skmsq1, sk, sq);
  k_.add(Type::u32, skmsq1, skmsq1, 1);
  // the CTA's smallest limit: blocks ending at or before it need no mask
  mask_from_ = r32();
  if (s_.causal) {
    k_.add(Type::u32, mask_from_, q0, skmsq1);
    k_.binary("min", Type::u32, mask_from_, mask_from_, sk);
  } else {
    k_.mov(Type::u32, mask_from_, sk);
  }
  for (int i = 0; i < 2; ++i) {
    row_[i] = r32(), lim_[i] = r32();
    k_.mad_lo(Type::u32, row_[i], cw, 64, q0);
    k_.mad_lo(Type::u32, row_[i], warp, 16, row_[i]);
    k_.add(Type::u32, row_[i], row_[i], g);
    if (i)
      k_.add(Type::u32, row_[i], row_[i], 8);
    if (s_.causal) {
      k_.add(Type::u32, lim_[i], row_[i], skmsq1);
      k_.binary("min", Type::u32, lim_[i], lim_[i], sk);
    } else {
      k_.mov(Type::u32, lim_[i], sk);
    }
  }
  o_ = k_.regs(RegClass::f32, uint32_t(s_.head_dim_v / 2));
  s_acc_ = k_.regs(RegClass::f32, uint32_t(p_.block_n / 2));
  for (int kk = 0; kk < p_.block_n / 16; ++kk)
    p_frag_.push_back(k_.regs(RegClass::b32, 4));
  for (Reg o : o_)
    k_.mov(Type::f32, o, Operand::f32(0.0f));
  for (int r = 0; r < 2; ++r) {
    m_[r] = rf(), l_[r] = rf(), alpha_[r] = rf();
    k_.mov(Type::f32, m_[r], Operand::f32(-INFINITY));
    k_.mov(Type::f32, l_[r], Operand::f32(0.0f));
  }
  Reg qa = r32();
  k_.mad_lo(Type::u32, qa, cw, 64 * 128, base_); // this consumer's 64 rows of every Q box
  qdesc_ = sm90a::descriptor_128b(k_, qa, 16, 1024);
  sm90a::wait_parity(k_, bars_, 0, imm32(0)); // Q has landed
  pingpong_init(cw);

  Reg stage = r32(), phase = r32(), j0 = r32(), it = r32();
  k_.mov(Type::u32, stage, 0);
  k_.mov(Type::u32, phase, 0);
  k_.mov(Type::u32, j0, 0);
  k_.mov(Type::u32, it, 0);
  auto stage_of = [&](Reg st, Reg& slot, Reg& sa) {
    slot = r32(), sa = r32();
    k_.mad_lo(Type::u32, slot, st, 8, bars_);
    k_.mad_lo(Type::u32, sa, st, pl_.stage_bytes, base_);
    k_.add(Type::u32, sa, sa, pl_.q_bytes);
  };
  auto release = [&](Reg slot) { k_.mbarrier_arrive(std::nullopt, Address(slot, pl_.empty)); };
  const ptx::Label loop = k_.new_label("CONSUMER_KV"), tail = k_.new_label("CONSUMER_TAIL");
  if (!p_.overlap) {
    k_.place(loop);
    Reg slot, sa;
    stage_of(stage, slot, sa);
    sm90a::wait_parity(k_, slot, pl_.kfull, phase);
    pingpong_sync();
    issue_s(sa);
    pingpong_arrive();
    k_.wgmma_wait_group(0);
    softmax(j0);
    rescale_o();
    pack_p();
    sm90a::wait_parity(k_, slot, pl_.vfull, phase);
    pingpong_sync();
    issue_pv(sa);
    pingpong_arrive(true, pingpong_more(it));
    k_.wgmma_wait_group(0);
    release(slot);
    k_.add(Type::u32, j0, j0, p_.block_n);
    sm90a::advance_ring(k_, stage, phase, p_.stages);
    k_.add(Type::u32, it, it, 1);
    Reg more = rp();
    k_.setp(Cmp::lt, Type::u32, more, it, nkb_);
    k_.bra(loop).pred(more);
  } else {
    // block 0: S, softmax, P (O is still zero)
    Reg prev_stage = r32(), prev_phase = r32();
    {
      Reg slot, sa;
      stage_of(stage, slot, sa);
      sm90a::wait_parity(k_, slot, pl_.kfull, phase);
      pingpong_sync();
      issue_s(sa);
      pingpong_arrive();
      k_.wgmma_wait_group(0);
      softmax(j0);
      pack_p();
    }
    k_.mov(Type::u32, prev_stage, stage);
    k_.mov(Type::u32, prev_phase, phase);
    sm90a::advance_ring(k_, stage, phase, p_.stages);
    k_.add(Type::u32, j0, j0, p_.block_n);
    k_.mov(Type::u32, it, 1);
    Reg last = rp();
    k_.setp(Cmp::ge, Type::u32, last, it, nkb_);
    k_.bra(tail).pred(last);
    k_.place(loop);
    {
      Reg slot, sa, pslot, psa;
      stage_of(stage, slot, sa);
      stage_of(prev_stage, pslot, psa);
      sm90a::wait_parity(k_, slot, pl_.kfull, phase);
      pingpong_sync();
      issue_s(sa); // block j's QK^T ...
      rescale_o(); // ... while O takes block j-1's scale
      sm90a::wait_parity(k_, pslot, pl_.vfull, prev_phase);
      issue_pv(psa); // block j-1's P V behind it
      pingpong_arrive();
      k_.wgmma_wait_group(1); // QK^T done, P V in flight
      softmax(j0);
      k_.wgmma_wait_group(0);
      release(pslot);
      pack_p();
    }
    k_.mov(Type::u32, prev_stage, stage);
    k_.mov(Type::u32, prev_phase, phase);
    sm90a::advance_ring(k_, stage, phase, p_.stages);
    k_.add(Type::u32, j0, j0, p_.block_n);
    k_.add(Type::u32, it, it, 1);
    Reg more = rp();
    k_.setp(Cmp::lt, Type::u32, more, it, nkb_);
    k_.bra(loop).pred(more);
    k_.place(tail);
    {
      Reg pslot, psa;
      stage_of(prev_stage, pslot, psa);
      rescale_o();
      sm90a::wait_parity(k_, pslot, pl_.vfull, prev_phase);
      pingpong_sync();
      issue_pv(psa);
      pingpong_arrive(false);
      k_.wgmma_wait_group(0);
      release(pslot);
    }
  }

  // ---- epilogue: O / l for the real rows; LSE = ln 2 * (m + log2 l) from lane t == 0
  Reg ob = head_base(ptr_[3], b_, a_[kOsb], h_, a_[kOsh]);
  Reg t4 = r32(), t4w = r64();
  k_.binary("shl", Type::b32, t4, t_, 2);
  k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, t4w, t4);
  Reg pt0 = rp();
  k_.setp(Cmp::eq, Type::u32, pt0, t_, 0);
  for (int r = 0; r < 2; ++r) {
    quad_reduce(false, l_[r]);
    Reg inv = rf(), pin = rp();
    k_.unary("rcp.rn", Type::f32, inv, l_[r]);
    k_.setp(Cmp::lt, Type::u32, pin, row_[r], sq);
    Reg orow = row_address(ob, row_[r], a_[kOss]);
    k_.add(Type::u64, orow, orow, t4w);
    for (int n = 0; n < s_.head_dim_v / 8; ++n) {
      Reg x0 = rf(), x1 = rf(), pk = r32();
      k_.binary("mul", Type::f32, x0, o_[size_t(4 * n + 2 * r)], inv);
      k_.binary("mul", Type::f32, x1, o_[size_t(4 * n + 2 * r + 1)], inv);
      pack2(pk, x0, x1);
      k_.st(ptx::Space::global, Type::b32, Address(orow, int64_t(n) * 16), {pk}).pred(pin);
    }
    if (s_.lse) {
      Reg lse = rf(), pl = rp(), idx = r32(), lrow = r64(), off = r64();
      k_.unary("lg2.approx.ftz", Type::f32, lse, l_[r]);
      k_.add(Type::f32, lse, lse, m_[r]);
      k_.binary("mul", Type::f32, lse, lse, Operand::f32(0.6931471805599453f));
      k_.binary("and", Type::pred, pl, pin, pt0);
      k_.mul_lo(Type::u32, idx, b_, a_[kLsb]);
      k_.mad_lo(Type::u32, idx, h_, a_[kLsh], idx);
      k_.mad_lo(Type::u32, idx, row_[r], 4, idx);
      k_.cvt(ptx::Rounding::none, Type::u64, Type::u32, off, idx);
      k_.add(Type::u64, lrow, ptr_[4], off);
      k_.st(ptx::Space::global, Type::f32, Address(lrow), {lse}).pred(pl);
    }
  }
  k_.ret();
}

class Sm90aBackend : public AttentionPtxBackend {
public:
  std::vector<std::string> targets() const override { return {"sm_90a"}; }

  static std::vector<Parameter> parameters() {
    auto nums = [](const std::vector<int>& v) {
      std::vector<Value> out;
      for (int x : v)
        out.push_back(Value::num(x));
      return out;
    };
    std::vector<Value> split;
    for (const auto& s : kRegSplit)
      split.push_back(Value::str(s));
    std::vector<Parameter> ps{{"consumers", nums(kConsumers), true},
                              {"block_n", nums(kBlockN), true},
                              {"stages", nums(kStages), true},
                              {"overlap", nums(kOverlap), false},
                              {"reg_split", split, false}};
    ps.push_back({"pingpong", nums(kPingpong), false}); // 0: the kernel without the ping-pong barriers
    return ps;
  }

  Space space(const std::string&, const AttnSig& sig) const override {
    Constraint ok = [sig](const Config& cfg) {
      Sm90aParams p;
      p.consumers = kConsumers[cfg[0]];
      p.block_n = kBlockN[cfg[1]];
      p.stages = kStages[cfg[2]];
      p.overlap = kOverlap[cfg[3]] != 0;
      std::tie(p.producer_regs, p.consumer_regs) =
          sm90a::parse_reg_split(kRegSplit[cfg[4]], "attention sm_90a");
      p.pingpong = kPingpong[cfg[5]] != 0;
      return sm90a_invalid(sig, p).empty();
    };
    return Space(parameters(), {ok});
  }

  std::vector<std::string> constraint_descriptions(const std::string&) const override {
    return {"reg_split PRODUCER/CONSUMER: setmaxnreg counts, multiples of 8, producer <= the entry .maxnreg "
            "(168) <= consumer, and 128 * (producer + consumers * consumer) <= 65536",
            "consumer registers: O d_v/2 + S block_n/2 + P block_n/4 + " +
                std::to_string(kOverheadRegs) + " at most the consumer's setmaxnreg count",
            "shared memory: Q (64 * consumers * d_qk * 2) + stages * block_n * (d_qk + d_v) * 2 + "
            "mbarriers + "
            "1024 at most 227 KiB",
            "launch (not the space): q, k, v 16-byte aligned (TMA global addresses)",
            "pingpong=1 needs consumers=2 (named barriers 1 and 2 pass a token between the two consumer "
            "warpgroups)"};
  }

  Generated generate(const std::string& isa, const AttnSig& sig, const Params& params) const override {
    config_of(space(isa, sig), params); // InputError naming a value outside the space
    const Sm90aParams p = sm90a_params(params);
    if (std::string why = sm90a_invalid(sig, p); !why.empty())
      throw InputError("attention sm_90a: " + format(params) + " breaks a constraint: " + why);
    ptx::Module mod(isa);
    ptx::Kernel& k = mod.add_kernel(sm90a_kernel_name(sig, p));
    Emitter(k, sig, p).run();
    Generated g;
    g.isa = isa;
    g.kernel_name = sm90a_kernel_name(sig, p);
    g.text = ptx::print(mod);
    return g;
  }

  Launch launch(const std::string&, const AttnSig& sig, const Params& params, const AttnShape& s,
                std::span<const uint64_t> addresses, std::vector<uint8_t> kernargs) const override {
    const Sm90aParams p = sm90a_params(params);
    if (std::string why = sm90a_invalid(sig, p); !why.empty())
      throw InputError("attention sm_90a: " + why);
    const Plan pl = plan_of(sig, p);
    for (size_t i = 0; i < 3; ++i)
      if (addresses[i] % 16)
        throw InputError(std::string("attention sm_90a: ") + "qkv"[i] +
                         " must be 16-byte aligned (TMA global addresses)");
    if (s.sq >= (int64_t(1) << 31) || s.sk >= (int64_t(1) << 31))
      throw InputError("attention sm_90a: Sq and Sk must be below 2^31 (TMA coordinates)");
    const auto type = sig.dtype == DType::bf16 ? TensorMapDataType::bfloat16 : TensorMapDataType::float16;
    // {d, seq, head, batch}: a box of 64 elements (128 bytes) by `rows`; rows past the sequence read zero
    auto map = [&](uint64_t address, const AttnShape::Strides& st, int64_t seq, int64_t heads, int rows,
                   int dim) {
      return sm90a::tma_map_128b(
          type, address, {uint64_t(dim), uint64_t(seq), uint64_t(heads), uint64_t(s.b)},
          {uint64_t(st.seq) * 2, uint64_t(st.head) * 2, uint64_t(st.batch) * 2}, {64, uint32_t(rows), 1, 1});
    };
    KernargWriter w;
    const uint32_t at_q = w.blank(128, 64), at_k = w.blank(128, 64), at_v = w.blank(128, 64);
    std::vector<uint8_t> bytes = w.bytes();
    bytes.insert(bytes.end(), kernargs.begin(), kernargs.end()); // 384: aligned for the u64 pointers
    Launch l;
    l.kernel = sm90a_kernel_name(sig, p);
    l.grid = {uint32_t((s.sq + pl.block_m - 1) / pl.block_m), uint32_t(s.hq), uint32_t(s.b)};
    l.block = {uint32_t(pl.threads), 1, 1};
    l.kernargs = std::move(bytes);
    l.dynamic_shared_bytes = pl.shared_bytes;
    l.tensor_maps = {{at_q, map(addresses[0], s.q, s.sq, s.hq, pl.block_m, sig.head_dim)},
                     {at_k, map(addresses[1], s.k, s.sk, s.hkv, p.block_n, sig.head_dim)},
                     {at_v, map(addresses[2], s.v, s.sk, s.hkv, p.block_n, sig.head_dim_v)}};
    return l;
  }
};

} // namespace

std::unique_ptr<AttentionPtxBackend> make_attention_sm90a_backend() {
  return std::make_unique<Sm90aBackend>();
}

} // namespace isatune::gen::attention

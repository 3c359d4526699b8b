#pragma once
// Shared parts of the flash-attention forward generator (docs/attention.md): the signature, the problem shape
// and its strides, the kernel-argument layout every back end reads, and the CDNA back end's parameters. The
// Generator itself (attention_generator.cpp) owns schemas, buffers, scalars, the float64 reference and the
// estimate; each ISA family emits its kernel from these.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "isatune/cdna/kernel.h"
#include "isatune/gen/generator.h"

namespace isatune::gen::attention {

struct AttnSig {
  DType dtype = DType::bf16; // q, k, v and o; accumulation and softmax are f32
  int head_dim = 128;        // d_qk: q and k (S = Q K^T runs over it)
  int head_dim_v = 128;      // d_v: v and o; equal to d_qk except for head_dim=192x128 (MLA-style)
  bool causal = false;       // bottom-right aligned: query i sees keys j <= i + Sk - Sq
  bool bshd = true;          // layout of q, k, v, o: [B][S][H][D] (else [B][H][S][D])
  bool lse = true;           // also write the f32 log-sum-exp, [B][Hq][Sq]
};
AttnSig attn_sig(const Signature& sig); // InputError naming the field
// The signature's head_dim value: "128", or "192x128" when d_qk != d_v (kernel names use it after "_d").
std::string head_dim_name(const AttnSig& sig);

// A problem with every stride in elements.
struct AttnShape {
  int64_t b = 1, hq = 1, hkv = 1, sq = 1, sk = 1, pad = 0; // pad: elements after each head vector
  // strides (elements) of batch, sequence and head for a tensor with `heads` heads and `seq` rows
  struct Strides {
    int64_t batch = 0, seq = 0, head = 0;
  };
  Strides q, k, v, o;
  int64_t q_elems = 0, kv_elems = 0, o_elems = 0; // kv_elems: k's (and v's when d_qk = d_v)
  int64_t v_elems = 0;
};
// Checks the rules (Hq % Hkv == 0, causal needs Sq <= Sk, pad a multiple of 8, every buffer under 2 GiB)
// and derives the strides (q, k rows of d_qk + pad elements, v, o rows of d_v + pad); InputError naming the
// field and the rule.
AttnShape attn_shape(const AttnSig& sig, const Problem& problem);

// Kernel arguments, common to every back end: 5 pointers (q, k, v, o, lse; lse 0 when absent), then u32
// values in this order, then f32 scale_log2 (softmax scale times log2 e).
enum ArgIndex : int {
  kSq,
  kSk,
  kGroupMagic,
  kQsb,
  kQss,
  kQsh,
  kKsb,
  kKss,
  kKsh,
  kVsb,
  kVss,
  kVsh,
  kOsb,
  kOss,
  kOsh,
  kLsb,
  kLsh,
  kNrecQ,
  kNrecK,
  kNrecV,
  kNrecO,
  kNrecL,
  kNumU32
};
constexpr uint32_t kPtrBytes = 5 * 8;
constexpr uint32_t u32_arg_offset(int i) {
  return kPtrBytes + 4u * uint32_t(i);
}
constexpr uint32_t kScaleOffset = kPtrBytes + 4u * kNumU32;
constexpr uint32_t kKernargBytes = kScaleOffset + 4;
// Strides are in bytes, nrec = bytes of each buffer; group_magic = ceil(2^31 / (Hq / Hkv)), so that
// hkv = mulhi(2 h, magic) for every h < Hq < 2^15.
std::vector<uint8_t> pack_kernargs(const AttnSig& sig, const AttnShape& s,
                                   std::span<const uint64_t> addresses, double scale);

// One point of the CDNA space. Each wave owns one query tile of `tile` rows (block_m = tile * waves); S^T = K
// Q^T and O^T = V^T P^T run on tile x tile MFMAs so that each lane holds one query's scores and outputs.
struct CdnaParams {
  int waves = 4;          // waves per workgroup
  int block_n = 32;       // keys per iteration (32 or 64)
  int tile = 32;          // MFMA M = N: 32 (32x32xK) or 16 (16x16xK)
  int mfma_k = 8;         // 32x32x8, 16x16x16 (gfx942, gfx950); 32x32x16, 16x16x32 (gfx950)
  bool p_rtz = false;     // P f32 -> bf16 by truncation (toward zero) instead of round-to-nearest-even
  bool mfma_prio = false; // s_setprio 1 around the MFMA clusters (so a co-resident wave's softmax yields)
  // Two wave groups half an iteration apart (one staggered s_barrier) over double-buffered K/V in LDS: while
  // one group runs its MFMAs the other runs its softmax (8 waves: the two waves of each SIMD differ in
  // group).
  bool pingpong = false;
  bool o_agpr = false; // O accumulators in AGPRs (MFMA C/D), rescaled through v_accvgpr_read/write
  bool dma_k = false; // lds_dma: K (dma_k) and/or V (dma_v) loaded straight into LDS (buffer_load ... lds)
  bool dma_v = false; // instead of buffer_load into VGPRs + ds_write; V then row-major in LDS
};
// "32x32x8" -> tile 32, k 8 (InputError for another name)
void mfma_shape(const std::string& name, int& tile, int& k);
CdnaParams cdna_params(const Params& params);
// The rules of the space (cooperative K/V loads, VGPR budget); empty when valid, else the rule broken.
std::string cdna_invalid(const std::string& isa, const AttnSig& sig, const CdnaParams& p);
int cdna_vgpr_estimate(const AttnSig& sig, const CdnaParams& p); // arch VGPRs
int cdna_agpr_estimate(const AttnSig& sig, const CdnaParams& p); // AGPRs (O with o_regs=agpr, else 0)
int cdna_lds_bytes(const AttnSig& sig, const CdnaParams& p);     // K and V buffers (two with pingpong)
// The column segments one K or V row loads in: each a power-of-two number of 16-byte chunks, widest first
// (head dim 192: {16, 8}). The emitter loads by them and the space's chunk rule splits them over the threads.
std::vector<int> cdna_segment_chunks(int head_dim);
std::string cdna_kernel_name(const AttnSig& sig, const CdnaParams& p);
cdna::Kernel emit_cdna_kernel(const std::string& isa, const AttnSig& sig, const CdnaParams& p);

} // namespace isatune::gen::attention

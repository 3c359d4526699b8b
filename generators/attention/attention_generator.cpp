// The flash-attention forward generator (docs/attention.md): one signature, problem, buffers, scalars,
// float64 reference and estimate for every target; the kernels per ISA family (attention_cdna.cpp for
// gfx942/gfx950, attention_sm80.cpp for sm_80/sm_90, attention_sm90a.cpp for sm_90a).
#include <algorithm>
#include <cmath>
#include <tuple>

#include "attention_common.h"
#include "attention_ptx_backend.h"
#include "families.h"
#include "isatune/cdna/printer.h"
#include "isatune/error.h"

namespace isatune::gen {

namespace attention {

namespace {

const std::vector<int> kWaves{1, 2, 4, 8}, kBlockN{32, 64};
const std::vector<std::string> kMfma{"32x32x8", "32x32x16", "16x16x16", "16x16x32"}, kRound{"rtne", "rtz"};
const std::vector<std::string> kORegs{"vgpr", "agpr"};
const std::vector<std::string> kLdsDma{"none", "k", "v", "kv"}; // tensors loaded straight into LDS

std::string field(const Signature& sig, const char* name, const char* def) {
  auto it = sig.find(name);
  return it == sig.end() ? def : it->second;
}

int64_t get(const Problem& p, const char* name, int64_t def) {
  auto it = p.find(name);
  return it == p.end() ? def : it->second;
}

} // namespace

AttnSig attn_sig(const Signature& sig) {
  AttnSig s;
  const std::string dt = field(sig, "dtype", "bf16");
  if (dt == "bf16")
    s.dtype = DType::bf16;
  else if (dt == "f16")
    s.dtype = DType::f16;
  else
    throw InputError("attention: dtype=" + dt + " is not supported (bf16, f16)");
  const std::string hd = field(sig, "head_dim", "128");
  if (hd != "64" && hd != "128" && hd != "256" && hd != "192x128")
    throw InputError("attention: head_dim=" + hd + " is not supported (64, 128, 256, 192x128: d_qk x d_v)");
  s.head_dim = std::stoi(hd);
  s.head_dim_v = hd == "192x128" ? 128 : s.head_dim;
  const std::string mask = field(sig, "mask", "none");
  if (mask != "none" && mask != "causal")
    throw InputError("attention: mask=" + mask + " is not supported (none, causal)");
  s.causal = mask == "causal";
  const std::string layout = field(sig, "layout", "bshd");
  if (layout != "bshd" && layout != "bhsd")
    throw InputError("attention: layout=" + layout + " is not supported (bshd, bhsd)");
  s.bshd = layout == "bshd";
  const std::string lse = field(sig, "lse", "yes");
  if (lse != "yes" && lse != "no")
    throw InputError("attention: lse=" + lse + " must be yes or no");
  s.lse = lse == "yes";
  return s;
}

std::string head_dim_name(const AttnSig& sig) {
  return std::to_string(sig.head_dim) +
         (sig.head_dim_v == sig.head_dim ? std::string() : "x" + std::to_string(sig.head_dim_v));
}

AttnShape attn_shape(const AttnSig& sig, const Problem& problem) {
  AttnShape s;
  s.b = get(problem, "B", 1);
  s.hq = get(problem, "Hq", 1);
  s.hkv = get(problem, "Hkv", 0);
  if (s.hkv == 0)
    s.hkv = s.hq;
  s.sq = get(problem, "Sq", 1);
  s.sk = get(problem, "Sk", 0);
  if (s.sk == 0)
    s.sk = s.sq;
  s.pad = get(problem, "pad", 0);
  if (s.b < 1 || s.hq < 1 || s.sq < 1 || s.sk < 1)
    throw InputError("attention: B, Hq, Sq and Sk must be >= 1");
  if (s.hq % s.hkv != 0)
    throw InputError("attention: Hq=" + std::to_string(s.hq) +
                     " is not a multiple of Hkv=" + std::to_string(s.hkv) +
                     " (grouped-query attention shares each key/value head among Hq/Hkv query heads)");
  if (s.hq >= 32768)
    throw InputError("attention: Hq=" + std::to_string(s.hq) + " must be below 32768");
  if (sig.causal && s.sq > s.sk)
    throw InputError(
        "attention: mask=causal needs Sq <= Sk (bottom-right alignment would leave the first Sq-Sk=" +
        std::to_string(s.sq - s.sk) + " queries with no key)");
  if (s.pad < 0 || s.pad % 8 != 0)
    throw InputError("attention: pad=" + std::to_string(s.pad) +
                     " must be a non-negative multiple of 8 elements");
  const int64_t row = sig.head_dim + s.pad, row_v = sig.head_dim_v + s.pad;
  auto strides = [&](int64_t heads, int64_t seq, int64_t r) {
    AttnShape::Strides t;
    if (sig.bshd) {
      t.head = r, t.seq = heads * r, t.batch = seq * heads * r;
    } else {
      t.seq = r, t.head = seq * r, t.batch = heads * seq * r;
    }
    return t;
  };
  s.q = strides(s.hq, s.sq, row);
  s.o = strides(s.hq, s.sq, row_v);
  s.k = strides(s.hkv, s.sk, row);
  s.v = strides(s.hkv, s.sk, row_v);
  // The last element is d = D-1 of the last head vector; a padded tail after it is not stored.
  s.q_elems = s.b * s.hq * s.sq * row - s.pad;
  s.o_elems = s.b * s.hq * s.sq * row_v - s.pad;
  s.kv_elems = s.b * s.hkv * s.sk * row - s.pad;
  s.v_elems = s.b * s.hkv * s.sk * row_v - s.pad;
  const int64_t limit = int64_t(1) << 31;
  if (s.q_elems * 2 >= limit || s.kv_elems * 2 >= limit || s.v_elems * 2 >= limit ||
      s.o_elems * 2 >= limit || s.b * s.hq * s.sq * 4 >= limit)
    throw InputError("attention: every buffer must stay under 2 GiB (32-bit buffer offsets)");
  return s;
}

std::vector<uint8_t> pack_kernargs(const AttnSig& sig, const AttnShape& s,
                                   std::span<const uint64_t> addresses, double scale) {
  const size_t want = sig.lse ? 5 : 4;
  if (addresses.size() != want)
    throw InputError("attention takes " + std::to_string(want) + " buffer addresses (q, k, v, o" +
                     std::string(sig.lse ? ", lse" : "") + "), got " + std::to_string(addresses.size()));
  KernargWriter w;
  for (size_t i = 0; i < 5; ++i)
    w.u64(i < addresses.size() ? addresses[i] : 0);
  const uint64_t group = uint64_t(s.hq / s.hkv);
  const uint64_t magic =
      ((uint64_t(1) << 31) + group - 1) / group; // hkv = mulhi(2h, magic), h * group < 2^30
  uint32_t v[kNumU32] = {};
  v[kSq] = uint32_t(s.sq), v[kSk] = uint32_t(s.sk), v[kGroupMagic] = uint32_t(magic);
  auto put = [&](int i, const AttnShape::Strides& t) {
    v[i] = uint32_t(t.batch * 2), v[i + 1] = uint32_t(t.seq * 2), v[i + 2] = uint32_t(t.head * 2);
  };
  put(kQsb, s.q), put(kKsb, s.k), put(kVsb, s.v), put(kOsb, s.o);
  v[kLsb] = uint32_t(s.hq * s.sq * 4), v[kLsh] = uint32_t(s.sq * 4);
  v[kNrecQ] = uint32_t(s.q_elems * 2), v[kNrecK] = uint32_t(s.kv_elems * 2),
  v[kNrecV] = uint32_t(s.v_elems * 2);
  v[kNrecO] = uint32_t(s.o_elems * 2), v[kNrecL] = uint32_t(s.b * s.hq * s.sq * 4);
  for (uint32_t x : v)
    w.u32(x);
  w.f32(float(scale * 1.4426950408889634));
  return w.bytes();
}

void mfma_shape(const std::string& name, int& tile, int& k) {
  if (name == "32x32x8")
    tile = 32, k = 8;
  else if (name == "32x32x16")
    tile = 32, k = 16;
  else if (name == "16x16x16")
    tile = 16, k = 16;
  else if (name == "16x16x32")
    tile = 16, k = 32;
  else
    throw InputError("attention: mfma=" + name + " is not a shape (32x32x8, 32x32x16, 16x16x16, 16x16x32)");
}

CdnaParams cdna_params(const Params& params) {
  CdnaParams p;
  p.waves = int(param_int(params, "waves"));
  p.block_n = int(param_int(params, "block_n"));
  mfma_shape(param_str(params, "mfma"), p.tile, p.mfma_k);
  p.p_rtz = param_str(params, "p_round") == "rtz";
  p.mfma_prio = param_int(params, "mfma_prio") == 1;
  // added after the first release: a point recorded without them is today's kernel
  p.pingpong = params.count("pingpong") && param_int(params, "pingpong") == 1;
  p.o_agpr = params.count("o_regs") && param_str(params, "o_regs") == "agpr";
  if (auto it = params.find("lds_dma"); it != params.end()) { // absent in records made before it existed
    const std::string v = it->second.str();
    if (std::find(kLdsDma.begin(), kLdsDma.end(), v) == kLdsDma.end())
      throw InputError("attention: lds_dma=" + v + " is not one of none, k, v, kv");
    p.dma_k = v == "k" || v == "kv";
    p.dma_v = v == "v" || v == "kv";
  }
  return p;
}

std::string cdna_kernel_name(const AttnSig& sig, const CdnaParams& p) {
  return "attn_fwd_" + std::string(to_string(sig.dtype)) + "_d" + head_dim_name(sig) +
         (sig.causal ? "_causal" : "") + (sig.lse ? "_lse" : "") + "_w" + std::to_string(p.waves) + "_n" +
         std::to_string(p.block_n) + "_m" + std::to_string(p.tile) + "x" + std::to_string(p.mfma_k) +
         (p.p_rtz ? "_rtz" : "_rtne") + (p.mfma_prio ? "_prio" : "") + (p.pingpong ? "_pp" : "") +
         (p.o_agpr ? "_agpr" : "") + (p.dma_k ? "_dmak" : "") + (p.dma_v ? "_dmav" : "");
}

std::string cdna_invalid(const std::string& isa, const AttnSig& sig, const CdnaParams& p) {
  if (p.mfma_k * p.tile == 512 && isa != "gfx950")
    return "mfma=32x32x16 and 16x16x32 need gfx950";
  if (p.p_rtz && sig.dtype != DType::bf16)
    return "p_round=rtz is for bf16 (f16 P is rounded to nearest)";
  const int threads = 64 * p.waves;
  // K and V load in the emitter's column segments (192 = 128 + 64 columns): every segment's chunks per
  // block split evenly over the threads, so the narrowest one's do
  for (const int d : {sig.head_dim, sig.head_dim_v}) {
    const std::vector<int> segs = cdna_segment_chunks(d);
    if (const int narrow = 8 * segs.back(); (p.block_n * segs.back()) % threads != 0)
      return "block_n * " + std::to_string(narrow) + " / 8 (16-byte chunks of a block's " +
             (segs.size() == 1 ? "K/V rows" : "narrowest column segment, head dim " + std::to_string(d)) +
             ") must be a multiple of the 64 * waves threads";
  }
  if (cdna_vgpr_estimate(sig, p) > 256)
    return "estimated VGPRs above 256";
  if (p.pingpong && p.waves != 8)
    return "pingpong=1 needs waves=8 (two groups of four: the two waves of each SIMD in different groups)";
  if (const int lds = cdna_lds_bytes(sig, p), limit = isa == "gfx950" ? 160 * 1024 : 64 * 1024; lds > limit)
    return "LDS " + std::to_string(lds) + " bytes (K and Vt buffers" + (p.pingpong ? ", two of each" : "") +
           ") above the target's " + std::to_string(limit);
  if (p.o_agpr) { // unified file: accum_offset = arch VGPRs rounded to 4, granule 8, 512 per SIMD lane
    const int total = (cdna_vgpr_estimate(sig, p) + 3) / 4 * 4 + cdna_agpr_estimate(sig, p);
    if ((total + 7) / 8 * 8 * ((p.waves + 3) / 4) > 512)
      return "estimated VGPRs + AGPRs (" + std::to_string(total) + ") do not fit " + std::to_string(p.waves) +
             " waves on the 4 SIMDs (512 per SIMD lane)";
  }
  if ((p.dma_k || p.dma_v) && (p.pingpong || p.o_agpr))
    return "lds_dma (k, v, kv) only with pingpong=0 and o_regs=vgpr (the ping-pong schedule has its own K/V "
           "loads, and the LDS-DMA path's P V and O store use O in VGPRs)";
  if (p.dma_k || p.dma_v) {
    // buffer_load_dword ... lds writes 64 lanes x 4 bytes per instruction (gfx942), buffer_load_dwordx4 ...
    // lds 64 x 16 (gfx950): each wave loads whole instructions' worth of a block's K/V
    const int bytes = isa == "gfx950" ? 1024 : 256;
    const std::tuple<bool, const char*, int> tensors[] = {{p.dma_k, "K", sig.head_dim},
                                                          {p.dma_v, "V", sig.head_dim_v}};
    for (const auto& [on, name, d] : tensors) {
      if (!on)
        continue;
      if (bytes % (2 * d) != 0) // the lane-to-row mapping takes whole rows per instruction
        return std::string("lds_dma: one LDS-DMA instruction (") + std::to_string(bytes) +
               " bytes) must hold whole " + name + " rows of " + std::to_string(2 * d) + " bytes (head dim " +
               std::to_string(d) + ")";
      if ((p.block_n * d * 2) % (bytes * p.waves) != 0)
        return std::string("lds_dma: block_n * ") + std::to_string(d) + " * 2 bytes of " + name +
               " must be a multiple of waves * " + std::to_string(bytes) + " (whole LDS-DMA instructions per wave)";
    }
    if (cdna_lds_bytes(sig, p) > 65536)
      return "lds_dma: the K and V tiles exceed the 64 KiB of LDS";
  }
  return {};
}

std::vector<const AttentionPtxBackend*> attention_ptx_backends() {
  // FAMILIES: each PTX attention family adds its factory here (stateless, shared across threads).
  static const std::vector<std::unique_ptr<AttentionPtxBackend>> owned = [] {
    std::vector<std::unique_ptr<AttentionPtxBackend>> v;
    v.push_back(make_attention_sm80_backend());  // sm_80, sm_90 (attention_sm80.cpp)
    v.push_back(make_attention_sm90a_backend()); // sm_90a (attention_sm90a.cpp)
    return v;
  }();
  std::vector<const AttentionPtxBackend*> out;
  for (const auto& b : owned)
    out.push_back(b.get());
  return out;
}

const AttentionPtxBackend* attention_ptx_backend(const std::string& isa) {
  for (const AttentionPtxBackend* b : attention_ptx_backends())
    for (const auto& t : b->targets())
      if (t == isa)
        return b;
  return nullptr;
}

} // namespace attention

namespace {

using namespace attention;

class AttentionGenerator : public Generator {
public:
  std::string name() const override { return "attention"; }
  std::string description() const override {
    return "flash-attention forward (online softmax, exp2), bf16/f16, GQA, causal, BSHD/BHSD, f32 LSE";
  }
  std::vector<std::string> targets() const override {
    std::vector<std::string> t{"gfx942", "gfx950"};
    for (const AttentionPtxBackend* b : attention_ptx_backends())
      for (const auto& isa : b->targets())
        t.push_back(isa);
    return t;
  }

  std::vector<SignatureField> signature_schema() const override {
    return {{"dtype", {"bf16", "f16"}, "element type of q, k, v and o; f32 accumulation and softmax"},
            {"head_dim",
             {"128", "64", "256", "192x128"},
             "head dimension of q, k and v; 192x128: d_qk 192 (q, k), d_v 128 (v, o), MLA-style"},
            {"mask", {"none", "causal"}, "causal: aligned bottom-right, query i sees keys j <= i + Sk - Sq"},
            {"layout", {"bshd", "bhsd"}, "memory order of q, k, v and o: [B][S][H][D] or [B][H][S][D]"},
            {"lse", {"yes", "no"}, "also write the f32 log-sum-exp of each query row, [B][Hq][Sq]"}};
  }

  std::vector<ProblemField> problem_schema() const override {
    return {{"B", 1, 1 << 16, true, "batch"},
            {"Hq", 1, 32767, true, "query heads"},
            {"Hkv", 0, 32767, false, "key/value heads (0: Hq); Hq must be a multiple (GQA, MQA)"},
            {"Sq", 1, int64_t(1) << 24, true, "query length"},
            {"Sk", 0, int64_t(1) << 24, false, "key/value length (0: Sq)"},
            {"pad", 0, 1 << 16, false,
             "elements after each head vector in memory (strided layouts), multiple of 8"}};
  }

  Space space(const std::string& isa, const Signature& sig) const override {
    check_target(isa);
    const AttnSig s = attn_sig(sig);
    if (is_ptx_isa(isa))
      return attention_ptx_backend(isa)->space(isa, s);
    std::vector<Value> waves, bn, mfma, round;
    for (int x : kWaves)
      waves.push_back(Value::num(x));
    for (int x : kBlockN)
      bn.push_back(Value::num(x));
    for (const auto& x : kMfma)
      mfma.push_back(Value::str(x));
    for (const auto& x : kRound)
      round.push_back(Value::str(x));
    std::vector<Value> lds_dma;
    for (const auto& x : kLdsDma)
      lds_dma.push_back(Value::str(x));
    std::vector<Parameter> ps{{"waves", waves, true},
                              {"block_n", bn, true},
                              {"mfma", mfma, false},
                              {"p_round", round, false},
                              {"mfma_prio", {Value::num(0), Value::num(1)}, false},
                              {"pingpong", {Value::num(0), Value::num(1)}, false},
                              {"o_regs", {Value::str(kORegs[0]), Value::str(kORegs[1])}, false},
                              {"lds_dma", lds_dma, false}};
    Constraint c = [isa, s](const Config& cfg) {
      CdnaParams p;
      p.waves = kWaves[cfg[0]];
      p.block_n = kBlockN[cfg[1]];
      mfma_shape(kMfma[cfg[2]], p.tile, p.mfma_k);
      p.p_rtz = cfg[3] == 1;
      p.mfma_prio = cfg[4] == 1;
      p.pingpong = cfg[5] == 1;
      p.o_agpr = cfg[6] == 1;
      p.dma_k = cfg[7] == 1 || cfg[7] == 3;
      p.dma_v = cfg[7] == 2 || cfg[7] == 3;
      return cdna_invalid(isa, s, p).empty();
    };
    return Space(std::move(ps), {c});
  }

  std::vector<std::string> constraint_descriptions(const std::string& isa, const Signature&) const override {
    check_target(isa);
    if (is_ptx_isa(isa))
      return attention_ptx_backend(isa)->constraint_descriptions(isa);
    return {
        "mfma=32x32x16 and 16x16x32 only on gfx950 (32x32x8 and 16x16x16 on both)",
        "p_round=rtz only for dtype=bf16",
        "block_n * head_dim / 8 is a multiple of 64 * waves (each thread loads whole 16-byte K/V chunks; "
        "head_dim=192x128 loads K as columns 128 + 64, so block_n * 64 / 8 for it)",
        "estimated VGPRs (Q and O fragments, S and P tiles, K/V fragments, staging) at most 256",
        "pingpong=1 only with waves=8",
        "LDS (K and Vt buffers, doubled with pingpong=1) within the target's (64 KiB gfx942, 160 KiB gfx950)",
        "o_regs=agpr: VGPRs rounded to 4 plus the O AGPRs, rounded to 8, times ceil(waves / 4) at most 512",
        "lds_dma (K and/or V loaded straight into LDS): each wave issues whole LDS-DMA instructions "
        "(block_n * head_dim * 2 a multiple of waves * 256 bytes on gfx942, * 1024 on gfx950) and the "
        "tiles fit the 64 KiB of LDS; one instruction holds whole rows (gfx942: head dim <= 128; K of "
        "head_dim=192x128: 384-byte rows, never)",
        "lds_dma only with pingpong=0 and o_regs=vgpr"};
  }

  Generated generate(const std::string& isa, const Signature& sig, const Params& params) const override {
    check_target(isa);
    const AttnSig s = attn_sig(sig);
    if (is_ptx_isa(isa))
      return attention_ptx_backend(isa)->generate(isa, s, params);
    config_of(space(isa, sig), params); // InputError naming a value outside the space
    const CdnaParams p = cdna_params(params);
    if (std::string why = cdna_invalid(isa, s, p); !why.empty())
      throw InputError("attention: " + format(params) + " breaks a constraint: " + why);
    Generated g;
    g.isa = isa;
    g.kernel_name = cdna_kernel_name(s, p);
    cdna::Kernel k = emit_cdna_kernel(isa, s, p);
    g.text = cdna::print(k);
    g.cdna = std::move(k);
    return g;
  }

  std::vector<BufferSpec> buffers(const Signature& sig, const Problem& problem) const override {
    const AttnSig s = attn_sig(sig);
    const AttnShape sh = attn_shape(s, problem);
    auto tensor = [&](const char* n, BufferRole role, int64_t elems, int64_t heads, int64_t seq, double lo,
                      double hi, int dim) {
      BufferSpec b;
      b.name = n;
      b.dtype = s.dtype;
      b.role = role;
      b.elements = uint64_t(elems);
      b.rows = uint64_t(sh.b * heads * seq); // one row per head vector: the row norm is per query
      b.cols = uint64_t(dim);
      b.row_stride = uint64_t(dim + sh.pad);
      b.init_lo = lo, b.init_hi = hi;
      return b;
    };
    const int dq = s.head_dim, dv = s.head_dim_v;
    std::vector<BufferSpec> out{tensor("q", BufferRole::input, sh.q_elems, sh.hq, sh.sq, -2, 2, dq),
                                tensor("k", BufferRole::input, sh.kv_elems, sh.hkv, sh.sk, -2, 2, dq),
                                tensor("v", BufferRole::input, sh.v_elems, sh.hkv, sh.sk, -1, 1, dv),
                                tensor("o", BufferRole::output, sh.o_elems, sh.hq, sh.sq, -1, 1, dv)};
    if (s.lse) {
      BufferSpec l;
      l.name = "lse";
      l.dtype = DType::f32;
      l.role = BufferRole::output;
      l.elements = uint64_t(sh.b * sh.hq * sh.sq);
      l.rows = uint64_t(sh.b * sh.hq);
      l.cols = uint64_t(sh.sq);
      l.row_stride = uint64_t(sh.sq);
      out.push_back(l);
    }
    return out;
  }

  std::map<std::string, std::pair<double, double>> scalars(const Signature& sig) const override {
    const double d = attn_sig(sig).head_dim; // d_qk
    return {{"scale", {0.5 / std::sqrt(d), 2.0 / std::sqrt(d)}}};
  }

  std::vector<Launch> launches(const std::string& isa, const Signature& sig, const Params& params,
                               const Problem& problem, std::span<const uint64_t> addresses,
                               const std::map<std::string, double>& scalars) const override {
    check_target(isa);
    const AttnSig s = attn_sig(sig);
    const AttnShape sh = attn_shape(s, problem);
    auto it = scalars.find("scale");
    const double scale = it == scalars.end() ? 1.0 / std::sqrt(double(s.head_dim)) : it->second;
    if (is_ptx_isa(isa))
      return {attention_ptx_backend(isa)->launch(isa, s, params, sh, addresses,
                                                 pack_kernargs(s, sh, addresses, scale))};
    const CdnaParams p = cdna_params(params);
    Launch l;
    l.kernel = cdna_kernel_name(s, p);
    const int64_t bm = int64_t(p.tile) * p.waves;
    l.grid.x = uint32_t((sh.sq + bm - 1) / bm);
    l.grid.y = uint32_t(sh.hq);
    l.grid.z = uint32_t(sh.b);
    l.block.x = uint32_t(64 * p.waves);
    l.kernargs = pack_kernargs(s, sh, addresses, scale);
    return {l};
  }

  void reference(const Signature& sig, const Problem& problem, const std::map<std::string, double>& scalars,
                 std::vector<std::vector<double>>& buffers) const override {
    const AttnSig s = attn_sig(sig);
    const AttnShape sh = attn_shape(s, problem);
    auto it = scalars.find("scale");
    const double scale = it == scalars.end() ? 1.0 / std::sqrt(double(s.head_dim)) : it->second;
    const auto &q = buffers.at(0), &k = buffers.at(1), &v = buffers.at(2);
    auto& o = buffers.at(3);
    const int64_t d = s.head_dim, dv = s.head_dim_v, group = sh.hq / sh.hkv;
    std::vector<double> p(size_t(sh.sk)), acc(static_cast<size_t>(dv));
    for (int64_t b = 0; b < sh.b; ++b)
      for (int64_t h = 0; h < sh.hq; ++h) {
        const int64_t hk = h / group;
        for (int64_t i = 0; i < sh.sq; ++i) {
          const double* qi = q.data() + b * sh.q.batch + h * sh.q.head + i * sh.q.seq;
          const int64_t keys = s.causal ? i + sh.sk - sh.sq + 1 : sh.sk; // >= 1: causal needs Sq <= Sk
          double m = -INFINITY;
          for (int64_t j = 0; j < keys; ++j) {
            const double* kj = k.data() + b * sh.k.batch + hk * sh.k.head + j * sh.k.seq;
            double dot = 0;
            for (int64_t e = 0; e < d; ++e)
              dot += qi[e] * kj[e];
            p[size_t(j)] = dot * scale;
            m = std::max(m, p[size_t(j)]);
          }
          double sum = 0;
          std::fill(acc.begin(), acc.end(), 0.0);
          for (int64_t j = 0; j < keys; ++j) {
            const double w = std::exp(p[size_t(j)] - m);
            sum += w;
            const double* vj = v.data() + b * sh.v.batch + hk * sh.v.head + j * sh.v.seq;
            for (int64_t e = 0; e < dv; ++e)
              acc[size_t(e)] += w * vj[e];
          }
          double* oi = o.data() + b * sh.o.batch + h * sh.o.head + i * sh.o.seq;
          for (int64_t e = 0; e < dv; ++e)
            oi[e] = acc[size_t(e)] / sum;
          if (s.lse)
            buffers.at(4)[size_t((b * sh.hq + h) * sh.sq + i)] = m + std::log(sum);
        }
      }
  }

  // FLOPs: 2 * Sq * avg_Sk * (Dqk + Dv) per query head (4 * B * Hq * Sq * Sk * D without a mask); causal
  // bottom-right averages Sk over the visible keys, (Sk - Sq + Sk) / 2, which halves it when Sq = Sk.
  Work work(const Signature& sig, const Problem& problem) const override {
    const AttnSig s = attn_sig(sig);
    const AttnShape sh = attn_shape(s, problem);
    const double d = s.head_dim, dv = s.head_dim_v;
    const double avg_sk = s.causal ? (double(sh.sk - sh.sq) + double(sh.sk)) / 2 : double(sh.sk);
    Work w;
    w.flops = 2.0 * double(sh.b * sh.hq) * double(sh.sq) * avg_sk * (d + dv);
    const double es = size_of(s.dtype);
    w.bytes = es * (d + dv) * double(sh.b) * (double(sh.hq * sh.sq) + double(sh.hkv * sh.sk)) +
              (s.lse ? 4.0 * double(sh.b * sh.hq * sh.sq) : 0.0);
    w.matrix = true;
    return w;
  }

  DType output_dtype(const Signature& sig) const override { return attn_sig(sig).dtype; }

private:
  void check_target(const std::string& isa) const {
    const auto t = targets();
    if (std::find(t.begin(), t.end(), isa) == t.end()) {
      std::string known;
      for (const auto& x : t)
        known += (known.empty() ? "" : ", ") + x;
      throw InputError("attention does not generate for " + isa + " (targets: " + known + ")");
    }
  }
};

} // namespace

std::unique_ptr<Generator> make_attention_generator() {
  return std::make_unique<AttentionGenerator>();
}

} // namespace isatune::gen

#pragma once
// The shape advisor (docs/advisor.md): how well a transformer's dimensions fit a target. Each GEMM of a layer
// (QKV, O, gate/up, down) and the LM head, with M = tokens, N = output features, K = input features, is fitted
// with every tile shape (tile_m x tile_n) of the GEMM generator's space for the target: the padding the last
// tiles waste, the wave quantisation of the tiles over the CUs/SMs, and the fraction of peak the roofline
// allows then (compute at the matrix peak derated by both, memory at HBM bandwidth on compulsory bytes); the
// attention of a layer likewise with every query x key block of the attention generator's space. With a tuning
// database, the best recorded variant of each GEMM and attention problem is shown beside it (measured on a
// GPU, or the emulator's estimate, labelled). Then nearby dimensions (within a tolerance) that fit better, with
// the modelled gain. A model of fit, not a measurement.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace isatune::tune {

struct ModelDims {
  std::string name;
  int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  int64_t tokens = 4096; // batch x sequence: the M of every GEMM
  std::string source;    // where the dimensions come from
};

// Llama-3-8B, Llama-3-70B, Mistral-7B, Qwen2-7B (their published config.json, cited in `source`).
const std::vector<ModelDims>& model_presets();
// A preset name (case-insensitive) or a JSON file: our keys (hidden, heads, kv_heads, head_dim, ffn, vocab,
// tokens) or a Hugging Face config.json's (hidden_size, num_attention_heads, num_key_value_heads, head_dim,
// intermediate_size, vocab_size). InputError naming the missing or bad field.
ModelDims parse_model(const std::string& file_or_preset);

struct TargetPeaks {
  std::string isa, chip;
  uint32_t units = 0;       // CUs or SMs
  double matrix_tflops = 0; // dense bf16/f16
  double hbm_tbps = 0;
  double flops_per_clk_unit = 0; // dense bf16 FLOPs per clock per CU/SM (peak / units / clock)
  double feed_bytes_per_clk_unit = 64; // what one CU/SM is assumed to read from L2 per clock (docs/advisor.md)
};
TargetPeaks target_peaks(const std::string& isa); // InputError for an unknown target

struct TileFit {
  int tile_m = 0, tile_n = 0;
  uint64_t tiles = 0;          // ceil(M / tile_m) * ceil(N / tile_n)
  double padding_waste = 0;    // 1 - M*N / (tiles * tile_m * tile_n)
  uint64_t waves = 0;          // ceil(tiles / units)
  double wave_efficiency = 1;  // tiles / (waves * units)
  // min(1, tile_m*tile_n / (tile_m + tile_n) * feed bytes / FLOPs per clock): whether the tile's A and B panels
  // (2 bytes per element per k) arrive as fast as its MFMAs/wgmmas consume them
  double feed_efficiency = 1;
  double fraction_of_peak = 0; // compute / max(compute / ((1 - waste) * wave eff * feed eff), memory)
};

// The best recorded variant of a problem in a tuning database.
struct RecordedBest {
  double median_ms = 0;
  double fraction_of_peak = 0;
  std::string device_kind; // real (a measurement) | emulated (the emulator's estimate)
  std::string signature, parameters;
};

struct GemmAdvice {
  std::string name; // qkv, o, gate_up, down, lm_head
  int64_t m = 0, n = 0, k = 0;
  double flops = 0, bytes = 0;
  std::vector<TileFit> fits; // every tile shape of the space, best first
  std::optional<RecordedBest> recorded;
  const TileFit& best() const { return fits.front(); }
};

// One tile shape of the attention: a workgroup (CTA) owns block_m queries of one head and runs over the keys in
// blocks of block_n (FlashAttention style), skipping key blocks past its last visible key under a causal mask.
struct AttentionFit {
  int block_m = 0, block_n = 0;
  uint64_t workgroups = 0;     // batch * heads * ceil(Sq / block_m)
  double computed_pairs = 0;   // (query, key) pairs the tiles compute: block_m * block_n * key blocks run
  double padding_waste = 0;    // 1 - visible pairs / computed pairs (Sq and Sk tails, the causal diagonal)
  uint64_t waves = 0;          // ceil(workgroups / units)
  double wave_efficiency = 1;  // workgroups / (waves * units)
  // min(1, block_m * feed bytes / FLOPs per clock): per key block the tile's K and V panels (4 block_n d bytes)
  // feed 4 block_m block_n d FLOPs, Q staying in registers
  double feed_efficiency = 1;
  double fraction_of_peak = 0; // compute / max(compute / ((1 - waste) * wave eff * feed eff), memory)
};

struct AttentionAdvice {
  int64_t batch = 1, tokens = 0, heads = 0, kv_heads = 0, head_dim = 0; // Sq = Sk = tokens
  bool causal = true;
  double flops = 0;          // 2 B Hq Sq avg_Sk (d_qk + d_v); causal prefill: 2 tokens^2 heads head_dim
  double bytes = 0;          // q, k, v and o once (bf16)
  double visible_pairs = 0;  // (query, key) pairs the mask lets through, per batch and head
  // The tile shapes are those of the attention generator's space (`space_isa`, bf16, this head_dim, causal);
  // false: it has none for this target or head_dim, and one 128 x 64 tile is modelled instead.
  bool generator = false;
  std::string space_isa;
  std::vector<AttentionFit> fits; // best first
  std::optional<RecordedBest> recorded;
  const AttentionFit& best() const { return fits.front(); }
};
struct Suggestion {
  std::string dimension; // hidden, ffn, vocab
  int64_t from = 0, to = 0;
  double fraction_before = 0, fraction_after = 0; // of the layer (hidden, ffn) or the LM head (vocab)
  double gain = 0;                                // fraction_after / fraction_before - 1
};

struct Advice {
  ModelDims model;
  TargetPeaks target;
  std::vector<GemmAdvice> gemms;
  AttentionAdvice attention;
  double layer_fraction = 0;  // QKV, O, gate/up, down and attention together
  std::vector<Suggestion> suggestions;
  double tolerance = 0.05;
};

struct AdviseOptions {
  std::string db_path;     // empty: no recorded variants
  double tolerance = 0.05; // nearby dimensions within +-tolerance
  int64_t step = 64;       // nearby dimensions are multiples of this
};

// One GEMM against a list of tile shapes (the fit alone, for tests and `advise`).
std::vector<TileFit> fit_gemm(int64_t m, int64_t n, int64_t k, const TargetPeaks& target,
                              const std::vector<std::pair<int, int>>& tiles);
// The distinct tile_m x tile_n of the GEMM generator's space for the target (bf16 inputs).
std::vector<std::pair<int, int>> gemm_tile_shapes(const std::string& isa);
// The distinct block_m x block_n of the attention generator's space for the target (bf16, causal, head_dim):
// block_m = waves x the MFMA's M (CDNA) or 16 x warps (PTX mma.sync). Empty when the generator has no kernel
// for the target or head_dim; `space_isa` (when given) gets the generator target used (sm_90 for sm_90a).
std::vector<std::pair<int, int>> attention_tile_shapes(const std::string& isa, int64_t head_dim,
                                                       std::string* space_isa = nullptr);
// One attention (batch, heads, kv_heads, Sq = Sk = tokens, causal or not) against a list of block shapes; with
// no shapes, the 128 x 64 tile alone.
AttentionAdvice fit_attention(int64_t batch, int64_t tokens, int64_t heads, int64_t kv_heads, int64_t head_dim,
                              bool causal, const TargetPeaks& target, const std::vector<std::pair<int, int>>& tiles);

Advice advise(const ModelDims& model, const std::string& isa, const AdviseOptions& options = {});

} // namespace isatune::tune

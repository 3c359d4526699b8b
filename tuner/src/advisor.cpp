#include "isatune/tune/advisor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "isatune/cdna/target.h"
#include "isatune/db/database.h"
#include "isatune/error.h"
#include "isatune/gen/generator.h"
#include "isatune/tune/estimate.h"
#include "isatune/tune/tuning_recorder.h"

namespace isatune::tune {

const std::vector<ModelDims>& model_presets() {
  // The published config.json of each model (Hugging Face model cards), read from the files named here.
  static const std::vector<ModelDims> presets = {
      {"Llama-3-8B", 4096, 32, 8, 128, 14336, 128256, 4096,
       "huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"},
      {"Llama-3-70B", 8192, 64, 8, 128, 28672, 128256, 4096,
       "huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json"},
      {"Mistral-7B", 4096, 32, 8, 128, 14336, 32000, 4096,
       "huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json"},
      {"Qwen2-7B", 3584, 28, 4, 128, 18944, 152064, 4096, "huggingface.co/Qwen/Qwen2-7B/blob/main/config.json"},
  };
  return presets;
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int64_t field(const nlohmann::json& j, const std::string& path, std::initializer_list<const char*> names,
              std::optional<int64_t> fallback = std::nullopt) {
  for (const char* n : names) {
    auto it = j.find(n);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() || it->get<int64_t>() < 1)
      throw InputError(path + ": '" + n + "' must be a positive integer");
    return it->get<int64_t>();
  }
  if (fallback) return *fallback;
  throw InputError(path + ": missing '" + *names.begin() + "'" +
                   (names.size() > 1 ? std::string(" (or '") + *(names.begin() + 1) + "')" : std::string()));
}

double fraction(double flops, double bytes, double efficiency, const TargetPeaks& t) {
  const double compute = flops / (t.matrix_tflops * 1e12), memory = bytes / (t.hbm_tbps * 1e12);
  const double time = std::max(compute / std::max(efficiency, 1e-9), memory);
  return time > 0 ? compute / time : 0;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

ModelDims parse_model(const std::string& file_or_preset) {
  for (const auto& p : model_presets())
    if (lower(p.name) == lower(file_or_preset)) return p;
  std::ifstream in(file_or_preset);
  if (!in) {
    std::string names;
    for (const auto& p : model_presets()) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("--model: '" + file_or_preset + "' is neither a preset (" + names + ") nor a readable file");
  }
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError(file_or_preset + ": not a JSON object");
  ModelDims m;
  m.name = j.value("name", std::string(j.value("_name_or_path", file_or_preset)));
  m.source = file_or_preset;
  m.hidden = field(j, file_or_preset, {"hidden", "hidden_size"});
  m.heads = field(j, file_or_preset, {"heads", "num_attention_heads"});
  m.kv_heads = field(j, file_or_preset, {"kv_heads", "num_key_value_heads"}, m.heads);
  if (m.hidden % m.heads && !j.contains("head_dim"))
    throw InputError(file_or_preset + ": hidden " + std::to_string(m.hidden) + " is not a multiple of heads " +
                     std::to_string(m.heads) + "; give head_dim");
  m.head_dim = field(j, file_or_preset, {"head_dim"}, m.hidden / m.heads);
  m.ffn = field(j, file_or_preset, {"ffn", "intermediate_size"});
  m.vocab = field(j, file_or_preset, {"vocab", "vocab_size"});
  m.tokens = field(j, file_or_preset, {"tokens"}, 4096);
  if (m.heads % m.kv_heads)
    throw InputError(file_or_preset + ": heads " + std::to_string(m.heads) + " is not a multiple of kv_heads " +
                     std::to_string(m.kv_heads));
  return m;
}

TargetPeaks target_peaks(const std::string& isa) {
  TargetPeaks t;
  t.isa = isa;
  if (gen::is_ptx_isa(isa)) {
    const NvidiaPeaks p = nvidia_peaks(isa);
    t.chip = p.chip, t.units = p.sms, t.matrix_tflops = p.matrix_tflops, t.hbm_tbps = p.hbm_tbps;
    // dense bf16 per SM per clock: A100 2048 (312 TFLOP/s = 108 x 2048 x 1.41 GHz), H100/H200 4096
    // (989.4 TFLOP/s = 132 x 4096 x 1.83 GHz)
    t.flops_per_clk_unit = isa == "sm_80" ? 2048 : 4096;
    return t;
  }
  const cdna::TargetInfo* c = cdna::find_target(isa);
  if (!c) throw InputError("--target: unknown target '" + isa + "' (gfx90a, gfx942, gfx950, sm_80, sm_90, sm_90a)");
  t.chip = std::string(c->products.substr(0, c->products.find(',')));
  t.units = c->compute_units;
  t.matrix_tflops = double(c->matrix_flops_per_clk_cu_f16) * c->compute_units * c->peak_clock_ghz * 1e9 / 1e12;
  t.hbm_tbps = c->peak_hbm_tbps;
  t.flops_per_clk_unit = c->matrix_flops_per_clk_cu_f16;
  return t;
}

std::vector<TileFit> fit_gemm(int64_t m, int64_t n, int64_t k, const TargetPeaks& target,
                              const std::vector<std::pair<int, int>>& tiles) {
  if (m < 1 || n < 1 || k < 1) throw InputError("advise: GEMM dimensions must be >= 1");
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const double bytes = 2.0 * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n)); // bf16
  std::vector<TileFit> fits;
  for (const auto& [tm, tn] : tiles) {
    TileFit f;
    f.tile_m = tm, f.tile_n = tn;
    f.tiles = uint64_t(ceil_div(m, tm) * ceil_div(n, tn));
    f.padding_waste = 1.0 - double(m) * double(n) / (double(f.tiles) * tm * tn);
    f.waves = (f.tiles + target.units - 1) / target.units;
    f.wave_efficiency = double(f.tiles) / (double(f.waves) * target.units);
    f.feed_efficiency = std::min(1.0, double(tm) * tn / (tm + tn) * target.feed_bytes_per_clk_unit /
                                          std::max(target.flops_per_clk_unit, 1.0));
    f.fraction_of_peak =
        fraction(flops, bytes, (1 - f.padding_waste) * f.wave_efficiency * f.feed_efficiency, target);
    fits.push_back(f);
  }
  // Best first; among equals the larger tile (more reuse per load, which this model does not see).
  std::stable_sort(fits.begin(), fits.end(), [](const TileFit& a, const TileFit& b) {
    if (a.fraction_of_peak != b.fraction_of_peak) return a.fraction_of_peak > b.fraction_of_peak;
    return a.tile_m * a.tile_n > b.tile_m * b.tile_n;
  });
  return fits;
}

std::vector<std::pair<int, int>> gemm_tile_shapes(const std::string& isa) {
  const gen::Generator& g = gen::find_generator("gemm");
  const std::vector<std::vector<std::string>> signatures = {
      {"a=bf16", "b=bf16", "cd=bf16", "layout=TN"}, {"a=bf16", "b=bf16", "layout=NN"}, {"a=bf16", "b=bf16"}};
  std::string why;
  for (const auto& words : signatures) {
    try {
      const gen::Space space = g.space(isa, gen::parse_signature(g, words));
      size_t im = 0, in = 0;
      for (size_t i = 0; i < space.parameters().size(); ++i) {
        if (space.parameters()[i].name == "tile_m") im = i + 1;
        if (space.parameters()[i].name == "tile_n") in = i + 1;
      }
      if (!im || !in || !space.size()) continue;
      std::set<std::pair<int, int>> shapes;
      for (uint64_t idx : space.valid()) {
        const gen::Config c = space.config_at(idx);
        shapes.insert({int(space.number(c, im - 1)), int(space.number(c, in - 1))});
      }
      return {shapes.begin(), shapes.end()};
    } catch (const InputError& e) {
      why = e.what();
    }
  }
  throw InputError("advise: the gemm generator has no bf16 space with tile_m and tile_n for " + isa +
                   (why.empty() ? "" : ": " + why));
}

std::vector<std::pair<int, int>> attention_tile_shapes(const std::string& isa, int64_t head_dim,
                                                       std::string* space_isa) {
  const gen::Generator& g = gen::find_generator("attention");
  const auto targets = g.targets();
  std::string t = isa;
  if (std::find(targets.begin(), targets.end(), t) == targets.end() && isa == "sm_90a") t = "sm_90";
  if (std::find(targets.begin(), targets.end(), t) == targets.end()) return {};
  bool known_dim = false;
  for (const auto& f : g.signature_schema())
    if (f.name == "head_dim")
      for (const auto& v : f.values) known_dim |= v == std::to_string(head_dim);
  if (!known_dim) return {};
  const gen::Space space = g.space(
      t, gen::parse_signature(g, std::vector<std::string>{"dtype=bf16", "head_dim=" + std::to_string(head_dim),
                                                          "mask=causal"}));
  size_t iw = 0, imfma = 0, iwarps = 0, iconsumers = 0, in = 0; // 1-based positions, 0: absent
  for (size_t i = 0; i < space.parameters().size(); ++i) {
    const auto& n = space.parameters()[i].name;
    if (n == "waves") iw = i + 1;
    if (n == "mfma") imfma = i + 1;
    if (n == "warps") iwarps = i + 1;
    if (n == "consumers") iconsumers = i + 1;
    if (n == "block_n") in = i + 1;
  }
  if (!in || !(iwarps || iconsumers || (iw && imfma)))
    throw InputError("advise: the attention generator's space for " + t +
                     " has neither waves and mfma, warps nor consumers beside block_n");
  std::set<std::pair<int, int>> shapes;
  for (uint64_t idx : space.valid()) {
    const gen::Config c = space.config_at(idx);
    int block_m = 0;
    if (iwarps) {
      block_m = 16 * int(space.number(c, iwarps - 1)); // mma.sync m16: 16 query rows per warp
    } else if (iconsumers) {
      block_m = 64 * int(space.number(c, iconsumers - 1)); // sm_90a wgmma m64: 64 query rows per consumer warpgroup
    } else {
      const std::string& mfma = space.parameters()[imfma - 1].values[c[imfma - 1]].text; // "32x32x8": M = 32
      block_m = int(space.number(c, iw - 1)) * std::stoi(mfma.substr(0, mfma.find('x')));
    }
    shapes.insert({block_m, int(space.number(c, in - 1))});
  }
  if (space_isa && !shapes.empty()) *space_isa = t; // an empty space (head_dim=256 on sm_80): no generator
  return {shapes.begin(), shapes.end()};
}

AttentionAdvice fit_attention(int64_t batch, int64_t tokens, int64_t heads, int64_t kv_heads, int64_t head_dim,
                              bool causal, const TargetPeaks& target, const std::vector<std::pair<int, int>>& tiles) {
  if (batch < 1 || tokens < 1 || heads < 1 || kv_heads < 1 || head_dim < 1)
    throw InputError("advise: attention dimensions must be >= 1");
  AttentionAdvice a;
  a.batch = batch, a.tokens = tokens, a.heads = heads, a.kv_heads = kv_heads, a.head_dim = head_dim;
  a.causal = causal;
  const double t = double(tokens), d = double(head_dim), bh = double(batch) * double(heads);
  // Sq = Sk = T: bottom-right causal query i sees keys 0..i (T (T + 1) / 2 pairs); the FLOP convention of the
  // attention generator (docs/attention.md) counts avg_Sk = (2 Sk - Sq) / 2 = T / 2 keys per query.
  a.visible_pairs = causal ? t * (t + 1) / 2 : t * t;
  const double avg_sk = causal ? t / 2 : t;
  a.flops = 2.0 * bh * t * avg_sk * 2 * d;
  a.bytes = 2.0 * double(batch) * t * d * double(2 * heads + 2 * kv_heads); // q, o (Hq heads); k, v (Hkv)
  const std::vector<std::pair<int, int>> shapes = tiles.empty() ? std::vector<std::pair<int, int>>{{128, 64}} : tiles;
  for (const auto& [bm, bn] : shapes) {
    AttentionFit f;
    f.block_m = bm, f.block_n = bn;
    const int64_t qblocks = ceil_div(tokens, bm);
    f.workgroups = uint64_t(qblocks * batch * heads);
    for (int64_t i = 0; i < qblocks; ++i) {
      // keys the block's last query sees (all Sk without a mask); key blocks past them are skipped
      const int64_t keys = causal ? std::min<int64_t>((i + 1) * bm, tokens) : tokens;
      f.computed_pairs += double(bm) * double(bn) * double(ceil_div(keys, bn));
    }
    f.padding_waste = 1.0 - a.visible_pairs / f.computed_pairs;
    f.waves = (f.workgroups + target.units - 1) / target.units;
    f.wave_efficiency = double(f.workgroups) / (double(f.waves) * target.units);
    f.feed_efficiency =
        std::min(1.0, double(bm) * target.feed_bytes_per_clk_unit / std::max(target.flops_per_clk_unit, 1.0));
    f.fraction_of_peak =
        fraction(a.flops, a.bytes, (1 - f.padding_waste) * f.wave_efficiency * f.feed_efficiency, target);
    a.fits.push_back(f);
  }
  std::stable_sort(a.fits.begin(), a.fits.end(), [](const AttentionFit& x, const AttentionFit& y) {
    if (x.fraction_of_peak != y.fraction_of_peak) return x.fraction_of_peak > y.fraction_of_peak;
    return x.block_m * x.block_n > y.block_m * y.block_n;
  });
  return a;
}

namespace {

struct Layer {
  std::vector<GemmAdvice> gemms;
  AttentionAdvice attention;
  double layer_fraction = 0;
};

struct Shapes {
  std::vector<std::pair<int, int>> gemm, attention;
  std::string attention_isa; // empty: no attention generator for the target and head_dim
};

Layer fit_layer(const ModelDims& d, const TargetPeaks& t, const Shapes& shapes_of) {
  Layer l;
  const int64_t q = d.heads * d.head_dim, kv = d.kv_heads * d.head_dim;
  const struct {
    const char* name;
    int64_t n, k;
  } shapes[] = {{"qkv", q + 2 * kv, d.hidden}, {"o", d.hidden, q}, {"gate_up", 2 * d.ffn, d.hidden},
                {"down", d.hidden, d.ffn}, {"lm_head", d.vocab, d.hidden}};
  double flops = 0, time = 0;
  for (const auto& s : shapes) {
    GemmAdvice g;
    g.name = s.name, g.m = d.tokens, g.n = s.n, g.k = s.k;
    g.flops = 2.0 * double(g.m) * double(g.n) * double(g.k);
    g.bytes = 2.0 * (double(g.m) * double(g.k) + double(g.k) * double(g.n) + double(g.m) * double(g.n));
    g.fits = fit_gemm(g.m, g.n, g.k, t, shapes_of.gemm);
    if (g.name != "lm_head") flops += g.flops, time += g.flops / std::max(g.best().fraction_of_peak, 1e-12);
    l.gemms.push_back(std::move(g));
  }
  l.attention = fit_attention(1, d.tokens, d.heads, d.kv_heads, d.head_dim, true, t, shapes_of.attention);
  l.attention.generator = !shapes_of.attention.empty();
  l.attention.space_isa = shapes_of.attention_isa;
  flops += l.attention.flops, time += l.attention.flops / std::max(l.attention.best().fraction_of_peak, 1e-12);
  l.layer_fraction = flops / time;
  return l;
}

std::optional<RecordedBest> recorded_best(db::Database& db, const std::string& isa, const GemmAdvice& g,
                                          const TargetPeaks& t) {
  const std::string problem = TuningRecorder::problem_key({{"M", g.m}, {"N", g.n}, {"K", g.k}});
  auto rows = db.query("SELECT b.median_ms, b.device_kind, b.signature, v.parameters FROM best b JOIN variants v ON "
                       "v.id = b.variant_id WHERE b.generator = 'gemm' AND b.isa = ? AND b.problem = ? ORDER BY "
                       "b.device_kind = 'real' DESC, b.median_ms LIMIT 1",
                       {isa, problem});
  if (rows.empty()) return std::nullopt;
  RecordedBest r;
  const auto& row = rows.front();
  r.median_ms = std::holds_alternative<double>(row[0]) ? std::get<double>(row[0]) : double(std::get<int64_t>(row[0]));
  r.device_kind = db::to_string(row[1]);
  r.signature = db::to_string(row[2]);
  r.parameters = db::to_string(row[3]);
  r.fraction_of_peak = r.median_ms > 0 ? g.flops / (t.matrix_tflops * 1e12) / (r.median_ms * 1e-3) : 0;
  return r;
}

double number_of(const db::Value& v) {
  return std::holds_alternative<double>(v) ? std::get<double>(v) : double(std::get<int64_t>(v));
}

// The best recorded attention variant for the layer's problem: B = 1, Hq, Hkv, Sq = Sk = tokens, no padding,
// with a causal mask and this head_dim (any dtype, layout or LSE), on the target's ISA or the generator target
// used for it (sm_90 for sm_90a). Missing Hkv, Sk and pad take their defaults (Hq, Sq, 0).
std::optional<RecordedBest> recorded_attention(db::Database& db, const std::string& isa, const std::string& space_isa,
                                               const AttentionAdvice& at, const TargetPeaks& t) {
  auto rows = db.query("SELECT b.median_ms, b.device_kind, b.signature, v.parameters, b.problem FROM best b JOIN "
                       "variants v ON v.id = b.variant_id WHERE b.generator = 'attention' AND b.isa IN (?, ?) "
                       "ORDER BY b.device_kind = 'real' DESC, b.median_ms",
                       {isa, space_isa.empty() ? isa : space_isa});
  for (const auto& row : rows) {
    const auto sig = nlohmann::json::parse(db::to_string(row[2]), nullptr, false);
    const auto prob = nlohmann::json::parse(db::to_string(row[4]), nullptr, false);
    if (!sig.is_object() || !prob.is_object()) continue;
    if (sig.value("mask", std::string()) != (at.causal ? "causal" : "none") ||
        sig.value("head_dim", std::string()) != std::to_string(at.head_dim))
      continue;
    auto dim = [&](const char* name, int64_t fallback) {
      const auto it = prob.find(name);
      const int64_t v = it != prob.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
      return v ? v : fallback;
    };
    const int64_t hq = dim("Hq", 0), sq = dim("Sq", 0);
    if (dim("B", 0) != at.batch || hq != at.heads || dim("Hkv", hq) != at.kv_heads || sq != at.tokens ||
        dim("Sk", sq) != at.tokens || dim("pad", 0) != 0)
      continue;
    RecordedBest r;
    r.median_ms = number_of(row[0]);
    r.device_kind = db::to_string(row[1]);
    r.signature = db::to_string(row[2]);
    r.parameters = db::to_string(row[3]);
    r.fraction_of_peak = r.median_ms > 0 ? at.flops / (t.matrix_tflops * 1e12) / (r.median_ms * 1e-3) : 0;
    return r;
  }
  return std::nullopt;
}

} // namespace

Advice advise(const ModelDims& model, const std::string& isa, const AdviseOptions& options) {
  if (options.tolerance < 0 || options.tolerance > 0.5)
    throw InputError("--tolerance: must be between 0 and 50 percent");
  if (options.step < 1) throw InputError("advise: step must be >= 1");
  Advice a;
  a.model = model;
  a.tolerance = options.tolerance;
  a.target = target_peaks(isa);
  Shapes tiles;
  tiles.gemm = gemm_tile_shapes(isa);
  tiles.attention = attention_tile_shapes(isa, model.head_dim, &tiles.attention_isa);
  Layer base = fit_layer(model, a.target, tiles);
  a.gemms = std::move(base.gemms);
  a.attention = base.attention;
  a.layer_fraction = base.layer_fraction;
  if (!options.db_path.empty()) {
    auto db = db::Database::open(options.db_path, db::OpenOptions{.read_only = true});
    for (auto& g : a.gemms) g.recorded = recorded_best(db, isa, g, a.target);
    a.attention.recorded = recorded_attention(db, isa, tiles.attention_isa, a.attention, a.target);
  }

  // Nearby dimensions: each of hidden, ffn and vocab moved alone to a multiple of `step` within the tolerance.
  const double lm_before = a.gemms.back().best().fraction_of_peak;
  for (const char* dim : {"hidden", "ffn", "vocab"}) {
    const std::string name = dim;
    int64_t ModelDims::*member = name == "hidden" ? &ModelDims::hidden : name == "ffn" ? &ModelDims::ffn : &ModelDims::vocab;
    const int64_t from = model.*member;
    const double before = name == "vocab" ? lm_before : a.layer_fraction;
    const int64_t lo = std::max<int64_t>(options.step, int64_t(std::ceil(double(from) * (1 - options.tolerance))));
    const int64_t hi = int64_t(std::floor(double(from) * (1 + options.tolerance)));
    Suggestion best{name, from, from, before, before, 0};
    for (int64_t v = ceil_div(lo, options.step) * options.step; v <= hi; v += options.step) {
      if (v == from) continue;
      ModelDims d = model;
      d.*member = v;
      const Layer l = fit_layer(d, a.target, tiles);
      const double after = name == "vocab" ? l.gemms.back().best().fraction_of_peak : l.layer_fraction;
      const bool closer = std::llabs(v - from) < std::llabs(best.to - from);
      if (after > best.fraction_after * (1 + 1e-9) || (after >= best.fraction_after * (1 - 1e-9) && closer &&
                                                        best.to != from && after > before))
        best.to = v, best.fraction_after = after;
    }
    best.gain = best.fraction_before > 0 ? best.fraction_after / best.fraction_before - 1 : 0;
    if (best.to != from && best.gain > 0.005) a.suggestions.push_back(best);
  }
  return a;
}

} // namespace isatune::tune

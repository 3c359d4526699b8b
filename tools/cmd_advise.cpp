// `isatune advise`: how well a transformer's dimensions fit a target's tiles and waves (tune/advisor.h).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "isatune/tune/advisor.h"
#include "table.h"

namespace isatune::cli {

namespace {
struct AdviseOptions {
  std::string target, model, db;
  int64_t tokens = 0;
  double tolerance_pct = 5;
  bool json = false, all_tiles = false;
};

std::string pct(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * f);
  return buf;
}

nlohmann::json fit_json(const tune::TileFit& f) {
  return {{"tile_m", f.tile_m},       {"tile_n", f.tile_n},
          {"tiles", f.tiles},         {"padding_waste", f.padding_waste},
          {"waves", f.waves},         {"wave_efficiency", f.wave_efficiency},
          {"feed_efficiency", f.feed_efficiency},
          {"fraction_of_peak", f.fraction_of_peak}};
}

nlohmann::json attention_fit_json(const tune::AttentionFit& f) {
  return {{"block_m", f.block_m},
          {"block_n", f.block_n},
          {"workgroups", f.workgroups},
          {"computed_pairs", f.computed_pairs},
          {"padding_waste", f.padding_waste},
          {"waves", f.waves},
          {"wave_efficiency", f.wave_efficiency},
          {"feed_efficiency", f.feed_efficiency},
          {"fraction_of_peak", f.fraction_of_peak}};
}

nlohmann::json recorded_json(const tune::RecordedBest& r) {
  return {{"median_ms", r.median_ms},
          {"fraction_of_peak", r.fraction_of_peak},
          {"device_kind", r.device_kind},
          {"signature", r.signature},
          {"parameters", r.parameters}};
}

std::string recorded_text(const std::optional<tune::RecordedBest>& r) {
  if (!r) return "-";
  return pct(r->fraction_of_peak) + (r->device_kind == "real" ? " measured" : " emulator est.");
}

int run_advise(const AdviseOptions& opt) {
  tune::ModelDims model = tune::parse_model(opt.model);
  if (opt.tokens > 0) model.tokens = opt.tokens;
  tune::AdviseOptions o;
  o.db_path = opt.db;
  o.tolerance = opt.tolerance_pct / 100;
  const tune::Advice a = tune::advise(model, opt.target, o);

  if (opt.json) {
    nlohmann::json out;
    out["model"] = {{"name", a.model.name},         {"hidden", a.model.hidden}, {"heads", a.model.heads},
                    {"kv_heads", a.model.kv_heads}, {"head_dim", a.model.head_dim}, {"ffn", a.model.ffn},
                    {"vocab", a.model.vocab},       {"tokens", a.model.tokens}, {"source", a.model.source}};
    out["target"] = {{"isa", a.target.isa}, {"chip", a.target.chip}, {"units", a.target.units},
                     {"matrix_tflops", a.target.matrix_tflops}, {"hbm_tbps", a.target.hbm_tbps}};
    out["gemms"] = nlohmann::json::array();
    for (const auto& g : a.gemms) {
      nlohmann::json j = {{"name", g.name}, {"M", g.m}, {"N", g.n}, {"K", g.k}, {"flops", g.flops},
                          {"best", fit_json(g.best())}, {"tiles", nlohmann::json::array()}};
      for (const auto& f : g.fits) j["tiles"].push_back(fit_json(f));
      if (g.recorded) j["recorded"] = recorded_json(*g.recorded);
      out["gemms"].push_back(j);
    }
    const auto& at = a.attention;
    out["attention"] = {{"batch", at.batch},
                        {"tokens", at.tokens},
                        {"heads", at.heads},
                        {"kv_heads", at.kv_heads},
                        {"head_dim", at.head_dim},
                        {"causal", at.causal},
                        {"flops", at.flops},
                        {"visible_pairs", at.visible_pairs},
                        {"generator", at.generator},
                        {"space_isa", at.space_isa},
                        {"best", attention_fit_json(at.best())},
                        {"tiles", nlohmann::json::array()}};
    for (const auto& f : at.fits) out["attention"]["tiles"].push_back(attention_fit_json(f));
    if (at.recorded) out["attention"]["recorded"] = recorded_json(*at.recorded);
    out["layer_fraction_of_peak"] = a.layer_fraction;
    out["tolerance"] = a.tolerance;
    out["suggestions"] = nlohmann::json::array();
    for (const auto& s : a.suggestions)
      out["suggestions"].push_back({{"dimension", s.dimension}, {"from", s.from}, {"to", s.to},
                                    {"fraction_before", s.fraction_before}, {"fraction_after", s.fraction_after},
                                    {"gain", s.gain}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  std::printf("%s on %s (%s, %u %s, %.0f TFLOP/s bf16 dense, %.2f TB/s)\n", a.model.name.c_str(), a.target.isa.c_str(),
              a.target.chip.c_str(), a.target.units, a.target.isa.rfind("sm_", 0) == 0 ? "SMs" : "CUs",
              a.target.matrix_tflops, a.target.hbm_tbps);
  std::printf("hidden %lld, heads %lld (kv %lld) x %lld, ffn %lld, vocab %lld, tokens %lld\n\n",
              (long long)a.model.hidden, (long long)a.model.heads, (long long)a.model.kv_heads,
              (long long)a.model.head_dim, (long long)a.model.ffn, (long long)a.model.vocab, (long long)a.model.tokens);
  Table t({"GEMM", "M", "N", "K", "best tile", "padding", "tiles", "waves", "wave eff", "feed eff", "model % peak",
           "recorded"});
  for (const auto& g : a.gemms) {
    const auto& b = g.best();
    const std::string rec = recorded_text(g.recorded);
    t.add({g.name, std::to_string(g.m), std::to_string(g.n), std::to_string(g.k),
           std::to_string(b.tile_m) + "x" + std::to_string(b.tile_n), pct(b.padding_waste), std::to_string(b.tiles),
           std::to_string(b.waves), pct(b.wave_efficiency), pct(b.feed_efficiency), pct(b.fraction_of_peak), rec});
  }
  const auto& at = a.attention;
  const auto& ab = at.best();
  t.add({"attention", std::to_string(at.tokens), std::to_string(at.tokens), std::to_string(at.head_dim),
         std::to_string(ab.block_m) + "q x " + std::to_string(ab.block_n) + "k", pct(ab.padding_waste),
         std::to_string(ab.workgroups), std::to_string(ab.waves), pct(ab.wave_efficiency), pct(ab.feed_efficiency),
         pct(ab.fraction_of_peak), recorded_text(at.recorded)});
  std::cout << t.str();
  std::printf("attention: causal prefill, %lld heads (kv %lld), M = query rows, N = keys, K = head_dim; %s\n",
              (long long)at.heads, (long long)at.kv_heads,
              at.generator ? ("block shapes of the attention generator's space for " + at.space_isa).c_str()
                           : "no attention generator for this target and head_dim: one 128 x 64 block modelled");
  std::printf("\nlayer (QKV, O, gate/up, down, attention): %s of peak by the static model\n",
              pct(a.layer_fraction).c_str());
  if (opt.all_tiles) {
    for (const auto& g : a.gemms) {
      std::printf("\n%s: every tile shape of the generator's space\n", g.name.c_str());
      Table tt({"tile", "padding", "tiles", "waves", "wave eff", "feed eff", "model % peak"});
      for (const auto& f : g.fits)
        tt.add({std::to_string(f.tile_m) + "x" + std::to_string(f.tile_n), pct(f.padding_waste),
                std::to_string(f.tiles), std::to_string(f.waves), pct(f.wave_efficiency), pct(f.feed_efficiency),
                pct(f.fraction_of_peak)});
      std::cout << tt.str();
    }
    std::printf("\nattention: every block shape (queries x keys)\n");
    Table tt({"block", "padding", "workgroups", "waves", "wave eff", "feed eff", "model % peak"});
    for (const auto& f : at.fits)
      tt.add({std::to_string(f.block_m) + "x" + std::to_string(f.block_n), pct(f.padding_waste),
              std::to_string(f.workgroups), std::to_string(f.waves), pct(f.wave_efficiency), pct(f.feed_efficiency),
              pct(f.fraction_of_peak)});
    std::cout << tt.str();
  }
  std::printf("\nnearby dimensions within %.1f%% (multiples of 64):\n", 100 * a.tolerance);
  if (a.suggestions.empty()) std::printf("  none fits better by more than 0.5%%\n");
  for (const auto& s : a.suggestions)
    std::printf("  %s %lld -> %lld: %s -> %s of peak (%+.1f%% %s)\n", s.dimension.c_str(), (long long)s.from,
                (long long)s.to, pct(s.fraction_before).c_str(), pct(s.fraction_after).c_str(), 100 * s.gain,
                s.dimension == "vocab" ? "on the LM head" : "on the layer");
  std::printf("\nmodelled (tiles, waves, roofline), not measured; see docs/advisor.md\n");
  return 0;
}
} // namespace

void add_advise_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<AdviseOptions>();
  auto* cmd = app.add_subcommand("advise", "How well a transformer's dimensions fit a target's tiles and waves");
  cmd->footer("Each GEMM of a layer (QKV, O, gate/up, down) and the LM head (M = tokens, N = out features, K = in\n"
              "features) and the attention (query x key blocks): tile padding, wave quantisation on the CUs/SMs,\n"
              "the static model's fraction of peak, and with --db the best recorded variant; then nearby\n"
              "dimensions that fit better.\n\n"
              "Example:\n  isatune advise --target gfx942 --model Llama-3-8B --tokens 8192\n"
              "  isatune advise --target sm_90a --model config.json --tolerance 3 --db tuning.db --json\n"
              "Presets: Llama-3-8B, Llama-3-70B, Mistral-7B, Qwen2-7B.");
  cmd->add_option("--target", opt->target, "gfx90a, gfx942, gfx950, sm_80, sm_90 or sm_90a")->required();
  cmd->add_option("--model", opt->model, "A preset name or a JSON file (ours or a Hugging Face config.json)")
      ->required();
  cmd->add_option("--tokens", opt->tokens, "Batch x sequence tokens, the M of every GEMM (default: 4096)");
  cmd->add_option("--db", opt->db, "Tuning database: show each GEMM's and the attention's best recorded variant");
  cmd->add_option("--tolerance", opt->tolerance_pct, "Nearby dimensions within this percent (default 5)");
  cmd->add_flag("--all-tiles", opt->all_tiles, "List every tile shape of each GEMM and the attention, not only the best");
  cmd->add_flag("--json", opt->json, "Print JSON instead of tables");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_advise(*opt); }); });
}

} // namespace isatune::cli

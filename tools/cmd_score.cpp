// `isatune score [--strategy S|all] [--repeats 50] [--seed N] [--json] FILE...`: the methodology score of
// Willemsen et al., computed as their package computes it, for each strategy on each recorded tuning space
// (docs/tuner.md describes the computation).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/error.h"
#include "isatune/tune/score.h"
#include "table.h"

namespace isatune::cli {

namespace {
using namespace isatune::tune;

struct ScoreCmdOptions {
  std::vector<std::string> files;
  std::string strategy = "all";
  size_t repeats = 50;
  uint64_t seed = 1;
  MethodologyOptions methodology;
  bool json = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

int run_score(const ScoreCmdOptions& opt) {
  std::vector<std::string> strategies;
  if (opt.strategy == "all")
    strategies = strategy_names();
  else
    strategies = {opt.strategy};
  for (const auto& s : strategies)
    make_strategy(s); // reject unknown names before any work
  if (opt.repeats == 0)
    throw InputError("--repeats must be at least 1");

  nlohmann::json jfiles = nlohmann::json::array();
  Table table({"file", "strategy", "score", "+-SE", "package", "stddev", "min", "max", "found opt", "evals"});
  std::string setups;
  for (const auto& file : opt.files) {
    ReplayData data = read_replay(file);
    ScoreSetup setup = make_score_setup(data, opt.methodology);
    nlohmann::json jf = {{"file", file},
                         {"format", data.format},
                         {"configurations", setup.configurations},
                         {"valid", setup.dist.size()},
                         {"optimum_ms", setup.optimum},
                         {"median_ms", setup.median},
                         {"target_ms", setup.target},
                         {"start_target_ms", setup.target_start},
                         {"median_cost_s", setup.median_cost_s},
                         {"baseline_cost_s", setup.baseline_cost_s},
                         {"budget_fevals", setup.budget_fevals},
                         {"start_fevals", setup.start_fevals},
                         {"budget_s", setup.budget_s},
                         {"start_s", setup.start_s},
                         {"run_evaluations", setup.run_evaluations},
                         {"strategies", nlohmann::json::array()}};
    setups += file + ": " + std::to_string(setup.dist.size()) + " valid of " +
              std::to_string(setup.configurations) + ", optimum " + fmt("%.4g", setup.optimum) + " ms, median " +
              fmt("%.4g", setup.median) + " ms; budget " + std::to_string(setup.budget_fevals) +
              " expected-rank draws x median cost " + fmt("%.3g", setup.median_cost_s) + " s = " +
              fmt("%.0f", setup.budget_s) + " s of device time, scored over " +
              std::to_string(setup.grid_s.size()) + " times from " + fmt("%.0f", setup.start_s) + " s; runs of " +
              std::to_string(setup.run_evaluations) + " evaluations\n";
    for (const auto& s : strategies) {
      StrategyScore r = score_strategy(data, setup, s, opt.repeats, opt.seed);
      jf["strategies"].push_back({{"strategy", s},
                                  {"repeats", r.repeats},
                                  {"score", r.score},
                                  {"standard_error", r.standard_error},
                                  {"package_score", r.package_score},
                                  {"package_error", r.package_error},
                                  {"stddev", r.stddev},
                                  {"min", r.min},
                                  {"max", r.max},
                                  {"found_optimum", r.found_optimum},
                                  {"mean_evaluations", r.mean_evaluations}});
      table.add({file, s, fmt("%.3f", r.score), fmt("%.3f", r.standard_error), fmt("%.3f", r.package_score),
                 fmt("%.3f", r.stddev), fmt("%.3f", r.min), fmt("%.3f", r.max),
                 fmt("%.0f%%", 100 * r.found_optimum), fmt("%.0f", r.mean_evaluations)});
    }
    jfiles.push_back(std::move(jf));
  }
  if (opt.json) {
    std::cout << nlohmann::json{{"repeats", opt.repeats},
                                {"seed", opt.seed},
                                {"cutoff", opt.methodology.cutoff},
                                {"cutoff_start", opt.methodology.cutoff_start},
                                {"resolution", opt.methodology.resolution},
                                {"files", jfiles}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << setups << "\n" << table.str();
    std::cout << "score: 0 = random search, 1 = the optimum at once; of the mean curve over " << opt.repeats
              << " seeded repeats (+-SE: its standard error; stddev, min, max: of single repeats); package: the "
                 "package's own curve (isotonic fit over all runs)\n";
  }
  return kExitOk;
}
} // namespace

void add_score_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<ScoreCmdOptions>();
  auto* cmd = app.add_subcommand("score", "Score search strategies on recorded tuning spaces (methodology of "
                                          "Willemsen et al. as their package computes it: calculated random-search "
                                          "baseline, time range 0.5..0.96). Example: isatune score --strategy "
                                          "bayes --repeats 50 pnpoly/RTX_3090.json.gz");
  cmd->add_option("files", opt->files, "Kernel Tuner cache, T4 results or KTT JSON files (.json or .json.gz)")
      ->required();
  cmd->add_option("--strategy", opt->strategy, "A strategy name, or all (default)");
  cmd->add_option("--repeats", opt->repeats, "Seeded repeats per strategy and file (default 50)");
  cmd->add_option("--seed", opt->seed, "First seed; repeat i uses seed + i");
  cmd->add_option("--cutoff", opt->methodology.cutoff, "End of the time range (default 0.96)");
  cmd->add_option("--cutoff-start", opt->methodology.cutoff_start, "Start of the time range (default 0.5)");
  cmd->add_option("--resolution", opt->methodology.resolution, "Points of the time range (default 1000)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_score(*opt); }); });
}

} // namespace isatune::cli

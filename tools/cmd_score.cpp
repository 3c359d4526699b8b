// `isatune score [--strategy S|all] [--repeats 20] [--seed N] [--json] FILE...`: the methodology score of
// Willemsen et al. for each strategy on each recorded tuning space (docs/tuner.md describes the computation).
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
  size_t repeats = 20;
  uint64_t seed = 1;
  double cutoff = 0.96;
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
  if (!(opt.cutoff > 0 && opt.cutoff < 1))
    throw InputError("--cutoff must lie between 0 and 1");
  nlohmann::json jfiles = nlohmann::json::array();
  Table table({"file", "strategy", "score", "stddev", "min", "max", "found opt", "evals"});
  std::string setups;
  for (const auto& file : opt.files) {
    ReplayData data = read_replay(file);
    ScoreSetup setup = make_score_setup(data, opt.cutoff);
    nlohmann::json jf = {{"file", file},
                         {"format", data.format},
                         {"configurations", data.entries.size()},
                         {"optimum_ms", setup.optimum},
                         {"median_ms", setup.median},
                         {"target_ms", setup.target},
                         {"mean_cost_s", setup.mean_cost_s},
                         {"budget_draws", setup.budget_draws},
                         {"budget_s", setup.budget_s},
                         {"strategies", nlohmann::json::array()}};
    setups += file + ": optimum " + fmt("%.4g", setup.optimum) + " ms, median " + fmt("%.4g", setup.median) +
              " ms, budget " + std::to_string(setup.budget_draws) +
              " random draws = " + fmt("%.0f", setup.budget_s) + " s of device time\n";
    for (const auto& s : strategies) {
      StrategyScore r = score_strategy(data, setup, s, opt.repeats, opt.seed);
      jf["strategies"].push_back({{"strategy", s},
                                  {"repeats", r.repeats},
                                  {"score", r.mean},
                                  {"stddev", r.stddev},
                                  {"min", r.min},
                                  {"max", r.max},
                                  {"found_optimum", r.found_optimum},
                                  {"mean_evaluations", r.mean_evaluations}});
      table.add({file, s, fmt("%.3f", r.mean), fmt("%.3f", r.stddev), fmt("%.3f", r.min), fmt("%.3f", r.max),
                 fmt("%.0f%%", 100 * r.found_optimum), fmt("%.0f", r.mean_evaluations)});
    }
    jfiles.push_back(std::move(jf));
  }
  if (opt.json) {
    std::cout << nlohmann::json{{"repeats", opt.repeats},
                                {"seed", opt.seed},
                                {"cutoff", opt.cutoff},
                                {"files", jfiles}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << setups << "\n" << table.str();
    std::cout << "score: 0 = random search, 1 = the optimum at once; mean (and spread) over " << opt.repeats
              << " seeded repeats\n";
  }
  return kExitOk;
}
} // namespace

void add_score_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<ScoreCmdOptions>();
  auto* cmd = app.add_subcommand("score", "Score search strategies on recorded tuning spaces (methodology of "
                                          "Willemsen et al.: random-search baseline, 96% cutoff)");
  cmd->add_option("files", opt->files, "Kernel Tuner cache, T4 results or KTT JSON files (.json or .json.gz)")
      ->required();
  cmd->add_option("--strategy", opt->strategy, "A strategy name, or all (default)");
  cmd->add_option("--repeats", opt->repeats, "Seeded repeats per strategy and file (default 20)");
  cmd->add_option("--seed", opt->seed, "First seed; repeat i uses seed + i");
  cmd->add_option("--cutoff", opt->cutoff, "Budget cutoff of the methodology (default 0.96)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_score(*opt); }); });
}

} // namespace isatune::cli

// `isatune tune --replay FILE [--strategy S] [--budget N|10m|auto] [--seed N] [--json]`: runs the tuner
// against a recorded tuning space played back as a device. Tuning generated kernels on a GPU comes later: in
// this version only --replay is accepted. Progress goes to stderr (a \r-updated line on a terminal, plain
// lines every ~10% otherwise); the summary (best configuration, evaluations by status) to stdout.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/error.h"
#include "isatune/tune/replay.h"
#include "isatune/tune/score.h"
#include "isatune/tune/tuner.h"
#include "table.h"

namespace isatune::cli {

namespace {
using namespace isatune::tune;

struct TuneCmdOptions {
  std::string replay;
  std::string strategy = kDefaultStrategy;
  std::string budget = "auto";
  uint64_t seed = 1;
  bool json = false;
  bool history = false;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string duration(double s) {
  if (!std::isfinite(s))
    return "?";
  if (s < 120)
    return fmt("%.0fs", s);
  if (s < 7200)
    return fmt("%.1fm", s / 60);
  return fmt("%.1fh", s / 3600);
}

// Fraction of the budget used, for ETA and the plain-line cadence.
double progress_fraction(const SearchContext& ctx) {
  const Budget& b = ctx.budget();
  double f = 0;
  if (b.evaluations)
    f = std::max(f, static_cast<double>(ctx.history().size()) / static_cast<double>(*b.evaluations));
  if (b.charged_s)
    f = std::max(f, ctx.charged_s() / *b.charged_s);
  double space = static_cast<double>(ctx.history().size()) / static_cast<double>(ctx.space().size());
  if (!b.evaluations && !b.charged_s)
    f = space;
  return std::min(1.0, f);
}

std::string progress_line(const SearchContext& ctx) {
  std::array<size_t, kStatusCount> by{};
  for (const auto& r : ctx.history())
    by[static_cast<int>(r.eval.status)]++;
  std::string failed;
  for (int i = 1; i < kStatusCount; ++i)
    if (by[i])
      failed += " " + std::string(to_string(static_cast<Status>(i))) + " " + std::to_string(by[i]);
  double f = progress_fraction(ctx);
  double rate = ctx.charged_s() > 0 ? static_cast<double>(ctx.history().size()) / ctx.charged_s() : 0;
  double eta = f > 0 ? ctx.charged_s() * (1 - f) / f : INFINITY;
  std::string best = ctx.best() ? fmt("%.4g ms", ctx.best_objective()) : "none";
  return std::to_string(ctx.history().size()) + " done (" + fmt("%.0f%%", 100 * f) + ")" +
         (failed.empty() ? "" : ", failed:" + failed) + ", best " + best + ", " + fmt("%.2f", rate) +
         " eval/s, device time " + duration(ctx.charged_s()) + ", ETA " + duration(eta);
}

int run_tune(const TuneCmdOptions& opt) {
  if (opt.replay.empty())
    throw InputError(
        "only --replay FILE is supported in this version (tuning kernels on a device comes later)");
  ReplayData data = read_replay(opt.replay);
  ReplayEvaluator evaluator(data);
  auto strategy = make_strategy(opt.strategy);
  TuneOptions to;
  to.seed = opt.seed;
  if (opt.budget == "auto") {
    ScoreSetup s = make_score_setup(data);
    to.budget.charged_s = s.budget_s;
  } else {
    to.budget = Budget::parse(opt.budget);
  }
  const bool tty = isatty(fileno(stderr));
  int next_tenth = 1;
  if (!opt.json || tty)
    to.on_record = [&](const SearchContext& ctx) {
      if (tty) {
        if (ctx.history().size() % 16 == 1 || ctx.history().size() < 16)
          std::fprintf(stderr, "\r\033[K%s", progress_line(ctx).c_str());
      } else if (progress_fraction(ctx) * 10 >= next_tenth) {
        while (progress_fraction(ctx) * 10 >= next_tenth)
          ++next_tenth;
        std::fprintf(stderr, "%s\n", progress_line(ctx).c_str());
      }
    };
  TuneResult r = isatune::tune::tune(evaluator.space(), evaluator, *strategy, to);
  if (tty && !opt.json)
    std::fprintf(stderr, "\r\033[K");

  std::array<size_t, kStatusCount> by{};
  double charged = r.history.empty() ? 0 : r.history.back().charged_s;
  for (const auto& h : r.history)
    by[static_cast<int>(h.eval.status)]++;
  const auto& params = evaluator.space().parameters();
  if (opt.json) {
    nlohmann::json j;
    j["file"] = opt.replay;
    j["format"] = data.format;
    j["device"] = data.device;
    j["strategy"] = opt.strategy;
    j["seed"] = opt.seed;
    j["budget"] = opt.budget;
    if (to.budget.charged_s)
      j["budget_charged_s"] = *to.budget.charged_s;
    if (to.budget.evaluations)
      j["budget_evaluations"] = *to.budget.evaluations;
    j["stop_reason"] = r.stop_reason;
    j["evaluations"] = r.history.size();
    j["charged_s"] = charged;
    j["wall_s"] = r.wall_s;
    for (int i = 0; i < kStatusCount; ++i)
      j["by_status"][std::string(to_string(static_cast<Status>(i)))] = by[i];
    if (r.best) {
      const auto& b = r.history[*r.best];
      nlohmann::json cfg;
      for (size_t p = 0; p < params.size(); ++p) {
        const auto& v = params[p].values[b.config[p]];
        if (!v.is_number)
          cfg[params[p].name] = v.text;
        else if (v.number == std::floor(v.number) && std::fabs(v.number) < 1e15)
          cfg[params[p].name] = static_cast<long long>(v.number);
        else
          cfg[params[p].name] = v.number;
      }
      j["best"] = {{"config", cfg},
                   {"time_ms", b.eval.time_ms},
                   {"evaluation", *r.best + 1},
                   {"charged_s", b.charged_s}};
    } else {
      j["best"] = nullptr;
    }
    if (opt.history) {
      j["history"] = nlohmann::json::array();
      for (const auto& h : r.history)
        j["history"].push_back({{"config", evaluator.space().format(h.config)},
                                {"status", std::string(to_string(h.eval.status))},
                                {"time_ms", h.eval.time_ms},
                                {"charged_s", h.charged_s}});
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << "replay " << opt.replay << " (" << data.format
            << (data.device.empty() ? "" : ", " + data.device)
            << (data.repaired ? ", repaired unclosed file" : "") << ")\n";
  std::cout << "strategy " << opt.strategy << ", seed " << opt.seed << ", budget " << opt.budget
            << (to.budget.charged_s ? " (" + duration(*to.budget.charged_s) + " of device time)" : "")
            << "\n";
  std::cout << r.history.size() << " evaluations, " << duration(charged)
            << " of recorded device time, stopped: " << r.stop_reason << "\n\n";
  if (r.best) {
    const auto& b = r.history[*r.best];
    Table t({"parameter", "value"});
    for (size_t p = 0; p < params.size(); ++p)
      t.add({params[p].name, params[p].values[b.config[p]].str()});
    std::cout << "best: " << fmt("%.6g", b.eval.time_ms) << " ms (evaluation " << *r.best + 1 << ")\n"
              << t.str() << "\n";
  } else {
    std::cout << "best: none (no configuration ran successfully)\n\n";
  }
  Table s({"status", "evaluations"});
  for (int i = 0; i < kStatusCount; ++i)
    if (by[i])
      s.add({std::string(to_string(static_cast<Status>(i))), std::to_string(by[i])});
  std::cout << s.str();
  return kExitOk;
}
} // namespace

void add_tune_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<TuneCmdOptions>();
  auto* cmd = app.add_subcommand(
      "tune",
      "Tune a kernel's parameters. This version tunes recorded spaces only: --replay FILE is required "
      "(Kernel Tuner cache, T4 results or KTT JSON); tuning generated kernels on a device comes later");
  cmd->add_option("--replay", opt->replay, "Recorded tuning space played back as the device")->required();
  cmd->add_option("--strategy", opt->strategy,
                  "exhaustive, random, annealing, genetic, ils or hybrid (default)");
  cmd->add_option(
      "--budget", opt->budget,
      "N evaluations, a device-time budget (90s, 10m, 2h), or auto: the methodology budget of the file");
  cmd->add_option("--seed", opt->seed, "Random seed (runs with the same seed repeat exactly)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->add_flag("--history", opt->history, "With --json: include every evaluation in order");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_tune(*opt); }); });
}

} // namespace isatune::cli

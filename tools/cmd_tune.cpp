// `isatune tune KERNEL --target T --sig ... --problem ...|--problems FILE --device D --db FILE ...`: tunes a
// generator's space on a device (compile pool, CPU pruning, device work in a watched child process, every
// evaluation committed to the database, reruns resume); `isatune tune --replay FILE ...`: runs the tuner against
// a recorded tuning space played back as a device. Progress goes to stderr (a \r-updated line on a terminal,
// plain lines every ~10% otherwise); the summary (best configurations, evaluations by status) to stdout.
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits.h>

#include "commands.h"
#include "emulators.h"
#include "exit_codes.h"
#include "isatune/error.h"
#include "isatune/db/database.h"
#include "isatune/db/journal.h"
#include "isatune/emu/backend.h"
#include "isatune/gen/generator.h"
#include "isatune/loader/backend.h"
#include "isatune/tune/generator_evaluator.h"
#include "isatune/tune/replay.h"
#include "isatune/tune/rerank.h"
#include "isatune/tune/worker_runner.h"
#include "isatune/tune/score.h"
#include "isatune/tune/shard.h"
#include "isatune/tune/trace.h"
#include "isatune/tune/transfer.h"
#include "isatune/tune/tuner.h"
#include "table.h"

namespace isatune::cli {

namespace {
using namespace isatune::tune;

struct TuneCmdOptions {
  std::string kernel; // a generator name (empty with --replay)
  std::string target;
  std::vector<std::string> sig;
  std::vector<std::string> problem; // one problem each "M=..,N=..,K=.."
  std::string problems_file;
  std::string shard; // "I/N", "auto" (from the launcher's environment) or empty: the whole job
  std::string device = "emu";
  std::string db;
  double timeout_s = 10;
  bool no_isolation = false;
  int compile_threads = -1; // -1: every core
  std::string replay;
  std::string trace; // --trace OUT.jsonl: every evaluation as a JSON line
  std::string transfer_from; // --transfer-from FILE (replay): seed with the best configurations of a neighbour
  size_t transfer_top = 5;
  bool no_warm_start = false; // --no-warm-start: seeds only, the bayes model starts cold
  size_t rerank_top = 5; // --rerank N: re-measure the N best interleaved after the search (0: off)
  bool no_vendor = false; // --no-vendor: do not time the vendor library (cuBLAS, rocBLAS) after the search
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

int run_tune_generator(const TuneCmdOptions& opt);

int run_tune(const TuneCmdOptions& opt) {
  if (!opt.kernel.empty() && !opt.replay.empty())
    throw InputError("give either a KERNEL (generator) or --replay FILE, not both");
  if (opt.replay.empty()) {
    if (opt.kernel.empty()) throw InputError("tune what? give a generator name (e.g. gemm) or --replay FILE");
    return run_tune_generator(opt);
  }
  if (!opt.db.empty())
    throw InputError("--db with --replay: a replay measures nothing, so it is not recorded in a tuning database "
                     "(the database holds measurements of real or emulated devices); drop --db, and use --trace "
                     "FILE to keep the replay's evaluation sequence");
  if (!opt.problems_file.empty() || !opt.problem.empty() || !opt.sig.empty())
    throw InputError("--problem, --problems and --sig describe a generator's job; a --replay file brings its own "
                     "space and problem");
  ReplayData data = read_replay(opt.replay);
  ReplayEvaluator evaluator(data);
  auto strategy = make_strategy(opt.strategy);
  size_t transfer_seeds = 0, warm_n = 0;
  if (!opt.transfer_from.empty()) {
    const ReplayData from = read_replay(opt.transfer_from);
    auto seeds = best_configs_in(from, evaluator.space(), opt.transfer_top);
    if (seeds.empty() && opt.transfer_top)
      throw InputError("--transfer-from '" + opt.transfer_from + "': none of its valid configurations is in '" +
                       opt.replay + "' (the spaces share no parameter values)");
    transfer_seeds = seeds.size();
    if (transfer_seeds && !opt.no_warm_start && takes_prior(opt.strategy)) {
      auto prior = measurements_in(from, evaluator.space());
      warm_n = prior.size();
      strategy = make_warm(opt.strategy, std::move(prior));
    }
    if (transfer_seeds) strategy = make_seeded(std::move(seeds), std::move(strategy));
  }
  TuneOptions to;
  to.seed = opt.seed;
  if (opt.budget == "auto") {
    ScoreSetup s = make_score_setup(data); // the methodology's budget: expected-rank draws x median cost
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

  if (!opt.trace.empty()) {
    std::ofstream out(opt.trace);
    if (!out)
      throw InputError("--trace '" + opt.trace + "': cannot write");
    write_trace(out, evaluator.space(), r.history);
    if (!out)
      throw InputError("--trace '" + opt.trace + "': write failed");
  }
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
    if (!opt.transfer_from.empty())
      j["transfer_from"] = opt.transfer_from, j["transfer_seeds"] = transfer_seeds,
      j["warm_start_measurements"] = warm_n;
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
  if (transfer_seeds)
    std::cout << "seeded with the " << transfer_seeds << " best configurations of " << opt.transfer_from
              << (warm_n ? "; bayes warm-started from its " + std::to_string(warm_n) + " measurements" : std::string())
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

std::vector<std::string> read_problem_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot read the problems file");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#') continue;
    out.push_back(line.substr(b, e - b + 1));
  }
  if (out.empty()) throw InputError(path + ": no problem in the file (one \"M=..,N=..,K=..\" per line)");
  return out;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot find the isatune executable (/proc/self/exe) to start the device worker");
  return std::string(buf, size_t(n));
}

nlohmann::json params_json(const gen::Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p) {
    if (!v.is_number)
      j[k] = v.text;
    else if (v.number == std::floor(v.number) && std::fabs(v.number) < 1e15)
      j[k] = static_cast<long long>(v.number);
    else
      j[k] = v.number;
  }
  return j;
}

std::string generator_progress(const SearchContext& ctx, const GeneratorEvaluator& ev) {
  std::array<size_t, kStatusCount> by{};
  for (const auto& r : ctx.history()) by[static_cast<int>(r.eval.status)]++;
  std::string failed;
  for (int i = 1; i < kStatusCount; ++i)
    if (by[i]) failed += " " + std::string(to_string(static_cast<Status>(i))) + " " + std::to_string(by[i]);
  const Budget& b = ctx.budget();
  double f = double(ctx.history().size()) / double(std::max<size_t>(1, ctx.space().size()));
  if (b.evaluations) f = std::max(f, double(ctx.history().size()) / double(std::max<size_t>(1, *b.evaluations)));
  if (b.charged_s) f = std::max(f, ctx.charged_s() / *b.charged_s);
  if (b.wall_s) f = std::max(f, ctx.wall_s() / *b.wall_s);
  f = std::min(1.0, f);
  const double wall = ctx.wall_s();
  const double rate = wall > 0 ? double(ctx.history().size()) / wall : 0;
  const double eta = f > 0 ? wall * (1 - f) / f : INFINITY;
  const auto st = ev.stats();
  return std::to_string(ctx.history().size()) + " done (" + fmt("%.0f%%", 100 * f) + ")" +
         (st.from_db ? ", " + std::to_string(st.from_db) + " from the database" : "") +
         (failed.empty() ? "" : ", failed:" + failed) + ", best " +
         (ctx.best() ? fmt("%.4g ms", ctx.best_objective()) : std::string("none")) + ", " + fmt("%.2f", rate) +
         " eval/s, ETA " + duration(eta);
}

// A problem tuned in this run, for the problems after it: its valid measurements, fastest first.
struct TunedProblem {
  gen::Problem problem;
  std::vector<std::pair<gen::Params, double>> ok;
};

int run_tune_generator(const TuneCmdOptions& opt) {
  if (!opt.transfer_from.empty())
    throw InputError("--transfer-from takes a recorded space and goes with --replay; a generator's tune transfers "
                     "from the nearest tuned problem in --db (--transfer-top N)");
  const gen::Generator& g = gen::find_generator(opt.kernel);
  const gen::Signature sig = gen::parse_signature(g, opt.sig);
  std::vector<std::string> problem_texts = opt.problem;
  if (!opt.problems_file.empty())
    for (auto& p : read_problem_lines(opt.problems_file)) problem_texts.push_back(std::move(p));
  if (problem_texts.empty()) throw InputError("tune " + g.name() + ": give --problem k=v,... or --problems FILE");
  TuningJob job;
  job.generator = &g;
  job.sig = sig;
  for (const auto& t : problem_texts) job.problems.push_back(gen::parse_problem(g, std::vector<std::string>{t}));

  // Distributed tuning: this task's share of the problems (and of the space when there are fewer problems than
  // shards), its own database file and its one device.
  std::string spec = opt.device;
  std::string db_path = opt.db;
  std::optional<ShardSpec> shard;
  ShardWork work;
  std::string scheduler_job;
  if (!opt.shard.empty()) {
    const EnvLookup env = process_environment();
    if (opt.shard == "auto") {
      shard = shard_from_environment(env);
      if (!shard)
        throw InputError("--shard auto: no launcher variables found (SLURM_ARRAY_TASK_ID, SLURM_PROCID/NTASKS, "
                         "JOB_COMPLETION_INDEX with ISATUNE_SHARD_COUNT, OMPI_COMM_WORLD_RANK/SIZE); give --shard I/N");
    } else {
      shard = parse_shard(opt.shard);
    }
    work = shard_work(job.problems.size(), *shard);
    std::vector<gen::Problem> mine;
    for (size_t p : work.problems) mine.push_back(job.problems[p]);
    job.problems = std::move(mine);
    const TaskDevice td = task_device(spec.substr(0, spec.find(':')), env);
    if (spec == "cuda" || spec == "hip") spec += ":" + std::to_string(td.ordinal);
    scheduler_job = scheduler_job_id(env);
    if (!td.mask.empty()) scheduler_job += (scheduler_job.empty() ? "" : " ") + td.mask;
    for (size_t at; (at = db_path.find("{shard}")) != std::string::npos;)
      db_path.replace(at, 7, std::to_string(shard->index));
  }

  // The device: the emulator runs the --target's chip.
  const bool emu = spec == "emu" || spec.rfind("emu:", 0) == 0;
  std::string target = opt.target;
  if (emu && target.empty()) target = spec == "emu" ? "gfx942" : spec.substr(4);
  if (spec == "emu") spec = "emu:" + target;
  std::unique_ptr<DeviceRunner> runner;
  WorkerRunner* worker = nullptr;
  std::shared_ptr<loader::Device> in_process; // the device, when it runs in this process
  if (opt.no_isolation) {
    register_emulators();
    in_process = loader::open_device(spec);
    runner = std::make_unique<InProcessRunner>(in_process);
  } else {
    WorkerOptions wo;
    wo.command = {self_exe(), "internal-device-worker", "--device", spec};
    auto w = std::make_unique<WorkerRunner>(wo);
    worker = w.get();
    runner = std::move(w);
  }
  const auto& props = runner->properties();
  if (target.empty()) target = props.isa;
  if (props.isa != target)
    throw InputError("device " + spec + " is " + props.isa + " but --target is " + target);
  job.isa = target;
  {
    const auto ts = g.targets();
    if (std::find(ts.begin(), ts.end(), target) == ts.end())
      throw InputError(g.name() + " does not generate for " + target);
  }

  std::optional<db::Database> database;
  if (!db_path.empty()) database.emplace(db::Database::open(db_path));
  GeneratorEvaluatorOptions eo;
  eo.run.seed = opt.seed;
  eo.timeout_s = opt.timeout_s;
  if (opt.compile_threads >= 0) eo.compile_threads = unsigned(opt.compile_threads);
  eo.db = database ? &*database : nullptr;
  eo.strategy = opt.strategy;
  eo.budget = opt.budget;
  if (shard) {
    eo.shard = shard->text();
    eo.scheduler_job = scheduler_job;
    eo.space_slice = work.slice;
    eo.space_slices = work.slices;
  }
  // One job: tuned, then summarised (printed, or appended to `collect` as JSON). `in_run`: a problem tuned
  // earlier in this run, a transfer source when it is nearer than the database's.
  auto tune_job = [&](TuningJob job, const TunedProblem* in_run, nlohmann::json* collect,
                      const std::string& trace) -> TunedProblem {
    GeneratorEvaluator evaluator(job, *runner, eo);
    // Transfer: a new problem starts from the best configurations of the nearest tuned one (in the database, or
    // tuned earlier in this run), and bayes is warm-started from its measurements. Not when this shard owns only a
    // slice of the space: the seeds may lie in another shard's slice, and the shards together must measure each
    // configuration once.
    const bool may_transfer = opt.transfer_top && !(shard && work.slices > 1);
    TransferSource source;
    std::string source_kind;
    if (may_transfer) {
      source = evaluator.transfer_source(opt.transfer_top);
      if (!source.best.empty()) source_kind = "database";
      if (in_run && problem_distance(job.problems.front(), in_run->problem) <= source.distance) {
        TransferSource here;
        here.problem = in_run->problem;
        here.distance = problem_distance(job.problems.front(), in_run->problem);
        for (const auto& [params, ms] : in_run->ok) try {
            gen::Config c = gen::config_of(evaluator.space(), params);
            if (evaluator.space().position_of(c) < 0) continue;
            if (here.best.size() < opt.transfer_top) here.best.push_back(c);
            here.measurements.push_back({std::move(c), ms});
          } catch (const InputError&) { // a value this problem's space does not hold
          }
        if (!here.best.empty()) source = std::move(here), source_kind = "this run";
      }
    }
    const size_t transfer_n = source_kind.empty() ? 0 : source.best.size();
    const size_t warm_n = transfer_n && !opt.no_warm_start && takes_prior(opt.strategy) ? source.measurements.size() : 0;
    const gen::Problem transfer_problem = source.problem;
    auto strategy = warm_n ? make_warm(opt.strategy, std::move(source.measurements)) : make_strategy(opt.strategy);
    if (transfer_n) strategy = make_seeded(std::move(source.best), std::move(strategy));
    TuneOptions to;
    to.seed = opt.seed;
    to.budget = Budget::parse(opt.budget == "auto" ? "200" : opt.budget);

    const bool tty = isatty(fileno(stderr));
    int next_tenth = 1;
    double last_print = -1;
    if (!opt.json || tty)
      to.on_record = [&](const SearchContext& ctx) {
        if (tty) {
          if (ctx.wall_s() - last_print >= 0.2 || ctx.history().size() < 8) {
            last_print = ctx.wall_s();
            std::fprintf(stderr, "\r\033[K%s", generator_progress(ctx, evaluator).c_str());
          }
        } else {
          const double f = double(ctx.history().size()) /
                           double(std::max<size_t>(1, std::min(ctx.space().size(),
                                                               to.budget.evaluations.value_or(ctx.space().size()))));
          if (f * 10 >= next_tenth) {
            while (f * 10 >= next_tenth) ++next_tenth;
            std::fprintf(stderr, "%s\n", generator_progress(ctx, evaluator).c_str());
          }
        }
      };
    TuneResult r = isatune::tune::tune(evaluator.space(), evaluator, *strategy, to);
    evaluator.finish();
    if (tty) std::fprintf(stderr, "\r\033[K");
    if (!trace.empty()) {
      std::ofstream out(trace);
      write_trace(out, evaluator.space(), r.history);
      if (!out) throw InputError("--trace '" + trace + "': cannot write");
    }

    std::array<size_t, kStatusCount> by{};
    for (const auto& h : r.history) by[static_cast<int>(h.eval.status)]++;
    std::vector<size_t> ok;
    for (size_t i = 0; i < r.history.size(); ++i)
      if (r.history[i].eval.status == Status::ok) ok.push_back(i);
    std::stable_sort(ok.begin(), ok.end(),
                     [&](size_t a, size_t b) { return r.history[a].eval.time_ms < r.history[b].eval.time_ms; });
    // what a later problem of this run takes from this one: every valid measurement, fastest first
    auto outcome = [&] {
      TunedProblem t;
      t.problem = job.problems.front();
      for (size_t i : ok)
        if (const auto* d = evaluator.detail(r.history[i].config)) t.ok.emplace_back(d->params, r.history[i].eval.time_ms);
      return t;
    };
    // Winners that survive noise: the best candidates measured again, interleaved, decided by their intervals.
    // Emulated times are instruction-cost estimates, the same every run: nothing to re-rank.
    std::optional<RerankResult> rr;
    std::string rerank_note;
    if (opt.rerank_top >= 2 && ok.size() >= 2) {
      if (props.emulated) {
        rerank_note = "not re-ranked: emulated times are estimates without noise";
      } else {
        const size_t n = std::min(opt.rerank_top, ok.size());
        rr = rerank(n, [&](size_t i) { return evaluator.remeasure(r.history[ok[i]].config); });
        if (rr->winner != 0) std::swap(ok[0], ok[rr->winner]); // the interval's winner is reported as best
        // Written to the database: `db best` and the loader use the interval's winner, not the fastest sample.
        evaluator.record_rerank_winner(r.history[ok[0]].config, *rr);
      }
    }
    // The vendor library's time for each problem (GEMM: cuBLAS / rocBLAS through the loader), beside the best.
    std::vector<loader::VendorTiming> vendor;
    std::string vendor_note;
    if (opt.no_vendor) {
      vendor_note = "vendor library not timed (--no-vendor)";
    } else if (props.emulated) {
      vendor_note = "no vendor baseline: " + props.name + " is emulated (no vendor library runs there)";
    } else {
      try {
        std::shared_ptr<loader::Device> dev = in_process ? in_process : loader::open_device(spec);
        vendor = evaluator.record_vendor_times(*dev);
      } catch (const Error& e) {
        vendor_note = std::string("vendor library not timed: ") + e.what();
      }
    }
    const auto st = evaluator.stats();
    const std::string time_kind = props.emulated ? "emulator estimate" : "measured";

    if (opt.json) {
      nlohmann::json j;
      j["generator"] = g.name();
      j["target"] = target;
      j["signature"] = sig;
      j["problems"] = nlohmann::json::array();
      for (const auto& p : job.problems) j["problems"].push_back(p);
      j["device"] = {{"spec", spec}, {"name", props.name}, {"isa", props.isa},
                     {"kind", props.emulated ? "emulated" : "real"}};
      j["strategy"] = opt.strategy;
      j["seed"] = opt.seed;
      j["budget"] = opt.budget;
      j["stop_reason"] = r.stop_reason;
      j["space_size"] = evaluator.space().size();
      j["evaluations"] = r.history.size();
      j["from_db"] = st.from_db;
      j["device_requests"] = st.device_requests;
      j["wall_s"] = r.wall_s;
      j["isolation"] = !opt.no_isolation;
      if (worker)
        j["worker"] = {{"starts", worker->starts()}, {"timeouts", worker->timeouts()}, {"deaths", worker->deaths()}};
      j["compile"] = {{"threads", st.compile.threads},          {"compiled", st.compile.compiled},
                      {"ahead", st.compile.on_pool},            {"ready_on_request", st.compile.ready},
                      {"inline", st.compile.inline_compiles},   {"device_idle_s", st.compile.idle_s}};
      if (database)
        j["db"] = db_path, j["run_guid"] = evaluator.run_guid(), j["journal_mode"] = database->journal_mode(),
        j["network_filesystem"] = db::is_on_network_filesystem(db_path);
      if (shard)
        j["shard"] = {{"index", shard->index}, {"count", shard->count}, {"source", shard->source},
                      {"space_slice", work.slice}, {"space_slices", work.slices}, {"scheduler_job", scheduler_job}};
      if (transfer_n)
        j["transfer"] = {{"seeds", transfer_n}, {"from_problem", transfer_problem}, {"source", source_kind},
                         {"warm_start_measurements", warm_n}};
      for (int i = 0; i < kStatusCount; ++i)
        j["by_status"][std::string(to_string(static_cast<Status>(i)))] = by[i];
      auto entry = [&](size_t i) {
        const auto* d = evaluator.detail(r.history[i].config);
        nlohmann::json e = {{"params", d ? params_json(d->params) : nlohmann::json()},
                            {"status", std::string(to_string(r.history[i].eval.status))},
                            {"time_ms", r.history[i].eval.time_ms},
                            {"evaluation", i + 1}};
        if (d) {
          e["problem_ms"] = d->problem_ms;
          e["from_db"] = d->from_db;
          if (!d->message.empty()) e["message"] = d->message;
        }
        return e;
      };
      j["best"] = ok.empty() ? nlohmann::json() : entry(ok.front());
      if (rr) {
        nlohmann::json c = nlohmann::json::array();
        for (const auto& k : rr->candidates)
          c.push_back({{"median_ms", k.median_ms}, {"lo_ms", k.lo_ms}, {"hi_ms", k.hi_ms}, {"rounds", k.times_ms.size()}});
        j["rerank"] = {{"candidates", c}, {"winner", rr->winner}, {"rounds", rr->rounds},
                       {"separated", rr->separated}, {"flip_rate", rr->flip_rate},
                       {"search_best_kept", rr->first_pick_kept}};
      } else if (!rerank_note.empty()) {
        j["rerank"] = {{"skipped", rerank_note}};
      }
      if (rr && database) j["rerank"]["recorded"] = true;
      if (!vendor.empty()) {
        j["vendor"] = nlohmann::json::array();
        for (size_t i = 0; i < vendor.size(); ++i) {
          const auto& v = vendor[i];
          nlohmann::json e = {{"problem", job.problems[i]}};
          if (v.timed())
            e.update({{"library", v.library}, {"median_ms", v.median_ms}, {"p20_ms", v.p20_ms},
                      {"p80_ms", v.p80_ms}, {"min_ms", v.min_ms}, {"reps", v.reps}, {"recorded", bool(database)}});
          else
            e["unavailable"] = v.unavailable;
          j["vendor"].push_back(e);
        }
      } else if (!vendor_note.empty()) {
        j["vendor"] = {{"skipped", vendor_note}};
      }
      j["top"] = nlohmann::json::array();
      for (size_t k = 0; k < ok.size() && k < 10; ++k) j["top"].push_back(entry(ok[k]));
      if (opt.history) {
        j["history"] = nlohmann::json::array();
        for (size_t i = 0; i < r.history.size(); ++i) j["history"].push_back(entry(i));
      }
      if (collect) {
        collect->push_back(std::move(j));
        return outcome();
      }
      std::cout << j.dump(2) << "\n";
      return outcome();
    }
    std::cout << "tune " << g.name() << " " << gen::format(sig) << " for " << target << " on " << props.name << " ("
              << spec << (props.emulated ? ", emulated: times are instruction-cost estimates" : "") << ")\n";
    std::cout << job.problems.size() << " problem(s): " << gen::format(job.problems.front())
              << (job.problems.size() > 1 ? " ..." : "") << "\n";
    std::cout << "strategy " << opt.strategy << ", seed " << opt.seed << ", budget " << opt.budget << "; "
              << r.history.size() << " of " << evaluator.space().size() << " configurations evaluated ("
              << st.from_db << " from the database), " << duration(r.wall_s) << ", stopped: " << r.stop_reason
              << "\n";
    std::cout << "compile: " << st.compile.threads << " threads, " << st.compile.on_pool << " ahead of the device, "
              << st.compile.inline_compiles << " on demand; device idle waiting for compiles " << fmt("%.2fs", st.compile.idle_s);
    if (worker)
      std::cout << "; worker restarts " << worker->starts() - 1 << " (" << worker->timeouts() << " timeouts, "
                << worker->deaths() << " deaths)";
    std::cout << "\n";
    if (shard)
      std::cout << "shard " << shard->text() << " (from " << shard->source << "): " << job.problems.size()
                << " problem(s)"
                << (work.slices > 1 ? ", space slice " + std::to_string(work.slice) + " of " + std::to_string(work.slices)
                                    : std::string())
                << (scheduler_job.empty() ? "" : ", " + scheduler_job) << "\n";
    if (database)
      std::cout << "recorded in " << db_path << " (run " << evaluator.run_guid() << ", journal "
                << database->journal_mode()
                << (db::is_on_network_filesystem(db_path) ? ": a network filesystem, so no WAL" : "") << ")\n";
    if (transfer_n)
      std::cout << "started from the " << transfer_n << " best configurations of the nearest tuned problem, "
                << gen::format(transfer_problem) << " (" << source_kind << ")"
                << (warm_n ? "; bayes warm-started from its " + std::to_string(warm_n) + " measurements" : std::string())
                << "\n";
    if (rr)
      std::cout << "re-ranked the " << rr->candidates.size() << " best over " << rr->rounds
                << " interleaved rounds: " << (rr->first_pick_kept ? "the search's best kept" : "a different winner")
                << ", median " << fmt("%.4g", rr->candidates[rr->winner].median_ms) << " ms (95% "
                << fmt("%.4g", rr->candidates[rr->winner].lo_ms) << ".." << fmt("%.4g", rr->candidates[rr->winner].hi_ms)
                << "), " << (rr->separated ? "separated from the others" : "intervals still overlap")
                << ", flip rate " << fmt("%.0f%%", 100 * rr->flip_rate) << "\n";
    else if (!rerank_note.empty())
      std::cout << rerank_note << "\n";
    if (rr && database) std::cout << "the re-ranking's winner is recorded: db best and the loader use it\n";
    for (size_t i = 0; i < vendor.size(); ++i) {
      const auto& v = vendor[i];
      std::cout << "vendor " << gen::format(job.problems[i]) << ": "
                << (v.timed() ? v.library + " " + fmt("%.4g", v.median_ms) + " ms (" + std::to_string(v.reps) +
                                    " reps" + (database ? ", recorded" : "") + ")"
                              : "not timed: " + v.unavailable)
                << "\n";
    }
    if (!vendor_note.empty()) std::cout << vendor_note << "\n";
    std::cout << "\n";
    if (ok.empty()) {
      std::cout << "best: none (no configuration ran successfully)\n\n";
    } else {
      std::vector<std::string> header = {"#", "time ms (" + time_kind + ")", "parameters"};
      if (job.problems.size() > 1) header.push_back("per problem ms");
      Table t(header);
      for (size_t k = 0; k < ok.size() && k < 10; ++k) {
        const auto* d = evaluator.detail(r.history[ok[k]].config);
        std::vector<std::string> row = {std::to_string(k + 1), fmt("%.6g", r.history[ok[k]].eval.time_ms),
                                        d ? gen::format(d->params) : evaluator.space().format(r.history[ok[k]].config)};
        if (job.problems.size() > 1) {
          std::string per;
          if (d)
            for (double ms : d->problem_ms) per += (per.empty() ? "" : " ") + fmt("%.4g", ms);
          row.push_back(per);
        }
        t.add(row);
      }
      std::cout << "best variants:\n" << t.str() << "\n";
    }
    Table s({"status", "evaluations"});
    for (int i = 0; i < kStatusCount; ++i)
      if (by[i]) s.add({std::string(to_string(static_cast<Status>(i))), std::to_string(by[i])});
    std::cout << s.str();
    return outcome();
  };

  // Several problems from --problems FILE are tuned one by one, nearest first (nearest_chain: each next problem
  // is the untuned one nearest to any tuned one), each seeded from the nearest tuned problem (--transfer-top 0:
  // each cold, independent). Repeated --problem options are one job: their summed time is the objective.
  if (opt.problems_file.empty() || job.problems.size() < 2) {
    tune_job(job, nullptr, nullptr, opt.trace);
    return kExitOk;
  }
  const size_t n = job.problems.size();
  std::vector<std::vector<double>> dist(n, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < n; ++k) dist[i][k] = problem_distance(job.problems[k], job.problems[i]);
  const auto order = nearest_chain(dist);
  std::vector<TunedProblem> tuned(n);
  // --trace OUT.jsonl with several problems: OUT.1.jsonl, OUT.2.jsonl, ... by the problem's line in the file
  auto trace_of = [&](size_t p) {
    if (opt.trace.empty()) return opt.trace;
    const auto dot = opt.trace.rfind('.'), slash = opt.trace.rfind('/');
    const size_t at = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? opt.trace.size() : dot;
    return opt.trace.substr(0, at) + "." + std::to_string(p + 1) + opt.trace.substr(at);
  };
  nlohmann::json runs = nlohmann::json::array();
  for (size_t step = 0; step < order.size(); ++step) {
    const auto [p, from] = order[step];
    TuningJob one = job;
    one.problems = {job.problems[p]};
    if (!opt.json) {
      std::cout << (step ? "\n" : "") << "== problem " << step + 1 << " of " << n << ": "
                << gen::format(job.problems[p]);
      if (opt.transfer_top && from >= 0)
        std::cout << " (nearest tuned: " << gen::format(job.problems[size_t(from)]) << ")";
      std::cout << "\n";
    }
    tuned[p] = tune_job(one, opt.transfer_top && from >= 0 ? &tuned[size_t(from)] : nullptr,
                        opt.json ? &runs : nullptr, trace_of(p));
    if (opt.json) runs.back()["order"] = step + 1;
  }
  if (opt.json) {
    nlohmann::json j;
    j["problems_file"] = opt.problems_file;
    j["order"] = nlohmann::json::array();
    for (const auto& [p, from] : order) j["order"].push_back(p);
    j["shared"] = opt.transfer_top > 0;
    j["runs"] = std::move(runs);
    std::cout << j.dump(2) << "\n";
  }
  return kExitOk;
}

} // namespace

void add_tune_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<TuneCmdOptions>();
  auto* cmd = app.add_subcommand(
      "tune",
      "Tune a generator's parameters on a device (every evaluation recorded in --db; a rerun resumes), or replay "
      "a recorded tuning space (--replay FILE: Kernel Tuner cache, T4 results or KTT JSON)");
  cmd->add_option("kernel", opt->kernel, "Generator to tune (gemm, selftest, ...; `isatune gen ls`)");
  cmd->add_option("--target", opt->target, "Target ISA (default: the device's; gfx942 on the emulator)");
  cmd->add_option("--sig", opt->sig, "Signature fields k=v[,k=v...]")->allow_extra_args(false);
  cmd->add_option("--problem", opt->problem, "Problem sizes k=v[,k=v...] (repeatable: tune for their sum)")
      ->allow_extra_args(false);
  cmd->add_option("--problems", opt->problems_file,
                  "File with one problem per line (k=v,...; # comments), tuned one by one, nearest first, each "
                  "seeded from the nearest tuned problem (--transfer-top 0: independent)");
  cmd->add_option("--shard", opt->shard,
                  "Take shard I of N of the work (problems; parts of the space when there are fewer problems "
                  "than shards), or `auto`: I/N from Slurm, Kubernetes or mpirun variables; {shard} in --db "
                  "becomes I. Example: isatune tune gemm --problems shapes.txt --shard 3/8 --db parts/3.sqlite "
                  "(docs/distributed.md)");
  cmd->add_option("--device", opt->device, "emu (the emulator, the --target's chip), emu:gfx950, hip:N, cuda:N");
  cmd->add_option("--db", opt->db, "Tuning database (created if absent): every evaluation is recorded; a rerun "
                                   "of the same job measures nothing twice");
  cmd->add_option("--timeout", opt->timeout_s,
                  "Watchdog per run in seconds (plus 10x the slowest successful run so far; default 10)");
  cmd->add_flag("--no-isolation", opt->no_isolation,
                "Run the device in this process (no watchdog: a hang or a fault is not survived)");
  cmd->add_option("-j,--compile-threads", opt->compile_threads, "Compile threads (default: every core)");
  cmd->add_option("--replay", opt->replay, "Recorded tuning space played back as the device");
  cmd->add_option("--trace", opt->trace,
                  "Write every evaluation as a JSON line (config, status, time_ms, cost_s, "
                  "charged_s), e.g. isatune tune --replay pnpoly.json.gz --seed 3 --trace run3.jsonl");
  cmd->add_option("--transfer-from", opt->transfer_from,
                  "With --replay: a recorded space of the same parameters (another device or size) whose best "
                  "configurations are evaluated first, e.g. isatune tune --replay A100.json.gz --transfer-from "
                  "MI250X.json.gz");
  cmd->add_option("--rerank", opt->rerank_top,
                  "After the search, re-measure the N best interleaved (A B C A B C, 10-50 rounds) and pick the "
                  "winner by its 95% interval (default 5; 0: off; skipped on the emulator), e.g. --rerank 8");
  cmd->add_flag("--no-vendor", opt->no_vendor,
                "Do not time the vendor library after the search (by default GEMM on cuda/hip times cuBLAS / "
                "rocBLAS for each problem and records it in --db: db best compares with it, the loader never "
                "selects a slower entry)");
  cmd->add_option("--transfer-top", opt->transfer_top,
                  "How many best configurations of the neighbour seed the search (default 5; 0: cold start). A "
                  "generator's tune starts from the nearest tuned problem of the same generator, signature and "
                  "device in --db or earlier in this run (--problems); bayes is also warm-started from its "
                  "measurements");
  cmd->add_flag("--no-warm-start", opt->no_warm_start,
                "Transfer seeds only: the bayes model does not start from the neighbour's measurements");
  cmd->add_option("--strategy", opt->strategy,
                  "exhaustive, random, annealing, genetic, ils, hybrid or bayes (default: a Gaussian-process "
                  "model with expected improvement per cost, then local search)");
  cmd->add_option(
      "--budget", opt->budget,
      "N evaluations, a device-time budget (90s, 10m, 2h), or auto: the methodology budget of the file "
      "(replay: expected-rank draws of random search to 96% of the way from the median to the optimum, times the "
      "median recorded cost per evaluation) or 200 evaluations (a generator)");
  cmd->add_option("--seed", opt->seed, "Random seed (runs with the same seed repeat exactly)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->add_flag("--history", opt->history, "With --json: include every evaluation in order");
  cmd->callback([opt, &global, &status] {
    if (opt->kernel.empty() && opt->replay.empty()) // a usage error (exit 2), like a missing required option
      throw CLI::RequiredError("tune: a generator name (KERNEL) or --replay FILE");
    status = run_guarded(global, [&] { return run_tune(*opt); });
  });
}

} // namespace isatune::cli

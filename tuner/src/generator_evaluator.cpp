#include "isatune/tune/generator_evaluator.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <exception>
#include <cmath>
#include <limits>
#include <set>

#include "isatune/codeobj/occupancy.h"
#include "isatune/error.h"
#include "worker_protocol.h"

namespace isatune::tune {

GeneratorEvaluator::GeneratorEvaluator(TuningJob job, DeviceRunner& runner, GeneratorEvaluatorOptions options)
    : job_(std::move(job)), runner_(runner), options_(std::move(options)),
      space_(job_.generator->space(job_.isa, job_.sig)) {
  if (job_.problems.empty()) throw InputError("tune: no problem given");
  if (options_.space_slices == 0 || options_.space_slice >= options_.space_slices)
    throw InputError("tune: space slice " + std::to_string(options_.space_slice) + " of " +
                     std::to_string(options_.space_slices) + ": the slice must be below the slice count");
  if (options_.space_slices > 1) {
    std::vector<uint64_t> mine;
    for (size_t p = options_.space_slice; p < space_.size(); p += options_.space_slices) mine.push_back(space_.valid()[p]);
    if (mine.empty())
      throw InputError("tune: slice " + std::to_string(options_.space_slice) + " of " +
                       std::to_string(options_.space_slices) + " of a space of " + std::to_string(space_.size()) +
                       " configurations is empty; use fewer shards");
    space_ = gen::Space(space_.parameters(), std::move(mine));
  }
  pool_ = std::make_unique<CompilePool>(*job_.generator, job_.isa, job_.sig, options_.compile_threads,
                                        options_.compile_capacity);
  if (options_.db) {
    recorder_ = std::make_unique<TuningRecorder>(*options_.db, job_, runner_.properties());
    if (options_.resume) recorded_ = recorder_->load_recorded();
    recorder_->start_run(options_.strategy, options_.budget, options_.shard, options_.scheduler_job);
  }
}

GeneratorEvaluator::~GeneratorEvaluator() {
  if (std::uncaught_exceptions()) return; // the run did not end: its row keeps ended_at NULL
  try {
    finish();
  } catch (...) {
  }
}

void GeneratorEvaluator::finish() {
  if (finished_) return;
  finished_ = true;
  if (recorder_) recorder_->end_run();
}

const std::string& GeneratorEvaluator::run_guid() const {
  static const std::string none;
  return recorder_ ? recorder_->run_guid() : none;
}

const EvaluationDetail* GeneratorEvaluator::detail(const gen::Config& config) const {
  auto it = details_.find(space_.index_of(config));
  return it == details_.end() ? nullptr : &it->second;
}

EvaluatorStats GeneratorEvaluator::stats() const {
  EvaluatorStats s = stats_;
  s.compile = pool_->stats();
  return s;
}

std::vector<gen::Params> GeneratorEvaluator::likely_next(const gen::Config& c) const {
  size_t want = options_.prefetch ? options_.prefetch : std::max<size_t>(8, 2 * size_t(options_.compile_threads));
  std::vector<gen::Config> near = space_.neighbours(c);
  for (auto& h : space_.hamming_neighbours(c)) near.push_back(std::move(h));
  std::vector<gen::Config> next; // the strategy's order when it walks the space (exhaustive)
  const int64_t pos = space_.position_of(c);
  for (size_t p = size_t(pos + 1); pos >= 0 && p < space_.size() && next.size() < want; ++p)
    next.push_back(space_.valid_config(p));
  std::vector<gen::Params> out;
  std::set<uint64_t> seen{space_.index_of(c)};
  auto take = [&](const gen::Config& x) {
    const uint64_t i = space_.index_of(x);
    if (!seen.insert(i).second || details_.count(i)) return;
    gen::Params p = gen::params_of(space_, x);
    if (recorded_.count(TuningRecorder::params_key(p))) return; // served from the database, no compile
    out.push_back(std::move(p));
  };
  for (size_t i = 0; out.size() < want && (i < near.size() || i < next.size()); ++i) {
    if (i < near.size()) take(near[i]);
    if (i < next.size() && out.size() < want) take(next[i]);
  }
  return out;
}

std::string GeneratorEvaluator::resource_problem(const Compiled& c) const {
  const auto& dev = runner_.properties();
  const uint32_t lds_limit = options_.limits.lds_bytes.value_or(dev.shared_bytes_per_workgroup);
  for (const auto& k : c.code.kernels) {
    if (lds_limit && k.lds_bytes > lds_limit)
      return k.name + ": LDS " + std::to_string(k.lds_bytes) + " bytes > the device's " + std::to_string(lds_limit);
    if (k.scratch_bytes && !options_.limits.allow_scratch)
      return k.name + ": " + std::to_string(k.scratch_bytes) + " bytes of scratch per thread (spilled registers)";
    if (options_.limits.max_vgprs && k.vgprs > *options_.limits.max_vgprs)
      return k.name + ": " + std::to_string(k.vgprs) + " registers > limit " +
             std::to_string(*options_.limits.max_vgprs);
    if (options_.limits.min_waves_per_simd && c.code.vendor == Vendor::amd) {
      try {
        const auto occ = codeobj::amd_occupancy(c.code, k);
        if (occ.waves_per_simd < options_.limits.min_waves_per_simd)
          return k.name + ": occupancy " + std::to_string(occ.waves_per_simd) + " waves per SIMD (limited by " +
                 occ.limiter + ") < floor " + std::to_string(options_.limits.min_waves_per_simd);
      } catch (const Error& e) {
        return k.name + ": occupancy: " + e.what();
      }
    }
  }
  return "";
}

Evaluation GeneratorEvaluator::evaluate(const gen::Config& config) {
  ++stats_.evaluated;
  const uint64_t index = space_.index_of(config);
  EvaluationDetail d;
  d.params = gen::params_of(space_, config);
  const std::string pkey = TuningRecorder::params_key(d.params);
  const auto rec_it = recorded_.find(pkey);

  // What the database already has for each problem; the variant's status is the first failure.
  std::vector<std::optional<RecordedResult>> known(job_.problems.size());
  bool all_known = true, failed_known = false;
  for (size_t i = 0; i < job_.problems.size(); ++i) {
    if (rec_it != recorded_.end()) {
      auto p = rec_it->second.find(TuningRecorder::problem_key(job_.problems[i]));
      if (p != rec_it->second.end()) known[i] = p->second;
    }
    if (!known[i]) all_known = false;
    else if (known[i]->status != Status::ok) failed_known = true;
  }
  auto finish_detail = [&](double cost_s) {
    Evaluation e{d.status, d.status == Status::ok ? d.time_ms : 0, cost_s};
    details_[index] = d;
    return e;
  };
  if (all_known || failed_known) {
    ++stats_.from_db;
    d.from_db = true;
    for (const auto& k : known) {
      if (!k) continue;
      if (k->status != Status::ok) {
        d.status = k->status;
        d.message = k->message;
        break;
      }
      d.problem_ms.push_back(k->median_ms.value_or(0));
      d.time_ms += k->median_ms.value_or(0);
    }
    return finish_detail(0);
  }

  pool_->prefetch(likely_next(config));
  CompileOutcome co = pool_->get(d.params);
  d.compile_s = co.compile_s;
  stats_.compile_s += co.compile_s;
  std::vector<TuningRecorder::Outcome> outcomes;
  auto fail_all = [&](Status s, const std::string& message) {
    ++stats_.pruned;
    d.status = s;
    d.message = message;
    for (const auto& p : job_.problems) outcomes.push_back({p, s, message, std::nullopt});
    if (recorder_) recorder_->record(d.params, co.compiled.get(), outcomes);
    return finish_detail(co.compile_s);
  };
  if (co.status != Status::ok) return fail_all(co.status, co.message);
  if (!co.compiled->prune_reasons.empty()) { // ptxas serialised wgmma or ignored setmaxnreg: not worth device time
    std::string why = "ptxas: " + co.compiled->prune_reasons.front();
    if (co.compiled->prune_reasons.size() > 1)
      why += " (and " + std::to_string(co.compiled->prune_reasons.size() - 1) + " more)";
    return fail_all(Status::compile, why);
  }
  if (std::string why = resource_problem(*co.compiled); !why.empty()) return fail_all(Status::resource, why);

  VariantSpec spec{job_.generator, job_.isa, job_.sig, d.params};
  for (size_t i = 0; i < job_.problems.size(); ++i) {
    if (known[i]) { // ok on this problem in an earlier run
      d.problem_ms.push_back(known[i]->median_ms.value_or(0));
      d.time_ms += known[i]->median_ms.value_or(0);
      continue;
    }
    const double timeout = options_.timeout_s + options_.timeout_factor * slowest_ok_s_;
    ++stats_.device_requests;
    RunResult r = runner_.run(*co.compiled, spec, job_.problems[i], options_.run, timeout);
    stats_.device_s += r.run_s;
    d.run_s += r.run_s;
    TuningRecorder::Outcome o{job_.problems[i], r.status, r.message, r.timing};
    outcomes.push_back(o);
    if (r.status != Status::ok) {
      d.status = r.status;
      d.message = r.message;
      break; // a variant that fails one problem fails the job
    }
    slowest_ok_s_ = std::max(slowest_ok_s_, r.run_s);
    const double ms = r.timing ? r.timing->median_ms : 0;
    d.problem_ms.push_back(ms);
    d.time_ms += ms;
  }
  if (recorder_ && !outcomes.empty()) recorder_->record(d.params, co.compiled.get(), outcomes);
  return finish_detail(co.compile_s + d.run_s);
}

double GeneratorEvaluator::remeasure(const gen::Config& config) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  gen::Params params = gen::params_of(space_, config);
  CompileOutcome co = pool_->get(params);
  if (co.status != Status::ok || !co.compiled) return nan;
  VariantSpec spec{job_.generator, job_.isa, job_.sig, params};
  RunOptions ro = options_.run;
  ro.check = false;
  double sum = 0;
  for (const auto& problem : job_.problems) {
    ++stats_.device_requests;
    RunResult r = runner_.run(*co.compiled, spec, problem, ro, options_.timeout_s + options_.timeout_factor * slowest_ok_s_);
    stats_.device_s += r.run_s;
    if (r.status != Status::ok || !r.timing) return nan;
    sum += r.timing->median_ms;
  }
  return sum;
}

void GeneratorEvaluator::record_rerank_winner(const gen::Config& winner, const RerankResult& result) {
  if (!recorder_) return;
  const auto& c = result.candidates.at(result.winner);
  TuningRecorder::RerankSummary s{c.median_ms, c.lo_ms, c.hi_ms, result.candidates.size(), result.rounds,
                                  result.separated, result.flip_rate};
  const gen::Params params = gen::params_of(space_, winner);
  for (const auto& p : job_.problems) recorder_->record_rerank_winner(params, p, s);
}

std::vector<loader::VendorTiming> GeneratorEvaluator::record_vendor_times(loader::Device& device) {
  std::vector<loader::VendorTiming> out;
  const std::string sig = nlohmann::json(job_.sig).dump();
  loader::VendorTimingOptions o;
  o.warmup = options_.run.timing.warmup;
  o.min_reps = options_.run.timing.min_reps;
  o.max_reps = options_.run.timing.max_reps;
  o.budget_ms = options_.run.timing.budget_ms;
  o.flush_bytes = options_.run.timing.flush_bytes;
  o.seed = options_.run.seed;
  for (const auto& p : job_.problems) {
    const auto gemm = loader::vendor_gemm_of(job_.generator->name(), sig, nlohmann::json(p).dump());
    loader::VendorTiming t;
    if (!gemm) {
      t.unavailable = job_.generator->name() + " has no vendor baseline (only gemm: cuBLAS, rocBLAS)";
    } else {
      t = loader::time_vendor_gemm(device, *gemm, o);
      if (t.timed() && recorder_) recorder_->record_vendor_time(p, t);
    }
    out.push_back(std::move(t));
  }
  return out;
}

double problem_distance(const gen::Problem& a, const gen::Problem& b) {
  double d = 0;
  for (const auto& [name, v] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second <= 0 || v <= 0)
      return INFINITY;
    d += std::fabs(std::log(double(it->second) / double(v)));
  }
  return d;
}

std::pair<std::vector<gen::Config>, gen::Problem> GeneratorEvaluator::transfer_seeds(size_t k) const {
  TransferSource t = transfer_source(k);
  if (t.best.empty()) return {};
  return {std::move(t.best), std::move(t.problem)};
}

TransferSource GeneratorEvaluator::transfer_source(size_t k) const {
  std::set<std::string> own;
  for (const auto& p : job_.problems) own.insert(TuningRecorder::problem_key(p));
  auto distance = [&](const gen::Problem& q) {
    double best = INFINITY;
    for (const auto& p : job_.problems) best = std::min(best, problem_distance(p, q));
    return best;
  };
  // the nearest problem with at least one ok result
  TransferSource out;
  std::string nearest;
  for (const auto& [pkey, by_problem] : recorded_)
    for (const auto& [qkey, res] : by_problem) {
      if (own.count(qkey) || res.status != Status::ok || !res.median_ms || qkey == nearest) continue;
      gen::Problem q = nlohmann::json::parse(qkey).get<gen::Problem>();
      double d = distance(q);
      if (d < out.distance) out.distance = d, nearest = qkey, out.problem = q;
    }
  if (nearest.empty()) return out;
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [pkey, by_problem] : recorded_) {
    auto it = by_problem.find(nearest);
    if (it != by_problem.end() && it->second.status == Status::ok && it->second.median_ms)
      ranked.emplace_back(*it->second.median_ms, pkey);
  }
  std::sort(ranked.begin(), ranked.end());
  for (const auto& [ms, pkey] : ranked) {
    try {
      gen::Config c = gen::config_of(space_, worker::params_from_json(nlohmann::json::parse(pkey)));
      if (space_.position_of(c) < 0) continue;
      if (out.best.size() < k) out.best.push_back(c);
      out.measurements.push_back({std::move(c), ms});
    } catch (const InputError&) { // a parameter value this space no longer has
    }
  }
  return out;
}

} // namespace isatune::tune

#include "isatune/jit/model_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "isatune/cdna/target.h"
#include "isatune/error.h"
#include "isatune/tune/estimate.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::jit {

namespace {

struct Ranked {
  size_t position = 0;
  double score_ms = 0;
  double work_per_wg = 0; // FLOPs per workgroup: ties go to the larger tile (more reuse, which no roofline sees)
};

// Fraction of a tiled kernel's tile area that covers the problem (1 for kernels without tile_m/tile_n).
double tile_fill(const gen::Params& p, const gen::Problem& problem) {
  auto tile = p.find("tile_m"), tile_n = p.find("tile_n");
  auto m = problem.find("M"), n = problem.find("N");
  if (tile == p.end() || tile_n == p.end() || m == problem.end() || n == problem.end()) return 1;
  const double tm = tile->second.number, tn = tile_n->second.number;
  if (tm <= 0 || tn <= 0) return 1;
  const double pm = std::ceil(double(m->second) / tm) * tm, pn = std::ceil(double(n->second) / tn) * tn;
  return double(m->second) * double(n->second) / (pm * pn);
}

// Peak compute (TFLOP/s) and memory (TB/s) of a target, and its CU/SM count.
void peaks(const std::string& isa, bool matrix, double& tflops, double& tbps, double& units) {
  if (gen::is_ptx_isa(isa)) {
    const tune::NvidiaPeaks p = tune::nvidia_peaks(isa);
    tflops = matrix ? p.matrix_tflops : p.vector_tflops, tbps = p.hbm_tbps, units = p.sms;
    return;
  }
  const cdna::TargetInfo* t = cdna::find_target(isa);
  if (!t) throw InputError("jit: unknown target " + isa);
  const double per_clk = matrix ? t->matrix_flops_per_clk_cu_f16 : (t->gfx == cdna::Gfx::gfx90a ? 128 : 256);
  tflops = per_clk * t->compute_units * t->peak_clock_ghz * 1e9 / 1e12, tbps = t->peak_hbm_tbps;
  units = t->compute_units;
}

} // namespace

ModelChoice model_best(const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                       const gen::Problem& problem, const loader::DeviceProperties& device, size_t candidates) {
  const gen::Space space = g.space(isa, sig);
  if (!space.size()) throw InputError("jit: " + g.name() + " has no valid configuration for " + isa);
  const gen::Work work = g.work(sig, problem);
  double tflops = 0, tbps = 0, units = 0;
  peaks(isa, work.matrix, tflops, tbps, units);
  if (device.compute_units) units = device.compute_units;
  const double compute_ms = work.flops / (tflops * 1e12) * 1e3, memory_ms = work.bytes / (tbps * 1e12) * 1e3;

  const auto specs = g.buffers(sig, problem);
  const std::vector<uint64_t> fake(specs.size(), 0x100000000ull);
  std::map<std::string, double> scalars;
  for (const auto& [name, range] : g.scalars(sig)) scalars[name] = range.first;

  std::vector<Ranked> ranked;
  ranked.reserve(space.size());
  for (size_t i = 0; i < space.size(); ++i) {
    const gen::Params p = gen::params_of(space, space.valid_config(i));
    uint64_t wgs = 0;
    try {
      for (const auto& l : g.launches(isa, sig, p, problem, fake, scalars)) wgs += uint64_t(l.grid.x) * l.grid.y * l.grid.z;
    } catch (const InputError&) {
      continue; // this configuration cannot run the problem
    }
    if (!wgs) continue;
    const double waves = std::ceil(double(wgs) / units);
    const double wave_eff = double(wgs) / (waves * units);
    const double score = std::max(compute_ms / (wave_eff * tile_fill(p, problem)), memory_ms);
    ranked.push_back({i, score, work.flops / double(wgs)});
  }
  if (ranked.empty())
    throw InputError("jit: no configuration of " + g.name() + " on " + isa + " can run " + gen::format(problem));
  auto better = [](const Ranked& a, const Ranked& b) {
    if (a.score_ms != b.score_ms) return a.score_ms < b.score_ms;
    if (a.work_per_wg != b.work_per_wg) return a.work_per_wg > b.work_per_wg;
    return a.position < b.position;
  };
  const size_t keep = std::min(std::max<size_t>(candidates, 1), ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + ptrdiff_t(keep), ranked.end(), better);

  ModelChoice best;
  best.ranked = ranked.size();
  double best_ms = std::numeric_limits<double>::infinity(), best_work = 0;
  for (size_t i = 0; i < keep; ++i) {
    const gen::Params p = gen::params_of(space, space.valid_config(ranked[i].position));
    double bound = ranked[i].score_ms;
    try {
      tune::CompileOptions co;
      co.ptxas = false; // registers matter less than geometry here; ptxas would cost ~100 ms per candidate
      const tune::Compiled c = tune::compile_variant({&g, isa, sig, p}, co);
      bound = tune::estimate(c.code, g, isa, sig, p, problem, device.name).bound_ms;
      ++best.compiled;
    } catch (const Error&) {
      continue; // the toolchain refused it: the next candidate
    }
    if (bound < best_ms || (bound == best_ms && ranked[i].work_per_wg > best_work)) {
      best_ms = bound, best_work = ranked[i].work_per_wg;
      best.params = p;
      best.bound_ms = bound;
    }
  }
  if (best.params.empty())
    throw InputError("jit: none of the " + std::to_string(keep) + " best-ranked configurations of " + g.name() +
                     " on " + isa + " compiled");
  return best;
}

} // namespace isatune::jit

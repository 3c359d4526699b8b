#include "isatune/tune/estimate.h"

#include <algorithm>
#include <cmath>

#include "isatune/cdna/target.h"
#include "isatune/error.h"

namespace isatune::tune {

Estimate estimate(const CodeObject& code, const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                  const gen::Params& params, const gen::Problem& problem) {
  if (code.vendor != Vendor::amd) throw InputError("estimate: only AMD code objects are estimated so far");
  const cdna::TargetInfo* t = cdna::find_target(isa);
  if (!t) throw InputError("estimate: unknown target " + isa);
  if (code.kernels.empty()) throw InputError("estimate: the code object has no kernel");

  // Launch geometry with placeholder addresses: only grid and block matter here.
  const auto specs = g.buffers(sig, problem);
  std::vector<uint64_t> fake(specs.size(), 0x100000000ull);
  std::map<std::string, double> scalars;
  for (const auto& [name, range] : g.scalars(sig)) scalars[name] = range.first;
  const auto launches = g.launches(sig, params, problem, fake, scalars);

  Estimate e;
  const KernelInfo* k = &code.kernels.front();
  if (!launches.empty())
    for (const auto& ki : code.kernels)
      if (ki.name == launches.front().kernel) k = &ki;
  e.vgprs = k->vgprs;
  e.agprs = k->agprs;
  e.sgprs = k->sgprs;
  e.lds_bytes = k->lds_bytes;
  e.scratch_bytes = k->scratch_bytes;
  for (const auto& l : launches) e.workgroups += uint64_t(l.grid.x) * l.grid.y * l.grid.z;
  e.workgroup_size = launches.empty() ? k->max_workgroup_size
                                      : launches.front().block.x * launches.front().block.y * launches.front().block.z;
  e.occupancy = codeobj::amd_occupancy(code, *k, e.workgroup_size);

  const gen::Work w = g.work(sig, problem);
  e.flops = w.flops;
  e.bytes = w.bytes;
  e.intensity = w.bytes > 0 ? w.flops / w.bytes : 0;
  const double clock_hz = t->peak_clock_ghz * 1e9;
  double flops_per_clk_cu = 0;
  if (w.matrix) {
    flops_per_clk_cu = t->matrix_flops_per_clk_cu_f16;
    // fp8 inputs run at twice the f16 rate on gfx942 and gfx950 (notes section 7).
    auto a = sig.find("a");
    if (a != sig.end() && a->second.rfind("fp8", 0) == 0) flops_per_clk_cu *= 2;
  } else {
    flops_per_clk_cu = t->gfx == cdna::Gfx::gfx90a ? 128 : 256; // vector FP32 (notes section 7)
  }
  e.peak_tflops = flops_per_clk_cu * t->compute_units * clock_hz / 1e12;
  e.peak_tbps = t->peak_hbm_tbps;
  e.compute_ms = e.peak_tflops > 0 ? w.flops / (e.peak_tflops * 1e12) * 1e3 : 0;
  e.memory_ms = e.peak_tbps > 0 ? w.bytes / (e.peak_tbps * 1e12) * 1e3 : 0;

  // Workgroups resident at once on the whole chip; the last wave of workgroups may leave CUs idle.
  const uint64_t per_cu = std::max<uint32_t>(1, e.occupancy.workgroups_per_cu);
  const uint64_t slots = per_cu * t->compute_units;
  if (e.workgroups > 0) {
    const uint64_t waves = (e.workgroups + slots - 1) / slots;
    e.wave_efficiency = double(e.workgroups) / double(waves * slots);
    // A grid smaller than the chip cannot use all of it.
    e.wave_efficiency = std::clamp(e.wave_efficiency, 1e-6, 1.0);
  }
  // Only the compute side is derated: idle CUs cannot lend their matrix units, while a few CUs may still draw
  // much of the memory bandwidth (no per-CU bandwidth figure is known), so the bound stays a lower bound.
  const double compute = e.compute_ms / e.wave_efficiency;
  e.bound_by = compute >= e.memory_ms ? "compute" : "memory";
  e.bound_ms = std::max(compute, e.memory_ms);
  if (e.occupancy.waves_per_simd == 0) e.bound_ms = INFINITY; // does not fit on a CU at all
  return e;
}

} // namespace isatune::tune

#include "isatune/tune/estimate.h"

#include <algorithm>
#include <cmath>

#include "isatune/cdna/target.h"
#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/error.h"

namespace isatune::tune {

NvidiaPeaks nvidia_peaks(const std::string& isa, const std::string& device_name) {
  if (isa == "sm_80") // A100 SXM4 80GB datasheet: 108 SMs, 312 TFLOP/s dense bf16, 19.5 f32, 2.039 TB/s
    return {"A100 SXM4 80GB", 108, 312.0, 0, 19.5, 2.039};
  if (isa == "sm_90" || isa == "sm_90a") { // shared/notes/ptx.md section 7
    if (device_name.find("H100") != std::string::npos) return {"H100 SXM5", 132, 989.4, 1978.9, 66.9, 3.35};
    return {"H200 SXM", 132, 989.4, 1978.9, 66.9, 4.8};
  }
  throw InputError("estimate: no peaks known for NVIDIA target " + isa + " (sm_80, sm_90, sm_90a)");
}

namespace {

// The launches of a problem with placeholder addresses: only geometry and shared memory matter here.
std::vector<gen::Launch> geometry(const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                                  const gen::Params& params, const gen::Problem& problem) {
  const auto specs = g.buffers(sig, problem);
  std::vector<uint64_t> fake(specs.size(), 0x100000000ull);
  std::map<std::string, double> scalars;
  for (const auto& [name, range] : g.scalars(sig)) scalars[name] = range.first;
  return g.launches(isa, sig, params, problem, fake, scalars);
}

void roofline(Estimate& e, double peak_tflops, double peak_tbps, uint64_t slots) {
  e.peak_tflops = peak_tflops;
  e.peak_tbps = peak_tbps;
  e.compute_ms = e.peak_tflops > 0 ? e.flops / (e.peak_tflops * 1e12) * 1e3 : 0;
  e.memory_ms = e.peak_tbps > 0 ? e.bytes / (e.peak_tbps * 1e12) * 1e3 : 0;
  if (e.workgroups > 0 && slots > 0) {
    const uint64_t waves = (e.workgroups + slots - 1) / slots;
    e.wave_efficiency = std::clamp(double(e.workgroups) / double(waves * slots), 1e-6, 1.0);
  }
  // Only the compute side is derated, and only by whole idle SMs/CUs (slots = SMs/CUs): with W equal workgroups on
  // C of them the busiest holds ceil(W/C), so compute / wave_efficiency = ceil(W/C) x (work per workgroup at one
  // CU's peak) is still a lower bound. A few CUs may draw much of the memory bandwidth, so memory is not derated.
  const double compute = e.compute_ms / e.wave_efficiency;
  e.bound_by = compute >= e.memory_ms ? "compute" : "memory";
  e.bound_ms = std::max(compute, e.memory_ms);
}

Estimate estimate_nvidia(const CodeObject& code, const gen::Generator& g, const std::string& isa,
                         const gen::Signature& sig, const gen::Params& params, const gen::Problem& problem,
                         const std::string& device_name) {
  const NvidiaPeaks peaks = nvidia_peaks(isa, device_name);
  const auto launches = geometry(g, isa, sig, params, problem);
  Estimate e;
  e.peaks_of = peaks.chip;
  const KernelInfo* k = &code.kernels.front();
  if (!launches.empty())
    for (const auto& ki : code.kernels)
      if (ki.name == launches.front().kernel) k = &ki;
  e.vgprs = k->vgprs;
  e.lds_bytes = k->lds_bytes;
  e.scratch_bytes = k->scratch_bytes;
  for (const auto& l : launches) e.workgroups += uint64_t(l.grid.x) * l.grid.y * l.grid.z;
  uint32_t dynamic_shared = 0;
  if (!launches.empty()) {
    const auto& b = launches.front().block;
    e.workgroup_size = b.x * b.y * b.z;
    dynamic_shared = launches.front().dynamic_shared_bytes;
    e.lds_bytes += dynamic_shared;
  } else {
    e.workgroup_size = k->max_workgroup_size;
  }
  if (!k->vgprs) e.note = "registers unknown (ptxas did not compile it): occupancy from shared memory and threads";
  const auto sm = codeobj::nvidia_sm_limits(isa);
  const auto occ = codeobj::nvidia_occupancy(sm, std::max<uint32_t>(k->vgprs, 1), e.lds_bytes, e.workgroup_size);
  e.occupancy.workgroups_per_cu = occ.blocks_per_sm;
  e.occupancy.waves_per_simd = occ.warps_per_sm / sm.sub_partitions;
  e.occupancy.limiter = occ.limiter;

  const gen::Work w = g.work(sig, problem);
  e.flops = w.flops;
  e.bytes = w.bytes;
  e.intensity = w.bytes > 0 ? w.flops / w.bytes : 0;
  double tflops = peaks.vector_tflops;
  if (w.matrix) {
    tflops = peaks.matrix_tflops;
    auto a = sig.find("a");
    if (a != sig.end() && a->second.rfind("fp8", 0) == 0 && peaks.fp8_tflops > 0) tflops = peaks.fp8_tflops;
  }
  // Quantised per SM, not per resident block: one CTA may keep an SM's tensor cores busy, so counting block
  // slots would overstate the idle part and stop being a lower bound (issue 14's complaint on the AMD side).
  roofline(e, tflops, peaks.hbm_tbps, peaks.sms);
  if (occ.blocks_per_sm == 0) e.bound_ms = INFINITY; // does not fit on an SM at all
  return e;
}

} // namespace

Estimate estimate(const CodeObject& code, const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                  const gen::Params& params, const gen::Problem& problem, const std::string& device_name) {
  if (code.kernels.empty()) throw InputError("estimate: the code object has no kernel");
  if (code.vendor == Vendor::nvidia) return estimate_nvidia(code, g, isa, sig, params, problem, device_name);
  const cdna::TargetInfo* t = cdna::find_target(isa);
  if (!t) throw InputError("estimate: unknown target " + isa);

  const auto launches = geometry(g, isa, sig, params, problem);

  Estimate e;
  e.peaks_of = std::string(t->products.substr(0, t->products.find(','))); // the largest product's peaks
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
  // Quantised per CU, not per resident workgroup slot: one workgroup of four waves can keep a CU's matrix cores
  // busy, so counting slots (occupancy x CUs) would charge idle slots as idle compute and stop being a lower
  // bound (issue 14: a 2048x2048x256 bf16 GEMM emulated at 0.0139 ms against a "bound" of 0.0156 ms).
  roofline(e, flops_per_clk_cu * t->compute_units * clock_hz / 1e12, t->peak_hbm_tbps, t->compute_units);
  if (e.occupancy.waves_per_simd == 0) e.bound_ms = INFINITY; // does not fit on a CU at all
  return e;
}

} // namespace isatune::tune

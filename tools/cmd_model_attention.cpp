// `isatune model attention`: AITER's fmha_v3_fwd forward kernels (the fixtures' code objects, launched as AITER's
// csrc/cpp_itfs/mha_fwd.cu launches them) and points of our `attention` generator, at one problem, through the
// same path: the CDNA emulator's timing model with the same CU subset and the same chip model (fmha_model.h).
// Every time it prints is the model's, never a measurement.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands.h"
#include "exit_codes.h"
#include "fmha_model.h"
#include "generator_args.h"
#include "isatune/error.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::cli {

namespace {

struct ModelAttentionOptions {
  GeneratorArgs args; // --target, --sig, --problem of the attention generator
  std::vector<std::string> points; // one --point per variant of ours
  std::string co_dir;
  uint32_t cu_subset = 8;
  unsigned threads = 0;
  uint64_t seed = 1;
  bool json = false;
};

struct Result {
  std::string source, kernel, params; // source: "aiter" or "isatune"
  emu::LaunchStats stats;
  double ms = 0, tflops = 0;
  std::string status = "ok", message;
  bool checked = false;
  double max_rel_error = 0, tolerance = 0;
};

std::string field(const gen::Signature& sig, const char* k) {
  auto it = sig.find(k);
  return it == sig.end() ? "" : it->second;
}

int64_t problem_value(const gen::Problem& p, const char* k, int64_t fallback) {
  auto it = p.find(k);
  return it == p.end() || it->second == 0 ? fallback : it->second;
}

int run_model_attention(const ModelAttentionOptions& opt) {
  const gen::Generator& g = gen::find_generator("attention");
  const std::string isa = generator_isa(g, opt.args.target);
  if (isa.rfind("gfx", 0) != 0)
    throw InputError("model attention: --target " + opt.args.target +
                     " is not a CDNA target (the timing model is the CDNA emulator's: gfx942, gfx950)");
  const gen::Signature sig = gen::parse_signature(g, opt.args.sig);
  const gen::Problem problem = gen::parse_problem(g, opt.args.problem);
  if (problem_value(problem, "pad", 0) != 0)
    throw InputError("model attention: --problem pad must be 0 (AITER's launch is packed BSHD)");
  FmhaShape shape;
  shape.batch = uint32_t(problem.at("B")), shape.hq = uint32_t(problem.at("Hq"));
  shape.hk = uint32_t(problem_value(problem, "Hkv", shape.hq));
  shape.sq = uint32_t(problem.at("Sq")), shape.sk = uint32_t(problem_value(problem, "Sk", shape.sq));
  shape.d = uint32_t(std::stoul(field(sig, "head_dim")));
  shape.causal = field(sig, "mask") == "causal";
  const double flop = fmha_flop(shape);
  const loader::Dim3 aiter_grid = fmha_grid(shape);

  std::vector<Result> rows;
  if (!opt.co_dir.empty()) {
    if (field(sig, "dtype") != "bf16" || shape.d != 128 || field(sig, "layout") != "bshd" || field(sig, "lse") != "yes")
      throw InputError("model attention: AITER's fmha_v3_fwd fixtures are dtype=bf16, head_dim=128, layout=bshd, "
                       "lse=yes; --sig gives " + gen::format(sig) + " (drop --co-dir to model ours alone)");
    const auto codes = code_objects(opt.co_dir);
    const auto kernels = fmha_fwd_kernels(codes, isa, shape.causal);
    if (kernels.empty())
      throw InputError("model attention: no fmha_v3_fwd hd128 bf16 " + std::string(shape.causal ? "causal " : "") +
                       "forward code object for " + isa + " under --co-dir " + opt.co_dir);
    for (const std::string& k : kernels) {
      Result r;
      r.source = "aiter", r.kernel = k;
      r.stats = predict_fmha(codes.at(k + "@" + isa), k, shape, opt.threads, opt.cu_subset, uint32_t(opt.seed));
      rows.push_back(r);
    }
  }
  for (const std::string& point : opt.points) {
    GeneratorArgs a = opt.args;
    a.params = {point};
    const tune::VariantSpec spec = variant_spec("attention", a);
    Result r;
    r.source = "isatune", r.params = gen::format(spec.params);
    const tune::Compiled compiled = tune::compile_variant(spec);
    r.kernel = compiled.code.kernels.at(0).name;
    auto dev = emu::make_emu_device({.target = isa, .threads = opt.threads, .cu_subset = opt.cu_subset});
    tune::RunOptions ro;
    ro.seed = opt.seed;
    ro.time = false; // the check run's launch is the one modelled (the model is deterministic)
    // On a CU subset the workgroups not simulated compute nothing: the outputs cannot be checked.
    ro.check = opt.cu_subset == 0;
    const tune::RunResult rr = tune::run_variant(*dev, compiled, spec, problem, ro);
    r.status = tune::to_string(rr.status), r.message = rr.message;
    r.checked = ro.check && rr.status == tune::Status::ok;
    r.max_rel_error = rr.max_rel_error, r.tolerance = rr.tolerance;
    r.stats = dev->last_launch();
    rows.push_back(r);
  }
  double aiter_best_ms = 0;
  for (Result& r : rows) {
    r.ms = r.stats.estimated_ms;
    r.tflops = r.ms > 0 ? flop / (r.ms * 1e-3) / 1e12 : 0;
    if (r.source == "aiter" && (aiter_best_ms == 0 || r.ms < aiter_best_ms)) aiter_best_ms = r.ms;
  }
  bool all_ok = true;
  for (const Result& r : rows) all_ok = all_ok && r.status == "ok";

  if (opt.json) {
    nlohmann::json j = {{"target", isa}, {"signature", gen::format(sig)}, {"problem", gen::format(problem)},
                        {"flop", flop}, {"cu_subset", opt.cu_subset}, {"compute_units", chip_cus(isa)},
                        {"aiter_grid", {aiter_grid.x, aiter_grid.y, aiter_grid.z}},
                        {"note", "modelled: the CDNA emulator's timing model, not a measurement; FLOPs "
                                 "4*B*Hq*Sq*Sk*D, halved when causal (AITER's benchmark_mha_fwd)"}};
    nlohmann::json arr = nlohmann::json::array();
    for (const Result& r : rows) {
      const auto& s = r.stats;
      nlohmann::json o = {{"source", r.source}, {"kernel", r.kernel}, {"status", r.status},
                          {"modelled_ms", r.ms}, {"modelled_tflops", r.tflops},
                          {"workgroups", s.workgroups}, {"simulated_workgroups", s.simulated_workgroups},
                          {"simulated_cus", s.simulated_cus}, {"compute_units", s.compute_units},
                          {"workgroups_per_cu", s.workgroups_per_cu}, {"limiter", s.limiter},
                          {"cycles", {{"cu", s.cu_cycles}, {"dram", s.dram_cycles}, {"l2", s.l2_cycles},
                                      {"launch", s.launch_cycles}, {"estimated", s.estimated_cycles}}},
                          {"dram_bytes", s.dram_bytes}, {"host_seconds", s.host_seconds},
                          {"instructions", s.instructions}, {"checked", r.checked}};
      if (r.source == "isatune") o["params"] = r.params;
      if (!r.message.empty()) o["message"] = r.message;
      if (r.checked) o["max_rel_error"] = r.max_rel_error, o["tolerance"] = r.tolerance;
      if (aiter_best_ms > 0 && r.ms > 0) o["speed_vs_best_aiter"] = aiter_best_ms / r.ms;
      arr.push_back(o);
    }
    j["rows"] = arr;
    std::cout << j.dump(2) << "\n";
    return all_ok ? kExitOk : kExitInputError;
  }
  char buf[512];
  std::cout << "model attention: " << isa << " " << gen::format(sig) << " " << gen::format(problem)
            << " (modelled = the CDNA emulator's timing model, not a measurement)\n";
  std::snprintf(buf, sizeof buf, "FLOPs %.4g (4*B*Hq*Sq*Sk*D%s)\n", flop, shape.causal ? ", halved: causal" : "");
  std::cout << buf;
  std::cout << "source   modelled ms  modelled TF/s  vs AITER  limiter  workgroups (simulated)  per CU  host s  "
               "kernel\n";
  for (const Result& r : rows) {
    const auto& s = r.stats;
    std::string ratio = "-";
    if (aiter_best_ms > 0 && r.ms > 0) std::snprintf(buf, sizeof buf, "%.2fx", aiter_best_ms / r.ms), ratio = buf;
    std::snprintf(buf, sizeof buf, "%-7s %12.4f %14.1f %9s  %-7s %10llu (%llu)  %6u  %6.1f  %s", r.source.c_str(),
                  r.ms, r.tflops, ratio.c_str(), s.limiter.c_str(), (unsigned long long)s.workgroups,
                  (unsigned long long)s.simulated_workgroups, s.workgroups_per_cu, s.host_seconds,
                  (r.source == "aiter" ? r.kernel : r.params).c_str());
    std::cout << buf;
    if (r.status != "ok") std::cout << "  " << r.status << ": " << r.message;
    else if (r.checked) {
      std::snprintf(buf, sizeof buf, "  checked: max rel error %.3g", r.max_rel_error);
      std::cout << buf;
    }
    std::cout << "\n";
  }
  if (opt.cu_subset && opt.cu_subset < chip_cus(isa))
    std::cout << "CU subset: only the workgroups of " << opt.cu_subset << " of " << chip_cus(isa)
              << " CUs were simulated, the others taken by symmetry; HBM and L2 traffic modelled analytically for "
                 "the whole chip; outputs not checked (--cu-subset 0 checks ours against the float64 reference)\n";
  std::cout << "vs AITER: the fastest AITER kernel's modelled time / this row's (above 1: faster in the model)\n";
  return all_ok ? kExitOk : kExitInputError;
}

} // namespace

void add_model_attention_command(CLI::App& model, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<ModelAttentionOptions>();
  auto* cmd = model.add_subcommand(
      "attention",
      "Model AITER's fmha_v3_fwd forward kernels (code objects under --co-dir) and points of our attention "
      "generator at one problem through the same timing-model path: the CDNA emulator on the same CU subset, HBM "
      "and L2 analytic for the chip; prints modelled ms and TFLOP/s side by side (never measurements).");
  cmd->add_option("--target", opt->args.target, "gfx942 or gfx950 (default gfx942)");
  cmd->add_option("--sig", opt->args.sig,
                  "Attention signature, k=v[,k=v...] (default dtype=bf16,head_dim=128,layout=bshd,lse=yes; "
                  "mask=causal for causal); AITER's rows need those four values");
  cmd->add_option("--problem", opt->args.problem, "B=..,Hq=..[,Hkv=..],Sq=..[,Sk=..] (attention's problem)")
      ->required();
  cmd->add_option("--point", opt->points,
                  "One point of `isatune space attention`, k=v[,k=v...] (unset parameters as `run --param`); "
                  "repeat for several");
  cmd->add_option("--co-dir", opt->co_dir,
                  "Folder searched for AITER's fmha_v3_fwd .co files (tests/fixtures/aiter); every hd128 bf16 "
                  "forward kernel of the target and mask found there is modelled (omit: ours only)");
  cmd->add_option("--cu-subset", opt->cu_subset,
                  "CUs whose workgroups are simulated, the others taken by symmetry, HBM/L2 analytic for the chip "
                  "(default 8; 0: every workgroup, and ours are then checked against the float64 reference)");
  cmd->add_option("--threads", opt->threads, "Emulator worker threads (default: all cores)");
  cmd->add_option("--seed", opt->seed, "Random inputs' seed (default 1)");
  cmd->add_flag("--json", opt->json, "Print one JSON object instead of text");
  cmd->callback([opt, &global, &status] {
    if (opt->points.empty() && opt->co_dir.empty())
      status = run_guarded(global, []() -> int {
        throw InputError("model attention: give --point P and/or --co-dir DIR");
      });
    else
      status = run_guarded(global, [&] { return run_model_attention(*opt); });
  });
}

} // namespace isatune::cli

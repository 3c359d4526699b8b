// `isatune gen KERNEL --target T --sig ... --param k=v ... [-o out.s|out.hsaco] [--problem ...] [--json]`:
// generates one variant; prints its assembly (or writes it, assembled when the name ends in .hsaco), and with
// --problem its static estimate (resources, FLOPs, bytes, roofline bound).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "file_io.h"
#include "estimate_json.h"
#include "generator_args.h"
#include "isatune/error.h"
#include "isatune/tune/estimate.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::cli {

namespace {

struct GenOptions {
  std::string kernel;
  GeneratorArgs args;
  std::string output;
  bool json = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_gen(const GenOptions& opt) {
  const tune::VariantSpec spec = variant_spec(opt.kernel, opt.args);
  const gen::Generator& g = *spec.generator;
  // A code object: .hsaco (CDNA) or .cubin (PTX through ptxas); .s / .ptx is the text.
  const bool binary_out = ends_with(opt.output, ".hsaco") || ends_with(opt.output, ".cubin");
  const bool want_code = binary_out || !opt.args.problem.empty();

  tune::Compiled compiled;
  if (want_code) {
    compiled = tune::compile_variant(spec);
  } else {
    compiled.generated = g.generate(spec.isa, spec.sig, spec.params);
  }
  std::optional<tune::Estimate> est;
  if (!opt.args.problem.empty()) {
    const gen::Problem problem = gen::parse_problem(g, opt.args.problem);
    est = tune::estimate(compiled.code, g, spec.isa, spec.sig, spec.params, problem);
  }

  if (!opt.output.empty()) {
    if (ends_with(opt.output, ".cubin")) {
      if (!compiled.machine_code)
        throw InputError("-o " + opt.output + ": a cubin needs ptxas (" +
                         (gen::is_ptx_isa(spec.isa) ? tune::ptxas_unavailable_reason() : spec.isa + " is not a PTX target") +
                         ")");
      write_binary_file(opt.output, compiled.machine_code->bytes);
    } else if (ends_with(opt.output, ".hsaco")) {
      if (gen::is_ptx_isa(spec.isa)) throw InputError("-o " + opt.output + ": " + spec.isa + " makes a .cubin, not an .hsaco");
      write_binary_file(opt.output, compiled.code.bytes);
    } else {
      const auto& t = compiled.generated.text;
      write_binary_file(opt.output, std::vector<uint8_t>(t.begin(), t.end()));
    }
  }
  if (opt.json) {
    nlohmann::json j = {{"generator", g.name()},
                        {"target", spec.isa},
                        {"signature", spec.sig},
                        {"kernel", compiled.generated.kernel_name}};
    nlohmann::json p;
    for (const auto& [k, v] : spec.params) p[k] = v.is_number ? nlohmann::json(v.number) : nlohmann::json(v.text);
    j["params"] = p;
    if (!opt.output.empty()) j["output"] = opt.output;
    if (want_code) j["code_object"] = {{"sha256", compiled.code.sha256}, {"bytes", compiled.code.bytes.size()}};
    if (opt.output.empty()) j["text"] = compiled.generated.text;
    if (est) j["estimate"] = estimate_json(*est, gen::is_ptx_isa(spec.isa));
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  if (opt.output.empty() && !est) {
    std::cout << compiled.generated.text;
    return kExitOk;
  }
  std::cout << "variant  " << g.name() << " " << spec.isa << " " << gen::format(spec.sig) << " "
            << gen::format(spec.params) << "\n";
  if (!opt.output.empty()) std::cout << "wrote    " << opt.output << "\n";
  for (const auto& why : compiled.prune_reasons) std::cout << "ptxas    the tuner prunes it: " << why << "\n";
  if (est) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "registers %u VGPR (%u AGPR), %u SGPR; LDS %u B; scratch %u B; %u waves/SIMD (limited by %s)\n"
                  "work     %.4g FLOP, %.4g B (%.3g FLOP/B) in %llu workgroups of %u threads\n"
                  "roofline %.4g ms bound by %s (peaks %.1f TFLOP/s, %.2f TB/s; wave efficiency %.2f)\n",
                  est->vgprs, est->agprs, est->sgprs, est->lds_bytes, est->scratch_bytes,
                  est->occupancy.waves_per_simd, est->occupancy.limiter.c_str(), est->flops, est->bytes,
                  est->intensity, (unsigned long long)est->workgroups, est->workgroup_size, est->bound_ms,
                  est->bound_by.c_str(), est->peak_tflops, est->peak_tbps, est->wave_efficiency);
    std::cout << buf;
    if (!est->peaks_of.empty()) std::cout << "peaks of " << est->peaks_of << "\n";
    if (!est->note.empty()) std::cout << "note     " << est->note << "\n";
  }
  return kExitOk;
}

} // namespace

void add_gen_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<GenOptions>();
  auto* cmd = app.add_subcommand("gen", "Generate one variant of a kernel generator (assembly, or a code object)");
  cmd->add_option("kernel", opt->kernel, "Generator: gemm, softmax, rmsnorm, layernorm (see `isatune space`)")
      ->required();
  add_target_and_signature_options(*cmd, opt->args);
  add_param_option(*cmd, opt->args);
  add_problem_option(*cmd, opt->args, false);
  cmd->add_option("-o,--output", opt->output, "Write the text (.s for CDNA, .ptx for PTX) or the code object (.hsaco; .cubin through ptxas)");
  cmd->add_flag("--json", opt->json, "Print one JSON object (with the text when no -o)");
  cmd->footer("With --problem, also prints the static estimate: registers, LDS, occupancy, FLOPs, bytes and the "
              "roofline bound against the target's peaks.");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_gen(*opt); }); });
}

} // namespace isatune::cli

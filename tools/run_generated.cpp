#include "run_generated.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "emu_profile.h"
#include "estimate_json.h"
#include "exit_codes.h"
#include "isatune/emu/emulator.h"
#include "isatune/loader/backend.h"
#include "isatune/tune/estimate.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::cli {

int run_generated(const GeneratedRunOptions& opt) {
  const tune::VariantSpec spec = variant_spec(opt.kernel, opt.args);
  const gen::Generator& g = *spec.generator;
  const gen::Problem problem = gen::parse_problem(g, opt.args.problem);

  const tune::Compiled compiled = tune::compile_variant(spec);
  std::string device_spec = opt.device.empty() || opt.device == "emu" ? "emu:" + spec.isa : opt.device;
  auto device = loader::open_device(device_spec);
  const tune::Estimate est =
      tune::estimate(compiled.code, g, spec.isa, spec.sig, spec.params, problem, device->properties().name);
  const bool ptx = gen::is_ptx_isa(spec.isa);
  const std::string ptxas_why = ptx && !compiled.ptx_report ? tune::ptxas_unavailable_reason() : "";
  if (auto* e = dynamic_cast<emu::EmuDevice*>(device.get()); e && opt.threads) e->set_threads(opt.threads);
  tune::RunOptions ro;
  ro.seed = opt.seed;
  const tune::RunResult r = tune::run_variant(*device, compiled, spec, problem, ro);
  const auto& props = device->properties();

  if (opt.json) {
    nlohmann::json j = {{"generator", g.name()},   {"target", spec.isa},
                        {"signature", spec.sig},   {"params", gen::format(spec.params)},
                        {"problem", problem},      {"device", device_spec},
                        {"emulated", props.emulated}, {"status", std::string(tune::to_string(r.status))},
                        {"message", r.message},    {"max_rel_error", r.max_rel_error},
                        {"tolerance", r.tolerance}, {"diagnostics", r.diagnostics},
                        {"generate_s", compiled.generate_s}, {"assemble_s", compiled.assemble_s},
                        {"run_s", r.run_s},        {"code_bytes", compiled.code.bytes.size()}};
    nlohmann::json errs = nlohmann::json::array();
    for (const auto& m : r.errors)
      errs.push_back({{"buffer", m.buffer}, {"max_rel_error", m.max_rel_error}, {"row", m.row}, {"col", m.col},
                      {"got", m.got}, {"want", m.want}});
    j["outputs"] = errs;
    if (r.timing)
      j["timing"] = {{"median_ms", r.timing->median_ms}, {"p20_ms", r.timing->p20_ms}, {"p80_ms", r.timing->p80_ms},
                     {"reps", r.timing->reps}, {"method", r.timing->method}};
    j["estimate"] = estimate_json(est, ptx);
    if (ptx) {
      j["ptxas"] = compiled.ptx_report ? nlohmann::json{{"registers", compiled.code.kernels.front().vgprs},
                                                        {"local_bytes", compiled.code.kernels.front().scratch_bytes},
                                                        {"prune_reasons", compiled.prune_reasons}}
                                       : nlohmann::json{{"skipped", ptxas_why}};
    }
    if (opt.profile)
      if (auto* e = dynamic_cast<emu::EmuDevice*>(device.get())) j["profile"] = emu_profile_json(*e);
    std::cout << j.dump(2) << "\n";
  } else {
    char buf[512];
    std::cout << "variant  " << g.name() << " " << spec.isa << " " << gen::format(spec.sig) << "\n"
              << "params   " << gen::format(spec.params) << "\n"
              << "problem  " << gen::format(problem) << " on " << device_spec << " (" << props.name << ")\n";
    std::snprintf(buf, sizeof buf, "compile  %.1f ms generate + %.1f ms assemble, %zu-byte code object\n",
                  compiled.generate_s * 1e3, compiled.assemble_s * 1e3, compiled.code.bytes.size());
    std::cout << buf;
    for (const auto& m : r.errors) {
      std::snprintf(buf, sizeof buf, "check    %s: max relative error %.3g of the row norm (tolerance %.3g)%s\n",
                    m.buffer.c_str(), m.max_rel_error, r.tolerance,
                    m.max_rel_error <= r.tolerance ? "" : "  WRONG");
      std::cout << buf;
    }
    std::cout << "reports  " << r.diagnostics.size() << (props.emulated ? " (emulator checks)" : "") << "\n";
    for (const auto& d : r.diagnostics) std::fprintf(stderr, "report: %s\n", d.c_str());
    if (r.timing) {
      if (r.timing->emulated)
        std::snprintf(buf, sizeof buf, "time     %.6f ms emulated (the timing model's estimate, not a measurement)\n",
                      r.timing->median_ms);
      else
        std::snprintf(buf, sizeof buf, "time     %.6f ms median (p20 %.6f, p80 %.6f) over %d launches, events\n",
                      r.timing->median_ms, r.timing->p20_ms, r.timing->p80_ms, r.timing->reps);
      std::cout << buf;
    }
    if (ptx) {
      if (compiled.ptx_report) {
        const auto& k = compiled.code.kernels.front();
        std::snprintf(buf, sizeof buf, "ptxas    %u registers per thread, %u bytes local/stack (spills)\n", k.vgprs,
                      k.scratch_bytes);
        std::cout << buf;
        for (const auto& why : compiled.prune_reasons) std::cout << "ptxas    the tuner prunes it: " << why << "\n";
      } else {
        std::cout << "ptxas    not run: " << ptxas_why << "\n";
      }
      std::snprintf(buf, sizeof buf,
                    "estimate %u registers, shared %u B, %u blocks/SM (limited by %s); roofline on %s %.4g ms (%s "
                    "bound)\n",
                    est.vgprs, est.lds_bytes, est.occupancy.workgroups_per_cu,
                    est.occupancy.limiter.empty() ? "nothing" : est.occupancy.limiter.c_str(), est.peaks_of.c_str(),
                    est.bound_ms, est.bound_by.c_str());
    } else {
      std::snprintf(buf, sizeof buf,
                    "estimate %u VGPR (%u AGPR), %u SGPR, LDS %u B, %u waves/SIMD; roofline %.4g ms (%s bound)\n",
                    est.vgprs, est.agprs, est.sgprs, est.lds_bytes, est.occupancy.waves_per_simd, est.bound_ms,
                    est.bound_by.c_str());
    }
    std::cout << buf;
    if (!est.note.empty()) std::cout << "         " << est.note << "\n";
    if (opt.profile) {
      if (auto* e = dynamic_cast<emu::EmuDevice*>(device.get()); e && r.timing) print_emu_profile(std::cout, *e);
      else std::cout << "profile  only the CDNA emulator (emu:gfx90a|gfx942|gfx950) profiles a timed run\n";
    }
    std::cout << "status   " << tune::to_string(r.status) << (r.message.empty() ? "" : ": " + r.message) << "\n";
  }
  return r.status == tune::Status::ok ? kExitOk : kExitInputError;
}

} // namespace isatune::cli

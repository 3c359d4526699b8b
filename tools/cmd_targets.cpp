// `isatune targets`: which ISAs the installed toolchains can assemble for.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "commands.h"
#include "isatune/cdna/target.h"
#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "table.h"

namespace isatune::cli {

namespace {
struct TargetsOptions {
  bool json = false;
};

int run_targets(const TargetsOptions& opt) {
  std::vector<std::unique_ptr<toolchain::Assembler>> backends;
  for (const auto& name : toolchain::available_assemblers()) backends.push_back(toolchain::make_assembler(name));

  nlohmann::json out = nlohmann::json::array();
  Table table({"target", "vendor", "products", "CUs", "LDS/CU or smem/SM", "backends"});
  for (const auto& t : cdna::all_targets()) {
    std::vector<std::string> served;
    nlohmann::json j_backends = nlohmann::json::array();
    for (const auto& b : backends)
      if (b->supports(t.name)) {
        served.push_back(b->name());
        j_backends.push_back({{"name", b->name()}, {"version", b->version()}});
      }
    std::string backends_text;
    for (const auto& s : served) backends_text += (backends_text.empty() ? "" : ", ") + s;
    if (backends_text.empty()) backends_text = "none (needs LLVM >= " + std::to_string(t.min_llvm_major) + ")";
    table.add({std::string(t.name), "amd", std::string(t.products), std::to_string(t.compute_units),
               std::to_string(t.lds_bytes_per_cu / 1024) + " KiB", backends_text});
    out.push_back({{"target", t.name},
                   {"vendor", "amd"},
                   {"products", t.products},
                   {"compute_units", t.compute_units},
                   {"lds_bytes_per_cu", t.lds_bytes_per_cu},
                   {"wave_size", t.wave_size},
                   {"backends", j_backends}});
  }
  for (const auto& t : toolchain::ptx_targets()) {
    nlohmann::json j_backends = nlohmann::json::array();
    std::string backends_text;
    for (auto b : t.backends) {
      j_backends.push_back({{"name", toolchain::ptx_backend_name(b)}, {"version", toolchain::ptx_backend_version(b)}});
      backends_text += (backends_text.empty() ? "" : ", ") + std::string(toolchain::ptx_backend_name(b));
    }
    if (backends_text.empty())
      backends_text = "none (" + toolchain::ptx_backend_unavailable_reason(toolchain::PtxBackend::ptxas) + ")";
    auto limits = codeobj::nvidia_sm_limits(t.name);
    std::string products = t.name == "sm_80" ? "A100" : t.name == "sm_90a" ? "H100, H200 (arch-specific)" : "H100, H200";
    table.add({t.name, "nvidia", products, "-", std::to_string(limits.shared_per_sm / 1024) + " KiB", backends_text});
    out.push_back({{"target", t.name},
                   {"vendor", "nvidia"},
                   {"products", products},
                   {"note", t.note},
                   {"shared_bytes_per_sm", limits.shared_per_sm},
                   {"wave_size", 32},
                   {"backends", j_backends}});
  }
  if (opt.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << table.str();
  std::cout << "\nbackends:";
  for (const auto& b : backends) std::cout << " " << b->name() << " (" << b->version() << ")";
  for (auto b : {toolchain::PtxBackend::nvjitlink, toolchain::PtxBackend::ptxas}) {
    std::string version = toolchain::ptx_backend_version(b);
    if (!version.empty()) std::cout << " " << toolchain::ptx_backend_name(b) << " (" << version << ")";
  }
  std::cout << "\n";
  return 0;
}
} // namespace

void add_targets_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<TargetsOptions>();
  auto* cmd = app.add_subcommand("targets", "List the GPU targets and which assembler backends serve them");
  cmd->add_flag("--json", opt->json, "Print JSON instead of a table");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_targets(*opt); }); });
}

} // namespace isatune::cli

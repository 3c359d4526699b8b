// `isatune devices`: the GPUs (and stand-ins) the loader's backends can open, and why a backend has none.
#include <nlohmann/json.hpp>

#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/loader/backend.h"
#include "table.h"

namespace isatune::cli {

namespace {
struct DevicesOptions {
  bool json = false;
};

int run_devices(const DevicesOptions& opt) {
  nlohmann::json jdev = nlohmann::json::array(), jback = nlohmann::json::array();
  Table table({"device", "name", "target", "CUs/SMs", "memory", "driver", "kind"});
  std::string notes;
  for (const auto& name : loader::backend_names()) {
    auto b = loader::find_backend(name);
    std::string reason = b->unavailable_reason();
    jback.push_back({{"backend", name}, {"available", reason.empty()}, {"reason", reason}});
    if (!reason.empty()) notes += name + ": unavailable: " + reason + "\n";
    for (const auto& d : b->list_devices()) {
      std::string spec = d.backend + ":" + std::to_string(d.index);
      jdev.push_back({{"device", spec}, {"backend", d.backend}, {"index", d.index}, {"name", d.name},
                      {"isa", d.isa}, {"target_id", d.target_id}, {"compute_units", d.compute_units},
                      {"memory_bytes", d.memory_bytes}, {"shared_bytes_per_workgroup", d.shared_bytes_per_workgroup},
                      {"driver_version", d.driver_version}, {"emulated", d.emulated},
                      // 0 where the backend does not read them (the CUDA driver does).
                      {"clock_khz", d.clock_khz}, {"memory_clock_khz", d.memory_clock_khz},
                      {"memory_bus_bits", d.memory_bus_bits}, {"l2_bytes", d.l2_bytes},
                      {"default_shared_bytes_per_workgroup", d.default_shared_bytes_per_workgroup},
                      {"shared_bytes_per_cu", d.shared_bytes_per_cu}, {"registers_per_cu", d.registers_per_cu}});
      table.add({spec, d.name, d.target_id, std::to_string(d.compute_units),
                 std::to_string(d.memory_bytes >> 30) + " GiB", d.driver_version, d.emulated ? "emulated" : "real"});
    }
  }
  if (opt.json) {
    std::cout << nlohmann::json{{"devices", jdev}, {"backends", jback}}.dump(2) << "\n";
  } else {
    if (jdev.empty()) std::cout << "no devices\n";
    else std::cout << table.str();
    std::cout << notes;
  }
  return kExitOk;
}
} // namespace

void add_devices_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<DevicesOptions>();
  auto* cmd = app.add_subcommand("devices", "List the devices the loader can use (HIP, CUDA, registered backends)");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_devices(*opt); }); });
}

} // namespace isatune::cli

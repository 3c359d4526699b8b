// `isatune internal-device-worker --device SPEC` (hidden): the child process that `isatune tune` runs its
// device work in (tuner/include/isatune/tune/device_worker.h). It speaks the worker protocol on stdin/stdout;
// anything else the process prints goes to stderr, so a stray message cannot corrupt the protocol.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>

#include "commands.h"
#include "emulators.h"
#include "exit_codes.h"
#include "isatune/emu/backend.h"
#include "isatune/emu/emulator.h"
#include "isatune/loader/backend.h"
#include "isatune/tune/device_worker.h"

namespace isatune::cli {

void add_device_worker_command(CLI::App& app, const GlobalOptions&, int& status) {
  auto spec = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("internal-device-worker", "Device worker of `isatune tune` (internal)");
  cmd->group(""); // hidden from --help
  cmd->add_option("--device", *spec, "Device spec")->required();
  cmd->callback([spec, &status] {
    // Die with the tuner: a worker orphaned in an endless kernel (the tuner killed, say) would otherwise run on.
    const pid_t parent = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(kExitInternal); // the parent died before the line above took effect
    const int protocol_out = ::dup(1);
    ::dup2(2, 1);
    std::shared_ptr<loader::Device> device;
    try {
      register_emulators();
      device = loader::open_device(*spec);
      // In the worker the parent's watchdog bounds a hang. The emulator's own instruction limit would end an
      // endless loop as a runtime error first on a fast machine and as a timeout on a slow one; without it a
      // hang is always a timeout, as on a GPU.
      if (auto* emulator = dynamic_cast<emu::EmuDevice*>(device.get()))
        emulator->set_max_instructions_per_wave(UINT64_MAX);
    } catch (const std::exception& e) {
      status = tune::report_device_worker_error(protocol_out, e.what());
      return;
    }
    status = tune::serve_device_worker(*device, 0, protocol_out);
  });
}

} // namespace isatune::cli

#pragma once
// Process isolation with a watchdog: the device lives in a child process (normally the isatune executable
// itself, `isatune internal-device-worker --device SPEC`, device_worker.h), spawned with posix_spawn (no fork
// of this multi-threaded process) and spoken to over a socket pair on its stdin/stdout. Each request has a
// deadline: a worker that does not answer in time is killed (SIGKILL) and the candidate is `timeout`; a
// worker that dies (a signal, an exit, a broken pipe) makes the candidate `runtime` with the reason. Either
// way the next request starts a fresh worker, so tuning goes on.
#include <sys/types.h>

#include <string>
#include <vector>

#include "isatune/tune/device_runner.h"

namespace isatune::tune {

struct WorkerOptions {
  // The worker's argv, e.g. {"/proc/self/exe", "internal-device-worker", "--device", "emu:gfx942"}.
  std::vector<std::string> command;
  double start_timeout_s = 120; // for the worker to open its device and say hello
};

class WorkerRunner : public DeviceRunner {
public:
  // Starts the first worker and reads the device's properties. Throws InputError with the worker's reason
  // (e.g. no such device) or Error when it cannot be started.
  explicit WorkerRunner(WorkerOptions options);
  ~WorkerRunner() override;
  WorkerRunner(const WorkerRunner&) = delete;
  WorkerRunner& operator=(const WorkerRunner&) = delete;

  const loader::DeviceProperties& properties() override { return properties_; }
  RunResult run(const Compiled& compiled, const VariantSpec& spec, const gen::Problem& problem,
                const RunOptions& options, double timeout_s) override;
  size_t requests() const override { return requests_; }

  size_t starts() const { return starts_; }     // workers started (1 + restarts)
  size_t timeouts() const { return timeouts_; } // workers killed by the watchdog
  size_t deaths() const { return deaths_; }     // workers that died on their own
  pid_t pid() const { return pid_; }            // the current worker, -1 when none

private:
  void start();
  // Ends the current worker: SIGKILL first when `kill`; returns how it ended ("signal SIGSEGV", "exit code 1").
  std::string stop(bool kill);
  WorkerOptions options_;
  loader::DeviceProperties properties_;
  pid_t pid_ = -1;
  int fd_ = -1;
  size_t requests_ = 0, starts_ = 0, timeouts_ = 0, deaths_ = 0;
};

} // namespace isatune::tune

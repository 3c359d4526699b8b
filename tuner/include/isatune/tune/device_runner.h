#pragma once
// Where a compiled variant runs: on a device in this process (InProcessRunner: no isolation, for tests, replay
// and debugging) or in a child process with a watchdog (WorkerRunner, worker_runner.h). The evaluator talks to
// either through this interface and never to a device directly.
#include <memory>

#include "isatune/loader/device.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::tune {

class DeviceRunner {
public:
  virtual ~DeviceRunner() = default;
  virtual const loader::DeviceProperties& properties() = 0;
  // Runs one problem. A kernel's fault never throws: it is a RunResult with status runtime or timeout.
  // timeout_s: the watchdog's limit for this request (ignored in process).
  virtual RunResult run(const Compiled& compiled, const VariantSpec& spec, const gen::Problem& problem,
                        const RunOptions& options, double timeout_s) = 0;
  // Requests sent to the device since construction (resume tests count them).
  virtual size_t requests() const = 0;
};

// Runs on `device` in this process: a hang is stopped only by the device's own limits (the emulator's
// instruction limit), a fault may take the process down.
class InProcessRunner : public DeviceRunner {
public:
  explicit InProcessRunner(std::shared_ptr<loader::Device> device) : device_(std::move(device)) {}
  const loader::DeviceProperties& properties() override { return device_->properties(); }
  RunResult run(const Compiled& compiled, const VariantSpec& spec, const gen::Problem& problem,
                const RunOptions& options, double) override {
    ++requests_;
    return run_variant(*device_, compiled, spec, problem, options);
  }
  size_t requests() const override { return requests_; }

private:
  std::shared_ptr<loader::Device> device_;
  size_t requests_ = 0;
};

} // namespace isatune::tune

#pragma once
// The device side of process isolation: the loop run by `isatune internal-device-worker --device SPEC`.
// It says hello with the device's properties, then serves run requests (worker_protocol.h in tuner/src) until
// its input closes. The parent (WorkerRunner) never touches the device; if a kernel hangs or takes this process
// down, the parent kills or reaps it and starts another.
//
// Test hook: with ISATUNE_WORKER_TEST_CRASH=n in the environment, the first worker of a runner (the parent
// sets ISATUNE_WORKER_RESTARTS=0 for it) aborts on its n-th request, as a GPU fault would kill it.
#include "isatune/loader/device.h"

namespace isatune::tune {

// Returns the process exit code (0 when the input closed).
int serve_device_worker(loader::Device& device, int in_fd, int out_fd);
// For a worker whose device could not be opened: tells the parent why, returns 1.
int report_device_worker_error(int out_fd, const std::string& message);

} // namespace isatune::tune

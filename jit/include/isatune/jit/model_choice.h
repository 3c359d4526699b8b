#pragma once
// The static model's best configuration for one exact problem, used by the JIT when nothing is tuned for the
// generator, signature and device. Every valid configuration is ranked by its launch geometry alone (the
// roofline of tune::estimate with the compute side derated for the last partial wave of workgroups over the
// device's CUs/SMs and, for tiled kernels, for the padding of the tiles that overhang the problem); the best
// few are compiled and ranked by tune::estimate (resources and occupancy from the code object). A modelled
// choice, not a measured one.
#include <string>

#include "isatune/gen/generator.h"
#include "isatune/loader/device.h"

namespace isatune::jit {

struct ModelChoice {
  gen::Params params;
  double bound_ms = 0;     // tune::estimate's bound of the chosen configuration
  size_t ranked = 0;       // configurations ranked by geometry
  size_t compiled = 0;     // ... of which compiled and estimated
};

// Throws InputError when the space has no valid configuration or none can run the problem.
ModelChoice model_best(const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                       const gen::Problem& problem, const loader::DeviceProperties& device, size_t candidates = 8);

} // namespace isatune::jit

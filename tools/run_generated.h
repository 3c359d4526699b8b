#pragma once
// `isatune run KERNEL --target T --sig ... --param ... --problem ... [--device emu]`: generate a variant,
// assemble it, run it on fresh random inputs, check every output against the generator's float64 reference,
// and print the error, the device's reports and the (emulated) time with the static estimate.
#include <string>

#include "generator_args.h"

namespace isatune::cli {

struct GeneratedRunOptions {
  std::string kernel;
  GeneratorArgs args;
  std::string device; // empty: emu for the target
  unsigned threads = 0;
  uint64_t seed = 1;
  bool json = false;
  bool profile = false; // emulator: the timing model's profile of the last launch (emu_profile.h)
};

int run_generated(const GeneratedRunOptions& opt);

} // namespace isatune::cli

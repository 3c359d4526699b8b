#pragma once
// `isatune run ... --profile`: the CDNA emulator's timing model of the last launch, as a kernel engineer reads
// it: where the time goes (the busiest CU against the chip's shared bandwidths), the busy fraction of each
// unit, achieved against peak FLOP/s and bytes/s, and per instruction and per loop the issue cycles and the
// stall cycles by cause. A model's estimate, never a measurement.
#include <nlohmann/json.hpp>

#include <ostream>

#include "isatune/emu/emulator.h"

namespace isatune::cli {

nlohmann::json emu_profile_json(const emu::EmuDevice& device);
// `top`: the instructions with the most cycles (issue + stalls) to list; loops are all listed.
void print_emu_profile(std::ostream& out, const emu::EmuDevice& device, size_t top = 20);

} // namespace isatune::cli

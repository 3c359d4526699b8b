// The CDNA emulator (emu/src) on random valid kernels (random_kernel.h), assembled by the fast path and run as
// one workgroup of 64 lanes with no arguments. Memory instructions use whatever the registers hold, so faults
// are expected (EmulationError, hazard reports); the watchdog (100,000 instructions per wave) turns a hang into
// an EmulationError. Only isatune::Error may escape.
#include "fuzz_target.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "random_kernel.h"

ISATUNE_FUZZ_TARGET(emu_cdna) {
  using namespace isatune;
  try {
    cdna::Kernel k = fuzz::random_kernel(data, size);
    toolchain::Assembled a = toolchain::assemble_kernel(k);
    emu::EmuOptions o;
    o.target = a.code.isa;
    o.threads = 1;
    o.max_instructions_per_wave = 100'000;
    o.memory_bytes = 64ull << 20;
    auto device = emu::make_emu_device(o);
    auto f = device->load(a.code)->function(k.name);
    loader::LaunchConfig c;
    c.grid = {1, 1, 1};
    c.block = {64, 1, 1};
    device->launch(*f, c, {});
  } catch (const Error&) {
  }
}

#pragma once
// The emulator devices the command line offers: the CDNA emulator ("emu", "emu:gfx942", ...) and the PTX
// emulator ("emu:sm_80", "emu:sm_90a"), registered once with the loader, in that order (the PTX backend sits in
// front of the CDNA one and passes every other "emu" spec on).
namespace isatune::cli {

void register_emulators();

} // namespace isatune::cli

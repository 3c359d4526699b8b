#pragma once
// The PTX emulator in the loader's "emu" backend: "emu:sm_80" and "emu:sm_90a" open PTX emulator devices,
// every other "emu" spec ("emu", "emu:gfx942", "emu:1") goes to the backend registered as "emu" before (the
// CDNA emulator), so its naming is unchanged. Listed after the CDNA devices: their count + 0 is sm_90a, + 1
// sm_80. Call register_emu_backend() (CDNA) first when both are linked, then register_emu_ptx_backend().
#include <memory>

#include "isatune/loader/backend.h"

namespace isatune::emu::ptx {

// `other`: the backend non-PTX specs go to (may be null).
std::shared_ptr<loader::Backend> make_emu_ptx_backend(std::shared_ptr<loader::Backend> other = nullptr);
// Registers "emu" as the PTX emulator in front of the "emu" backend registered now (if any).
void register_emu_ptx_backend();

} // namespace isatune::emu::ptx

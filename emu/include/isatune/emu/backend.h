#pragma once
// The emulator as a loader backend named "emu": one device per CDNA target it runs.
//   index 0: gfx942 (the default: "emu" alone opens it), 1: gfx90a, 2: gfx950
// Open with "emu", "emu:0".."emu:2", "emu:gfx950" or a full target id ("emu:amdgcn-amd-amdhsa--gfx90a").
// In a program that links isatune_emu, call register_emu_backend(); an application that links only the loader
// loads the same backend from the plugin libisatune_emu_plugin.so (ISATUNE_BACKEND_PLUGINS, docs/emulator.md).
#include <memory>

#include "isatune/loader/backend.h"

namespace isatune::emu {

std::shared_ptr<loader::Backend> make_emu_backend();
// Registers "emu" with the loader's registry (replacing an earlier registration, e.g. from the plugin).
void register_emu_backend();

} // namespace isatune::emu

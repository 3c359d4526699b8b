// register_emu_backend(): kept apart from backend.cpp so that the plugin does not pull in the loader's registry.
#include "isatune/emu/backend.h"

namespace isatune::emu {

void register_emu_backend() { loader::register_backend("emu", [] { return make_emu_backend(); }); }

} // namespace isatune::emu

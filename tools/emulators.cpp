#include "emulators.h"

#include <mutex>

#include "isatune/emu/backend.h"
#include "isatune/emu/ptx/backend.h"

namespace isatune::cli {

void register_emulators() {
  static std::once_flag once;
  std::call_once(once, [] {
    emu::register_emu_backend();
    emu::ptx::register_emu_ptx_backend();
  });
}

} // namespace isatune::cli

// libisatune_emu_plugin.so: the emulator for applications that link only the loader.
//   ISATUNE_BACKEND_PLUGINS=/path/libisatune_emu_plugin.so app ...   or   isatune_load_plugin(path)
#include "isatune/emu/backend.h"

extern "C" __attribute__((visibility("default"))) isatune::loader::Backend* isatune_backend_plugin_v1() {
  // The registry takes ownership of a plain pointer; the backend holds no state, so a fresh one is fine.
  struct Owned : isatune::loader::Backend {
    std::shared_ptr<isatune::loader::Backend> inner = isatune::emu::make_emu_backend();
    std::string name() const override { return inner->name(); }
    std::string unavailable_reason() override { return inner->unavailable_reason(); }
    std::vector<isatune::loader::DeviceProperties> list_devices() override { return inner->list_devices(); }
    std::shared_ptr<isatune::loader::Device> open(const std::string& arg) override { return inner->open(arg); }
  };
  return new Owned();
}

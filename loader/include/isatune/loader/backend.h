#pragma once
// Device backends and their registry. hip and cuda are built in (opened with dlopen at run time); the
// emulator, or any other backend, registers itself with register_backend() or is loaded from a plugin.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "isatune/loader/device.h"

namespace isatune::loader {

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Empty string when usable; otherwise why not ("libamdhip64.so not found").
  virtual std::string unavailable_reason() = 0;
  // Devices this backend can open; empty (never an error) when its driver is absent.
  virtual std::vector<DeviceProperties> list_devices() = 0;
  // `arg` is what follows "name:" in a device spec ("0", "gfx942"). Throws UnavailableError when the driver
  // is absent and InputError for a device that does not exist.
  virtual std::shared_ptr<Device> open(const std::string& arg) = 0;
};

using BackendFactory = std::function<std::shared_ptr<Backend>()>;

// Adds or replaces a backend. The factory runs once, on first use.
void register_backend(const std::string& name, BackendFactory factory);
std::vector<std::string> backend_names();
// The backend named, or nullptr.
std::shared_ptr<Backend> find_backend(const std::string& name);
// Devices of every registered backend.
std::vector<DeviceProperties> list_devices();
// "hip:0", "cuda:1", "emu:gfx942"; "hip" alone means "hip:0". Unknown backend: InputError naming the known ones.
std::shared_ptr<Device> open_device(const std::string& spec);

// Loads a backend plugin: a shared library exporting
//   extern "C" isatune::loader::Backend* isatune_backend_plugin_v1();
// which returns a new backend (ownership passes to the registry), registered under its name(). Returns it.
// Plugins named in ISATUNE_BACKEND_PLUGINS (':'-separated paths) are loaded on first use of the registry.
std::string load_backend_plugin(const std::string& path);

// The built-in backends (also registered automatically).
std::shared_ptr<Backend> make_hip_backend();
std::shared_ptr<Backend> make_cuda_backend();

} // namespace isatune::loader

extern "C" {
typedef isatune::loader::Backend* (*isatune_backend_plugin_fn)();
}

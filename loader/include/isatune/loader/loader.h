#pragma once
// The C++ loader API: a tuning database and a device; select() returns a kernel that loads its code object
// on first use (once per code object, safe from many threads) and launches with packed arguments.
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "isatune/loader/backend.h"
#include "isatune/loader/kernargs.h"
#include "isatune/loader/select.h"

namespace isatune::loader {

class Loader;

// A selected kernel on the loader's device. Valid while its Loader lives.
class Kernel {
public:
  Kernel(Loader& loader, std::shared_ptr<const Selection> selection);
  const Selection& selection() const { return *selection_; }
  // The code object (hash-verified) and this kernel's entry in it.
  const CodeObject& code_object();
  const KernelInfo& info();
  // The launch geometry from the variant's template for the requested problem.
  LaunchConfig launch_config() const;
  // Loads the code object onto the device if not yet done.
  Function& function();
  void launch(std::span<const ArgValue> args);
  void launch(std::span<const ArgValue> args, const LaunchConfig& config);

private:
  void ensure_loaded();
  Loader& loader_;
  std::shared_ptr<const Selection> selection_;
  std::once_flag once_;
  std::shared_ptr<const CodeObject> code_;
  const KernelInfo* info_ = nullptr;
  std::shared_ptr<Function> function_;
};

class Loader {
public:
  Loader(std::shared_ptr<TuningDb> db, std::shared_ptr<Device> device);
  // Opens the database read-only and the device ("hip:0", "cuda:0", "emu:gfx942").
  static std::unique_ptr<Loader> open(const std::string& db_path, const std::string& device_spec);

  // Cached per request; throws NotFoundError when nothing tuned fits.
  std::shared_ptr<Kernel> select(std::string_view generator, std::string_view signature, std::string_view problem);

  Device& device() { return *device_; }
  TuningDb& db() { return *db_; }
  // The module for a code object, loaded once.
  std::shared_ptr<Module> module(const std::shared_ptr<const CodeObject>& code);

private:
  std::shared_ptr<TuningDb> db_;
  std::shared_ptr<Device> device_;
  std::mutex mutex_;
  std::unordered_map<const Selection*, std::shared_ptr<Kernel>> kernels_;
  std::unordered_map<std::string, std::shared_ptr<Module>> modules_;
  std::mutex load_mutex_;
};

} // namespace isatune::loader

#include "isatune/loader/loader.h"

namespace isatune::loader {

Kernel::Kernel(Loader& loader, std::shared_ptr<const Selection> selection)
    : loader_(loader), selection_(std::move(selection)) {}

void Kernel::ensure_loaded() {
  std::call_once(once_, [this] {
    auto code = loader_.db().code_object(selection_->code_object);
    const KernelInfo* info = code->find_kernel(selection_->kernel);
    if (!info)
      throw InputError(loader_.db().path() + ": code object " + selection_->code_object + " has no kernel '" +
                       selection_->kernel + "'");
    auto module = loader_.module(code);
    function_ = module->function(selection_->kernel);
    code_ = std::move(code);
    info_ = info;
  });
}

const CodeObject& Kernel::code_object() {
  ensure_loaded();
  return *code_;
}

const KernelInfo& Kernel::info() {
  ensure_loaded();
  return *info_;
}

Function& Kernel::function() {
  ensure_loaded();
  return *function_;
}

LaunchConfig Kernel::launch_config() const { return launch_config_for(selection_->launch, selection_->problem); }

void Kernel::launch(std::span<const ArgValue> args) { launch(args, launch_config()); }

void Kernel::launch(std::span<const ArgValue> args, const LaunchConfig& config) {
  ensure_loaded();
  auto packed = pack_kernargs(*info_, args, config);
  loader_.device().launch(*function_, config, packed);
}

Loader::Loader(std::shared_ptr<TuningDb> db, std::shared_ptr<Device> device)
    : db_(std::move(db)), device_(std::move(device)) {}

std::unique_ptr<Loader> Loader::open(const std::string& db_path, const std::string& device_spec) {
  auto db = TuningDb::open(db_path);
  auto device = open_device(device_spec);
  return std::make_unique<Loader>(std::move(db), std::move(device));
}

std::shared_ptr<Kernel> Loader::select(std::string_view generator, std::string_view signature,
                                       std::string_view problem) {
  auto sel = db_->select(generator, signature, problem, device_->properties());
  std::lock_guard lock(mutex_);
  auto& k = kernels_[sel.get()];
  if (!k) k = std::make_shared<Kernel>(*this, sel);
  return k;
}

std::shared_ptr<Module> Loader::module(const std::shared_ptr<const CodeObject>& code) {
  std::lock_guard lock(load_mutex_);
  auto& m = modules_[code->sha256];
  if (!m) m = device_->load(*code);
  return m;
}

} // namespace isatune::loader

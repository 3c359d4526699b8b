// A module: its kernels and the version they need together.
#include "isatune/ptx/module.h"

#include <algorithm>

namespace isatune::ptx {

Kernel& Module::add_kernel(std::string name) {
  for (const Kernel& k : kernels_)
    if (k.name() == name) throw BuilderError("module: a second kernel named '" + name + "'");
  return kernels_.emplace_back(std::move(name), target_);
}

int Module::ptx_version() const {
  int v = target_.min_ptx_version;
  for (const Kernel& k : kernels_) v = std::max(v, k.required_ptx_version());
  return v;
}

} // namespace isatune::ptx

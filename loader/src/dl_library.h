#pragma once
// A dlopen'ed shared library and typed symbol lookup (the GPU drivers are never linked).
#include <dlfcn.h>

#include <string>
#include <vector>

#include "isatune/error.h"

namespace isatune::loader::detail {

class DlLibrary {
public:
  // Tries each name in order; on failure, reason() says which were tried.
  explicit DlLibrary(const std::vector<std::string>& names) {
    for (const auto& n : names) {
      handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle_) {
        name_ = n;
        return;
      }
    }
    reason_ = names.front() + " not found";
  }
  ~DlLibrary() = default; // drivers stay loaded for the life of the process
  bool ok() const { return handle_ != nullptr; }
  const std::string& reason() const { return reason_; }
  const std::string& name() const { return name_; } // the name that opened
  template <class F> F symbol(const char* name) const {
    void* p = handle_ ? dlsym(handle_, name) : nullptr;
    if (!p) throw UnavailableError(name_ + ": symbol " + name + " not found (driver too old?)");
    return reinterpret_cast<F>(p);
  }
  template <class F> F optional_symbol(const char* name) const {
    return handle_ ? reinterpret_cast<F>(dlsym(handle_, name)) : nullptr;
  }

private:
  void* handle_ = nullptr;
  std::string name_;
  std::string reason_;
};

} // namespace isatune::loader::detail

#pragma once
// A PTX module: one target and its kernels; print() gives the text for ptxas / nvJitLink.
#include <deque>
#include <string>
#include <string_view>

#include "isatune/ptx/kernel.h"
#include "isatune/ptx/target.h"

namespace isatune::ptx {

class Module {
public:
  explicit Module(std::string_view target) : target_(find_target(target)) {}
  const Target& target() const { return target_; }
  Kernel& add_kernel(std::string name);
  const std::deque<Kernel>& kernels() const { return kernels_; }
  // max(target minimum, every kernel's need): the `.version` the printer declares.
  int ptx_version() const;

private:
  Target target_;
  std::deque<Kernel> kernels_; // deque: references returned by add_kernel stay valid
};

// The module as PTX text: .version (the lowest that covers it), .target, .address_size 64, then each kernel.
std::string print(const Module& m);

} // namespace isatune::ptx

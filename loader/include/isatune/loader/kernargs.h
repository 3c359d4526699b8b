#pragma once
// Packing kernel arguments into the one buffer a launch takes, from the layout stored with the code object.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/loader/device.h"

namespace isatune::loader {

// One explicit argument: its bytes, and optionally its name (then arguments are matched by name, otherwise
// by position among the kernel's explicit, non-hidden arguments).
struct ArgValue {
  std::string name;
  std::vector<uint8_t> bytes;

  static ArgValue pointer(DevicePtr p, std::string name = "") { return of(p, std::move(name)); }
  template <class T> static ArgValue of(const T& v, std::string name = "") {
    ArgValue a{std::move(name), std::vector<uint8_t>(sizeof(T))};
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
  }
};

// Lays out the arguments as `kernel` says. Hidden AMD arguments are filled from the launch: block counts,
// group sizes, grid dimensions; remainders and offsets 0; everything else hidden is zero. Throws InputError
// naming the kernel and the argument for a missing, extra or wrongly sized argument.
std::vector<uint8_t> pack_kernargs(const KernelInfo& kernel, std::span<const ArgValue> args,
                                   const LaunchConfig& config);

} // namespace isatune::loader

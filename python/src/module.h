#pragma once
// The extension's parts register themselves: each src/*.cpp binds one part of isatune (errors, devices, the
// loader, the database) onto the module, or onto a submodule of its own (a `jit` part: one more file). Parts
// run in order of `order` (errors first: the others' functions raise them).
#include <pybind11/pybind11.h>

#include <functional>

namespace isatune::python {

struct Part {
  Part(const char* name, int order, std::function<void(pybind11::module_&)> bind);
};

// Runs the registered parts on the module (from PYBIND11_MODULE).
void bind_parts(pybind11::module_& m);

} // namespace isatune::python

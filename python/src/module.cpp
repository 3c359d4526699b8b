// `isatune._isatune`: the extension module; everything in it comes from the registered parts.
#include "module.h"

#include <algorithm>
#include <string>
#include <vector>

namespace isatune::python {

namespace {
struct Registered {
  std::string name;
  int order;
  std::function<void(pybind11::module_&)> bind;
};
std::vector<Registered>& registry() {
  static std::vector<Registered> parts;
  return parts;
}
} // namespace

Part::Part(const char* name, int order, std::function<void(pybind11::module_&)> bind) {
  registry().push_back({name, order, std::move(bind)});
}

void bind_parts(pybind11::module_& m) {
  auto parts = registry();
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  pybind11::list names;
  for (auto& p : parts) {
    p.bind(m);
    names.append(p.name);
  }
  m.attr("_parts") = names;
}

} // namespace isatune::python

PYBIND11_MODULE(_isatune, m) {
  m.doc() = "isatune: the loader (tuning database, devices, select, launch) for Python";
  isatune::python::bind_parts(m);
}

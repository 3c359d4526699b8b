// The loader for Python: devices, Loader (a tuning database and a device), select, and Kernel.launch with
// NumPy arrays, PyTorch tensors and Python or NumPy scalars.
//
// Memory: a host array (NumPy, a CPU tensor, anything with the buffer protocol) is copied into a device buffer
// for the launch and copied back afterwards unless the kernel declares the argument read-only or the array is
// not writeable; the emulator and GPUs have memory of their own, so a host array cannot be used in place. A
// tensor already on the device (torch CUDA/ROCm tensors, anything with __cuda_array_interface__) is passed by
// its pointer, without a copy, when the Loader's device is a GPU of that kind (cuda, hip).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "isatune/emu/backend.h"
#ifdef ISATUNE_PYTHON_HAVE_EMU_PTX
#include "isatune/emu/ptx/backend.h"
#endif
#include "isatune/error.h"
#include "isatune/loader/backend.h"
#include "isatune/loader/loader.h"
#include "arrays.h"
#include "module.h"

namespace py = pybind11;

namespace isatune::python {
namespace {

using loader::ArgValue;
using loader::DevicePtr;

py::dict selection_dict(const loader::Selection& s) {
  py::dict d;
  d["generator"] = s.generator;
  d["generator_version"] = s.generator_version;
  d["signature"] = s.signature;
  d["problem"] = s.problem;
  d["tuned_problem"] = s.tuned_problem;
  d["exact"] = s.exact;
  d["distance"] = s.distance;
  d["target_id"] = s.target_id;
  d["compute_units"] = s.compute_units;
  d["compute_units_exact"] = s.compute_units_exact;
  d["device_kind"] = s.device_kind;
  d["variant_id"] = s.variant_id;
  d["measurement_id"] = s.measurement_id;
  d["median_ms"] = s.median_ms;
  d["parameters"] = s.parameters;
  d["code_object"] = s.code_object;
  d["kernel"] = s.kernel;
  d["launch"] = s.launch;
  d["rerank_winner"] = s.rerank_winner;
  d["vendor_ms"] = s.vendor_ms; // 0: no vendor time recorded
  d["vendor_library"] = s.vendor_library;
  return d;
}

loader::Dim3 dim3_of(const py::object& o, const char* what) {
  loader::Dim3 d;
  if (py::isinstance<py::int_>(o)) {
    d.x = o.cast<uint32_t>();
    return d;
  }
  const auto v = o.cast<std::vector<int64_t>>();
  if (v.empty() || v.size() > 3) throw InputError(std::string(what) + ": give 1 to 3 sizes, got " + std::to_string(v.size()));
  for (int64_t x : v)
    if (x < 1 || x > std::numeric_limits<uint32_t>::max())
      throw InputError(std::string(what) + ": sizes must be at least 1, got " + std::to_string(x));
  d.x = uint32_t(v[0]);
  if (v.size() > 1) d.y = uint32_t(v[1]);
  if (v.size() > 2) d.z = uint32_t(v[2]);
  return d;
}

std::string arg_where(const KernelInfo& k, size_t index, const KernelArg& spec) {
  return "kernel " + k.name + " argument " + std::to_string(index) + (spec.name.empty() ? "" : " (" + spec.name + ")");
}

// Bytes of a Python or NumPy scalar for a by-value argument of `size` bytes.
std::vector<uint8_t> scalar_bytes(const py::handle& o, const KernelArg& spec, const std::string& where) {
  std::vector<uint8_t> out(spec.size);
  auto put = [&](const void* p, size_t n) {
    if (n != spec.size)
      throw InputError(where + ": a " + std::to_string(n) + "-byte value for a " + std::to_string(spec.size) +
                       "-byte argument");
    std::memcpy(out.data(), p, n);
  };
  if (py::isinstance<py::bool_>(o)) {
    const uint32_t v = o.cast<bool>();
    if (spec.size == 1) {
      const uint8_t b = uint8_t(v);
      put(&b, 1);
    } else {
      put(&v, 4);
    }
  } else if (py::isinstance<py::int_>(o)) {
    const auto v = o.cast<long long>();
    if (spec.size == 8) {
      const int64_t x = v;
      put(&x, 8);
    } else if (spec.size == 4) {
      if (v < std::numeric_limits<int32_t>::min() || v > int64_t(std::numeric_limits<uint32_t>::max()))
        throw InputError(where + ": " + std::to_string(v) + " does not fit the 4-byte argument");
      const uint32_t x = uint32_t(v);
      put(&x, 4);
    } else if (spec.size == 2) {
      if (v < std::numeric_limits<int16_t>::min() || v > std::numeric_limits<uint16_t>::max())
        throw InputError(where + ": " + std::to_string(v) + " does not fit the 2-byte argument");
      const uint16_t x = uint16_t(v);
      put(&x, 2);
    } else {
      throw InputError(where + ": a Python int for a " + std::to_string(spec.size) +
                       "-byte argument (give a NumPy scalar of that size)");
    }
  } else if (py::isinstance<py::float_>(o)) {
    const double v = o.cast<double>();
    if (spec.size == 4) {
      const float f = float(v);
      put(&f, 4);
    } else if (spec.size == 8) {
      put(&v, 8);
    } else {
      throw InputError(where + ": a Python float for a " + std::to_string(spec.size) +
                       "-byte argument (give a NumPy scalar, e.g. numpy.float16)");
    }
  } else if (py::hasattr(o, "tobytes") && py::hasattr(o, "dtype")) {
    const std::string b = o.attr("tobytes")().cast<std::string>();
    put(b.data(), b.size());
  } else {
    throw InputError(where + ": a by-value argument takes an int, a float or a NumPy scalar, not " +
                     std::string(py::str(o.get_type().attr("__name__"))));
  }
  return out;
}

class PyKernel {
public:
  PyKernel(std::shared_ptr<loader::Loader> owner, std::shared_ptr<loader::Kernel> kernel)
      : owner_(std::move(owner)), kernel_(std::move(kernel)) {}

  py::dict selection() const { return selection_dict(kernel_->selection()); }

  py::dict info() {
    const KernelInfo& k = kernel_->info();
    const bool nvidia = kernel_->code_object().vendor == Vendor::nvidia;
    py::dict d;
    d["name"] = k.name;
    d["kernarg_size"] = k.kernarg_size;
    d["max_workgroup_size"] = k.max_workgroup_size;
    if (nvidia) {
      d["registers"] = k.vgprs;
      d["shared_bytes"] = k.lds_bytes;
      d["local_bytes"] = k.scratch_bytes;
    } else {
      d["vgprs"] = k.vgprs;
      d["agprs"] = k.agprs;
      d["sgprs"] = k.sgprs;
      d["lds_bytes"] = k.lds_bytes;
      d["scratch_bytes"] = k.scratch_bytes;
    }
    py::list args;
    for (const auto* a : explicit_args()) {
      py::dict x;
      x["name"] = a->name;
      x["offset"] = a->offset;
      x["size"] = a->size;
      x["kind"] = a->value_kind;
      x["access"] = a->access;
      args.append(x);
    }
    d["args"] = args;
    return d;
  }

  void launch(py::args args, const py::object& grid, const py::object& block, const py::object& shared_bytes) {
    const KernelInfo& k = kernel_->info();
    loader::Device& device = owner_->device();
    const auto& props = device.properties();
    const auto specs = explicit_args();
    if (args.size() != specs.size()) {
      std::string names;
      for (const auto* s : specs) names += (names.empty() ? "" : ", ") + (s->name.empty() ? s->value_kind : s->name);
      throw InputError("kernel " + k.name + " takes " + std::to_string(specs.size()) + " arguments (" + names +
                       "), got " + std::to_string(args.size()));
    }
    const loader::LaunchConfig config = launch_config(grid, block, shared_bytes);

    Staging staging(device);
    std::vector<ArgValue> values;
    for (size_t i = 0; i < specs.size(); ++i) {
      const KernelArg& spec = *specs[i];
      const std::string where = arg_where(k, i, spec);
      py::handle a = args[i];
      if (auto ptr = gpu_pointer(a, where, props)) {
        values.push_back(ArgValue::pointer(*ptr));
      } else if (is_host_array(a)) {
        py::object view = host_view(a);
        py::buffer_info info = py::cast<py::buffer>(view).request();
        if (!c_contiguous(info)) throw InputError(where + ": the array is not C-contiguous (numpy.ascontiguousarray)");
        values.push_back(ArgValue::pointer(staging.stage(std::move(view), info, spec.access != "read_only")));
      } else {
        if (spec.value_kind == "global_buffer")
          throw InputError(where + ": a buffer argument takes a NumPy array or a tensor, not " +
                           std::string(py::str(a.get_type().attr("__name__"))));
        values.push_back(ArgValue{"", scalar_bytes(a, spec, where)});
      }
    }
    {
      py::gil_scoped_release unlocked;
      kernel_->launch(values, config);
      device.synchronize();
      staging.copy_back();
    }
  }

private:
  std::vector<const KernelArg*> explicit_args() {
    std::vector<const KernelArg*> out;
    for (const auto& a : kernel_->info().args)
      if (a.value_kind.rfind("hidden_", 0) != 0) out.push_back(&a);
    return out;
  }

  // grid/block/shared_bytes given win over the variant's launch template.
  loader::LaunchConfig launch_config(const py::object& grid, const py::object& block, const py::object& shared) {
    loader::LaunchConfig c;
    const auto templ = nlohmann::json::parse(kernel_->selection().launch, nullptr, false);
    if (grid.is_none()) {
      try {
        c = kernel_->launch_config();
      } catch (const InputError& e) {
        throw InputError(std::string(e.what()) + "; give grid=(x, y, z) to launch()");
      }
    } else {
      c.grid = dim3_of(grid, "grid");
      if (templ.is_object() && templ.contains("block") && templ["block"].is_array()) {
        const auto& b = templ["block"];
        c.block = {b.size() > 0 ? b[0].get<uint32_t>() : 1u, b.size() > 1 ? b[1].get<uint32_t>() : 1u,
                   b.size() > 2 ? b[2].get<uint32_t>() : 1u};
      }
      if (templ.is_object() && templ.contains("dynamic_shared_bytes"))
        c.dynamic_shared_bytes = templ["dynamic_shared_bytes"].get<uint32_t>();
    }
    if (!block.is_none()) c.block = dim3_of(block, "block");
    if (!shared.is_none()) c.dynamic_shared_bytes = shared.cast<uint32_t>();
    return c;
  }

  std::shared_ptr<loader::Loader> owner_;
  std::shared_ptr<loader::Kernel> kernel_;
};

void bind_loader(py::module_& m) {
  // The emulators are linked in, registered as the command line does (tools/emulators.cpp): the CDNA one
  // ("emu", "emu:gfx942", ...), then the PTX one ("emu:sm_80", "emu:sm_90a"), which passes other specs on.
  emu::register_emu_backend();
#ifdef ISATUNE_PYTHON_HAVE_EMU_PTX
  emu::ptx::register_emu_ptx_backend();
#endif

  m.def(
      "devices",
      [] {
        py::list out;
        for (const auto& p : loader::list_devices()) out.append(properties_dict(p));
        return out;
      },
      "Every device the registered backends can open (GPUs through HIP or CUDA, the emulator), as dicts.");

  py::class_<loader::Device, std::shared_ptr<loader::Device>>(m, "Device",
                                                              "A device opened by spec: \"emu:gfx942\", \"cuda:0\", \"hip:0\".")
      .def(py::init([](const std::string& spec) { return loader::open_device(spec); }), py::arg("spec"))
      .def_property_readonly("properties", [](const loader::Device& d) { return properties_dict(d.properties()); })
      .def("__repr__", [](const loader::Device& d) {
        return "<isatune.Device " + d.properties().backend + " " + d.properties().name + ">";
      });

  py::class_<PyKernel>(m, "Kernel", "A selected kernel: selection, info, launch(*args, grid=, block=, shared_bytes=).")
      .def_property_readonly("selection", &PyKernel::selection, "What was selected and why (a dict)")
      .def_property_readonly("info", &PyKernel::info, "The kernel's resources and explicit arguments (a dict)")
      .def("launch", &PyKernel::launch, py::arg("grid") = py::none(), py::arg("block") = py::none(),
           py::arg("shared_bytes") = py::none(),
           "Launches with arrays, tensors and scalars in argument order and waits for it; host arrays are "
           "copied in and (unless read-only) back out. grid/block default to the variant's launch template.");

  py::class_<loader::Loader, std::shared_ptr<loader::Loader>>(m, "Loader",
                                                              "A tuning database (read-only) and a device.")
      .def(py::init([](const std::string& db, const py::object& device) {
             std::shared_ptr<loader::Device> d = py::isinstance<py::str>(device)
                                                      ? loader::open_device(device.cast<std::string>())
                                                      : device.cast<std::shared_ptr<loader::Device>>();
             return std::make_shared<loader::Loader>(loader::TuningDb::open(db), std::move(d));
           }),
           py::arg("db"), py::arg("device") = "emu")
      .def(
          "select",
          [](std::shared_ptr<loader::Loader> self, const std::string& generator, const py::object& signature,
             const py::object& problem) {
            const std::string sig = json_text(signature, "signature"), prob = json_text(problem, "problem");
            auto k = self->select(generator, sig, prob);
            return PyKernel(self, std::move(k));
          },
          py::arg("generator"), py::arg("signature"), py::arg("problem"),
          "The best tuned kernel for the problem (exact, else the nearest tuned problem); NotFoundError "
          "when nothing tuned fits.")
      .def_property_readonly("device", [](loader::Loader& l) { return properties_dict(l.device().properties()); })
      .def_property_readonly("db", [](loader::Loader& l) { return l.db().path(); });
}

const Part part("loader", 10, bind_loader);

} // namespace
} // namespace isatune::python

// The JIT for Python (docs/python.md, docs/jit.md): `isatune.jit.Jit(db, device)` answers select() with a
// kernel for the exact problem, per call either the exact tuned entry only (mode="exact_only") or, when
// nothing is tuned for that very problem, one generated and assembled in process from the nearest tuned
// configuration or the static model's choice (mode="exact_or_jit", the default). Its kernels launch with the
// generator's buffers (NumPy arrays, CPU tensors; GPU tensors by pointer on a GPU) and its scalars by name.
#ifdef ISATUNE_PYTHON_HAVE_JIT
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arrays.h"
#include "isatune/error.h"
#include "isatune/jit/jit.h"
#include "module.h"

namespace py = pybind11;

namespace isatune::python {
namespace {

// The Jit and the Loader it selects through (declared first: destroyed last).
struct JitOwner {
  std::shared_ptr<loader::Loader> loader;
  std::unique_ptr<jit::Jit> jit;
};

jit::Mode mode_of(const std::string& mode) {
  if (mode == "exact_or_jit")
    return jit::Mode::exact_or_jit;
  if (mode == "exact_only")
    return jit::Mode::exact_only;
  throw InputError("jit: mode must be \"exact_or_jit\" or \"exact_only\", got \"" + mode + "\"");
}

const char* role_name(gen::BufferRole r) {
  switch (r) {
  case gen::BufferRole::input:
    return "input";
  case gen::BufferRole::output:
    return "output";
  case gen::BufferRole::workspace:
    return "workspace";
  }
  return "?";
}

py::object json_value(const std::string& text) {
  if (text.empty())
    return py::none();
  return py::module_::import("json").attr("loads")(text);
}

class PyJitKernel {
public:
  PyJitKernel(std::shared_ptr<JitOwner> owner, std::shared_ptr<const jit::JitKernel> kernel)
      : owner_(std::move(owner)), kernel_(std::move(kernel)) {}

  const jit::JitKernel& k() const { return *kernel_; }

  py::dict describe() const {
    const auto& k = *kernel_;
    py::dict d;
    d["generator"] = k.generator->name();
    d["isa"] = k.isa;
    d["signature"] = json_value(k.signature_json);
    d["problem"] = json_value(k.problem_json);
    d["parameters"] = json_value(k.parameters_json);
    d["source"] = std::string(jit::to_string(k.source));
    d["seed_problem"] = json_value(k.seed_problem);
    d["seed_median_ms"] = k.seed_median_ms;
    d["seed_device_kind"] = k.seed_device_kind;
    d["kernel"] = k.kernel;
    d["code_object"] = k.code ? k.code->sha256 : std::string();
    d["variant_id"] = k.variant_id;
    d["run_guid"] = k.run_guid;
    d["built"] = k.built;
    d["from_database"] = k.from_database;
    d["build_ms"] = k.build_ms;
    d["generate_ms"] = k.generate_ms;
    d["assemble_ms"] = k.assemble_ms;
    d["model_ms"] = k.model_ms;
    d["record_ms"] = k.record_ms;
    d["load_ms"] = k.load_ms;
    d["total_ms"] = k.total_ms;
    return d;
  }

  py::list buffers() const {
    py::list out;
    for (const auto& b : kernel_->generator->buffers(kernel_->sig, kernel_->problem)) {
      py::dict d;
      d["name"] = b.name;
      d["dtype"] = std::string(gen::to_string(b.dtype));
      d["role"] = role_name(b.role);
      d["elements"] = b.elements;
      d["bytes"] = b.elements * gen::size_of(b.dtype);
      d["rows"] = b.rows;
      d["cols"] = b.cols;
      d["row_stride"] = b.row_stride;
      d["init"] = py::make_tuple(b.init_lo, b.init_hi);
      out.append(d);
    }
    return out;
  }

  py::dict scalars() const {
    py::dict d;
    for (const auto& [name, range] : kernel_->generator->scalars(kernel_->sig))
      d[py::str(name)] = py::make_tuple(range.first, range.second);
    return d;
  }

  // Buffers in the generator's order; scalars by name (absent ones take the lower end of their range).
  void launch(py::args args, py::kwargs kwargs) {
    const auto& k = *kernel_;
    loader::Device& device = *k.device;
    const auto specs = k.generator->buffers(k.sig, k.problem);
    const std::string what = "jit kernel " + k.generator->name() + " " + k.problem_json;
    if (args.size() != specs.size()) {
      std::string names;
      for (const auto& s : specs)
        names += (names.empty() ? "" : ", ") + s.name;
      throw InputError(what + " takes " + std::to_string(specs.size()) + " buffers (" + names + "), got " +
                       std::to_string(args.size()));
    }
    std::map<std::string, double> scalars;
    const auto known = k.generator->scalars(k.sig);
    for (const auto& [key, value] : kwargs) {
      const std::string name = py::str(key);
      if (!known.count(name)) {
        std::string names;
        for (const auto& [n, r] : known)
          names += (names.empty() ? "" : ", ") + n;
        throw InputError(what + ": no scalar '" + name + "' (" +
                         (names.empty() ? "it takes none" : "it takes " + names) + ")");
      }
      try {
        scalars[name] = value.cast<double>();
      } catch (const py::cast_error&) {
        throw InputError(what + ": scalar '" + name + "' must be a number");
      }
    }

    Staging staging(device);
    std::vector<uint64_t> addresses;
    for (size_t i = 0; i < specs.size(); ++i) {
      const auto& spec = specs[i];
      const std::string where = what + " buffer " + std::to_string(i) + " (" + spec.name + ")";
      py::handle a = args[i];
      const uint64_t want = spec.elements * gen::size_of(spec.dtype);
      if (auto ptr = gpu_pointer(a, where, device.properties())) {
        addresses.push_back(*ptr);
        continue;
      }
      if (!is_host_array(a))
        throw InputError(where + ": takes a NumPy array or a tensor, not " +
                         std::string(py::str(a.get_type().attr("__name__"))));
      py::object view = host_view(a);
      py::buffer_info info = py::cast<py::buffer>(view).request();
      if (!c_contiguous(info))
        throw InputError(where + ": the array is not C-contiguous (numpy.ascontiguousarray)");
      if (size_t(info.itemsize) != gen::size_of(spec.dtype))
        throw InputError(where + ": " + std::to_string(info.itemsize) + "-byte elements for a " +
                         std::string(gen::to_string(spec.dtype)) + " buffer of " +
                         std::to_string(gen::size_of(spec.dtype)) + "-byte elements");
      if (uint64_t(info.size) != spec.elements)
        throw InputError(where + ": " + std::to_string(info.size) + " elements, the problem needs " +
                         std::to_string(spec.elements) + " (" + std::to_string(want) + " bytes)");
      addresses.push_back(staging.stage(std::move(view), info, spec.role != gen::BufferRole::input));
    }
    py::gil_scoped_release unlocked;
    k.launch(addresses, scalars);
    device.synchronize();
    staging.copy_back();
  }

private:
  std::shared_ptr<JitOwner> owner_;
  std::shared_ptr<const jit::JitKernel> kernel_;
};

std::shared_ptr<JitOwner> make_owner(std::shared_ptr<loader::Loader> loader, bool record, bool ptxas) {
  auto o = std::make_shared<JitOwner>();
  o->loader = std::move(loader);
  jit::JitOptions options;
  options.record = record;
  options.ptxas = ptxas;
  o->jit = std::make_unique<jit::Jit>(*o->loader, options);
  return o;
}

void bind_jit(py::module_& m) {
  auto j =
      m.def_submodule("jit", "The JIT: a kernel built for the exact problem when nothing is tuned for it "
                             "(docs/jit.md)");
  py::class_<PyJitKernel>(
      j, "Kernel",
      "A JIT kernel for one exact problem: describe(), buffers, scalars, launch(*buffers, "
      "**scalars).")
      .def_property_readonly(
          "source", [](const PyJitKernel& k) { return std::string(jit::to_string(k.k().source)); },
          "exact (tuned for this problem), nearest (the nearest tuned configuration, built "
          "here) or model (the static model's choice)")
      .def_property_readonly(
          "built", [](const PyJitKernel& k) { return k.k().built; },
          "generated and assembled by this process")
      .def_property_readonly(
          "from_database", [](const PyJitKernel& k) { return k.k().from_database; },
          "a JIT build of an earlier process, read back from the database")
      .def_property_readonly("variant_id", [](const PyJitKernel& k) { return k.k().variant_id; })
      .def_property_readonly("code_object",
                             [](const PyJitKernel& k) { return k.k().code ? k.k().code->sha256 : ""; })
      .def_property_readonly("parameters",
                             [](const PyJitKernel& k) { return json_value(k.k().parameters_json); })
      .def_property_readonly("buffers", &PyJitKernel::buffers,
                             "the generator's buffers of the problem, in launch order (name, dtype, role, "
                             "elements, bytes, rows, cols, row_stride, init)")
      .def_property_readonly("scalars", &PyJitKernel::scalars, "the generator's scalars and their ranges")
      .def("describe", &PyJitKernel::describe, "everything about the kernel and its build (a dict)")
      .def("launch", &PyJitKernel::launch,
           "Launches with the buffers in the generator's order (host arrays copied in, outputs copied back) "
           "and "
           "scalars by name, and waits for it.")
      .def("__repr__", [](const PyJitKernel& k) {
        return "<isatune.jit.Kernel " + k.k().generator->name() + " " + k.k().problem_json + " " +
               std::string(jit::to_string(k.k().source)) + ">";
      });

  py::class_<JitOwner, std::shared_ptr<JitOwner>>(j, "Jit",
                                                  "A tuning database and a device; select() with mode "
                                                  "\"exact_or_jit\" (default) or \"exact_only\".")
      .def(py::init([](const py::object& db, const py::object& device, bool record, bool ptxas) {
             std::shared_ptr<loader::Loader> loader;
             if (py::isinstance<loader::Loader>(db)) {
               loader = db.cast<std::shared_ptr<loader::Loader>>();
             } else {
               std::shared_ptr<loader::Device> d = py::isinstance<py::str>(device)
                                                       ? loader::open_device(device.cast<std::string>())
                                                       : device.cast<std::shared_ptr<loader::Device>>();
               loader = std::make_shared<loader::Loader>(loader::TuningDb::open(db.cast<std::string>()),
                                                         std::move(d));
             }
             return make_owner(std::move(loader), record, ptxas);
           }),
           py::arg("db"), py::arg("device") = "emu", py::arg("record") = true, py::arg("ptxas") = true,
           "db: a database path (or an isatune.Loader, whose database and device are used); record=False "
           "keeps "
           "builds in memory only.")
      .def(
          "select",
          [](std::shared_ptr<JitOwner> self, const std::string& generator, const py::object& signature,
             const py::object& problem, const std::string& mode) {
            const std::string sig = json_text(signature, "signature"), prob = json_text(problem, "problem");
            const jit::Mode m = mode_of(mode);
            std::shared_ptr<const jit::JitKernel> k;
            {
              py::gil_scoped_release unlocked; // a build takes milliseconds to seconds; other threads go on
              k = self->jit->select(generator, sig, prob, m);
            }
            return PyJitKernel(self, std::move(k));
          },
          py::arg("generator"), py::arg("signature"), py::arg("problem"), py::arg("mode") = "exact_or_jit",
          "A kernel for exactly this problem: the exact tuned entry, else (mode=\"exact_or_jit\") one built "
          "from "
          "the nearest tuned configuration or the static model; mode=\"exact_only\" raises NotFoundError "
          "instead.")
      .def_property_readonly("stats",
                             [](const JitOwner& o) {
                               const auto s = o.jit->stats();
                               py::dict d;
                               d["requests"] = s.requests;
                               d["exact"] = s.exact;
                               d["builds"] = s.builds;
                               d["from_database"] = s.from_database;
                               d["cached"] = s.cached;
                               return d;
                             })
      .def_property_readonly(
          "device", [](const JitOwner& o) { return properties_dict(o.loader->device().properties()); })
      .def_property_readonly("db", [](const JitOwner& o) { return o.loader->db().path(); });
}

const Part part("jit", 30, bind_jit);

} // namespace
} // namespace isatune::python
#endif

// isatune's exceptions as Python exceptions with the same messages: isatune.Error (RuntimeError), InputError
// (also ValueError), NotFoundError (also LookupError: nothing tuned fits), VendorFasterError (a NotFoundError:
// every tuned entry that fits is slower than the vendor library's recorded time; library, vendor_ms, tuned_ms),
// UnavailableError (a driver or toolkit is absent).
#include <pybind11/pybind11.h>

#include "isatune/error.h"
#include "isatune/loader/select.h"
#include "module.h"

namespace py = pybind11;

namespace isatune::python {
namespace {

PyObject* new_exception(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("isatune.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.attr(name) = py::handle(type);
  return type;
}

void bind_errors(py::module_& m) {
  static PyObject* error = new_exception(m, "Error", py::make_tuple(py::handle(PyExc_RuntimeError)),
                                         "An isatune error (the loader's message).");
  static PyObject* input = new_exception(m, "InputError", py::make_tuple(py::handle(error), py::handle(PyExc_ValueError)),
                                         "Bad input: a malformed problem, a wrong argument, an unknown device.");
  static PyObject* not_found = new_exception(m, "NotFoundError",
                                             py::make_tuple(py::handle(input), py::handle(PyExc_LookupError)),
                                             "Nothing tuned in the database fits the request.");
  static PyObject* vendor_faster = new_exception(
      m, "VendorFasterError", py::make_tuple(py::handle(not_found)),
      "No tuned entry better than the vendor library (vendor_times): call it. Attributes: library, vendor_ms, "
      "tuned_ms (the loader's VendorFasterError, C: ISATUNE_USE_VENDOR).");
  static PyObject* unavailable = new_exception(m, "UnavailableError", py::make_tuple(py::handle(error)),
                                               "A needed driver, device or toolkit is absent.");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const loader::VendorFasterError& e) {
      py::object err = py::reinterpret_borrow<py::object>(vendor_faster)(e.what());
      err.attr("library") = e.library;
      err.attr("vendor_ms") = e.vendor_ms;
      err.attr("tuned_ms") = e.tuned_ms;
      PyErr_SetObject(vendor_faster, err.ptr());
    } catch (const loader::NotFoundError& e) {
      PyErr_SetString(not_found, e.what());
    } catch (const InputError& e) {
      PyErr_SetString(input, e.what());
    } catch (const UnavailableError& e) {
      PyErr_SetString(unavailable, e.what());
    } catch (const Error& e) {
      PyErr_SetString(error, e.what());
    }
  });
}

const Part part("errors", 0, bind_errors);

} // namespace
} // namespace isatune::python

// The tuning database for Python: the best variants recorded (what `isatune db best` lists), read-only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "isatune/db/database.h"
#include "module.h"

namespace py = pybind11;

namespace isatune::python {
namespace {

// The entry per tuned problem, as `isatune db best` lists it and the loader's select uses it
// (db::Database::tuned_entries): the re-ranking's winner where it still stands, else the fastest single median,
// with the vendor library's recorded time and slower_than_vendor (such an entry the loader never returns).
py::list best(const std::string& path, const std::string& generator) {
  auto db = db::Database::open(path, {.read_only = true});
  py::list out;
  py::object loads = py::module_::import("json").attr("loads");
  db::TunedEntryFilter only;
  only.generator = generator;
  for (const auto& e : db.tuned_entries(only)) {
    py::dict d;
    d["generator"] = e.generator;
    d["signature"] = loads(e.signature);
    d["target_id"] = e.target_id;
    d["compute_units"] = e.compute_units;
    d["device_kind"] = e.device_kind;
    d["problem"] = loads(e.problem);
    d["median_ms"] = e.median_ms;
    d["parameters"] = loads(e.parameters);
    d["kernel"] = e.kernel;
    d["code_object"] = e.code_object.empty() ? py::object(py::none()) : py::object(py::str(e.code_object));
    d["variant_id"] = e.variant_id;
    d["measurement_id"] = e.measurement_id;
    d["chosen_by"] = e.rerank_winner ? "rerank" : "fastest";
    if (e.rerank_winner) {
      py::dict r;
      r["median_ms"] = e.rerank_median_ms;
      r["lo_ms"] = e.rerank_lo_ms;
      r["hi_ms"] = e.rerank_hi_ms;
      r["rounds"] = e.rounds;
      r["flip_rate"] = e.flip_rate;
      d["rerank"] = r;
    } else {
      d["rerank"] = py::none();
    }
    if (e.vendor_ms) {
      py::dict v;
      v["median_ms"] = *e.vendor_ms;
      v["library"] = e.vendor_library;
      v["source"] = e.vendor_source;
      d["vendor"] = v;
      d["vs_vendor"] = e.median_ms / *e.vendor_ms;
    } else {
      d["vendor"] = py::none();
      d["vs_vendor"] = py::none();
    }
    d["slower_than_vendor"] = e.slower_than_vendor();
    out.append(d);
  }
  return out;
}

void bind_database(py::module_& m) {
  m.def("best", &best, py::arg("db"), py::arg("generator") = "",
        "The entry per tuned problem (generator, signature, device, device kind, problem) in a tuning database, "
        "as `isatune db best` lists it and the loader selects it: the re-ranking's winner where it still stands "
        "(chosen_by 'rerank'), else the fastest ok median; vendor and slower_than_vendor (the loader never "
        "returns such an entry). Dicts; signature, problem and parameters parsed. Emulated and real are "
        "separate rows.");
  m.def("schema_version", [](const std::string& path) { return db::Database::open(path, {.read_only = true}).schema_version(); },
        py::arg("db"), "The schema version of a tuning database file.");
}

const Part part("database", 20, bind_database);

} // namespace
} // namespace isatune::python

// The tuning database for Python: the best variants recorded (what `isatune db best` lists), read-only.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "isatune/db/database.h"
#include "module.h"

namespace py = pybind11;

namespace isatune::python {
namespace {

py::object cell(const db::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return py::int_(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) return py::float_(std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return py::str(std::get<std::string>(v));
  return py::none();
}

py::list best(const std::string& path, const std::string& generator) {
  auto db = db::Database::open(path, {.read_only = true});
  const std::vector<std::string> names = {"generator", "signature", "target_id", "compute_units", "device_kind",
                                          "problem", "median_ms", "parameters", "kernel", "code_object",
                                          "variant_id", "measurement_id"};
  std::string sql =
      "SELECT b.generator, b.signature, b.target_id, b.compute_units, b.device_kind, b.problem, b.median_ms, "
      "v.parameters, v.kernel, v.code_object, b.variant_id, b.measurement_id FROM best b "
      "JOIN variants v ON v.id = b.variant_id";
  std::vector<db::Value> params;
  if (!generator.empty()) sql += " WHERE b.generator = ?", params.push_back(generator);
  sql += " ORDER BY b.generator, b.device_kind, b.target_id, b.signature, b.problem";
  py::list out;
  py::object loads = py::module_::import("json").attr("loads");
  for (const auto& row : db.query(sql, params)) {
    py::dict d;
    for (size_t i = 0; i < names.size(); ++i) {
      py::object v = cell(row[i]);
      // JSON columns as dicts.
      if ((names[i] == "signature" || names[i] == "problem" || names[i] == "parameters") && !v.is_none()) v = loads(v);
      d[py::str(names[i])] = v;
    }
    out.append(d);
  }
  return out;
}

void bind_database(py::module_& m) {
  m.def("best", &best, py::arg("db"), py::arg("generator") = "",
        "The best ok variant per (generator, signature, device, device kind, problem) in a tuning database, "
        "as dicts (signature, problem and parameters parsed). Emulated and real ones are separate rows.");
  m.def("schema_version", [](const std::string& path) { return db::Database::open(path, {.read_only = true}).schema_version(); },
        py::arg("db"), "The schema version of a tuning database file.");
}

const Part part("database", 20, bind_database);

} // namespace
} // namespace isatune::python

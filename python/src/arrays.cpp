// Host arrays and device tensors as kernel buffers, shared by the loader's and the JIT's launches (arrays.h).
#include "arrays.h"

#include <algorithm>

#include "isatune/error.h"

namespace py = pybind11;

namespace isatune::python {

using loader::DevicePtr;

py::dict properties_dict(const loader::DeviceProperties& p) {
  py::dict d;
  d["backend"] = p.backend;
  d["index"] = p.index;
  d["name"] = p.name;
  d["vendor"] = p.vendor == Vendor::nvidia ? "nvidia" : "amd";
  d["isa"] = p.isa;
  d["target_id"] = p.target_id;
  d["compute_units"] = p.compute_units;
  d["memory_bytes"] = p.memory_bytes;
  d["shared_bytes_per_workgroup"] = p.shared_bytes_per_workgroup;
  d["wave_size"] = p.wave_size;
  d["max_workgroup_size"] = p.max_workgroup_size;
  d["driver_version"] = p.driver_version;
  d["emulated"] = p.emulated;
  d["kind"] = p.emulated ? "emulated" : "real";
  return d;
}

// A JSON string as it is, or a dict (any JSON-serialisable object) through Python's json.dumps.
std::string json_text(const py::object& o, const char* what) {
  if (py::isinstance<py::str>(o))
    return o.cast<std::string>();
  try {
    return py::module_::import("json").attr("dumps")(o).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw InputError(std::string(what) + ": expected a dict or a JSON string (" + e.what() + ")");
  }
}

static bool device_memory_is_gpu(const loader::DeviceProperties& p) {
  return p.backend == "cuda" || p.backend == "hip";
}

// A tensor or array that lives on a GPU: its device pointer, or nullopt for host objects.
std::optional<DevicePtr> gpu_pointer(const py::handle& o, const std::string& where,
                                     const loader::DeviceProperties& props) {
  std::optional<DevicePtr> ptr;
  std::string kind;
  if (py::hasattr(o, "__cuda_array_interface__")) {
    py::dict cai = o.attr("__cuda_array_interface__");
    if (!cai["strides"].is_none())
      throw InputError(where + ": the device array is not contiguous (give .contiguous())");
    ptr = py::cast<py::tuple>(cai["data"])[0].cast<uint64_t>();
    kind = "a CUDA array";
  } else if (py::hasattr(o, "data_ptr") && py::hasattr(o, "device") && py::hasattr(o, "is_contiguous")) {
    const std::string type = o.attr("device").attr("type").cast<std::string>();
    if (type == "cpu")
      return std::nullopt;
    if (!o.attr("is_contiguous")().cast<bool>())
      throw InputError(where + ": the tensor is not contiguous (give .contiguous())");
    ptr = o.attr("data_ptr")().cast<uint64_t>();
    kind = "a " + type + " tensor";
  }
  if (ptr && !device_memory_is_gpu(props))
    throw InputError(where + ": " + kind + " cannot be used on " + props.name + " (" + props.backend +
                     "): its memory is not this device's; give a host array or a CPU tensor");
  return ptr;
}

bool is_host_array(const py::handle& o) {
  if (py::isinstance<py::buffer>(o)) {
    // NumPy scalars and 0-d arrays support the buffer protocol too; they are values, not buffers.
    if (py::hasattr(o, "ndim") && o.attr("ndim").cast<int>() == 0)
      return false;
    return true;
  }
  return py::hasattr(o, "data_ptr") && py::hasattr(o, "device") && py::hasattr(o, "numpy");
}

// A CPU tensor as a NumPy view of the same memory (no copy); other objects as they are.
py::object host_view(const py::handle& o) {
  if (py::isinstance<py::buffer>(o))
    return py::reinterpret_borrow<py::object>(o);
  py::object t = o.attr("detach")();
  try {
    return t.attr("numpy")();
  } catch (const py::error_already_set&) {
    // Types NumPy lacks (bfloat16): the same bytes as 16-bit integers.
    py::object torch = py::module_::import("torch");
    return t.attr("view")(torch.attr("int16")).attr("numpy")();
  }
}

bool c_contiguous(const py::buffer_info& info) {
  py::ssize_t stride = info.itemsize;
  for (size_t d = info.ndim; d-- > 0;) {
    if (info.shape[d] != 1 && info.strides[d] != stride)
      return false;
    stride *= info.shape[d];
  }
  return true;
}

DevicePtr Staging::stage(py::object view, const py::buffer_info& info, bool copy_back) {
  const size_t bytes = size_t(info.size) * size_t(info.itemsize);
  Buffer b;
  b.bytes = bytes;
  b.ptr = device.alloc(std::max<size_t>(bytes, 1));
  buffers.push_back(b);
  if (bytes)
    device.copy_to_device(b.ptr, info.ptr, bytes);
  if (copy_back && !info.readonly)
    buffers.back().host = info.ptr;
  keep.push_back(std::move(view));
  return b.ptr;
}

void Staging::copy_back() {
  for (const auto& b : buffers)
    if (b.host && b.bytes)
      device.copy_to_host(b.host, b.ptr, b.bytes);
}

} // namespace isatune::python

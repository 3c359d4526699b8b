#pragma once
// What the loader's and the JIT's launches share: host arrays and device tensors as kernel buffers (a host
// array is copied into a device buffer for the launch and back afterwards; a tensor already on a GPU is
// passed by its pointer), JSON text from a dict, and a device's properties as a dict.
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "isatune/loader/backend.h"

namespace isatune::python {

pybind11::dict properties_dict(const loader::DeviceProperties& p);

// A JSON string as it is, or a dict (any JSON-serialisable object) through Python's json.dumps.
std::string json_text(const pybind11::object& o, const char* what);

// A tensor or array that lives on a GPU: its device pointer, or nullopt for host objects. InputError (naming
// `where`) when it is not contiguous or the device is not a GPU of that kind.
std::optional<loader::DevicePtr> gpu_pointer(const pybind11::handle& o, const std::string& where,
                                             const loader::DeviceProperties& props);

// A NumPy array, a CPU tensor or anything with the buffer protocol (NumPy scalars and 0-d arrays are values).
bool is_host_array(const pybind11::handle& o);
// A CPU tensor as a NumPy view of the same memory (no copy; bfloat16 as int16); other objects as they are.
pybind11::object host_view(const pybind11::handle& o);
bool c_contiguous(const pybind11::buffer_info& info);

// Device buffers of one launch, freed however the launch ends.
struct Staging {
  struct Buffer {
    loader::DevicePtr ptr = 0;
    size_t bytes = 0;
    void* host = nullptr; // copied back here after the launch when not null
  };
  loader::Device& device;
  std::vector<Buffer> buffers;
  std::vector<pybind11::object> keep; // host views stay alive (and their memory in place) until copied back
  explicit Staging(loader::Device& d) : device(d) {}
  Staging(const Staging&) = delete;
  ~Staging() {
    for (const auto& b : buffers)
      if (b.ptr)
        device.free(b.ptr);
  }
  // Copies a host view's bytes into a new device buffer (kept in `keep`); `copy_back`: after the launch,
  // unless the array is read-only. Returns the device address.
  loader::DevicePtr stage(pybind11::object view, const pybind11::buffer_info& info, bool copy_back);
  // Copies the buffers marked for it back to their host arrays (call without the GIL).
  void copy_back();
};

} // namespace isatune::python

// What a Device does when a backend does not say otherwise.
#include "isatune/error.h"
#include "isatune/loader/device.h"

namespace isatune::loader {

TensorMap Device::encode_tensor_map(const TensorMapTiledArgs&) {
  throw InputError(properties().name + ": no TMA tensor maps (they are an NVIDIA sm_90 feature; use emu:sm_90a "
                   "or an sm_90 GPU)");
}

} // namespace isatune::loader

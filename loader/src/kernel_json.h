#pragma once
// KernelInfo pieces to and from canonical JSON: the argument layout and the AMD descriptor are stored as
// JSON columns of the kernels table, and the whole KernelInfo goes into export manifests.
#include <string>

#include "isatune/code_object.h"
#include "isatune/db/json.h"

namespace isatune::db::detail {

JsonValue args_to_json(const std::vector<KernelArg>& args);
std::vector<KernelArg> args_from_json(const JsonValue& j);
JsonValue descriptor_to_json(const KernelDescriptor& d);
KernelDescriptor descriptor_from_json(const JsonValue& j);
JsonValue kernel_to_json(const KernelInfo& k);
KernelInfo kernel_from_json(const JsonValue& j);

} // namespace isatune::db::detail

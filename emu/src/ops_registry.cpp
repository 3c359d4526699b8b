#include <map>
#include <mutex>
#include <string>

#include "ops.h"

namespace isatune::emu {

namespace {
std::map<std::string, OpInfo, std::less<>>& table() {
  static std::map<std::string, OpInfo, std::less<>> t;
  return t;
}
} // namespace

void add_op(std::string_view name, Handler fn, Cat cat) { table()[std::string(name)] = OpInfo{fn, cat}; }

const OpInfo* find_op(std::string_view base_name) {
  static std::once_flag once;
  std::call_once(once, [] {
    register_scalar_ops();
    register_vector_ops();
    register_lane_ops();
    register_memory_ops();
    register_mfma_ops();
  });
  auto it = table().find(base_name);
  return it == table().end() ? nullptr : &it->second;
}

} // namespace isatune::emu

#include "isatune/loader/kernargs.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::loader {

namespace {
bool is_hidden(const KernelArg& a) { return a.value_kind.rfind("hidden_", 0) == 0; }

void put(std::vector<uint8_t>& buf, const KernelArg& a, uint64_t v) {
  for (uint32_t i = 0; i < a.size && i < 8; ++i) buf[a.offset + i] = uint8_t(v >> (8 * i));
}

std::string describe(const KernelInfo& k) {
  std::string s;
  for (const auto& a : k.args)
    if (!is_hidden(a))
      s += (s.empty() ? "" : ", ") + (a.name.empty() ? std::string("?") : a.name) + " (" + a.value_kind + ", " +
           std::to_string(a.size) + " bytes)";
  return s;
}
} // namespace

std::vector<uint8_t> pack_kernargs(const KernelInfo& kernel, std::span<const ArgValue> args,
                                   const LaunchConfig& config) {
  size_t size = kernel.kernarg_size;
  for (const auto& a : kernel.args) size = std::max<size_t>(size, size_t(a.offset) + a.size);
  size_t align = std::max<size_t>(kernel.kernarg_align, 8);
  size = (size + align - 1) / align * align;
  std::vector<uint8_t> buf(size, 0);

  std::vector<const KernelArg*> explicit_args;
  for (const auto& a : kernel.args)
    if (!is_hidden(a)) explicit_args.push_back(&a);
  if (args.size() != explicit_args.size())
    throw InputError("kernel " + kernel.name + ": " + std::to_string(args.size()) + " arguments given, it takes " +
                     std::to_string(explicit_args.size()) + ": " + describe(kernel));
  bool by_name = !args.empty() && !args[0].name.empty();
  std::vector<bool> used(explicit_args.size(), false);
  for (size_t i = 0; i < args.size(); ++i) {
    size_t slot = i;
    if (by_name) {
      auto it = std::find_if(explicit_args.begin(), explicit_args.end(),
                             [&](const KernelArg* a) { return a->name == args[i].name; });
      if (it == explicit_args.end())
        throw InputError("kernel " + kernel.name + ": no argument named '" + args[i].name + "' (" + describe(kernel) + ")");
      slot = size_t(it - explicit_args.begin());
      if (used[slot]) throw InputError("kernel " + kernel.name + ": argument '" + args[i].name + "' given twice");
    }
    used[slot] = true;
    const KernelArg& a = *explicit_args[slot];
    if (args[i].bytes.size() != a.size)
      throw InputError("kernel " + kernel.name + ": argument '" + a.name + "' takes " + std::to_string(a.size) +
                       " bytes, " + std::to_string(args[i].bytes.size()) + " given");
    std::memcpy(buf.data() + a.offset, args[i].bytes.data(), a.size);
  }

  uint32_t dims = config.grid.z > 1 || config.block.z > 1 ? 3 : (config.grid.y > 1 || config.block.y > 1 ? 2 : 1);
  for (const auto& a : kernel.args) {
    if (!is_hidden(a)) continue;
    const std::string& k = a.value_kind;
    if (k == "hidden_block_count_x") put(buf, a, config.grid.x);
    else if (k == "hidden_block_count_y") put(buf, a, config.grid.y);
    else if (k == "hidden_block_count_z") put(buf, a, config.grid.z);
    else if (k == "hidden_group_size_x") put(buf, a, config.block.x);
    else if (k == "hidden_group_size_y") put(buf, a, config.block.y);
    else if (k == "hidden_group_size_z") put(buf, a, config.block.z);
    else if (k == "hidden_grid_dims") put(buf, a, dims);
    else if (k == "hidden_dynamic_lds_size") put(buf, a, config.dynamic_shared_bytes);
    // hidden_remainder_*, hidden_global_offset_* and the rest stay zero: grids are whole workgroups.
  }
  return buf;
}

} // namespace isatune::loader

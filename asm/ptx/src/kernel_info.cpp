#include "isatune/ptx/kernel_info.h"

#include <algorithm>

namespace isatune::ptx {

KernelInfo entry_kernel_info(const ast::Function& f) {
  KernelInfo k;
  k.name = f.name;
  k.symbol = f.name;
  k.kernarg_size = f.param_bytes();
  k.kernarg_align = 1;
  for (const auto& p : f.params) {
    KernelArg a;
    a.name = p.name;
    a.offset = p.offset;
    a.size = p.bytes();
    a.value_kind = p.pointer ? "global_buffer" : "by_value";
    a.address_space = p.pointer_space;
    k.args.push_back(a);
    k.kernarg_align = std::max(k.kernarg_align, std::max<uint32_t>(1, p.align ? p.align : p.element_bytes));
  }
  k.wave_size = 32;
  auto threads = [](const uint32_t* d) { return d[0] * std::max(1u, d[1]) * std::max(1u, d[2]); };
  k.max_workgroup_size = f.reqntid[0] ? threads(f.reqntid) : f.maxntid[0] ? threads(f.maxntid) : 1024;
  return k;
}

} // namespace isatune::ptx

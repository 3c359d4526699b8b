// The few computed properties of the PTX syntax tree.
#include "isatune/ptx/ast.h"

#include <algorithm>

namespace isatune::ptx::ast {

uint64_t Variable::bytes() const {
  uint64_t n = uint64_t(element_bytes) * vector;
  for (uint64_t d : dims)
    n *= d; // an empty `[]` (0) makes the whole variable dynamic: 0
  return n;
}

uint32_t Function::param_bytes() const {
  uint32_t end = 0;
  for (const Param& p : params)
    end = std::max(end, p.offset + p.bytes());
  return end;
}

const Function* Module::find(const std::string& name) const {
  for (const Function& f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

const Variable* Module::find_global(const std::string& name) const {
  for (const Variable& v : globals)
    if (v.name == name)
      return &v;
  return nullptr;
}

} // namespace isatune::ptx::ast

// Choosing a backend by name.
#include <string>
#include <vector>

#include "internal.h"
#include "isatune/error.h"

namespace isatune::toolchain {

std::unique_ptr<Assembler> make_assembler(std::string_view backend) {
  if (backend == "llvm") return detail::make_llvm_assembler();
  if (backend == "comgr") return detail::make_comgr_assembler();
  throw InputError("unknown assembler backend '" + std::string(backend) + "' (known: llvm, comgr)");
}

std::vector<std::string> available_assemblers() {
  std::vector<std::string> out = {"llvm"};
  try {
    detail::make_comgr_assembler();
    out.push_back("comgr");
  } catch (const UnavailableError&) {
  }
  return out;
}

} // namespace isatune::toolchain

#include "mc_register_map.h"

#include <string>
#include <string_view>

namespace isatune::toolchain::detail {

McRegisterMap::McRegisterMap(const llvm::MCRegisterInfo& mri) {
  auto find = [&](const std::string& name) -> const llvm::MCRegisterClass* {
    for (const llvm::MCRegisterClass& rc : mri.regclasses())
      if (std::string_view(mri.getRegClassName(&rc)) == name) return &rc;
    return nullptr;
  };
  for (int n = 1; n <= kMaxDwords; ++n) {
    const std::string bits = std::to_string(32 * n);
    classes_[0][n] = find(n == 1 ? "SGPR_32" : "SGPR_" + bits);
    classes_[1][n] = find(n == 1 ? "VGPR_32" : "VReg_" + bits);
    classes_[2][n] = find(n == 1 ? "AGPR_32" : "AReg_" + bits);
  }
}

llvm::MCRegister McRegisterMap::get(const cdna::Reg& r) const {
  int file = 0;
  unsigned index = r.index;
  switch (r.file) {
  case cdna::RegFile::sgpr: {
    file = 0;
    // As the parser: SGPR tuples are aligned to min(bit_ceil(dwords), 4) and indexed in those steps.
    unsigned align = 1;
    while (align < r.count && align < 4) align *= 2;
    if (index % align != 0) return llvm::MCRegister();
    index /= align;
    break;
  }
  case cdna::RegFile::vgpr: file = 1; break;
  case cdna::RegFile::agpr: file = 2; break;
  case cdna::RegFile::special: return llvm::MCRegister();
  }
  if (r.count < 1 || r.count > kMaxDwords) return llvm::MCRegister();
  const llvm::MCRegisterClass* rc = classes_[file][r.count];
  if (!rc || index >= rc->getNumRegs()) return llvm::MCRegister();
  return llvm::MCRegister(rc->getRegister(index));
}

} // namespace isatune::toolchain::detail

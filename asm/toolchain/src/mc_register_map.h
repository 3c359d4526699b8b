#pragma once
// Internal to isatune_toolchain: cdna::Reg -> the MCRegister LLVM's AMDGPU assembly parser picks for it. The
// parser takes register `index` of the class for the width (VGPR_32, VReg_64 ... AReg_1024, SGPR_32 ...
// SGPR_512), SGPR tuples counted in steps of their alignment (2 for pairs, 4 from four dwords); this map does
// the same, looking the classes up by name in MCRegisterInfo (the AMDGPU target's register enums are not in
// LLVM's public headers).
#include <array>

#include <llvm/MC/MCRegister.h>
#include <llvm/MC/MCRegisterInfo.h>

#include "isatune/cdna/registers.h"

namespace isatune::toolchain::detail {

class McRegisterMap {
public:
  explicit McRegisterMap(const llvm::MCRegisterInfo& mri);
  // An invalid MCRegister (false) when LLVM has no such register, or for special registers (vcc, exec, m0,
  // scc), which the fast path never substitutes.
  llvm::MCRegister get(const cdna::Reg& r) const;

private:
  static constexpr int kMaxDwords = 32;
  // [file][dwords]: sgpr, vgpr, agpr.
  std::array<std::array<const llvm::MCRegisterClass*, kMaxDwords + 1>, 3> classes_{};
};

} // namespace isatune::toolchain::detail

// One-time registration of LLVM's AMDGPU target (info, MC layer, disassembler).
#include <mutex>

#include "llvm/Support/TargetSelect.h"

#include "internal.h"

extern "C" {
void LLVMInitializeAMDGPUTargetInfo();
void LLVMInitializeAMDGPUTargetMC();
void LLVMInitializeAMDGPUDisassembler();
}

namespace isatune::codeobj::detail {

void init_amdgpu_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUDisassembler();
  });
}

} // namespace isatune::codeobj::detail

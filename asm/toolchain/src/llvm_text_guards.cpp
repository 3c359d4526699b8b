// The guards that read the assembly text alone, in the order both LLVM-based backends (llvm_mc_assemble.cpp,
// comgr_assembler.cpp) run them before LLVM sees it: each can refuse a text that would hang or crash LLVM 22.
#include <string>
#include <string_view>

#include "internal.h"
#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {

std::string guarded_llvm_buffer(std::string_view text, const llvm::MCAsmInfo& mai, const std::string& file) {
  const size_t lexed_tail = check_llvm_lexer(text, file);
  // The buffer LLVM reads ends with a line break: its last statement then ends in this file, after an .include
  // on the last line too (llvm_final_token_check.cpp). Lines and columns stay as they are.
  std::string buffer(text);
  if (buffer.empty() || (buffer.back() != '\n' && buffer.back() != '\r')) buffer += '\n';
  check_llvm_final_token(buffer, lexed_tail, mai, file);
  return buffer;
}

} // namespace isatune::toolchain::detail

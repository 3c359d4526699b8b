#include "ptx_resources.h"

#include "isatune/error.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "isatune/toolchain/ptx_text_object.h"

namespace isatune::cli {

std::string read_cubin_resources(CodeObject& code) {
  if (toolchain::find_ptxas().empty())
    return "ptxas not found ($ISATUNE_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH)";
  std::string_view text(reinterpret_cast<const char*>(code.bytes.data()), code.bytes.size());
  while (!text.empty() && text.back() == '\0')
    text.remove_suffix(1);
  toolchain::PtxCompileOptions o;
  o.target = code.isa.empty() ? "sm_90a" : code.isa;
  o.backend = toolchain::PtxBackend::ptxas; // whole program: setmaxnreg and .maxnreg as the GPU gets them
  toolchain::PtxCompiled c;
  try {
    c = toolchain::compile_ptx(text, o);
  } catch (const Error& e) {
    return std::string("ptxas: ") + e.what();
  }
  toolchain::apply_ptxas_resources(code, c.report);
  return "";
}

} // namespace isatune::cli

// AMD assembly text through the "llvm" assembler (LLVM MC + lld in process, asm/toolchain), then what isatune
// reads back from the code object it made. The target is the one the text names (gfx90a, gfx950) or gfx942.
// Only isatune::Error (AssemblyError with line and column, InputError) may escape.
#include <string>

#include "fuzz_target.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"

ISATUNE_FUZZ_TARGET(asm_text) {
  using namespace isatune;
  static const auto assembler = toolchain::make_assembler("llvm");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  toolchain::AssembleOptions o;
  o.target = text.find("gfx90a") != std::string_view::npos   ? "gfx90a"
             : text.find("gfx950") != std::string_view::npos ? "gfx950"
                                                              : "gfx942";
  o.file_name = "fuzz.s";
  try {
    toolchain::Assembled a = assembler->assemble(text, o);
    if (a.code.bytes.empty()) fuzz::fail("assembled to an empty code object");
  } catch (const Error&) {
  }
}

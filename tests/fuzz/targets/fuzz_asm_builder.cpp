// The assembler's fast path (builder instructions handed to LLVM as MCInsts, toolchain/kernel_assembler.h) on
// random instruction streams (random_kernel.h), checked against the text path: both must fail, or both must
// give the same code object bytes. Only isatune::Error may escape.
#include <string>

#include "fuzz_target.h"
#include "isatune/cdna/printer.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "random_kernel.h"

ISATUNE_FUZZ_TARGET(asm_builder) {
  using namespace isatune;
  static const auto text_assembler = toolchain::make_assembler("llvm");
  cdna::Kernel k;
  try {
    k = fuzz::random_kernel(data, size);
  } catch (const Error&) {
    return;
  }
  std::string fast_sha, fast_error, text_sha, text_error;
  try {
    fast_sha = toolchain::assemble_kernel(k).code.sha256;
  } catch (const Error& e) {
    fast_error = e.what();
  }
  try {
    toolchain::AssembleOptions o;
    o.target = k.target.str();
    o.file_name = k.name + ".s";
    text_sha = text_assembler->assemble(cdna::print(k), o).code.sha256;
  } catch (const Error& e) {
    text_error = e.what();
  }
  if (fast_error.empty() != text_error.empty())
    fuzz::fail("the fast path " + (fast_error.empty() ? "assembled" : "failed (" + fast_error + ")") +
               ", the text path " + (text_error.empty() ? "assembled" : "failed (" + text_error + ")") + ":\n" +
               cdna::print(k));
  if (fast_sha != text_sha) fuzz::fail("the fast path and the text path give different code objects:\n" + cdna::print(k));
}

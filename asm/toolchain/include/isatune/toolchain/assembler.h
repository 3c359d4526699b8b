#pragma once
// Assembly text -> loadable AMD code object (.hsaco), in process. One interface, several backends:
//   "llvm"  LLVM MC + lld linked into this binary (always present)
//   "comgr" ROCm comgr, opened with dlopen when installed
// Every backend is safe to call from several threads at once.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/toolchain/diagnostic.h"

namespace isatune::toolchain {

struct AssembleOptions {
  std::string target;                  // target id or bare ISA ("gfx942"); the source's .amdgcn_target must agree
  std::string file_name = "<input>";   // shown in diagnostics
};

struct Assembled {
  CodeObject code;                     // bytes, sha256 and KernelInfo filled
  std::vector<Diagnostic> warnings;
};

class Assembler {
public:
  virtual ~Assembler() = default;
  virtual std::string name() const = 0;    // "llvm", "comgr"
  virtual std::string version() const = 0; // "LLVM 22.1.8", "comgr 2.4 (LLVM 15)"
  // Whether this backend can assemble for the ISA ("gfx950").
  virtual bool supports(std::string_view isa) const = 0;
  // Throws AssemblyError (with line and column) on bad source, InputError on an unknown target.
  virtual Assembled assemble(std::string_view text, const AssembleOptions& options) const = 0;
};

// "llvm" or "comgr"; throws UnavailableError naming what is missing.
std::unique_ptr<Assembler> make_assembler(std::string_view backend = "llvm");
// Backends usable in this process, in order of preference.
std::vector<std::string> available_assemblers();

} // namespace isatune::toolchain

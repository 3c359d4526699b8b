#pragma once
// Static coverage of the CDNA emulator: which instructions a set of code objects uses, in how many kernels,
// and whether the emulator's dispatch table has a handler for each (the same table a launch uses, so the
// answer is the emulator's own, not a hand list). Decoding only: nothing is executed.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "isatune/code_object.h"

namespace isatune::emu {

struct InstructionUse {
  std::string mnemonic;   // the LLVM opcode's base name, lower case (buffer_load_dword_lds, v_add_f32), plus
                          // _dpp / _sdwa for those encodings
  uint64_t kernels = 0;   // kernels that use it at least once
  uint64_t count = 0;     // static occurrences over all kernels
  bool supported = false; // the emulator has a handler (on the kernel's target; false if any target lacks it)
};

struct CoverageReport {
  uint64_t code_objects = 0;
  uint64_t kernels = 0;
  uint64_t instructions = 0;        // static instructions decoded
  std::vector<InstructionUse> uses; // most kernels first
  std::vector<std::string> errors;  // code objects that could not be read or decoded, with the reason
  uint64_t unsupported() const;     // distinct mnemonics without a handler
  // Kernels whose every instruction has a handler.
  uint64_t fully_supported_kernels = 0;
};

class CoverageCounter {
public:
  // Decodes every kernel of an AMD code object (gfx90a, gfx942, gfx950); other targets are an error entry.
  void add(const CodeObject& code, const std::string& source);
  void add_error(const std::string& source, const std::string& why);
  CoverageReport report() const;

private:
  struct Entry {
    uint64_t kernels = 0, count = 0;
    bool supported = true;
  };
  std::map<std::string, Entry> entries_;
  CoverageReport totals_;
};

} // namespace isatune::emu

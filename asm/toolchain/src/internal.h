#pragma once
// Internal to isatune_toolchain: shared by the backends, not installed.
#include <memory>
#include <string>
#include <string_view>

#include "isatune/toolchain/assembler.h"

namespace isatune::toolchain::detail {

// A target as the LLVM backend needs it: the ISA for -mcpu and the MC feature string.
struct ResolvedTarget {
  std::string isa;      // "gfx942"
  std::string features; // "+sramecc,-xnack"
  std::string target_id; // canonical "amdgcn-amd-amdhsa--gfx942:sramecc+"
};

// Parses a target id or bare ISA. CDNA targets go through cdna::parse_target_id; other AMDGPU processors the
// linked LLVM knows are accepted too. Throws InputError naming the ISA and the LLVM version when LLVM does not
// know it.
ResolvedTarget resolve_target(std::string_view target);

// Throws AssemblyError naming the line and column of the first thing in `text` that LLVM's assembly lexer would
// turn into an error token (an unterminated string or /* comment, a bad character constant or number, a character
// it does not take): LLVM 22's AMDGPU parser can loop forever on such a token (llvm_lexer_check.cpp). Returns
// where the part it lexes to the end of the text begins (after the last .amdgpu_metadata block it leaves to
// LLVM's YAML reader; 0 when there is none), for check_llvm_final_token.
size_t check_llvm_lexer(std::string_view text, const std::string& file);

// An error at byte `at` of `text`: its 1-based line and column and the line it is on (the text-level guards'
// diagnostics; diagnostic.cpp).
Diagnostic diagnostic_at(std::string_view text, size_t at, const std::string& file, std::string message);

// Registers the AMDGPU target with LLVM once (thread-safe).
void init_llvm_amdgpu();

std::unique_ptr<Assembler> make_llvm_assembler();
// Throws UnavailableError naming the library when comgr cannot be opened.
std::unique_ptr<Assembler> make_comgr_assembler();

} // namespace isatune::toolchain::detail

#pragma once
// Internal to isatune_toolchain: the LLVM MC pieces the text path (llvm_mc_assemble.cpp) and the kernel fast
// path (kernel_assembler.cpp, mc_instruction_templates.cpp) share. Includes LLVM headers: not installed.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include "internal.h"
#include "isatune/toolchain/assembler.h"

namespace llvm {
class MCAsmParser;
class MCAsmParserExtension;
class MCContext;
class MCStreamer;
class SourceMgr;
namespace vfs {
class FileSystem;
}
} // namespace llvm

namespace isatune::toolchain::detail {

// The read-only LLVM objects for one (ISA, features) pair, built once and shared by all threads: LLVM's MC
// layer takes them by const reference or pointer.
struct McTarget {
  const llvm::Target* target = nullptr;
  llvm::Triple triple;
  std::unique_ptr<const llvm::MCRegisterInfo> mri;
  std::unique_ptr<const llvm::MCAsmInfo> mai;
  std::unique_ptr<const llvm::MCSubtargetInfo> sti;
  std::unique_ptr<const llvm::MCInstrInfo> mii;
};

// Throws UnavailableError (no AMDGPU target) or AssemblyError naming `file` when LLVM cannot build them.
const McTarget& mc_target(const ResolvedTarget& target, const std::string& file);

// Called once the parser is set up and before it runs: lets a caller add directives (MCAsmParserExtension).
using ParserHook = llvm::function_ref<void(llvm::MCAsmParser&)>;

// `.fill`, `.space`, `.skip` and `.zero` as LLVM parses them, refusing more than 64 MiB from them in one object
// (llvm_fill_guard.cpp); mc_assemble installs one per object.
std::unique_ptr<llvm::MCAsmParserExtension> make_fill_guard();

// The file system LLVM's SourceMgr reads `.include` and `.incbin` files through: regular files only, bounded
// (llvm_file_guard.cpp). One per object. explain_refused_files takes what make_file_guard returned and gives
// the reason where LLVM reports such a file as one it could not find.
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> make_file_guard();
void explain_refused_files(const llvm::vfs::FileSystem& guard, std::vector<Diagnostic>& diags);

// What LLVM's object writer writes, kept up to `limit` bytes; past it only counted (llvm_object_bound.cpp).
class BoundedObjectStream final : public llvm::raw_pwrite_stream {
public:
  explicit BoundedObjectStream(uint64_t limit);
  bool overflowed() const { return overflow_; }
  uint64_t size() const { return pos_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

private:
  void write_impl(const char* ptr, size_t size) override;
  void pwrite_impl(const char* ptr, size_t size, uint64_t offset) override;
  uint64_t current_pos() const override { return pos_; }

  uint64_t limit_;
  uint64_t pos_ = 0;
  bool overflow_ = false;
  std::vector<uint8_t> bytes_;
};

// Throws AssemblyError naming each section aligned past 1 MiB: called after parsing, before the object is written.
void check_section_alignment(llvm::MCStreamer& streamer, const std::string& file);

// Throws AssemblyError for each code alignment LLVM 22's layout would never finish (a nop alignment after an
// offset that is not a multiple of 4; llvm_align_check.cpp): called after parsing, before layout.
void check_code_alignment(llvm::MCStreamer& streamer, const std::string& file);

// Throws AssemblyError naming each `.org` / `. =` that moves a section's location past 64 MiB (LLVM writes every
// byte up to it; llvm_org_check.cpp): called after parsing, before layout.
void check_org_offsets(llvm::MCStreamer& streamer, const llvm::SourceMgr& src, const std::string& file);

// Throws AssemblyError, one diagnostic per symbol, where a `.size` expression would make LLVM's ELF writer abort
// the process (llvm_size_check.cpp): called after parsing, before the object is laid out and written.
void check_size_expressions(llvm::MCContext& ctx, const llvm::SourceMgr& src, const std::string& file);

// Throws AssemblyError, one diagnostic per symbol, where an assigned symbol's value would make LLVM's ELF writer
// abort the process (llvm_variable_check.cpp): called after parsing, before the object is laid out and written.
void check_symbol_assignments(llvm::MCContext& ctx, const llvm::SourceMgr& src, const std::string& file);

// Throws AssemblyError when LLVM's own lexer, reading `text` (the buffer LLVM parses) from `from`, finds an error
// token right before the last end of statement: the one place where LLVM 22's AMDGPU parser, skipping a bad
// statement, runs past the end of the file and loops forever (llvm_final_token_check.cpp). Behind
// check_llvm_lexer, which should have refused such a token already.
void check_llvm_final_token(std::string_view text, size_t from, const llvm::MCAsmInfo& mai, const std::string& file);

// check_llvm_lexer, then check_llvm_final_token on the text ended with a line break: returns that buffer, the one
// LLVM should read, or throws AssemblyError (llvm_text_guards.cpp). `mai` is the AMDGPU MCAsmInfo (the same for
// every ISA).
std::string guarded_llvm_buffer(std::string_view text, const llvm::MCAsmInfo& mai, const std::string& file);

// Assembly text -> relocatable ELF object (llvm_assemble_object with a hook). Throws like it.
std::vector<uint8_t> mc_assemble(std::string_view text, const AssembleOptions& options,
                                 std::vector<Diagnostic>* warnings, ParserHook hook);

} // namespace isatune::toolchain::detail

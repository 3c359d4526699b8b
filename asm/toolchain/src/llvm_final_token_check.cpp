// The last statement of the text as LLVM's own lexer reads it. LLVM 22's AMDGPU parser skips the rest of a
// bad statement with `while (!trySkipToken(AsmToken::EndOfStatement)) lex();`, which loops forever once it is
// at the end of the file. It only gets there by stepping over the last end of statement, and it only steps
// over one when an error token comes right before it (MCAsmParser::Error consumes the token after an error
// token; llvm_lexer_check.cpp has the whole story). llvm_lexer_check.cpp refuses every error token it can
// see, with its own reading of the lexer; this asks AsmLexer itself, so that a place where that reading and
// LLVM's differ (found by fuzz_asm_text: a `.amdgpu_metadata:` label taken for a metadata block) cannot hang
// the process. Refusing is no loss: LLVM reports every such error token as an error.
//
// It reads from `from`, where check_llvm_lexer's own lexing of the tail starts: before it there may be YAML
// that LLVM reads raw (.amdgpu_metadata), which its lexer would read differently. mc_assemble ends the buffer
// with a line break, so the file's last statement ends there even after an .include on the last line (without
// one, the parser comes back from the included file straight to the end of the file, and an error token at
// the end of the included file hangs it the same way).
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include <llvm/MC/MCParser/AsmLexer.h>

#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

struct LexError {
  size_t at;
  std::string message;
};

[[noreturn]] void fail(std::string_view text, const LexError& e, const std::string& file) {
  throw AssemblyError({diagnostic_at(text, e.at, file,
                                     e.message + " (LLVM's lexer), right before the end of the last statement: "
                                                 "LLVM 22's AMDGPU parser would loop forever skipping it")});
}

} // namespace

void check_llvm_final_token(std::string_view text, size_t from, const llvm::MCAsmInfo& mai,
                            const std::string& file) {
  if (from > text.size())
    from = text.size();
  llvm::AsmLexer lexer(mai);
  lexer.setBuffer(llvm::StringRef(text.data(), text.size()), text.data() + from);
  std::optional<LexError> pending;    // the error token before the tokens since (comments only)
  std::optional<LexError> before_eos; // what came right before the last end of statement
  for (lexer.Lex(); !lexer.is(llvm::AsmToken::Eof); lexer.Lex()) {
    const llvm::AsmToken& tok = lexer.getTok();
    if (tok.is(llvm::AsmToken::Comment))
      continue; // the parser steps over these without looking
    if (tok.is(llvm::AsmToken::EndOfStatement)) {
      before_eos = pending;
      pending.reset();
    } else if (tok.is(llvm::AsmToken::Error)) {
      const char* loc = lexer.getErrLoc().getPointer();
      const size_t at = loc && loc >= text.data() && loc <= text.data() + text.size()
                            ? size_t(loc - text.data())
                            : size_t(tok.getLoc().getPointer() - text.data());
      pending = LexError{at, lexer.getErr().empty() ? std::string("an error token") : lexer.getErr()};
    } else {
      pending.reset();
    }
  }
  if (pending)
    before_eos = pending; // no end of statement after it at all
  if (before_eos)
    fail(text, *before_eos, file);
}

} // namespace isatune::toolchain::detail

// `.fill`, `.space`, `.skip` and `.zero` through LLVM, with a bound on the bytes they make. LLVM 22 builds what
// they ask for in memory with no limit: `.fill 37e` (a count LLVM reads as a huge number) grew llvm-mc-22 to 23 GB
// in 220 s before the kernel killed it, and fuzz_asm_text timed out on it (regression fill-huge-count-timeout.s).
// These handlers parse each directive as LLVM's AsmParser does (parseDirectiveFill, parseDirectiveSpace,
// parseDirectiveZero in llvm/lib/MC/MCParser/AsmParser.cpp, with its warnings) and refuse, with the line and
// column of the count, a count whose bytes would take the object's total from these directives past 64 MiB (a
// value of size 0 counting as a byte: LLVM loops over them all the same); a
// code object for a GPU kernel needs a tiny fraction of that. A count that is not yet known (a difference of
// labels resolved at layout) is left to LLVM. LLVM matches its own directives in any case (`.fIll` is `.fill`) but
// looks extension handlers up as written, so each directive is registered in every spelling of its letters.
#include <cctype>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#if ISATUNE_LLVM_MAJOR < 22
#include <llvm/MC/MCParser/MCAsmLexer.h> // LLVM 22 folded MCAsmLexer into AsmLexer, which MCAsmParser.h includes
#endif
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCAsmParserExtension.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/Support/MathExtras.h>

#include "llvm_mc_internal.h"

namespace isatune::toolchain::detail {
namespace {

constexpr uint64_t kFillLimitBytes = uint64_t(64) << 20;

// ".fill", ".filL", ..., ".FILL": the 2^letters spellings LLVM's case-blind directive match accepts.
std::vector<std::string> every_case_spelling(const std::string& directive) {
  std::vector<std::string> out = {""};
  for (const char c : directive) {
    const size_t n = out.size();
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
    for (size_t i = 0; i < n; ++i) {
      if (letter) out.push_back(out[i] + char(std::toupper(static_cast<unsigned char>(c))));
      out[i] += char(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

class FillGuard final : public llvm::MCAsmParserExtension {
public:
  void Initialize(llvm::MCAsmParser& parser) override {
    llvm::MCAsmParserExtension::Initialize(parser);
    for (const std::string& d : every_case_spelling(".fill"))
      parser.addDirectiveHandler(d, std::make_pair(this, &FillGuard::fill));
    for (const char* name : {".space", ".skip", ".zero"})
      for (const std::string& d : every_case_spelling(name))
        parser.addDirectiveHandler(d, std::make_pair(this, &FillGuard::space));
  }

private:
  // False (go on) when `count` values of `size` bytes fit in what is left; else an error at `at`.
  bool within_limit(llvm::StringRef directive, const llvm::MCExpr& count, int64_t size, llvm::SMLoc at) {
    int64_t n = 0;
    if (!count.evaluateAsAbsolute(n) || n <= 0 || size < 0) return false; // LLVM warns, or resolves it later
    // Size 0 makes no byte, but LLVM still loops once per value (`.fill 2e56, 0` never returns): a value
    // counts as one byte then.
    const uint64_t unit = size == 0 ? 1 : uint64_t(size);
    const uint64_t bytes = uint64_t(n) > kFillLimitBytes ? ~uint64_t(0) : uint64_t(n) * unit;
    if (bytes <= kFillLimitBytes - used_) {
      used_ += bytes;
      return false;
    }
    return Error(at, "'" + directive + "' of " + std::to_string(n) + (size == 1 ? "" : " x " + std::to_string(size)) +
                         " bytes: isatune refuses more than 64 MiB from .fill/.space/.skip/.zero in one object " +
                         "(LLVM would build it all in memory" + (size == 0 ? ", a value at a time)" : ")"));
  }

  static bool fill(llvm::MCAsmParserExtension* self, llvm::StringRef directive, llvm::SMLoc) {
    return static_cast<FillGuard*>(self)->parse_fill(directive);
  }
  static bool space(llvm::MCAsmParserExtension* self, llvm::StringRef directive, llvm::SMLoc) {
    return static_cast<FillGuard*>(self)->parse_space(directive);
  }

  // .fill count [, size [, value]]
  bool parse_fill(llvm::StringRef directive) {
    llvm::MCAsmParser& p = getParser();
    const llvm::SMLoc count_at = getLexer().getLoc();
    const llvm::MCExpr* count = nullptr;
    if (p.checkForValidSection() || p.parseExpression(count)) return true;
    int64_t size = 1, value = 0;
    llvm::SMLoc size_at, value_at;
    if (p.parseOptionalToken(llvm::AsmToken::Comma)) {
      size_at = getTok().getLoc();
      if (p.parseAbsoluteExpression(size)) return true;
      if (p.parseOptionalToken(llvm::AsmToken::Comma)) {
        value_at = getTok().getLoc();
        if (p.parseAbsoluteExpression(value)) return true;
      }
    }
    if (within_limit(directive, *count, size > 8 ? 8 : size, count_at)) return true;
    // A count LLVM can only work out at layout, with values of size 0: its writer divides by the size there
    // (SIGFPE in MCAssembler::writeSectionData; `.fill q, 0` kills llvm-mc-22 too; found by fuzz_asm_text).
    int64_t known = 0;
    if (size == 0 && !count->evaluateAsAbsolute(known))
      return Error(count_at, "'" + directive + "' with values of size 0 and a count that is not a number yet: LLVM 22 "
                             "divides by the size when it writes it (give the count as a number, or drop the .fill)");
    if (p.parseEOL()) return true;
    if (size < 0) {
      Warning(size_at, "'.fill' directive with negative size has no effect");
      return false;
    }
    if (size > 8) {
      Warning(size_at, "'.fill' directive with size greater than 8 has been truncated to 8");
      size = 8;
    }
    if (!llvm::isUInt<32>(value) && size > 4)
      Warning(value_at, "'.fill' directive pattern has been truncated to 32-bits");
    getStreamer().emitFill(*count, size, value, count_at);
    return false;
  }

  // .space / .skip / .zero count [, value]
  bool parse_space(llvm::StringRef directive) {
    llvm::MCAsmParser& p = getParser();
    const llvm::SMLoc count_at = getLexer().getLoc();
    const llvm::MCExpr* count = nullptr;
    if (p.checkForValidSection() || p.parseExpression(count)) return true;
    int64_t value = 0;
    if (p.parseOptionalToken(llvm::AsmToken::Comma) && p.parseAbsoluteExpression(value)) return true;
    if (within_limit(directive, *count, 1, count_at) || p.parseEOL()) return true;
    getStreamer().emitFill(*count, uint64_t(value), count_at);
    return false;
  }

  uint64_t used_ = 0; // bytes these directives made so far in this object
};

} // namespace

std::unique_ptr<llvm::MCAsmParserExtension> make_fill_guard() { return std::make_unique<FillGuard>(); }

} // namespace isatune::toolchain::detail

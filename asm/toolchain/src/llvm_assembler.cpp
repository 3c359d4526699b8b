// The "llvm" backend: LLVM MC and lld linked into this binary.
#include <memory>
#include <string>

#include "internal.h"
#include "isatune/codeobj/reader.h"
#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

class LlvmAssembler final : public Assembler {
public:
  std::string name() const override { return "llvm"; }
  std::string version() const override { return "LLVM " + llvm_version(); }
  bool supports(std::string_view isa) const override { return llvm_supports(isa); }

  Assembled assemble(std::string_view text, const AssembleOptions& options) const override {
    Assembled out;
    std::vector<uint8_t> object = llvm_assemble_object(text, options, &out.warnings);
    std::vector<uint8_t> image = lld_link_shared({object});
    out.code = codeobj::read_code_object(image, options.file_name);
    return out;
  }
};

} // namespace

std::unique_ptr<Assembler> detail::make_llvm_assembler() { return std::make_unique<LlvmAssembler>(); }

} // namespace isatune::toolchain

#include "isatune/toolchain/ptx_text_object.h"

#include <algorithm>

#include "isatune/codeobj/reader.h"
#include "isatune/ptx/kernel_info.h"
#include "isatune/ptx/parser.h"

namespace isatune::toolchain {

namespace {

uint32_t round_up(uint64_t x, uint32_t a) {
  return a ? uint32_t((x + a - 1) / a * a) : uint32_t(x);
}

// Static shared memory of an entry: the module's .shared variables (every kernel of the module may use them)
// and its own, each at its alignment; .extern (dynamic) ones add nothing.
uint32_t static_shared_bytes(const ptx::ast::Module& m, const ptx::ast::Function& f) {
  uint64_t at = 0;
  auto add = [&](const ptx::ast::Variable& v) {
    if (v.space != ptx::ast::StateSpace::shared || v.external) return;
    const uint32_t align = std::max<uint32_t>(1, v.align ? v.align : v.element_bytes);
    at = round_up(at, align) + v.bytes();
  };
  for (const auto& v : m.globals) add(v);
  for (const auto& v : f.locals) add(v);
  return uint32_t(at);
}

} // namespace

CodeObject ptx_text_object(std::string_view text, const std::string& target, const std::string& file) {
  const ptx::ast::Module m = ptx::parse(text, file.empty() ? "<module>.ptx" : file);
  CodeObject code;
  code.vendor = Vendor::nvidia;
  code.format = CodeFormat::ptx;
  code.isa = target.empty() ? m.target : target;
  code.target_id = code.isa;
  code.bytes.assign(text.begin(), text.end());
  code.bytes.push_back(0); // the CUDA driver's JIT (cuModuleLoadData) takes PTX as a C string
  code.sha256 = codeobj::sha256_hex(code.bytes);
  for (const auto& f : m.functions) {
    if (!f.entry || !f.defined()) continue;
    KernelInfo k = ptx::entry_kernel_info(f);
    k.lds_bytes = static_shared_bytes(m, f);
    code.kernels.push_back(std::move(k));
  }
  return code;
}

void apply_ptxas_resources(CodeObject& ptx_object, const PtxReport& report) {
  for (auto& k : ptx_object.kernels) {
    const PtxKernelReport* r = report.find(k.name);
    if (!r) continue;
    k.vgprs = r->registers;
    k.lds_bytes = r->shared_bytes;
    k.scratch_bytes = std::max({r->stack_bytes, r->local_bytes, r->spill_store_bytes});
  }
}

} // namespace isatune::toolchain

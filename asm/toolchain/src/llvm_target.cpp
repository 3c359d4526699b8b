// The linked LLVM's AMDGPU target: one-time registration, version, known processors, target id resolution.
#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include <llvm/Config/llvm-config.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Triple.h>

#include "internal.h"
#include "llvm_compat.h"
#include "isatune/cdna/target.h"
#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"

extern "C" {
void LLVMInitializeAMDGPUAsmParser();
}

namespace isatune::codeobj::detail {
void init_amdgpu_target(); // asm/codeobj/src/llvm_init.cpp: target info, MC layer, disassembler
}

namespace isatune::toolchain {
namespace detail {

void init_llvm_amdgpu() {
  static std::once_flag once;
  // One registration of the target for the whole process (codeobj and emu share it), so that threads
  // starting in different libraries never register LLVM's AMDGPU target twice at once.
  std::call_once(once, [] {
    codeobj::detail::init_amdgpu_target();
    LLVMInitializeAMDGPUAsmParser();
  });
}

namespace {

// Processor names of the AMDGPU target, read once from a subtarget's processor table.
const std::set<std::string, std::less<>>& known_processors() {
  static const std::set<std::string, std::less<>> names = [] {
    init_llvm_amdgpu();
    std::set<std::string, std::less<>> out;
    llvm::Triple triple("amdgcn-amd-amdhsa");
    std::string err;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(llvm_compat::triple_arg(triple), err);
    if (!target) return out;
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(llvm_compat::triple_arg(triple), "generic", ""));
    if (!sti) return out;
    for (const auto& p : sti->getAllProcessorDescriptions()) out.emplace(p.Key);
    return out;
  }();
  return names;
}

std::string llvm_name() { return "LLVM " + llvm_version(); }

} // namespace

ResolvedTarget resolve_target(std::string_view text) {
  constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
  std::string_view rest = text;
  if (rest.substr(0, prefix.size()) == prefix) rest.remove_prefix(prefix.size());
  std::string isa(rest.substr(0, rest.find(':')));
  if (isa.empty()) throw InputError("empty AMD target id '" + std::string(text) + "'");

  ResolvedTarget out;
  if (const cdna::TargetInfo* info = cdna::find_target(isa)) {
    // A CDNA target newer than the linked LLVM (gfx950 on LLVM 19): say which LLVM it needs.
    cdna::check_llvm_knows(*info, ISATUNE_LLVM_MAJOR, llvm_version());
    cdna::TargetId id = cdna::parse_target_id(text); // throws InputError on bad features
    out.isa = id.isa();
    out.features = id.llvm_features();
    out.target_id = id.str();
  } else {
    // Not a CDNA target isatune models, but LLVM may still know it (gfx1100 ...): pass features through.
    out.isa = isa;
    out.target_id = std::string(prefix) + isa;
    std::string_view feats = rest.substr(isa.size());
    while (!feats.empty()) {
      feats.remove_prefix(1); // ':'
      std::string_view f = feats.substr(0, feats.find(':'));
      feats.remove_prefix(f.size());
      if (f.size() < 2 || (f.back() != '+' && f.back() != '-'))
        throw InputError("bad target feature '" + std::string(f) + "' in '" + std::string(text) + "'");
      if (!out.features.empty()) out.features += ",";
      out.features += std::string(1, f.back()) + std::string(f.substr(0, f.size() - 1));
      out.target_id += ":" + std::string(f);
    }
  }
  if (!llvm_supports(out.isa))
    throw InputError("unknown AMD target '" + out.isa + "': " + llvm_name() +
                     " (the LLVM linked into isatune) does not know this processor");
  return out;
}

} // namespace detail

std::string llvm_version() { return LLVM_VERSION_STRING; }

bool llvm_supports(std::string_view isa) {
  const auto& names = detail::known_processors();
  return names.find(isa) != names.end();
}

} // namespace isatune::toolchain

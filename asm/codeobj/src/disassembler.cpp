// Disassembly through LLVM's MCDisassembler and MCInstPrinter for amdgcn-amd-amdhsa. Each thread keeps its own
// MC objects per target (building them costs more than decoding a small kernel), so threads share no state.
#include "isatune/codeobj/disassembler.h"

#include <map>
#include <memory>

#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDisassembler/MCDisassembler.h"
#include "llvm/MC/MCInst.h"
#include "llvm/MC/MCInstPrinter.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/TargetParser.h"
#include "llvm/TargetParser/Triple.h"

#include "internal.h"
#include "isatune/cdna/target.h"
#include "isatune/error.h"
#include "llvm_compat.h"

namespace isatune::codeobj {

namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";

// "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-" or "gfx942" -> cpu "gfx942", features "+sramecc,-xnack".
void split_target(std::string_view target, std::string& cpu, std::string& features) {
  constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
  if (target.starts_with(prefix)) target.remove_prefix(prefix.size());
  size_t colon = target.find(':');
  cpu = std::string(target.substr(0, colon));
  while (colon != std::string_view::npos) {
    target.remove_prefix(colon + 1);
    colon = target.find(':');
    std::string_view f = target.substr(0, colon);
    // Only the target-id features: anything else could switch off what the disassembler needs.
    if (f != "sramecc+" && f != "sramecc-" && f != "xnack+" && f != "xnack-")
      throw InputError("bad target feature '" + std::string(f) + "' in target '" + cpu +
                       "' (expected sramecc+, sramecc-, xnack+ or xnack-)");
    if (!features.empty()) features += ",";
    features += f.back();
    features += f.substr(0, f.size() - 1);
  }
}

// Printer output "\ts_load_dword s10, s[0:1], 0x18" (tab after the mnemonic) -> "s_load_dword s10, ...".
std::string tidy(std::string text) {
  size_t start = text.find_first_not_of(" \t");
  text.erase(0, start == std::string::npos ? text.size() : start);
  size_t tab = text.find('\t');
  if (tab != std::string::npos) {
    size_t end = text.find_first_not_of(" \t", tab);
    text.replace(tab, (end == std::string::npos ? text.size() : end) - tab, end == std::string::npos ? "" : " ");
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) text.pop_back();
  return text;
}

std::string unknown_word(std::span<const uint8_t> b) {
  uint32_t word = 0;
  for (size_t i = 0; i < b.size() && i < 4; ++i) word |= uint32_t(b[i]) << (8 * i);
  char buf[32];
  std::snprintf(buf, sizeof buf, "<unknown 0x%08x>", word);
  return buf;
}

} // namespace

// LLVM 22's AMDGPU decoder dereferences freed memory (segfault, also in llvm-mc --disassemble) for a MUBUF or
// MTBUF instruction (bits 31:26 of the first dword 0b111000 / 0b111010) whose soffset (bits 63:56) is 0xff,
// the literal-constant code these encodings do not allow. Such words are reported undecodable instead.
// It also segfaults (also in llvm-mc --disassemble) on a VOP3P-encoded instruction (bits 31:23 0b110100111,
// which includes the MFMAs) with a source operand of 255, the literal constant these encodings do not allow on
// GFX9 (seen: 0xd3d94064 0x1800f8ff, an MFMA with a literal src0). Reported undecodable as well.
// And (found by fuzz_codeobj's long run, 2026-12-02; llvm-mc --disassemble segfaults too, on gfx90a-gfx950 and
// gfx1030-gfx1200) on a VOP2 instruction with a 16-bit KImm constant equal to 0xff: 0x48000000 0x000000ff is
// v_madmk_f16 (GFX9 opcodes 36/37 madmk/madak_f16; GFX10+ 55/56 fmamk/fmaak_f16). Only the exact value 0xff
// crashes (all 256 low bytes and several wider values were tried); the 32-bit forms do not.
// And (fuzz_codeobj's long run, 2026-12-06; llvm-mc --disassemble segfaults too, gfx803-gfx950 and gfx1030) on an
// SDWA instruction (src0 field 0xf9 in a VOP1, VOP2 or VOPC word) with a selector of 7, a value the encoding
// does not define (BYTE_0..WORD_1 are 0-5, DWORD 6): dst_sel (bits 10:8 of the SDWA dword; VOP1 and VOP2, in
// VOPC those bits are the SGPR destination), src0_sel (18:16), src1_sel (26:24; VOP2 and VOPC, VOP1 has no
// src1). Every selector 0-6 in each field was tried on three opcodes of each kind: only 7 crashes. GFX11 and
// later have no SDWA (`sdwa` false) and decode these words without crashing.
bool llvm_decoder_crashes_on(std::span<const uint8_t> b, bool gfx10_plus, bool sdwa) {
  if (b.size() < 8) return false;
  const uint32_t op = b[3] >> 2;
  if ((op == 0x38 || op == 0x3a) && b[7] == 0xff) return true;
  const uint32_t first = b[0] | b[1] << 8 | b[2] << 16 | uint32_t(b[3]) << 24;
  const uint32_t second = b[4] | b[5] << 8 | b[6] << 16 | uint32_t(b[7]) << 24;
  if ((first >> 31) == 0 && second == 0xff) { // VOP2, then its KImm
    const uint32_t vop2 = (first >> 25) & 0x3f;
    if (gfx10_plus ? (vop2 == 55 || vop2 == 56) : (vop2 == 36 || vop2 == 37)) return true;
  }
  if (sdwa && (first & 0x1ff) == 0xf9 && (first >> 31) == 0) {
    const bool vop1 = (first >> 25) == 0x3f, vopc = (first >> 25) == 0x3e;
    auto sel = [&](int shift) { return ((second >> shift) & 7) == 7; };
    if ((!vopc && sel(8)) || sel(16) || (!vop1 && sel(24))) return true;
  }
  if ((first >> 23) != 0x1a7) return false;
  for (int src = 0; src < 3; ++src)
    if (((second >> (9 * src)) & 0x1ff) == 0xff) return true;
  return false;
}

namespace {

// The MC objects of one target, built once per thread (MCContext and the printer are not safe to share).
struct DisassemblerMc {
  llvm::Triple triple{kTriple};
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> dis;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  bool gfx10_plus = false;
  bool sdwa = false;  // the target has SDWA encodings (GFX8-GFX10)
};

// Builds the MC objects for cpu/features, or throws what is wrong with the target.
std::unique_ptr<DisassemblerMc> build_mc(std::string_view target, const std::string& cpu,
                                         const std::string& features) {
  auto mc = std::make_unique<DisassemblerMc>();
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(llvm_compat::triple_arg(mc->triple), error);
  if (!t) throw UnavailableError("LLVM has no AMDGPU target: " + error);
  mc->mri.reset(t->createMCRegInfo(llvm_compat::triple_arg(mc->triple)));
  llvm::MCTargetOptions options;
  mc->mai.reset(t->createMCAsmInfo(*mc->mri, llvm_compat::triple_arg(mc->triple), options));
  // A CDNA target newer than the linked LLVM (gfx950 on LLVM 19): say which LLVM it needs.
  if (const cdna::TargetInfo* info = cdna::find_target(cpu))
    cdna::check_llvm_knows(*info, ISATUNE_LLVM_MAJOR, ISATUNE_LLVM_VERSION_STRING);
  // Checked first: createMCSubtargetInfo would print a warning and carry on with a generic processor.
  if (llvm::AMDGPU::parseArchAMDGCN(cpu) == llvm::AMDGPU::GK_NONE)
    throw InputError("unknown AMD target '" + std::string(target) + "' for the disassembler");
  mc->sti.reset(t->createMCSubtargetInfo(llvm_compat::triple_arg(mc->triple), cpu, features));
  if (!mc->sti)
    throw InputError("unknown AMD target '" + std::string(target) + "' for the disassembler");
  // LLVM's AMDGPU disassembler supports GFX8 (VI encoding) and later; for GFX6/GFX7 its constructor ends the
  // process (reportFatalUsageError), so refuse those here.
  if (!mc->sti->checkFeatures("+gcn3-encoding") && !mc->sti->checkFeatures("+gfx10-insts"))
    throw InputError("LLVM cannot disassemble AMD target '" + cpu + "' (GFX6/GFX7 encoding)");
  mc->gfx10_plus = mc->sti->checkFeatures("+gfx10-insts");
  mc->sdwa = mc->sti->checkFeatures("+sdwa");
  mc->mii.reset(t->createMCInstrInfo());
  mc->ctx = std::make_unique<llvm::MCContext>(mc->triple, mc->mai.get(), mc->mri.get(), mc->sti.get());
  mc->dis.reset(t->createMCDisassembler(*mc->sti, *mc->ctx));
  mc->printer.reset(t->createMCInstPrinter(mc->triple, mc->mai->getAssemblerDialect(), *mc->mai, *mc->mii, *mc->mri));
  if (!mc->dis || !mc->printer) throw UnavailableError("LLVM's AMDGPU disassembler is not available");
  return mc;
}

// This thread's MC objects for the target. The key space is small (a processor name and the four target-id
// features; split_target refuses any other), and only targets that built are kept, so a bad target is refused
// with the same error on every call.
const DisassemblerMc& mc_for(std::string_view target, const std::string& cpu, const std::string& features) {
  thread_local std::map<std::string, std::unique_ptr<DisassemblerMc>> cache;
  const std::string key = cpu + ":" + features;
  if (auto it = cache.find(key); it != cache.end()) return *it->second;
  if (cache.size() >= 64) cache.clear(); // bounded whatever the callers ask for
  return *cache.emplace(key, build_mc(target, cpu, features)).first->second;
}

} // namespace

std::vector<DisassembledInstruction> disassemble_bytes(std::string_view target, std::span<const uint8_t> code) {
  detail::init_amdgpu_target();
  std::string cpu, features;
  split_target(target, cpu, features);
  const DisassemblerMc& mc = mc_for(target, cpu, features);
  const bool gfx10_plus = mc.gfx10_plus;
  llvm::MCDisassembler* dis = mc.dis.get();
  llvm::MCInstPrinter* printer = mc.printer.get();
  const llvm::MCSubtargetInfo* sti = mc.sti.get();

  // LLVM 22's decoder also crashes (a dangling Twine in its "cannot read literal" message) when an instruction
  // needs a 32-bit literal that is cut off by the end of the bytes. The decoder therefore reads a copy padded
  // with zeros; an instruction that reaches into the padding is reported undecodable.
  constexpr size_t kPadding = 16;
  std::vector<uint8_t> padded(code.begin(), code.end());
  padded.resize(code.size() + kPadding, 0);
  std::vector<DisassembledInstruction> out;
  const llvm::ArrayRef<uint8_t> bytes(padded.data(), padded.size());
  const uint64_t end = code.size();
  uint64_t pc = 0;
  while (pc < end) {
    llvm::MCInst inst;
    uint64_t size = 0;
    auto status = llvm_decoder_crashes_on(std::span<const uint8_t>(padded).subspan(pc), gfx10_plus, mc.sdwa)
                      ? llvm::MCDisassembler::Fail
                      : dis->getInstruction(inst, size, bytes.slice(pc), pc, llvm::nulls());
    DisassembledInstruction d;
    d.address = pc;
    if (status == llvm::MCDisassembler::Fail || size == 0 || size > end - pc) {
      size = std::min<uint64_t>(4, end - pc);
      d.valid = false;
      d.text = unknown_word(code.subspan(pc, size));
    } else {
      std::string text;
      llvm::raw_string_ostream os(text);
      printer->printInst(&inst, pc, "", *sti, os);
      os.flush();
      d.text = tidy(std::move(text));
    }
    d.bytes.assign(code.begin() + pc, code.begin() + pc + size);
    out.push_back(std::move(d));
    pc += size;
  }
  return out;
}

std::vector<DisassembledInstruction> disassemble_kernel(const CodeObject& code, const KernelInfo& kernel) {
  if (kernel.code_offset == 0 || kernel.code_offset >= code.bytes.size())
    throw InputError("kernel '" + kernel.name + "' has no machine code in the code object");
  uint64_t size = kernel.code_size;
  const bool bounded = size != 0;
  if (!bounded || size > code.bytes.size() - kernel.code_offset) size = code.bytes.size() - kernel.code_offset;
  std::span<const uint8_t> bytes(code.bytes.data() + kernel.code_offset, size);
  auto out = disassemble_bytes(code.target_id.empty() ? code.isa : code.target_id, bytes);
  if (!bounded) {
    // Unknown size (no function symbol): stop after the first s_endpgm.
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].valid && out[i].text.rfind("s_endpgm", 0) == 0) {
        out.resize(i + 1);
        break;
      }
  }
  return out;
}

} // namespace isatune::codeobj

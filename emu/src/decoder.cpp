#include "decoder.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <set>

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
#include "llvm/TargetParser/Triple.h"

#include "isatune/cdna/target.h"
#include "isatune/codeobj/disassembler.h"
#include "isatune/error.h"
#include "llvm_compat.h"
#include "ops.h"

namespace isatune::codeobj::detail {
void init_amdgpu_target();
}

namespace isatune::emu {

namespace {

const std::set<std::string, std::less<>> kSuffixes = {"vi",   "gfx9",  "gfx90a", "gfx940", "gfx950", "gfx6",
                                                      "gfx7", "gfx8",  "gfx10",  "ci",     "acd",    "vcd",
                                                      "e32",  "e64",   "dpp",    "sdwa",   "IMM",    "SGPR",
                                                      "SADDR", "OFFEN", "IDXEN", "BOTHEN", "OFFSET", "gfx90acd",
                                                      "gfx940acd", "gfx90avcd"};

struct Flags {
  bool e64 = false, dpp = false, sdwa = false, saddr = false;
  uint8_t buf_mode = 0;
  bool sgpr_offset = false;
};

std::string base_name(std::string name, Flags& f) {
  for (;;) {
    size_t u = name.rfind('_');
    if (u == std::string::npos) break;
    std::string tail = name.substr(u + 1);
    if (!kSuffixes.count(tail)) break;
    if (tail == "e64") f.e64 = true;
    if (tail == "dpp") f.dpp = true;
    if (tail == "sdwa") f.sdwa = true;
    if (tail == "SADDR") f.saddr = true;
    if (tail == "OFFEN") f.buf_mode = 1;
    if (tail == "IDXEN") f.buf_mode = 2;
    if (tail == "BOTHEN") f.buf_mode = 3;
    if (tail == "SGPR") f.sgpr_offset = true;
    name.resize(u);
  }
  return name;
}

// "VGPR4_VGPR5" -> vgpr 4 width 2; "SGPR0_SGPR1" -> sgpr 0 width 2; VCC, EXEC, M0 ...
Opnd reg_operand(std::string_view name) {
  Opnd o;
  auto count_parts = [&] { return uint8_t(1 + std::count(name.begin(), name.end(), '_')); };
  auto number = [](std::string_view s, size_t at) { return uint16_t(std::atoi(std::string(s.substr(at)).c_str())); };
  if (name.starts_with("VGPR")) {
    o.kind = OpKind::vgpr, o.reg = number(name, 4), o.width = count_parts();
  } else if (name.starts_with("AGPR")) {
    o.kind = OpKind::vgpr, o.reg = uint16_t(256 + number(name, 4)), o.width = count_parts();
  } else if (name.starts_with("SGPR") && name != "SGPR_NULL") {
    o.kind = OpKind::sgpr, o.reg = number(name, 4), o.width = count_parts();
  } else if (name == "VCC") {
    o.kind = OpKind::sgpr, o.reg = kVcc, o.width = 2;
  } else if (name == "VCC_LO") {
    o.kind = OpKind::sgpr, o.reg = kVcc;
  } else if (name == "VCC_HI") {
    o.kind = OpKind::sgpr, o.reg = kVcc + 1;
  } else if (name == "EXEC") {
    o.kind = OpKind::sgpr, o.reg = kExec, o.width = 2;
  } else if (name == "EXEC_LO") {
    o.kind = OpKind::sgpr, o.reg = kExec;
  } else if (name == "EXEC_HI") {
    o.kind = OpKind::sgpr, o.reg = kExec + 1;
  } else if (name.starts_with("M0")) {
    o.kind = OpKind::sgpr, o.reg = kM0;
  } else {
    o.kind = OpKind::bad, o.bad_name = std::string(name);
  }
  return o;
}

RegRange range_of(const Opnd& o) {
  if (o.kind == OpKind::sgpr) return {o.reg, o.width};
  if (o.kind == OpKind::vgpr) return {uint16_t(kVgprBase + o.reg), o.width};
  return {};
}

RegRange implicit_range(std::string_view name) {
  if (name == "SCC") return {kScc, 1};
  Opnd o = reg_operand(name);
  return range_of(o);
}

std::string tidy(std::string text) {
  size_t start = text.find_first_not_of(" \t");
  text.erase(0, start == std::string::npos ? text.size() : start);
  for (char& c : text)
    if (c == '\t') c = ' ';
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  return text;
}

bool is_trans(std::string_view n) {
  for (const char* t : {"V_EXP_", "V_LOG_", "V_RCP_", "V_RSQ_", "V_SQRT_", "V_SIN_", "V_COS_"})
    if (n.starts_with(t)) return true;
  return false;
}

// Floating-point operations per active lane of a VALU instruction, for the achieved FLOP/s of a profile: an FMA
// counts 2, an add or multiply 1, a packed (V_PK_) form twice that; everything else 0.
uint32_t valu_flops(std::string_view n) {
  const bool fp = n.find("_F32") != n.npos || n.find("_F16") != n.npos || n.find("_F64") != n.npos ||
                  n.find("_BF16") != n.npos;
  if (!fp) return 0;
  const bool pk = n.starts_with("V_PK_");
  std::string_view op = n.substr(pk ? 5 : 2);
  uint32_t f = 0;
  if (op.starts_with("FMA") || op.starts_with("MAC") || op.starts_with("FMAC") || op.starts_with("MAD")) f = 2;
  else if (op.starts_with("ADD") || op.starts_with("SUB") || op.starts_with("MUL") || op.starts_with("MAX") ||
           op.starts_with("MIN"))
    f = 1;
  return pk ? 2 * f : f;
}

struct Mc {
  std::unique_ptr<llvm::MCRegisterInfo> mri;
  std::unique_ptr<llvm::MCAsmInfo> mai;
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  std::unique_ptr<llvm::MCInstrInfo> mii;
  std::unique_ptr<llvm::MCContext> ctx;
  std::unique_ptr<llvm::MCDisassembler> dis;
  std::unique_ptr<llvm::MCInstPrinter> printer;
  int mods_type = -1; // OperandType of a VOP3 source-modifier operand, learnt from V_ADD_F32_e64
};

void setup(Mc& mc, const std::string& cpu) {
  // A CDNA target newer than the linked LLVM (gfx950 on LLVM 19): say which LLVM it needs.
  if (const cdna::TargetInfo* info = cdna::find_target(cpu))
    cdna::check_llvm_knows(*info, ISATUNE_LLVM_MAJOR, ISATUNE_LLVM_VERSION_STRING);
  codeobj::detail::init_amdgpu_target();
  llvm::Triple triple("amdgcn-amd-amdhsa");
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(llvm_compat::triple_arg(triple), error);
  if (!t) throw UnavailableError("LLVM has no AMDGPU target: " + error);
  mc.mri.reset(t->createMCRegInfo(llvm_compat::triple_arg(triple)));
  llvm::MCTargetOptions options;
  mc.mai.reset(t->createMCAsmInfo(*mc.mri, llvm_compat::triple_arg(triple), options));
  mc.sti.reset(t->createMCSubtargetInfo(llvm_compat::triple_arg(triple), cpu, ""));
  mc.mii.reset(t->createMCInstrInfo());
  if (!mc.mri || !mc.mai || !mc.sti || !mc.mii) throw UnavailableError("LLVM's AMDGPU MC layer is not available");
  mc.ctx = std::make_unique<llvm::MCContext>(triple, mc.mai.get(), mc.mri.get(), mc.sti.get());
  mc.dis.reset(t->createMCDisassembler(*mc.sti, *mc.ctx));
  mc.printer.reset(t->createMCInstPrinter(triple, mc.mai->getAssemblerDialect(), *mc.mai, *mc.mii, *mc.mri));
  if (!mc.dis || !mc.printer) throw UnavailableError("LLVM's AMDGPU disassembler is not available");
  for (unsigned op = 0; op < mc.mii->getNumOpcodes(); ++op)
    if (mc.mii->getName(op) == "V_ADD_F32_e64_vi") {
      mc.mods_type = mc.mii->get(op).operands()[1].OperandType;
      break;
    }
}

void fill_hazard_view(Inst& in, const llvm::MCInstrDesc& desc, const Mc& mc) {
  for (int i = 0; i < in.ndst; ++i)
    if (auto r = range_of(in.dst[i]); r.count) in.writes.push_back(r);
  for (int i = 0; i < in.nsrc; ++i)
    if (auto r = range_of(in.src[i]); r.count) in.reads.push_back(r);
  for (llvm::MCPhysReg r : desc.implicit_defs())
    if (auto rr = implicit_range(mc.mri->getName(r)); rr.count) in.writes.push_back(rr);
  for (llvm::MCPhysReg r : desc.implicit_uses()) {
    std::string_view n = mc.mri->getName(r);
    if (n.starts_with("EXEC")) continue; // every vector instruction reads EXEC; the rules name EXEC writes
    if (auto rr = implicit_range(n); rr.count) in.reads.push_back(rr);
  }
  if (in.cat == Cat::mfma && in.nsrc >= 3) {
    in.mfma_a = range_of(in.src[0]);
    in.mfma_b = range_of(in.src[1]);
    // v_smfmac_*: SrcC is vdst (tied); the third source is the sparsity index.
    in.mfma_c = in.mfma && in.mfma->sparse && in.ndst ? range_of(in.dst[0]) : range_of(in.src[2]);
  }
  for (const auto& w : in.writes) {
    if (w.first >= kVgprBase && w.first < kScc) in.vwrites.push_back(w);
    else if (w.first < 128 && !w.overlaps({kExec, 2})) in.swrites.push_back(w);
  }
  for (const auto& w : in.writes)
    if (w.overlaps({kExec, 2}) && (in.cat == Cat::valu || in.cat == Cat::trans)) in.writes_exec_valu = true;
}

} // namespace

Program decode_kernel(const CodeObject& code, const KernelInfo& kernel, cdna::Gfx gfx) {
  if (kernel.code_offset == 0 || kernel.code_offset >= code.bytes.size())
    throw InputError("kernel '" + kernel.name + "' has no machine code in the code object");
  uint64_t size = kernel.code_size;
  if (size == 0 || size > code.bytes.size() - kernel.code_offset) size = code.bytes.size() - kernel.code_offset;
  std::string cpu = code.isa.empty() ? "gfx942" : code.isa;

  Mc mc;
  setup(mc, cpu);
  llvm::ArrayRef<uint8_t> bytes(code.bytes.data() + kernel.code_offset, size);
  Program prog;
  prog.index_of_addr.assign((size + 3) / 4, -1);
  uint64_t pc = 0;
  bool ended = false;
  while (pc < bytes.size()) {
    llvm::MCInst mi;
    uint64_t isz = 0;
    auto status = codeobj::llvm_decoder_crashes_on(std::span<const uint8_t>(bytes.data() + pc, bytes.size() - pc))
                      ? llvm::MCDisassembler::Fail
                                                        : mc.dis->getInstruction(mi, isz, bytes.slice(pc), pc, llvm::nulls());
    Inst in;
    in.addr = uint32_t(pc);
    if (status == llvm::MCDisassembler::Fail || isz == 0 || isz > bytes.size() - pc) {
      if (kernel.code_size == 0 && ended) break;
      isz = std::min<uint64_t>(4, bytes.size() - pc);
      char buf[40];
      uint32_t word = 0;
      std::memcpy(&word, bytes.data() + pc, size_t(isz));
      std::snprintf(buf, sizeof buf, "<undecodable 0x%08x>", word);
      in.text = buf;
      in.size = uint8_t(isz);
      prog.index_of_addr[pc / 4] = int32_t(prog.insts.size());
      prog.insts.push_back(std::move(in));
      pc += isz;
      continue;
    }
    in.size = uint8_t(isz);
    {
      std::string text;
      llvm::raw_string_ostream os(text);
      mc.printer->printInst(&mi, pc, "", *mc.sti, os);
      os.flush();
      in.text = tidy(text);
    }
    Flags f;
    in.name = base_name(std::string(mc.mii->getName(mi.getOpcode())), f);
    in.e64 = f.e64, in.dpp = f.dpp, in.sdwa = f.sdwa, in.saddr = f.saddr, in.buf_mode = f.buf_mode;
    const llvm::MCInstrDesc& desc = mc.mii->get(mi.getOpcode());
    unsigned ndefs = desc.getNumDefs();
    uint8_t pending_mods = 0;
    for (unsigned i = 0; i < mi.getNumOperands(); ++i) {
      const llvm::MCOperand& op = mi.getOperand(i);
      const bool described = i < desc.getNumOperands();
      if (i < ndefs && op.isReg()) {
        if (in.ndst < 2) in.dst[in.ndst++] = reg_operand(mc.mri->getName(op.getReg()));
        continue;
      }
      if (described && i >= ndefs && desc.getOperandConstraint(i, llvm::MCOI::TIED_TO) != -1) continue;
      if (op.isReg()) {
        Opnd o = op.getReg() ? reg_operand(mc.mri->getName(op.getReg())) : Opnd{};
        o.mods = pending_mods;
        pending_mods = 0;
        if (in.nsrc < 5) in.src[in.nsrc++] = o;
      } else if (op.isImm()) {
        if (described && int(desc.operands()[i].OperandType) == mc.mods_type && mc.mods_type >= 0) {
          pending_mods = uint8_t(op.getImm());
        } else if (described && desc.operands()[i].RegClass != -1) {
          Opnd o;
          o.kind = OpKind::imm, o.imm = uint64_t(op.getImm()), o.mods = pending_mods;
          pending_mods = 0;
          if (in.nsrc < 5) in.src[in.nsrc++] = o;
        } else if (in.nimm < 10) {
          in.imm[in.nimm++] = op.getImm();
        }
      } else if (op.isExpr()) {
        if (in.nimm < 10) in.imm[in.nimm++] = 0;
      }
    }
    // SDWA forms run only where a handler models them (registered as NAME_SDWA); a plain handler would
    // ignore the selects.
    if (const OpInfo* info = find_op(in.sdwa ? in.name + "_SDWA" : in.name)) {
      in.fn = info->fn;
      in.cat = info->cat;
    }
    // "..._SADDR_RTN": the SADDR suffix is not last, so base_name kept it (global atomics with return).
    if (in.name.find("_SADDR_") != std::string::npos) in.saddr = true;
    if (is_trans(in.name) && in.cat == Cat::valu) in.cat = Cat::trans;
    in.lane_op = in.name == "V_READLANE_B32" || in.name == "V_READFIRSTLANE_B32" || in.name == "V_WRITELANE_B32";
    in.dot = in.name.starts_with("V_DOT");
    in.accvgpr = in.name.starts_with("V_ACCVGPR");
    if (in.cat == Cat::mfma) {
      in.mfma = find_mfma(in.name);
      int g = int(gfx);
      uint16_t cycles = in.mfma ? in.mfma->cycles[g] : 0;
      if (in.mfma && cycles == 0) in.fn = nullptr; // not on this target
      in.passes = uint8_t(cycles / 4);
      bool f32 = in.mfma && in.mfma->a == MType::f32;
      in.xdl = gfx == cdna::Gfx::gfx90a ? true : !f32;
      if (in.mfma) {
        in.mfma_blocks_valu = f32 || std::string_view(in.mfma->name).find("F64") != std::string_view::npos;
        in.flops = 2u * in.mfma->m * in.mfma->n * in.mfma->k;
      }
    }
    in.setprio = in.name == "S_SETPRIO";
    if (in.cat == Cat::valu) in.flops = valu_flops(in.name);
    if (in.cat == Cat::branch && in.nimm >= 1 && in.name != "S_SETPC_B64" && in.name != "S_GETPC_B64") {
      int64_t target = int64_t(pc) + 4 + int64_t(int16_t(in.imm[0])) * 4;
      in.imm[9] = target;
    }
    fill_hazard_view(in, desc, mc);
    // v_permlane*_swap reads both registers it writes (their inputs are tied operands, dropped above).
    // So do v_swap_b32, and the instructions that keep part of vdst (SDWA, the fp8 packs, d16 loads).
    const bool reads_dst = (in.name.starts_with("V_PERMLANE") && in.name.find("_SWAP") != std::string::npos) ||
                           (in.sdwa && in.ndst && in.dst[0].kind == OpKind::vgpr) || in.name == "V_SWAP_B32" ||
                           in.name == "V_CVT_PK_FP8_F32" || in.name == "V_CVT_PK_BF8_F32" ||
                           in.name == "V_CVT_SCALEF32_PK_FP4_F32" || (in.mfma && in.mfma->sparse) ||
                           in.name.find("_LOAD_SHORT_D16") != std::string::npos;
    if (reads_dst)
      for (int i = 0; i < in.ndst; ++i)
        if (auto r = range_of(in.dst[i]); r.count) in.reads.push_back(r);
    if (in.cat == Cat::vmem_store || in.cat == Cat::flat_store) {
      // data operand: the VGPR source that is not the address (global: src[1] or src[0] for saddr forms)
      for (int i = 0; i < in.nsrc; ++i)
        if (in.src[i].kind == OpKind::vgpr && i > 0) {
          in.store_data = range_of(in.src[i]);
          break;
        }
      if (in.name.starts_with("BUFFER_STORE") && in.nsrc > 0) in.store_data = range_of(in.src[0]);
    }
    if (in.name == "S_ENDPGM") ended = true;
    prog.index_of_addr[pc / 4] = int32_t(prog.insts.size());
    prog.insts.push_back(std::move(in));
    pc += isz;
  }
  for (auto& in : prog.insts)
    if (in.cat == Cat::branch && in.imm[9] != 0) in.target = prog.at(uint64_t(in.imm[9]));
  return prog;
}

} // namespace isatune::emu

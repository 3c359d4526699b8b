// MCInst templates learned through LLVM's AMDGPU assembly parser (see mc_instruction_templates.h).
#include "mc_instruction_templates.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <unordered_map>

#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>

#include "isatune/cdna/printer.h"
#include "isatune/error.h"

namespace isatune::toolchain::detail {
namespace {

using cdna::Form;
using cdna::Instruction;
using cdna::Modifiers;
using cdna::Operand;
using cdna::Reg;
using cdna::RegFile;

std::atomic<size_t> g_template_count{0};

// Value classes of a constant operand: probes take values of the same class. kExact: the value is part of the
// shape (small-range fields, where two distinct probes might not exist or might be special).
enum ImmClass : uint8_t { kExact = 0, kSimmNonneg, kSimmNeg, kInlineNonneg, kInlineNeg, kLitNonneg, kLitNeg };

struct Range {
  int64_t lo, hi;
  bool wide() const { return hi - lo >= 15; }
};

Range class_range(ImmClass c, const Form& f) {
  switch (c) {
  case kSimmNonneg: return {std::max<int64_t>(0, f.simm_min), f.simm_max};
  case kSimmNeg: return {f.simm_min, std::min<int64_t>(-1, f.simm_max)};
  case kInlineNonneg: return {0, 64};
  case kInlineNeg: return {-16, -1};
  case kLitNonneg: return {65, 0xffffffff};
  case kLitNeg: return {INT32_MIN, -17};
  case kExact: break;
  }
  return {0, -1};
}

ImmClass imm_class(const Form& f, size_t slot, int64_t v) {
  const uint16_t kinds = f.slots[slot].kinds;
  ImmClass c;
  if (kinds & cdna::k_simm) c = v < 0 ? kSimmNeg : kSimmNonneg;
  else if ((kinds & cdna::k_inline) && cdna::is_inline_int(v)) c = v < 0 ? kInlineNeg : kInlineNonneg;
  else c = v < 0 ? kLitNeg : kLitNonneg;
  return class_range(c, f).wide() ? c : kExact;
}

// The offset modifier: absent and zero are shapes of their own; other values are probed within their sign.
enum OffsetClass : uint8_t { kOffNone = 0, kOffZero, kOffPos, kOffNeg, kOffExact };

Range offset_range(const Form& f, bool positive) {
  return positive ? Range{std::max<int64_t>(1, f.simm_min), f.simm_max}
                  : Range{f.simm_min, std::min<int64_t>(-1, f.simm_max)};
}

OffsetClass offset_class(const Form& f, const std::optional<int32_t>& o) {
  if (!o) return kOffNone;
  if (*o == 0) return kOffZero;
  if (!offset_range(f, *o > 0).wide()) return kOffExact;
  return *o > 0 ? kOffPos : kOffNeg;
}

// offset0 / offset1 of ds_read2 / ds_write2: absent, zero, or probed in 1..255.
uint8_t offset01_class(const std::optional<uint8_t>& o) { return !o ? 0 : (*o == 0 ? 1 : 2); }

uint8_t reg_equal_to(const std::vector<Operand>& ops, size_t i, bool* overlap) {
  const Reg& r = ops[i].reg;
  for (size_t j = 0; j < i; ++j) {
    if (!ops[j].is_reg() || ops[j].reg.file != r.file) continue;
    if (ops[j].reg == r) return static_cast<uint8_t>(j);
    if (ops[j].reg.overlaps(r)) *overlap = true;
  }
  return 0xff;
}

uint8_t imm_equal_to(const Instruction& inst, size_t i, ImmClass c) {
  const auto& ops = inst.operands();
  for (size_t j = 0; j < i; ++j)
    if (ops[j].kind == Operand::Kind::imm && ops[j].imm == ops[i].imm && imm_class(inst.form(), j, ops[j].imm) == c)
      return static_cast<uint8_t>(j);
  return 0xff;
}

struct KeyWriter {
  std::string& s;
  void u8(uint8_t v) { s.push_back(static_cast<char>(v)); }
  void u16(uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); }
  void u64(uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
};

// One value of the instruction that the probes vary.
struct Source {
  uint8_t id = 0; // operand index or McSubst::kOffset*
  bool is_reg = false;
  Reg ra{}, rb{};
  int64_t a = 0, b = 0;
};

struct Probes {
  std::vector<Source> sources;
  std::string line_a, line_b;
};

// The two probe instructions of a shape; false with the reason when they cannot be made.
bool make_probes(const Instruction& inst, Probes& out, std::string* why) {
  const Form& f = inst.form();
  const auto& ops = inst.operands();
  std::vector<Operand> ops_a = ops, ops_b = ops;
  Modifiers mods_a = inst.modifiers(), mods_b = inst.modifiers();
  // Probe registers: A from the bottom of each file, B from the middle, never overlapping.
  uint16_t next_a[3] = {0, 0, 0}, next_b[3] = {52, 128, 128};
  const uint16_t limit_a[3] = {52, 128, 128}, limit_b[3] = {102, 256, 256};
  int k = 0; // constants probed so far: each gets its own pair of values
  auto pick = [&](Range r, bool literal, bool negative, int64_t* a, int64_t* b) {
    int64_t base = literal ? (negative ? -0x12340 : 0x12340) : r.lo + (r.hi - r.lo) / 2 - 8;
    if (base < r.lo) base = r.lo;
    *a = negative && literal ? base - 2 * k : base + 2 * k;
    *b = negative && literal ? *a - 1 : *a + 1;
    ++k;
    return *a >= r.lo && *a <= r.hi && *b >= r.lo && *b <= r.hi;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operand& op = ops[i];
    if (op.kind == Operand::Kind::reg && op.reg.file != RegFile::special) {
      bool overlap = false;
      const uint8_t eq = reg_equal_to(ops, i, &overlap);
      if (eq != 0xff) {
        ops_a[i] = ops_a[eq];
        ops_b[i] = ops_b[eq];
        continue;
      }
      const int file = op.reg.file == RegFile::sgpr ? 0 : op.reg.file == RegFile::vgpr ? 1 : 2;
      const uint16_t al = cdna::required_alignment(op.reg.file, op.reg.count);
      uint16_t ia = static_cast<uint16_t>((next_a[file] + al - 1) / al * al);
      uint16_t ib = static_cast<uint16_t>((next_b[file] + al - 1) / al * al);
      if (ia + op.reg.count > limit_a[file] || ib + op.reg.count > limit_b[file]) {
        *why = "too many registers for the probes";
        return false;
      }
      next_a[file] = static_cast<uint16_t>(ia + op.reg.count);
      next_b[file] = static_cast<uint16_t>(ib + op.reg.count);
      Source s;
      s.id = static_cast<uint8_t>(i);
      s.is_reg = true;
      s.ra = Reg{op.reg.file, ia, op.reg.count};
      s.rb = Reg{op.reg.file, ib, op.reg.count};
      ops_a[i] = s.ra;
      ops_b[i] = s.rb;
      out.sources.push_back(s);
    } else if (op.kind == Operand::Kind::imm) {
      const ImmClass c = imm_class(f, i, op.imm);
      if (c == kExact) continue;
      const uint8_t eq = imm_equal_to(inst, i, c);
      if (eq != 0xff) {
        ops_a[i] = ops_a[eq];
        ops_b[i] = ops_b[eq];
        continue;
      }
      Source s;
      s.id = static_cast<uint8_t>(i);
      if (!pick(class_range(c, f), c == kLitNonneg || c == kLitNeg, c == kLitNeg, &s.a, &s.b)) {
        *why = "no probe constants in the operand's range";
        return false;
      }
      ops_a[i] = Operand(s.a);
      ops_b[i] = Operand(s.b);
      out.sources.push_back(s);
    }
  }
  const Modifiers& m = inst.modifiers();
  if (const OffsetClass c = offset_class(f, m.offset); c == kOffPos || c == kOffNeg) {
    Source s;
    s.id = McSubst::kOffset;
    if (!pick(offset_range(f, c == kOffPos), false, false, &s.a, &s.b)) {
      *why = "no probe offsets in range";
      return false;
    }
    mods_a.offset = static_cast<int32_t>(s.a);
    mods_b.offset = static_cast<int32_t>(s.b);
    out.sources.push_back(s);
  }
  const std::pair<const std::optional<uint8_t>*, uint8_t> pairs[] = {{&m.offset0, McSubst::kOffset0},
                                                                     {&m.offset1, McSubst::kOffset1}};
  for (auto [o, id] : pairs) {
    if (offset01_class(*o) != 2) continue;
    Source s;
    s.id = id;
    if (!pick(Range{1, 255}, false, false, &s.a, &s.b)) {
      *why = "no probe offsets in range";
      return false;
    }
    (id == McSubst::kOffset0 ? mods_a.offset0 : mods_a.offset1) = static_cast<uint8_t>(s.a);
    (id == McSubst::kOffset0 ? mods_b.offset0 : mods_b.offset1) = static_cast<uint8_t>(s.b);
    out.sources.push_back(s);
  }
  // Probe constants must identify their operand: all different, in A and in B.
  std::set<int64_t> seen_a, seen_b;
  for (const auto& s : out.sources)
    if (!s.is_reg && (!seen_a.insert(s.a).second || !seen_b.insert(s.b).second)) {
      *why = "probe constants collide";
      return false;
    }
  try {
    const std::vector<std::string> labels = {"isatune_probe"};
    out.line_a = cdna::print_instruction(Instruction(inst.target(), f, ops_a, mods_a), labels);
    out.line_b = cdna::print_instruction(Instruction(inst.target(), f, ops_b, mods_b), labels);
  } catch (const InputError& e) {
    *why = std::string("probe rejected by the builder: ") + e.what();
    return false;
  }
  return true;
}

// A parsed probe, owning everything it holds: expression operands are placeholders with their kind beside.
struct CapturedInst {
  enum OperandKind : uint8_t { kPlain, kSymbolRef, kOtherExpr };
  llvm::MCInst inst;
  std::vector<OperandKind> operand_kind; // per MCInst operand
};

// Matches the MCInsts of the two probes; fills t (ok or why).
void match(const Instruction& inst, const Probes& probes, const CapturedInst& CA, const CapturedInst& CB,
           const McRegisterMap& regs, McTemplate& t) {
  const llvm::MCInst& A = CA.inst;
  const llvm::MCInst& B = CB.inst;
  auto fail = [&](std::string why) {
    t.ok = false;
    t.why = std::move(why);
    t.subst.clear();
  };
  if (A.getOpcode() != B.getOpcode() || A.getNumOperands() != B.getNumOperands() || A.getFlags() != B.getFlags())
    return fail("the two probes parse to different MCInst opcodes or layouts");
  int label_op = -1;
  for (size_t i = 0; i < inst.operands().size(); ++i)
    if (inst.operands()[i].kind == Operand::Kind::label) label_op = static_cast<int>(i);
  t.inst = A;
  std::vector<bool> found(probes.sources.size(), false);
  bool label_found = false;
  for (unsigned p = 0; p < A.getNumOperands(); ++p) {
    const llvm::MCOperand& a = A.getOperand(p);
    const llvm::MCOperand& b = B.getOperand(p);
    const std::string where = "MCInst operand " + std::to_string(p);
    const auto kind_a = CA.operand_kind[p], kind_b = CB.operand_kind[p];
    if (kind_a != CapturedInst::kPlain || kind_b != CapturedInst::kPlain) {
      if (label_op < 0 || kind_a != CapturedInst::kSymbolRef || kind_b != CapturedInst::kSymbolRef)
        return fail(where + ": an expression other than the label");
      t.subst.push_back({McSubst::Kind::label, static_cast<uint8_t>(label_op), static_cast<uint16_t>(p)});
      label_found = true; // the operand is already a placeholder immediate (CaptureStreamer)
      continue;
    }
    if (a.isReg() && b.isReg()) {
      if (a.getReg() == b.getReg()) continue;
      bool ok = false;
      for (size_t s = 0; s < probes.sources.size() && !ok; ++s) {
        const Source& src = probes.sources[s];
        if (!src.is_reg) continue;
        const llvm::MCRegister ra = regs.get(src.ra), rb = regs.get(src.rb);
        if (ra && rb && ra == a.getReg() && rb == b.getReg()) {
          t.subst.push_back({McSubst::Kind::reg, src.id, static_cast<uint16_t>(p)});
          found[s] = ok = true;
        }
      }
      if (!ok) return fail(where + ": a register that differs between the probes but is no operand's");
    } else if (a.isImm() && b.isImm()) {
      if (a.getImm() == b.getImm()) continue;
      bool ok = false;
      for (size_t s = 0; s < probes.sources.size() && !ok; ++s) {
        const Source& src = probes.sources[s];
        if (src.is_reg) continue;
        auto lo32 = [](int64_t v) { return static_cast<int64_t>(static_cast<uint32_t>(v)); };
        McSubst::Kind kind;
        if (a.getImm() == src.a && b.getImm() == src.b) kind = McSubst::Kind::imm;
        else if (a.getImm() == lo32(src.a) && b.getImm() == lo32(src.b)) kind = McSubst::Kind::imm_lo32;
        else continue;
        t.subst.push_back({kind, src.id, static_cast<uint16_t>(p)});
        found[s] = ok = true;
      }
      if (!ok) return fail(where + ": an immediate that differs between the probes but is no operand's value");
    } else if (a.isSFPImm() && b.isSFPImm() && a.getSFPImm() == b.getSFPImm()) {
    } else if (a.isDFPImm() && b.isDFPImm() && a.getDFPImm() == b.getDFPImm()) {
    } else {
      return fail(where + ": operand kinds differ between the probes or are not supported");
    }
  }
  for (size_t s = 0; s < probes.sources.size(); ++s)
    if (!found[s]) {
      const uint8_t id = probes.sources[s].id;
      return fail(id >= McSubst::kOffset ? std::string("an offset modifier is not an MCInst operand")
                                         : "operand " + std::to_string(id) + " is not an MCInst operand");
    }
  if (label_op >= 0 && !label_found) return fail("the label is not an MCInst operand");
  t.ok = true;
}

// An MCStreamer that keeps the instructions it is given, by source line, and nothing else. The probes' MCContext
// dies when parsing ends, and every expression operand points into it, so each is replaced here, while the
// context lives, by a placeholder immediate, with its kind recorded (CapturedInst). Nothing captured refers
// into the context afterwards (a template that kept such a pointer read freed memory: issue 21).
class CaptureStreamer final : public llvm::MCStreamer {
public:
  CaptureStreamer(llvm::MCContext& ctx, const llvm::SourceMgr& sm) : llvm::MCStreamer(ctx), sm_(sm) {}
  std::map<unsigned, CapturedInst> by_line;

  void emitInstruction(const llvm::MCInst& inst, const llvm::MCSubtargetInfo&) override {
    CapturedInst c;
    c.inst = inst;
    c.inst.setLoc(llvm::SMLoc());
    c.operand_kind.assign(inst.getNumOperands(), CapturedInst::kPlain);
    for (unsigned p = 0; p < inst.getNumOperands(); ++p) {
      const llvm::MCOperand& op = inst.getOperand(p);
      if (op.isExpr()) {
        c.operand_kind[p] = op.getExpr()->getKind() == llvm::MCExpr::SymbolRef ? CapturedInst::kSymbolRef
                                                                                : CapturedInst::kOtherExpr;
      } else if (op.isInst()) {
        c.operand_kind[p] = CapturedInst::kOtherExpr; // a nested MCInst also lives in the context
      } else {
        continue;
      }
      c.inst.getOperand(p) = llvm::MCOperand::createImm(0);
    }
    by_line[sm_.FindLineNumber(inst.getLoc())] = std::move(c);
  }
  bool emitSymbolAttribute(llvm::MCSymbol*, llvm::MCSymbolAttr) override { return true; }
  void emitCommonSymbol(llvm::MCSymbol*, uint64_t, llvm::Align) override {}
  void emitZerofill(llvm::MCSection*, llvm::MCSymbol*, uint64_t, llvm::Align, llvm::SMLoc) override {}

private:
  const llvm::SourceMgr& sm_;
};

struct ParseErrors {
  std::map<unsigned, std::string> by_line;
  static void on_diag(const llvm::SMDiagnostic& d, void* self) {
    try {
      if (d.getKind() != llvm::SourceMgr::DK_Error) return;
      auto& m = static_cast<ParseErrors*>(self)->by_line;
      m.emplace(static_cast<unsigned>(std::max(d.getLineNo(), 0)), d.getMessage().str());
    } catch (...) {
    }
  }
};

// Parses the probe lines with the target's parser; the MCInst of each line that parsed.
void parse_probes(const McTarget& mt, const std::string& text, std::map<unsigned, CapturedInst>& insts,
                  ParseErrors& errors) {
  llvm::SourceMgr sm;
  sm.setDiagHandler(&ParseErrors::on_diag, &errors);
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "<probes>"), llvm::SMLoc());
  llvm::MCTargetOptions options;
  llvm::MCContext ctx(mt.triple, mt.mai.get(), mt.mri.get(), mt.sti.get(), &sm, &options);
  ctx.setDiagnosticHandler([&errors](const llvm::SMDiagnostic& d, bool, const llvm::SourceMgr&,
                                     std::vector<const llvm::MDNode*>&) { ParseErrors::on_diag(d, &errors); });
  std::unique_ptr<llvm::MCObjectFileInfo> mofi(mt.target->createMCObjectFileInfo(ctx, /*PIC=*/false));
  ctx.setObjectFileInfo(mofi.get());
  CaptureStreamer streamer(ctx, sm);
  mt.target->createNullTargetStreamer(streamer); // owned by the streamer; the AMDGPU parser expects one
  std::unique_ptr<llvm::MCAsmParser> parser(llvm::createMCAsmParser(sm, ctx, streamer, *mt.mai));
  std::unique_ptr<llvm::MCTargetAsmParser> tp(mt.target->createMCAsmParser(*mt.sti, *parser, *mt.mii, options));
  if (!tp) return;
  parser->setTargetParser(*tp);
  parser->Run(/*NoInitialTextSection=*/false, /*NoFinalize=*/true);
  insts = std::move(streamer.by_line);
}

} // namespace

struct McTemplates::Impl {
  mutable std::shared_mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<McTemplate>> map;
};

McTemplates::McTemplates(const McTarget& target)
    : target_(target), regs_(*target.mri), impl_(std::make_unique<Impl>()) {}
McTemplates::~McTemplates() = default;

bool McTemplates::shape_key(const Instruction& inst, std::string& key, std::string* why) {
  key.clear();
  KeyWriter w{key};
  const Form& f = inst.form();
  const auto& ops = inst.operands();
  w.u64(reinterpret_cast<uintptr_t>(&f));
  w.u8(static_cast<uint8_t>(inst.target()));
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operand& op = ops[i];
    w.u8(static_cast<uint8_t>(op.kind));
    switch (op.kind) {
    case Operand::Kind::reg: {
      w.u8(static_cast<uint8_t>(op.reg.file));
      w.u8(op.reg.count);
      if (op.reg.file == RegFile::special) {
        w.u16(op.reg.index);
        break;
      }
      bool overlap = false;
      w.u8(reg_equal_to(ops, i, &overlap));
      if (overlap) {
        if (why) *why = "register operands overlap without being equal";
        return false;
      }
      break;
    }
    case Operand::Kind::imm: {
      const ImmClass c = imm_class(f, i, op.imm);
      w.u8(c);
      if (c == kExact) w.u64(static_cast<uint64_t>(op.imm));
      else w.u8(imm_equal_to(inst, i, c));
      break;
    }
    case Operand::Kind::fimm: {
      uint64_t bits;
      std::memcpy(&bits, &op.fimm, 8);
      w.u64(bits);
      break;
    }
    case Operand::Kind::label:
    case Operand::Kind::off: break;
    }
  }
  const Modifiers& m = inst.modifiers();
  const OffsetClass oc = offset_class(f, m.offset);
  w.u8(oc);
  if (oc == kOffExact) w.u64(static_cast<uint64_t>(static_cast<int64_t>(*m.offset)));
  w.u8(offset01_class(m.offset0));
  w.u8(offset01_class(m.offset1));
  w.u8(m.swizzle.has_value());
  w.u16(m.swizzle.value_or(0));
  w.u8(static_cast<uint8_t>(m.glc | m.slc << 1 | m.sc0 << 2 | m.sc1 << 3 | m.nt << 4 | m.offen << 5 |
                            m.idxen << 6 | m.bound_ctrl << 7));
  w.u8(static_cast<uint8_t>(m.op_sel.size()));
  for (auto b : m.op_sel) w.u8(b);
  w.u8(static_cast<uint8_t>(m.op_sel_hi.size()));
  for (auto b : m.op_sel_hi) w.u8(b);
  w.u8(m.dpp.has_value());
  if (m.dpp) {
    w.u8(static_cast<uint8_t>(m.dpp->kind));
    w.u8(m.dpp->amount);
    for (auto q : m.dpp->quad) w.u8(q);
  }
  w.u8(m.row_mask);
  w.u8(m.bank_mask);
  w.u8(m.cbsz);
  w.u8(m.abid);
  w.u8(m.blgp);
  w.u8(m.vmcnt.value_or(0xff));
  w.u8(m.expcnt.value_or(0xff));
  w.u8(m.lgkmcnt.value_or(0xff));
  return true;
}

McTemplates::Reader::Reader(const McTemplates& t) : t_(t) { t_.impl_->mutex.lock_shared(); }
McTemplates::Reader::~Reader() { t_.impl_->mutex.unlock_shared(); }

const McTemplate* McTemplates::Reader::find(const std::string& key) const {
  auto it = t_.impl_->map.find(key);
  return it == t_.impl_->map.end() ? nullptr : it->second.get();
}

size_t McTemplates::size() const {
  std::shared_lock lock(impl_->mutex);
  return impl_->map.size();
}

size_t McTemplates::learn(const std::vector<const Instruction*>& insts, const std::vector<std::string>& keys) {
  struct Pending {
    const Instruction* inst;
    const std::string* key;
    Probes probes;
    unsigned line_a = 0, line_b = 0;
    std::unique_ptr<McTemplate> t = std::make_unique<McTemplate>();
  };
  std::vector<Pending> pending;
  {
    std::set<std::string_view> seen;
    std::shared_lock lock(impl_->mutex);
    for (size_t i = 0; i < insts.size(); ++i)
      if (!impl_->map.count(keys[i]) && seen.insert(keys[i]).second) pending.push_back({insts[i], &keys[i], {}});
  }
  if (pending.empty()) return 0;
  std::string text;
  unsigned line = 1;
  for (auto& p : pending) {
    std::string why;
    if (!make_probes(*p.inst, p.probes, &why)) {
      p.t->why = why;
      continue;
    }
    text += p.probes.line_a + "\n" + p.probes.line_b + "\n";
    p.line_a = line++;
    p.line_b = line++;
  }
  std::map<unsigned, CapturedInst> parsed;
  ParseErrors errors;
  if (!text.empty()) parse_probes(target_, text, parsed, errors);
  for (auto& p : pending) {
    if (!p.line_a) continue;
    auto a = parsed.find(p.line_a), b = parsed.find(p.line_b);
    if (a == parsed.end() || b == parsed.end()) {
      unsigned bad = a == parsed.end() ? p.line_a : p.line_b;
      auto e = errors.by_line.find(bad);
      p.t->why = "the probe does not parse: " + (e != errors.by_line.end() ? e->second : std::string("no instruction")) +
                 " (" + (bad == p.line_a ? p.probes.line_a : p.probes.line_b) + ")";
      continue;
    }
    match(*p.inst, p.probes, a->second, b->second, regs_, *p.t);
  }
  size_t added = 0;
  std::unique_lock lock(impl_->mutex);
  for (auto& p : pending)
    if (impl_->map.try_emplace(*p.key, std::move(p.t)).second) ++added;
  g_template_count += added;
  return added;
}

McTemplates& mc_templates(const ResolvedTarget& target, const McTarget& objects) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<McTemplates>> all;
  const std::string key = target.isa + '\n' + target.features;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = all[key];
  if (!slot) slot = std::make_unique<McTemplates>(objects);
  return *slot;
}

size_t mc_template_count() { return g_template_count.load(); }

} // namespace isatune::toolchain::detail

// cdna::Kernel -> code object, instructions as MCInsts (see kernel_assembler.h).
//
// The kernel is printed without its body (cdna::print of a copy whose register counts already cover the body),
// and the body is replaced by `.isatune_body` directives: each one makes the handler below emit the next run of
// labels and instructions straight into LLVM's object streamer, from the learned templates. An instruction whose
// shape has no usable template is printed as a text line between two runs, so the parser assembles it in place.
// Everything else (sections, symbol, padding, descriptor, metadata) goes through the parser as in the text path,
// so the object has the same bytes.
#include "isatune/toolchain/kernel_assembler.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCAsmParserExtension.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCStreamer.h>

#include "internal.h"
#include "isatune/cdna/printer.h"
#include "isatune/codeobj/reader.h"
#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"
#include "llvm_mc_internal.h"
#include "mc_instruction_templates.h"

namespace isatune::toolchain {
namespace {

using cdna::Instruction;
using cdna::Kernel;
using detail::McSubst;
using detail::McTemplate;

constexpr const char* kDirective = ".isatune_body";

// What the fast path does with each statement of the body: the template of an instruction (null: text path).
struct Plan {
  std::vector<const McTemplate*> templates;       // by statement; null for labels and fallbacks
  std::vector<bool> fallback;                      // by statement
  std::vector<std::pair<size_t, size_t>> segments; // statement ranges [begin, end) emitted by one directive
};

int64_t source_value(const Instruction& inst, uint8_t source) {
  const cdna::Modifiers& m = inst.modifiers();
  switch (source) {
  case McSubst::kOffset: return m.offset.value_or(0);
  case McSubst::kOffset0: return m.offset0.value_or(0);
  case McSubst::kOffset1: return m.offset1.value_or(0);
  default: return inst.operands()[source].imm;
  }
}

// Every register the template substitutes exists in LLVM (it may not for a range LLVM has no class for).
bool registers_known(const Instruction& inst, const McTemplate& t, const detail::McRegisterMap& regs) {
  for (const auto& s : t.subst)
    if (s.kind == McSubst::Kind::reg && !regs.get(inst.operands()[s.source].reg)) return false;
  return true;
}

Plan make_plan(const Kernel& kernel, detail::McTemplates& templates, KernelAssembleStats& stats) {
  const size_t n = kernel.body.size();
  Plan plan;
  plan.templates.assign(n, nullptr);
  plan.fallback.assign(n, false);
  std::vector<std::string> why(n);
  // Instructions whose shape is not learned yet, with their keys.
  std::vector<size_t> missing;
  std::vector<const Instruction*> missing_insts;
  std::vector<std::string> missing_keys;
  std::string key;
  {
    detail::McTemplates::Reader reader(templates);
    for (size_t i = 0; i < n; ++i) {
      const auto* inst = std::get_if<Instruction>(&kernel.body[i]);
      if (!inst) continue;
      ++stats.instructions;
      if (!detail::McTemplates::shape_key(*inst, key, &why[i])) {
        plan.fallback[i] = true;
        continue;
      }
      plan.templates[i] = reader.find(key);
      if (!plan.templates[i]) {
        missing.push_back(i);
        missing_insts.push_back(inst);
        missing_keys.push_back(key);
      }
    }
  }
  if (!missing.empty()) {
    stats.templates_learned += templates.learn(missing_insts, missing_keys);
    detail::McTemplates::Reader reader(templates);
    for (size_t m = 0; m < missing.size(); ++m) plan.templates[missing[m]] = reader.find(missing_keys[m]);
  }
  std::set<std::string> reasons;
  for (size_t i = 0; i < n; ++i) {
    const auto* inst = std::get_if<Instruction>(&kernel.body[i]);
    if (!inst) continue;
    const McTemplate* t = plan.templates[i];
    if (!plan.fallback[i]) { // else shape_key said why
      if (!t) why[i] = "no template";
      else if (!t->ok) why[i] = t->why;
      else if (!registers_known(*inst, *t, templates.registers())) why[i] = "a register LLVM has no class for";
    }
    if (plan.fallback[i] || !why[i].empty()) {
      plan.templates[i] = nullptr;
      plan.fallback[i] = true;
      ++stats.fallback;
      reasons.insert(std::string(inst->form().name) + ": " + why[i]);
    } else {
      ++stats.fast;
    }
  }
  stats.fallback_forms.insert(stats.fallback_forms.end(), reasons.begin(), reasons.end());
  return plan;
}

// The kernel's text with `.isatune_body` directives in place of the instructions the fast path emits; fills
// plan.segments. Throws InputError like cdna::print.
std::string kernel_text(const Kernel& kernel, Plan& plan) {
  Kernel shell = kernel;
  shell.update_register_counts(); // from the body, which the printed shell no longer has
  shell.validate();
  shell.body.clear();
  std::string text = cdna::print(shell);
  const std::string end_label = "\n.L" + kernel.name + "_end:\n";
  const size_t at = text.find(end_label);
  if (at == std::string::npos) throw Error("kernel_assembler: the printed kernel has no end label " + end_label);
  std::string body;
  body.reserve(64);
  size_t begin = 0;
  const size_t n = kernel.body.size();
  for (size_t i = 0; i <= n; ++i) {
    if (i < n && !plan.fallback[i]) continue;
    if (i > begin) {
      plan.segments.emplace_back(begin, i);
      body += kDirective;
      body += '\n';
    }
    if (i < n) {
      body += "  " + cdna::print_instruction(std::get<Instruction>(kernel.body[i]), kernel.label_names) + "\n";
      begin = i + 1;
    }
  }
  text.insert(at + 1, body);
  return text;
}

// The `.isatune_body` directive: emits the next segment of the body.
class BodyEmitter final : public llvm::MCAsmParserExtension {
public:
  BodyEmitter(const Kernel& kernel, const Plan& plan, const detail::McRegisterMap& regs)
      : kernel_(kernel), plan_(plan), regs_(regs), labels_(kernel.label_names.size(), nullptr) {}

  void Initialize(llvm::MCAsmParser& parser) override {
    llvm::MCAsmParserExtension::Initialize(parser);
    parser.addDirectiveHandler(kDirective, std::make_pair(this, &BodyEmitter::handle));
  }

private:
  static bool handle(llvm::MCAsmParserExtension* self, llvm::StringRef, llvm::SMLoc loc) {
    return static_cast<BodyEmitter*>(self)->emit_segment(loc);
  }

  llvm::MCSymbol* label(uint32_t id) {
    if (!labels_[id]) labels_[id] = getContext().getOrCreateSymbol(".L" + kernel_.label_names[id]);
    return labels_[id];
  }

  bool emit_segment(llvm::SMLoc loc) {
    if (getParser().parseEOL()) return true;
    if (next_ >= plan_.segments.size()) return Error(loc, "unexpected .isatune_body");
    const auto [begin, end] = plan_.segments[next_++];
    llvm::MCStreamer& out = getStreamer();
    llvm::MCContext& ctx = getContext();
    const llvm::MCSubtargetInfo& sti = getParser().getTargetParser().getSTI();
    for (size_t i = begin; i < end; ++i) {
      const cdna::Statement& st = kernel_.body[i];
      if (const auto* l = std::get_if<cdna::LabelDef>(&st)) {
        out.emitLabel(label(l->label.id), loc);
        continue;
      }
      const Instruction& inst = std::get<Instruction>(st);
      const McTemplate& t = *plan_.templates[i];
      llvm::MCInst mi = t.inst;
      for (const McSubst& s : t.subst) {
        llvm::MCOperand& op = mi.getOperand(s.operand);
        switch (s.kind) {
        case McSubst::Kind::reg: op.setReg(regs_.get(inst.operands()[s.source].reg)); break;
        case McSubst::Kind::imm: op.setImm(source_value(inst, s.source)); break;
        case McSubst::Kind::imm_lo32:
          op.setImm(static_cast<int64_t>(static_cast<uint32_t>(source_value(inst, s.source))));
          break;
        case McSubst::Kind::label:
          op = llvm::MCOperand::createExpr(
              llvm::MCSymbolRefExpr::create(label(inst.operands()[s.source].label.id), ctx));
          break;
        }
      }
      mi.setLoc(loc);
      out.emitInstruction(mi, sti);
    }
    return false;
  }

  const Kernel& kernel_;
  const Plan& plan_;
  const detail::McRegisterMap& regs_;
  std::vector<llvm::MCSymbol*> labels_;
  size_t next_ = 0;
};

AssembleOptions kernel_options(const Kernel& kernel, const AssembleOptions& options) {
  AssembleOptions out = options;
  if (out.target.empty()) out.target = kernel.target.str();
  if (out.file_name == AssembleOptions{}.file_name) out.file_name = kernel.name + ".s";
  return out;
}

} // namespace

std::vector<uint8_t> assemble_kernel_object(const Kernel& kernel, const AssembleOptions& options,
                                            std::vector<Diagnostic>* warnings, KernelAssembleStats* stats) {
  if (!kernel.target.info) throw InputError("kernel '" + kernel.name + "' has no target");
  const AssembleOptions opts = kernel_options(kernel, options);
  detail::init_llvm_amdgpu();
  const detail::ResolvedTarget target = detail::resolve_target(opts.target);
  const detail::McTarget& objects = detail::mc_target(target, opts.file_name);
  detail::McTemplates& templates = detail::mc_templates(target, objects);

  KernelAssembleStats local;
  Plan plan = make_plan(kernel, templates, local);
  const std::string text = kernel_text(kernel, plan);
  BodyEmitter emitter(kernel, plan, templates.registers());
  std::vector<uint8_t> object =
      detail::mc_assemble(text, opts, warnings, [&](llvm::MCAsmParser& parser) { emitter.Initialize(parser); });
  if (stats) *stats = std::move(local);
  return object;
}

Assembled assemble_kernel(const Kernel& kernel, const AssembleOptions& options, KernelAssembleStats* stats) {
  const AssembleOptions opts = kernel_options(kernel, options);
  Assembled out;
  std::vector<uint8_t> object = assemble_kernel_object(kernel, opts, &out.warnings, stats);
  std::vector<uint8_t> image = lld_link_shared({object});
  out.code = codeobj::read_code_object(image, opts.file_name);
  return out;
}

size_t kernel_template_count() { return detail::mc_template_count(); }

} // namespace isatune::toolchain

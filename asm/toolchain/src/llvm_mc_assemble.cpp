// Assembly text -> relocatable ELF object in memory, through LLVM MC (what `llvm-mc -filetype=obj` does).
// Every call builds its own SourceMgr, MCContext, streamer and parser, so calls may run on several threads. The
// target description objects that LLVM only ever reads (MCRegisterInfo, MCAsmInfo, MCInstrInfo, MCSubtargetInfo)
// are built once per (ISA, features) and shared: LLVM's MC layer takes them by const reference or pointer, and
// the AMDGPU parser changes subtarget features only on a copy it makes in the MCContext (copySTI).
// Callers may add directives to the parser before it runs (detail::mc_assemble): the kernel fast path does.
// Diagnostics are collected through handlers on the SourceMgr (parser errors) and the MCContext (errors found
// while laying out and writing the object); nothing is printed.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/ADT/SmallVector.h>
#include <llvm/MC/MCAsmBackend.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCCodeEmitter.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCObjectFileInfo.h>
#include <llvm/MC/MCObjectWriter.h>
#include <llvm/MC/MCParser/MCAsmParser.h>
#include <llvm/MC/MCParser/MCTargetAsmParser.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCParser/MCAsmParserExtension.h>
#include <llvm/MC/MCStreamer.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCSymbolELF.h>
#include <llvm/MC/MCExpr.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/VirtualFileSystem.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include "internal.h"
#include "llvm_mc_internal.h"
#include "llvm_compat.h"
#include "isatune/error.h"
#include "isatune/toolchain/llvm_mc.h"

namespace isatune::toolchain {
namespace {

constexpr const char* kTriple = "amdgcn-amd-amdhsa";

// Collects diagnostics; called from inside LLVM, so it must not throw.
struct DiagCollector {
  std::string file;
  std::vector<Diagnostic> diags;

  void add(const llvm::SMDiagnostic& d) noexcept {
    try {
      Diagnostic out;
      switch (d.getKind()) {
      case llvm::SourceMgr::DK_Error: out.severity = Diagnostic::Severity::error; break;
      case llvm::SourceMgr::DK_Warning: out.severity = Diagnostic::Severity::warning; break;
      default: out.severity = Diagnostic::Severity::note; break;
      }
      // A diagnostic in an .include file names that file (LLVM names each buffer by its path).
      out.file = d.getFilename().empty() ? file : d.getFilename().str();
      out.line = d.getLineNo() > 0 ? d.getLineNo() : 0;
      out.column = d.getLineNo() > 0 && d.getColumnNo() >= 0 ? d.getColumnNo() + 1 : 0;
      out.message = d.getMessage().str();
      out.source_line = d.getLineContents().str();
      diags.push_back(std::move(out));
    } catch (...) {
      // Out of memory while recording a message: drop it rather than unwind through LLVM.
    }
  }
  static void on_source_mgr(const llvm::SMDiagnostic& d, void* self) {
    static_cast<DiagCollector*>(self)->add(d);
  }
  bool has_error() const {
    for (const auto& d : diags)
      if (d.severity == Diagnostic::Severity::error) return true;
    return false;
  }
};

// Built on first use, kept for the life of the process (one entry per target a program assembles for).
// Returns nullptr when LLVM cannot create them; the caller reports that.
const detail::McTarget* target_objects(const llvm::Target* tgt, const llvm::Triple& triple,
                                       const detail::ResolvedTarget& target) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<detail::McTarget>, std::less<>> cache;
  const std::string key = target.isa + '\n' + target.features;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  auto objs = std::make_unique<detail::McTarget>();
  objs->target = tgt;
  objs->triple = triple;
  llvm::MCTargetOptions mc_options;
  objs->mri.reset(tgt->createMCRegInfo(llvm_compat::triple_arg(triple)));
  if (objs->mri) objs->mai.reset(tgt->createMCAsmInfo(*objs->mri, llvm_compat::triple_arg(triple), mc_options));
  objs->sti.reset(tgt->createMCSubtargetInfo(llvm_compat::triple_arg(triple), target.isa, target.features));
  objs->mii.reset(tgt->createMCInstrInfo());
  if (!objs->mri || !objs->mai || !objs->sti || !objs->mii) return nullptr;
  return cache.emplace(key, std::move(objs)).first->second.get();
}

[[noreturn]] void fail(const std::string& file, const std::string& message) {
  Diagnostic d;
  d.file = file;
  d.message = message;
  throw AssemblyError({d});
}

} // namespace

const detail::McTarget& detail::mc_target(const ResolvedTarget& target, const std::string& file) {
  static const llvm::Triple triple(kTriple);
  static const llvm::Target* const tgt = [] {
    std::string err;
    return llvm::TargetRegistry::lookupTarget(llvm_compat::triple_arg(triple), err);
  }();
  if (!tgt) {
    std::string err;
    llvm::TargetRegistry::lookupTarget(llvm_compat::triple_arg(triple), err);
    throw UnavailableError("LLVM " + llvm_version() + " has no AMDGPU target: " + err);
  }
  const McTarget* objs = target_objects(tgt, triple, target);
  if (!objs) fail(file, "cannot create the LLVM MC objects for " + target.isa);
  return *objs;
}

std::vector<uint8_t> llvm_assemble_object(std::string_view text, const AssembleOptions& options,
                                          std::vector<Diagnostic>* warnings) {
  return detail::mc_assemble(text, options, warnings, [](llvm::MCAsmParser&) {});
}

std::vector<uint8_t> detail::mc_assemble(std::string_view text, const AssembleOptions& options,
                                         std::vector<Diagnostic>* warnings, ParserHook hook) {
  detail::init_llvm_amdgpu();
  const detail::ResolvedTarget target = detail::resolve_target(options.target);
  const McTarget& objs = mc_target(target, options.file_name);
  const llvm::Target* tgt = objs.target;
  const llvm::Triple& triple = objs.triple;
  const llvm::MCRegisterInfo& mri = *objs.mri;
  const llvm::MCAsmInfo& mai = *objs.mai;
  const llvm::MCSubtargetInfo& sti = *objs.sti;
  const llvm::MCInstrInfo& mii = *objs.mii;

  DiagCollector collector;
  collector.file = options.file_name;

  llvm::SourceMgr src_mgr;
  src_mgr.setDiagHandler(&DiagCollector::on_source_mgr, &collector);
  const llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> files = make_file_guard();
#if ISATUNE_LLVM_MAJOR >= 22
  src_mgr.setVirtualFileSystem(files);
#endif
  const std::string buffer = guarded_llvm_buffer(text, mai, options.file_name);
  src_mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(buffer, options.file_name), llvm::SMLoc());

  llvm::MCTargetOptions mc_options;
  llvm::MCContext ctx(triple, &mai, &mri, &sti, &src_mgr, &mc_options);
  ctx.setDiagnosticHandler([&collector](const llvm::SMDiagnostic& d, bool, const llvm::SourceMgr&,
                                        std::vector<const llvm::MDNode*>&) { collector.add(d); });
  std::unique_ptr<llvm::MCObjectFileInfo> mofi(tgt->createMCObjectFileInfo(ctx, /*PIC=*/false));
  ctx.setObjectFileInfo(mofi.get());

  constexpr uint64_t kMaxObjectBytes = uint64_t(256) << 20;
  BoundedObjectStream os(kMaxObjectBytes);
  llvm::MCCodeEmitter* emitter = tgt->createMCCodeEmitter(mii, ctx);
  llvm::MCAsmBackend* backend = tgt->createMCAsmBackend(sti, mri, mc_options);
  if (!emitter || !backend) {
    delete emitter;
    delete backend;
    fail(options.file_name, "cannot create the LLVM MC code emitter or backend for " + target.isa);
  }
  std::unique_ptr<llvm::MCStreamer> streamer(tgt->createMCObjectStreamer(
      triple, ctx, std::unique_ptr<llvm::MCAsmBackend>(backend), backend->createObjectWriter(os),
      std::unique_ptr<llvm::MCCodeEmitter>(emitter), sti));

  std::unique_ptr<llvm::MCAsmParser> parser(llvm::createMCAsmParser(src_mgr, ctx, *streamer, mai));
  std::unique_ptr<llvm::MCTargetAsmParser> target_parser(
      tgt->createMCAsmParser(sti, *parser, mii, mc_options));
  if (!target_parser) fail(options.file_name, "LLVM " + llvm_version() + " has no AMDGPU assembly parser");
  parser->setTargetParser(*target_parser);
  const std::unique_ptr<llvm::MCAsmParserExtension> fill_guard = make_fill_guard();
  fill_guard->Initialize(*parser);
  hook(*parser);

  // Parsed without finishing, so what LLVM's object writer would abort the process on (report_fatal_error) is
  // refused here first; then finished as AsmParser::Run would.
  bool failed = parser->Run(/*NoInitialTextSection=*/false, /*NoFinalize=*/true);
  if (!failed && !ctx.hadError() && !collector.has_error()) {
    check_size_expressions(ctx, src_mgr, options.file_name);
    check_symbol_assignments(ctx, src_mgr, options.file_name);
    check_section_alignment(*streamer, options.file_name);
    check_code_alignment(*streamer, options.file_name);
    check_org_offsets(*streamer, src_mgr, options.file_name);
    if (auto* ts = streamer->getTargetStreamer()) ts->emitConstantPools();
    streamer->finish();
  }
  if (failed || ctx.hadError() || collector.has_error()) {
    if (!collector.has_error()) fail(options.file_name, "LLVM MC failed without a message");
    explain_refused_files(*files, collector.diags);
    throw AssemblyError(std::move(collector.diags));
  }
  if (warnings)
    for (auto& d : collector.diags) warnings->push_back(std::move(d));
  if (os.overflowed())
    fail(options.file_name, "the object would be " + std::to_string(os.size()) +
                                " bytes: isatune refuses objects past 256 MiB (a kernel's is a few KiB to MiB)");
  return os.take();
}

} // namespace isatune::toolchain

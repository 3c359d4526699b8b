// compile_ptx: backend choice, the routing rule for whole-program PTX, the log parsed, the cubin read back.
#include <regex>

#include "isatune/codeobj/cubin.h"
#include "isatune/error.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "ptx_internal.h"

namespace isatune::toolchain {

namespace {

const std::vector<std::string>& known_targets() {
  static const std::vector<std::string> t{"sm_80", "sm_90", "sm_90a"};
  return t;
}

void check_target(const std::string& target) {
  for (const auto& t : known_targets())
    if (t == target) return;
  throw InputError("unknown PTX target '" + target + "' (known: sm_80, sm_90, sm_90a)");
}

} // namespace

const char* ptx_backend_name(PtxBackend b) {
  switch (b) {
  case PtxBackend::automatic: return "auto";
  case PtxBackend::ptxas: return "ptxas";
  case PtxBackend::nvjitlink: return "nvjitlink";
  }
  return "auto";
}

PtxBackend parse_ptx_backend(std::string_view s) {
  if (s == "auto") return PtxBackend::automatic;
  if (s == "ptxas") return PtxBackend::ptxas;
  if (s == "nvjitlink") return PtxBackend::nvjitlink;
  throw InputError("unknown PTX backend '" + std::string(s) + "' (auto, ptxas, nvjitlink)");
}

bool ptx_needs_whole_program(std::string_view ptx) {
  // Instruction or directive, not inside a // comment.
  static const std::regex re(R"((^|\n)[^/\n]*(setmaxnreg\.|\.maxnreg\b))");
  return std::regex_search(ptx.begin(), ptx.end(), re);
}

std::string ptx_backend_unavailable_reason(PtxBackend b) {
  switch (b) {
  case PtxBackend::ptxas:
    return find_ptxas().empty() ? "ptxas not found (set ISATUNE_PTXAS or CUDA_HOME, or install the CUDA toolkit)" : "";
  case PtxBackend::nvjitlink: return detail::nvjitlink_load_error().empty() ? "" : "nvJitLink: " + detail::nvjitlink_load_error();
  case PtxBackend::automatic:
    if (find_ptxas().empty() && !nvjitlink_available())
      return "neither ptxas nor nvJitLink found (install the CUDA toolkit or set CUDA_HOME)";
    return "";
  }
  return "";
}

std::string ptx_backend_version(PtxBackend b) {
  if (b == PtxBackend::ptxas) return detail::ptxas_version();
  if (b == PtxBackend::nvjitlink) return detail::nvjitlink_version();
  return "";
}

std::vector<PtxTargetInfo> ptx_targets() {
  std::vector<PtxTargetInfo> out;
  const bool have_nvjitlink = nvjitlink_available(), have_ptxas = !find_ptxas().empty();
  for (const auto& t : known_targets()) {
    PtxTargetInfo info;
    info.name = t;
    if (have_nvjitlink) info.backends.push_back(PtxBackend::nvjitlink);
    if (have_ptxas) info.backends.push_back(PtxBackend::ptxas);
    info.note = t == "sm_90a" ? "wgmma, setmaxnreg; kernels with setmaxnreg or .maxnreg go to ptxas"
              : t == "sm_90"  ? "clusters, TMA, mbarrier expect_tx; no wgmma"
                              : "mma.sync, cp.async, ldmatrix";
    out.push_back(info);
  }
  return out;
}

PtxCompiled compile_ptx(std::string_view ptx, const PtxCompileOptions& options) {
  check_target(options.target);
  const bool whole_program = ptx_needs_whole_program(ptx);
  PtxBackend backend = options.backend;
  if (backend == PtxBackend::automatic)
    backend = nvjitlink_available() && !whole_program ? PtxBackend::nvjitlink : PtxBackend::ptxas;
  if (backend == PtxBackend::nvjitlink && whole_program)
    throw InputError(options.file_name +
                     ": uses setmaxnreg or .maxnreg, which nvJitLink drops (it compiles PTX as relocatable code); "
                     "compile it with --backend ptxas");
  if (backend == PtxBackend::ptxas && find_ptxas().empty())
    throw UnavailableError("ptxas not found (set ISATUNE_PTXAS or CUDA_HOME, or install the CUDA toolkit)");

  detail::RawPtxCompile raw = backend == PtxBackend::ptxas
                                  ? detail::run_ptxas(ptx, options.target, options.opt_level, options.max_registers)
                                  : detail::run_nvjitlink(ptx, options.target, options.opt_level, options.max_registers);
  PtxCompiled out;
  out.backend = backend;
  out.log = raw.log;
  out.report = parse_ptx_log(raw.log, options.file_name);
  if (!raw.ok) {
    std::vector<Diagnostic> diags = out.report.errors;
    if (diags.empty()) diags.push_back({Diagnostic::Severity::error, options.file_name, 0, 0,
                                        "PTX compile failed: " + (raw.log.empty() ? std::string("no message") : raw.log), ""});
    // Attach the offending PTX line.
    for (auto& d : diags) {
      if (d.line <= 0) continue;
      size_t pos = 0;
      for (int l = 1; l < d.line && pos != std::string_view::npos; ++l) {
        pos = ptx.find('\n', pos);
        if (pos != std::string_view::npos) ++pos;
      }
      if (pos != std::string_view::npos && pos < ptx.size())
        d.source_line = std::string(ptx.substr(pos, ptx.find('\n', pos) - pos));
    }
    throw AssemblyError(std::move(diags));
  }
  out.code = codeobj::read_cubin(raw.cubin, options.file_name);
  out.code.isa = out.code.target_id = options.target; // the cubin's e_flags do not carry the "a"
  return out;
}

} // namespace isatune::toolchain

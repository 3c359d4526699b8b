// Parsing ptxas -v logs (the program's stderr and nvJitLink's logs) into structured data.
#include <regex>

#include "isatune/toolchain/ptx_report.h"

namespace isatune::toolchain {

const char* ptx_issue_kind_name(PtxIssueKind k) {
  switch (k) {
  case PtxIssueKind::wgmma_serialized: return "wgmma_serialized";
  case PtxIssueKind::wgmma_wait_injected: return "wgmma_wait_injected";
  case PtxIssueKind::setmaxnreg_ignored: return "setmaxnreg_ignored";
  case PtxIssueKind::register_spill: return "register_spill";
  case PtxIssueKind::stack_frame: return "stack_frame";
  case PtxIssueKind::other_code: return "other_code";
  }
  return "other_code";
}

const PtxKernelReport* PtxReport::find(std::string_view kernel) const {
  for (const auto& k : kernels)
    if (k.name == kernel) return &k;
  return nullptr;
}

bool PtxReport::has(PtxIssueKind k) const {
  for (const auto& i : issues)
    if (i.kind == k) return true;
  return false;
}

bool PtxReport::rejectable() const {
  for (const auto& i : issues)
    if (i.kind != PtxIssueKind::other_code) return true;
  return false;
}

namespace {

uint32_t number_before(const std::string& line, const std::string& what) {
  // "N <what>" anywhere in the line.
  std::smatch m;
  std::regex re("(\\d+) " + what);
  return std::regex_search(line, m, re) ? static_cast<uint32_t>(std::stoul(m[1])) : 0;
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

PtxIssueKind classify(const std::string& code, const std::string& message) {
  if (contains(message, "setmaxnreg") && contains(message, "ignored")) return PtxIssueKind::setmaxnreg_ignored;
  if (contains(message, "serialized")) return PtxIssueKind::wgmma_serialized;
  if (code == "C7517" || code == "C7519" || (contains(message, "injected") && contains(message, "warpgroup")))
    return PtxIssueKind::wgmma_wait_injected;
  if (code == "C7510" || code == "C7511" || code == "C7515") return PtxIssueKind::wgmma_serialized;
  if (code == "C7504" || code == "C7508") return PtxIssueKind::setmaxnreg_ignored;
  return PtxIssueKind::other_code;
}

} // namespace

PtxReport parse_ptx_log(std::string_view log, std::string_view file_name) {
  PtxReport r;
  // "ptxas <file>, line 6; error   : msg", "ptxas info    : msg", "info    : msg", "error   : msg".
  static const std::regex line_re(R"(^\s*(?:ptxas\s*)?(?:(.*?), line (\d+); )?(info|warning|error|fatal)\s*:\s?(.*)$)");
  static const std::regex code_re(R"(\((C\d{4})\))");
  static const std::regex kernel_re(R"((?:function|entry function|for|in) '([^']+)')");
  static const std::regex props_re(R"((?:Function properties for|Compiling entry function) '?([A-Za-z_$][\w$]*)'?)");
  PtxKernelReport* current = nullptr;
  auto kernel_named = [&](const std::string& name) -> PtxKernelReport* {
    for (auto& k : r.kernels)
      if (k.name == name) return &k;
    r.kernels.push_back(PtxKernelReport{name});
    return &r.kernels.back();
  };

  size_t pos = 0;
  while (pos <= log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    std::string line(log.substr(pos, end - pos));
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      if (end == log.size()) break;
      continue;
    }
    std::smatch m;
    if (std::regex_match(line, m, line_re)) {
      const std::string severity = m[3], message = m[4];
      const int src_line = m[2].matched ? std::stoi(m[2]) : 0;
      std::smatch pm;
      if (std::regex_search(message, pm, props_re)) {
        // Pointers into r.kernels are refreshed after every push_back through kernel_named.
        current = kernel_named(pm[1]);
      } else if (message.rfind("Used ", 0) == 0 || message.rfind("used ", 0) == 0) {
        if (current) {
          current->registers = number_before(message, "registers");
          current->barriers = number_before(message, "barriers");
          current->shared_bytes = number_before(message, "bytes smem");
          current->cmem0_bytes = number_before(message, "bytes cmem\\[0\\]");
          if (uint32_t lmem = number_before(message, "bytes lmem")) current->local_bytes = lmem;
          if (uint32_t stack = number_before(message, "stack")) current->stack_bytes = std::max(current->stack_bytes, stack);
        }
      }
      std::smatch cm;
      const bool coded = std::regex_search(message, cm, code_re);
      if (severity == "error" || severity == "fatal") {
        Diagnostic d{Diagnostic::Severity::error, std::string(file_name), src_line, 0, message, ""};
        r.errors.push_back(d);
      } else if (severity == "warning") {
        Diagnostic d{Diagnostic::Severity::warning, std::string(file_name), src_line, 0, message, ""};
        r.warnings.push_back(d);
      }
      if (coded) {
        PtxIssue issue;
        issue.code = cm[1];
        issue.message = message;
        std::smatch km;
        if (std::regex_search(message, km, kernel_re)) issue.kernel = km[1];
        issue.kind = classify(issue.code, message);
        r.issues.push_back(issue);
        if (severity == "info")
          r.warnings.push_back({Diagnostic::Severity::note, std::string(file_name), src_line, 0, message, ""});
      } else if (severity == "warning" && contains(message, "setmaxnreg") && contains(message, "ignored")) {
        r.issues.push_back({PtxIssueKind::setmaxnreg_ignored, "", "", message});
      }
      continue;
    }
    // "    272 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads" after "Function properties for k".
    if (current && contains(line, "bytes stack frame")) {
      current->stack_bytes = number_before(line, "bytes stack frame");
      current->spill_store_bytes = number_before(line, "bytes spill stores");
      current->spill_load_bytes = number_before(line, "bytes spill loads");
    }
  }
  for (const auto& k : r.kernels) {
    if (k.spill_store_bytes || k.spill_load_bytes)
      r.issues.push_back({PtxIssueKind::register_spill, "", k.name,
                          std::to_string(k.spill_store_bytes) + " bytes spill stores, " +
                              std::to_string(k.spill_load_bytes) + " bytes spill loads"});
    if (k.stack_bytes)
      r.issues.push_back({PtxIssueKind::stack_frame, "", k.name, std::to_string(k.stack_bytes) + " bytes stack frame"});
  }
  return r;
}

} // namespace isatune::toolchain

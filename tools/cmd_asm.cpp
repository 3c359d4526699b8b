// `isatune asm FILE.s|FILE.ptx`: AMD assembly -> .hsaco in process (LLVM MC + lld, or comgr);
// PTX -> .cubin (nvJitLink in process, or the ptxas program).
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "exit_codes.h"
#include "file_io.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "source_target.h"

namespace isatune::cli {

namespace {
struct AsmOptions {
  std::string input;
  std::string output;
  std::string target;
  std::string backend; // empty: llvm for AMD, auto for PTX
  bool json = false;
};

std::string default_output(const std::string& input, const std::string& extension) {
  auto slash = input.find_last_of('/');
  auto dot = input.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) return input.substr(0, dot) + extension;
  return input + extension;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void print_diagnostic(const toolchain::Diagnostic& d) {
  std::fprintf(stderr, "%s\n", d.str().c_str());
  if (!d.source_line.empty()) {
    std::fprintf(stderr, "%s\n", d.source_line.c_str());
    if (d.column > 0) {
      std::string caret;
      for (int i = 1; i < d.column && i <= static_cast<int>(d.source_line.size()); ++i)
        caret += d.source_line[i - 1] == '\t' ? '\t' : ' ';
      std::fprintf(stderr, "%s^\n", caret.c_str());
    }
  }
}

int print_assembly_error(const AsmOptions& opt, const toolchain::AssemblyError& e) {
  for (const auto& d : e.diagnostics()) print_diagnostic(d);
  std::fprintf(stderr, "isatune: %s: assembly failed (%zu diagnostic%s)\n", opt.input.c_str(), e.diagnostics().size(),
               e.diagnostics().size() == 1 ? "" : "s");
  return kExitInputError;
}

int run_ptx(const AsmOptions& opt, const std::string& source) {
  std::string target = opt.target;
  if (target.empty()) {
    auto declared = declared_ptx_target(source);
    if (!declared) throw InputError(opt.input + ": no --target given and the PTX has no .target directive");
    target = *declared;
  }
  toolchain::PtxCompileOptions options;
  options.target = target;
  options.file_name = opt.input;
  options.backend = toolchain::parse_ptx_backend(opt.backend.empty() ? "auto" : opt.backend);
  auto start = std::chrono::steady_clock::now();
  toolchain::PtxCompiled result;
  try {
    result = toolchain::compile_ptx(source, options);
  } catch (const toolchain::AssemblyError& e) {
    return print_assembly_error(opt, e);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& w : result.report.warnings) print_diagnostic(w);
  std::string output = opt.output.empty() ? default_output(opt.input, ".cubin") : opt.output;
  write_binary_file(output, result.code.bytes);

  if (opt.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : result.report.kernels)
      kernels.push_back({{"name", k.name},
                         {"registers", k.registers},
                         {"barriers", k.barriers},
                         {"stack_bytes", k.stack_bytes},
                         {"spill_store_bytes", k.spill_store_bytes},
                         {"spill_load_bytes", k.spill_load_bytes},
                         {"shared_bytes", k.shared_bytes},
                         {"local_bytes", k.local_bytes}});
    nlohmann::json issues = nlohmann::json::array();
    for (const auto& i : result.report.issues)
      issues.push_back({{"kind", toolchain::ptx_issue_kind_name(i.kind)},
                        {"code", i.code},
                        {"kernel", i.kernel},
                        {"message", i.message}});
    nlohmann::json j = {{"input", opt.input},
                        {"output", output},
                        {"target", result.code.target_id},
                        {"backend", toolchain::ptx_backend_name(result.backend)},
                        {"bytes", result.code.bytes.size()},
                        {"sha256", result.code.sha256},
                        {"kernels", kernels},
                        {"issues", issues},
                        {"rejectable", result.report.rejectable()},
                        {"milliseconds", ms},
                        {"warnings", result.report.warnings.size()}};
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::printf("%s: %zu bytes, %s, %zu kernel%s, %s backend, %.2f ms\n", output.c_str(), result.code.bytes.size(),
              result.code.target_id.c_str(), result.code.kernels.size(), result.code.kernels.size() == 1 ? "" : "s",
              toolchain::ptx_backend_name(result.backend), ms);
  for (const auto& k : result.report.kernels)
    std::printf("  %s: %u registers, %u bytes shared, %u bytes stack, spills %u/%u bytes store/load\n",
                k.name.c_str(), k.registers, k.shared_bytes, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes);
  for (const auto& i : result.report.issues)
    std::printf("  issue %s%s%s: %s\n", toolchain::ptx_issue_kind_name(i.kind), i.code.empty() ? "" : " ",
                i.code.c_str(), i.message.c_str());
  return kExitOk;
}

int run_asm(const AsmOptions& opt) {
  std::string source = read_text_file(opt.input);
  bool ptx = ends_with(opt.input, ".ptx") || opt.target.rfind("sm_", 0) == 0 || opt.backend == "ptxas" ||
             opt.backend == "nvjitlink";
  if (ptx) return run_ptx(opt, source);
  if (opt.backend == "auto") throw InputError("--backend auto is for PTX; AMD backends are llvm and comgr");
  std::string target = opt.target;
  if (target.empty()) {
    auto declared = declared_amdgcn_target(source);
    if (!declared)
      throw InputError(opt.input + ": no --target given and the file has no .amdgcn_target directive");
    target = *declared;
  }
  auto assembler = toolchain::make_assembler(opt.backend.empty() ? "llvm" : opt.backend);
  auto start = std::chrono::steady_clock::now();
  toolchain::Assembled result;
  try {
    result = assembler->assemble(source, {target, opt.input});
  } catch (const toolchain::AssemblyError& e) {
    return print_assembly_error(opt, e);
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (const auto& w : result.warnings) print_diagnostic(w);
  std::string output = opt.output.empty() ? default_output(opt.input, ".hsaco") : opt.output;
  write_binary_file(output, result.code.bytes);

  if (opt.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : result.code.kernels) kernels.push_back(k.name);
    nlohmann::json j = {{"input", opt.input},         {"output", output},
                        {"target", result.code.target_id}, {"backend", assembler->name()},
                        {"bytes", result.code.bytes.size()}, {"sha256", result.code.sha256},
                        {"kernels", kernels},           {"milliseconds", ms},
                        {"warnings", result.warnings.size()}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::string names;
    for (const auto& k : result.code.kernels) names += (names.empty() ? "" : ", ") + k.name;
    std::printf("%s: %zu bytes, %s, %zu kernel%s (%s), %s backend, %.2f ms\n", output.c_str(),
                result.code.bytes.size(), result.code.target_id.c_str(), result.code.kernels.size(),
                result.code.kernels.size() == 1 ? "" : "s", names.c_str(), assembler->name().c_str(), ms);
  }
  return kExitOk;
}
} // namespace

void add_asm_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<AsmOptions>();
  auto* cmd = app.add_subcommand("asm", "Assemble AMD assembly into a code object (.hsaco) or compile PTX into a "
                                        "cubin, in process where the backend allows");
  cmd->add_option("file", opt->input, "AMD assembly (.s) or PTX (.ptx)")->required();
  cmd->add_option("-o,--output", opt->output, "Output file (default: FILE with .hsaco, or .cubin for PTX)");
  cmd->add_option("-t,--target", opt->target,
                  "AMD target id or ISA (gfx942, amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-) or PTX target "
                  "(sm_80, sm_90, sm_90a); default: the file's .amdgcn_target or .target");
  cmd->add_option("-b,--backend", opt->backend,
                  "AMD: llvm (in process, default) or comgr. PTX: auto (default: nvjitlink in process unless "
                  "the PTX uses setmaxnreg/.maxnreg, then ptxas), nvjitlink or ptxas")
      ->check(CLI::IsMember({"llvm", "comgr", "auto", "nvjitlink", "ptxas"}));
  cmd->add_flag("--json", opt->json, "Print a JSON summary");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_asm(*opt); }); });
}

} // namespace isatune::cli

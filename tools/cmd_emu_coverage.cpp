// `isatune emu-coverage DIR_OR_FILE...`: decodes every AMD code object found (folders recursively: any
// regular file that starts with the ELF magic) and lists, per instruction, how many kernels use it and
// whether the CDNA emulator has a handler for it. Static: nothing runs. Text table or --json.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/codeobj/reader.h"
#include "isatune/emu/coverage.h"
#include "isatune/error.h"
#include "table.h"

namespace isatune::cli {

namespace {

struct CoverageOptions {
  std::vector<std::string> inputs;
  bool json = false;
  bool unsupported_only = false;
};

bool is_elf(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  char magic[4] = {};
  return f.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

std::vector<std::filesystem::path> collect(const std::vector<std::string>& inputs) {
  std::vector<std::filesystem::path> files;
  for (const auto& in : inputs) {
    std::filesystem::path p(in);
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file() && is_elf(e.path()))
          found.push_back(e.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (std::filesystem::is_regular_file(p)) {
      files.push_back(p);
    } else {
      throw InputError("emu-coverage: no such file or folder: " + in);
    }
  }
  return files;
}

int run_coverage(const CoverageOptions& opt) {
  emu::CoverageCounter counter;
  for (const auto& path : collect(opt.inputs)) {
    std::ifstream f(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    try {
      counter.add(codeobj::read_code_object(bytes, path.string()), path.string());
    } catch (const Error& e) {
      counter.add_error(path.string(), e.what());
    }
  }
  const emu::CoverageReport r = counter.report();
  if (opt.json) {
    nlohmann::json uses = nlohmann::json::array();
    for (const auto& u : r.uses)
      if (!opt.unsupported_only || !u.supported)
        uses.push_back({{"mnemonic", u.mnemonic},
                        {"kernels", u.kernels},
                        {"count", u.count},
                        {"supported", u.supported}});
    nlohmann::json j = {{"code_objects", r.code_objects},
                        {"kernels", r.kernels},
                        {"fully_supported_kernels", r.fully_supported_kernels},
                        {"instructions", r.instructions},
                        {"distinct", r.uses.size()},
                        {"unsupported", r.unsupported()},
                        {"uses", uses},
                        {"errors", r.errors}};
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << r.code_objects << " code objects, " << r.kernels << " kernels, " << r.instructions
            << " instructions; " << r.uses.size() << " distinct, " << r.unsupported()
            << " without a handler; " << r.fully_supported_kernels
            << " kernels use only supported instructions\n";
  Table t({"instruction", "kernels", "count", "emulated"});
  for (const auto& u : r.uses)
    if (!opt.unsupported_only || !u.supported)
      t.add({u.mnemonic, std::to_string(u.kernels), std::to_string(u.count), u.supported ? "yes" : "no"});
  std::cout << t.str();
  for (const auto& e : r.errors)
    std::cout << "error: " << e << "\n";
  return kExitOk;
}

} // namespace

void add_emu_coverage_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<CoverageOptions>();
  auto* cmd =
      app.add_subcommand("emu-coverage", "Decode code objects and list, per instruction, how many kernels "
                                         "use it and whether the CDNA emulator runs it");
  cmd->add_option("inputs", opt->inputs, "Code objects, or folders searched recursively for ELF files")
      ->required();
  cmd->add_flag("--unsupported", opt->unsupported_only, "List only the instructions without a handler");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback(
      [opt, &global, &status] { status = run_guarded(global, [&] { return run_coverage(*opt); }); });
}

} // namespace isatune::cli

#pragma once
// Test helper: builds code objects with the llvm-mc and ld.lld programs (not the in-process assembler) from
// inline assembly, in a temporary directory.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace isatune::codeobj::test {

inline std::string llvm_program(const std::string& name) {
  std::string path = std::string(ISATUNE_TEST_LLVM_TOOLS_DIR) + "/" + name;
  return std::filesystem::exists(path) ? path : std::string();
}

// Empty when llvm-mc, ld.lld and llvm-objdump are all present; else the reason to skip.
inline std::string missing_programs() {
  for (const char* p : {"llvm-mc", "ld.lld", "llvm-objdump"})
    if (llvm_program(p).empty()) return std::string(p) + " not found in " + ISATUNE_TEST_LLVM_TOOLS_DIR;
  return {};
}

// A directory for this test process, removed at exit.
inline const std::filesystem::path& temp_dir() {
  struct Dir {
    std::filesystem::path path;
    Dir() {
      std::string templ = (std::filesystem::temp_directory_path() / "isatune-codeobj-XXXXXX").string();
      if (!mkdtemp(templ.data())) std::abort();
      path = templ;
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return dir.path;
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a command; returns its exit status and fills output with stdout+stderr.
inline int run_command(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  return pclose(p);
}

// Assembles and links `source` for mcpu (with mattr features); returns the .hsaco path, or "" with the
// tool's output in error. link=false returns the relocatable object instead.
inline std::string build_code_object(const std::string& name, const std::string& source, const std::string& mcpu,
                                     const std::string& mattr, std::string& error, bool link = true) {
  auto dir = temp_dir();
  std::string s = (dir / (name + ".s")).string(), o = (dir / (name + ".o")).string(),
              so = (dir / (name + ".hsaco")).string();
  std::ofstream(s) << source;
  std::string cmd = shell_quote(llvm_program("llvm-mc")) + " -triple=amdgcn-amd-amdhsa -mcpu=" + mcpu +
                    (mattr.empty() ? "" : " -mattr=" + mattr) + " -filetype=obj " + shell_quote(s) + " -o " +
                    shell_quote(o);
  if (run_command(cmd, error) != 0) return {};
  if (!link) return o;
  if (run_command(shell_quote(llvm_program("ld.lld")) + " -shared " + shell_quote(o) + " -o " + shell_quote(so),
                  error) != 0)
    return {};
  return so;
}

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
}

} // namespace isatune::codeobj::test

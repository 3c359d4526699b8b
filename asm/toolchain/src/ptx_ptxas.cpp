// The ptxas program as a backend: PTX written to a private temporary directory, ptxas run with posix_spawn,
// its stderr read back as the log.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>

#include "isatune/error.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "ptx_internal.h"

extern char** environ;

namespace isatune::toolchain {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A directory removed with everything in it when the scope ends.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "isatune-ptxas-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw Error("ptxas: cannot create a temporary directory");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs argv with stdout and stderr into log_path; returns the exit status (-1 if it could not start).
int run(const std::vector<std::string>& argv, const fs::path& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

std::string find_ptxas() {
  static const std::string found = [] {
    std::vector<fs::path> candidates;
    if (const char* p = std::getenv("ISATUNE_PTXAS")) return executable(p) ? std::string(p) : std::string();
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* d = std::getenv(var)) candidates.push_back(fs::path(d) / "bin" / "ptxas");
    candidates.push_back("/usr/local/cuda/bin/ptxas");
    if (const char* path = std::getenv("PATH")) {
      std::stringstream ss(path);
      std::string dir;
      while (std::getline(ss, dir, ':'))
        if (!dir.empty()) candidates.push_back(fs::path(dir) / "ptxas");
    }
    for (const auto& c : candidates)
      if (executable(c)) return c.string();
    return std::string();
  }();
  return found;
}

namespace detail {

std::string ptxas_version() {
  static const std::string version = [] {
    const std::string ptxas = find_ptxas();
    if (ptxas.empty()) return std::string();
    TempDir dir;
    run({ptxas, "--version"}, dir.path / "version.txt");
    const std::string text = read_file(dir.path / "version.txt");
    const size_t v = text.find(", V");
    if (v == std::string::npos) return std::string("ptxas");
    return "ptxas " + text.substr(v + 3, text.find_first_of("\r\n", v) - v - 3);
  }();
  return version;
}

RawPtxCompile run_ptxas(std::string_view ptx, const std::string& target, int opt_level, uint32_t max_registers) {
  const std::string ptxas = find_ptxas();
  if (ptxas.empty())
    throw UnavailableError("ptxas not found (set ISATUNE_PTXAS or CUDA_HOME, or install the CUDA toolkit)");
  TempDir dir;
  const fs::path in = dir.path / "input.ptx", out = dir.path / "output.cubin", log = dir.path / "log.txt";
  {
    std::ofstream f(in, std::ios::binary);
    f.write(ptx.data(), static_cast<std::streamsize>(ptx.size()));
    if (!f) throw Error("ptxas: cannot write " + in.string());
  }
  std::vector<std::string> argv{ptxas, "-arch=" + target, "-O" + std::to_string(opt_level), "-v", "--warn-on-spills"};
  if (max_registers) argv.push_back("-maxrregcount=" + std::to_string(max_registers));
  argv.insert(argv.end(), {in.string(), "-o", out.string()});
  const int rc = run(argv, log);
  if (rc < 0) throw UnavailableError("ptxas: cannot run " + ptxas);
  RawPtxCompile r;
  r.log = read_file(log);
  // ptxas names the input file in its messages; the caller's name replaces ours.
  for (size_t p; (p = r.log.find(in.string())) != std::string::npos;) r.log.replace(p, in.string().size(), "input.ptx");
  r.ok = rc == 0;
  if (r.ok) {
    const std::string bytes = read_file(out);
    r.cubin.assign(bytes.begin(), bytes.end());
    if (r.cubin.empty()) {
      r.ok = false;
      r.log += "ptxas fatal   : no output produced\n";
    }
  }
  return r;
}

} // namespace detail

} // namespace isatune::toolchain

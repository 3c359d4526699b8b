// nvJitLink opened with dlopen (never linked), so a build without the CUDA toolkit still runs. Entry points are
// looked up by their versioned names (__nvJitLinkCreate_13_0, ...) first, then the plain names.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "isatune/error.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "ptx_internal.h"

namespace isatune::toolchain {

namespace {

// From nvJitLink.h (CUDA 13.0); declared here so the header is not needed to build.
using Handle = void*;
constexpr int kSuccess = 0;
constexpr int kInputPtx = 2; // NVJITLINK_INPUT_PTX (NONE = 0, CUBIN = 1, PTX = 2)
using CreateFn = int (*)(Handle*, uint32_t, const char**);
using DestroyFn = int (*)(Handle*);
using AddDataFn = int (*)(Handle, int, const void*, size_t, const char*);
using CompleteFn = int (*)(Handle);
using SizeFn = int (*)(Handle, size_t*);
using BufferFn = int (*)(Handle, void*);
using LogFn = int (*)(Handle, char*);
using VersionFn = int (*)(unsigned*, unsigned*);

struct Library {
  void* handle = nullptr;
  std::string error;
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  AddDataFn add_data = nullptr;
  CompleteFn complete = nullptr;
  SizeFn cubin_size = nullptr, info_size = nullptr, error_size = nullptr;
  BufferFn cubin = nullptr;
  LogFn info = nullptr, error_log = nullptr;
  VersionFn version = nullptr;
};

void* symbol(void* h, const char* name) {
  // Versioned names as the 13.x library exports them, then the plain ones.
  for (const char* suffix : {"_13_0", "_13_1", "_13_2"})
    if (void* p = ::dlsym(h, (std::string("__") + name + suffix).c_str())) return p;
  return ::dlsym(h, name);
}

const Library& library() {
  static const Library lib = [] {
    Library l;
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("ISATUNE_NVJITLINK")) candidates.push_back(p);
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* d = std::getenv(var)) candidates.push_back(std::string(d) + "/lib64/libnvJitLink.so.13");
    candidates.push_back("/usr/local/cuda/lib64/libnvJitLink.so.13");
    candidates.push_back("libnvJitLink.so.13");
    for (const auto& c : candidates) {
      if (c.find('/') != std::string::npos && !std::filesystem::exists(c)) continue;
      if ((l.handle = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
      const char* e = ::dlerror();
      l.error = e ? e : "dlopen failed";
    }
    if (!l.handle) {
      if (l.error.empty()) l.error = "libnvJitLink.so.13 not found (set ISATUNE_NVJITLINK or CUDA_HOME)";
      return l;
    }
    l.create = reinterpret_cast<CreateFn>(symbol(l.handle, "nvJitLinkCreate"));
    l.destroy = reinterpret_cast<DestroyFn>(symbol(l.handle, "nvJitLinkDestroy"));
    l.add_data = reinterpret_cast<AddDataFn>(symbol(l.handle, "nvJitLinkAddData"));
    l.complete = reinterpret_cast<CompleteFn>(symbol(l.handle, "nvJitLinkComplete"));
    l.cubin_size = reinterpret_cast<SizeFn>(symbol(l.handle, "nvJitLinkGetLinkedCubinSize"));
    l.cubin = reinterpret_cast<BufferFn>(symbol(l.handle, "nvJitLinkGetLinkedCubin"));
    l.info_size = reinterpret_cast<SizeFn>(symbol(l.handle, "nvJitLinkGetInfoLogSize"));
    l.info = reinterpret_cast<LogFn>(symbol(l.handle, "nvJitLinkGetInfoLog"));
    l.error_size = reinterpret_cast<SizeFn>(symbol(l.handle, "nvJitLinkGetErrorLogSize"));
    l.error_log = reinterpret_cast<LogFn>(symbol(l.handle, "nvJitLinkGetErrorLog"));
    l.version = reinterpret_cast<VersionFn>(::dlsym(l.handle, "nvJitLinkVersion"));
    if (!l.create || !l.destroy || !l.add_data || !l.complete || !l.cubin_size || !l.cubin || !l.info_size ||
        !l.info || !l.error_size || !l.error_log) {
      l.error = "libnvJitLink lacks an expected entry point";
      ::dlclose(l.handle);
      l.handle = nullptr;
    }
    return l;
  }();
  return lib;
}

std::string read_log(Handle h, SizeFn size, LogFn get) {
  size_t n = 0;
  if (size(h, &n) != kSuccess || n == 0) return {};
  std::string s(n, '\0');
  if (get(h, s.data()) != kSuccess) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

} // namespace

bool nvjitlink_available() { return library().handle != nullptr; }

namespace detail {

std::string nvjitlink_load_error() { return library().handle ? std::string() : library().error; }

std::string nvjitlink_version() {
  const Library& l = library();
  if (!l.handle) return {};
  unsigned major = 0, minor = 0;
  if (l.version && l.version(&major, &minor) == kSuccess)
    return "nvJitLink " + std::to_string(major) + "." + std::to_string(minor);
  return "nvJitLink";
}

RawPtxCompile run_nvjitlink(std::string_view ptx, const std::string& target, int opt_level, uint32_t max_registers) {
  const Library& l = library();
  if (!l.handle) throw UnavailableError("nvJitLink unavailable: " + l.error);
  std::vector<std::string> opts{"-arch=" + target, "-O" + std::to_string(opt_level == 0 ? 0 : 3), "-verbose",
                                "-Xptxas=--warn-on-spills"};
  if (max_registers) opts.push_back("-maxrregcount=" + std::to_string(max_registers));
  std::vector<const char*> argv;
  for (const auto& o : opts) argv.push_back(o.c_str());
  Handle h = nullptr;
  if (int rc = l.create(&h, static_cast<uint32_t>(argv.size()), argv.data()); rc != kSuccess)
    throw Error("nvJitLinkCreate failed with code " + std::to_string(rc));
  RawPtxCompile r;
  int rc = l.add_data(h, kInputPtx, ptx.data(), ptx.size(), "input.ptx");
  if (rc == kSuccess) rc = l.complete(h);
  r.log = read_log(h, l.info_size, l.info);
  const std::string errors = read_log(h, l.error_size, l.error_log);
  if (!errors.empty()) r.log += (r.log.empty() || r.log.back() == '\n' ? "" : "\n") + errors;
  if (rc == kSuccess) {
    size_t n = 0;
    if (l.cubin_size(h, &n) == kSuccess && n > 0) {
      r.cubin.resize(n);
      if (l.cubin(h, r.cubin.data()) == kSuccess) r.ok = true;
    }
  } else if (errors.empty()) {
    r.log += "error   : nvJitLink failed with code " + std::to_string(rc) + "\n";
  }
  l.destroy(&h);
  return r;
}

} // namespace detail

} // namespace isatune::toolchain

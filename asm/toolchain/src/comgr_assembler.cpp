// The "comgr" backend: ROCm's code object manager, opened with dlopen so that it is optional and its own
// libLLVM (15 on Debian 12) never meets ours at link time. amd_comgr.h is used only for types and function
// types; every function is resolved with dlsym. Both libLLVMs export versioned symbols (LLVM_15, LLVM_22.1),
// and comgr is opened RTLD_LOCAL, so the two coexist in one process (tested in tests/toolchain).
//
// Thread safety: comgr 2.4 runs the clang driver and lld in process, which keep global state (lld as in
// lld_link.cpp, LLVM command-line options), so every call into comgr's actions holds one mutex.
#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "internal.h"
#include "llvm_mc_internal.h"
#include "isatune/codeobj/reader.h"
#include "isatune/error.h"

#if ISATUNE_HAVE_COMGR
#include <amd_comgr.h>
#endif

namespace isatune::toolchain {

#if ISATUNE_HAVE_COMGR
namespace {

constexpr const char* kLibraryNames[] = {"libamd_comgr.so.2", "libamd_comgr.so"};
// Name of the source inside comgr (it writes inputs to a temporary directory and picks the language from the
// extension); diagnostics that name it are mapped back to AssembleOptions::file_name.
constexpr std::string_view kSourceName = "isatune_input.s";

struct ComgrApi {
  void* handle = nullptr;
  std::string library;
#define ISATUNE_COMGR_FN(name) decltype(&::name) name = nullptr;
#define ISATUNE_COMGR_FUNCTIONS(X)                                                                            \
  X(amd_comgr_get_version) X(amd_comgr_status_string) X(amd_comgr_get_isa_count) X(amd_comgr_get_isa_name)    \
  X(amd_comgr_create_data) X(amd_comgr_release_data) X(amd_comgr_set_data) X(amd_comgr_set_data_name)          \
  X(amd_comgr_get_data) X(amd_comgr_create_data_set) X(amd_comgr_destroy_data_set) X(amd_comgr_data_set_add)   \
  X(amd_comgr_action_data_count) X(amd_comgr_action_data_get_data) X(amd_comgr_create_action_info)             \
  X(amd_comgr_destroy_action_info) X(amd_comgr_action_info_set_isa_name) X(amd_comgr_action_info_set_logging)  \
  X(amd_comgr_action_info_set_option_list) X(amd_comgr_do_action)
  ISATUNE_COMGR_FUNCTIONS(ISATUNE_COMGR_FN)
#undef ISATUNE_COMGR_FN
  std::string error; // why it could not be opened (empty when usable)
};

// Opened once for the life of the process (never closed: unloading a libLLVM is not safe).
const ComgrApi& comgr_api() {
  static const ComgrApi api = [] {
    ComgrApi a;
    std::string tried;
    for (const char* name : kLibraryNames) {
      a.handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (a.handle) {
        a.library = name;
        break;
      }
      const char* e = ::dlerror();
      tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
    }
    if (!a.handle) {
      a.error = "ROCm comgr is not installed (could not open libamd_comgr.so.2 or libamd_comgr.so: " + tried + ")";
      return a;
    }
#define ISATUNE_COMGR_FN(name)                                                                                \
  a.name = reinterpret_cast<decltype(a.name)>(::dlsym(a.handle, #name));                                      \
  if (!a.name && a.error.empty()) a.error = a.library + " lacks the function " #name " (comgr too old)";
    ISATUNE_COMGR_FUNCTIONS(ISATUNE_COMGR_FN)
#undef ISATUNE_COMGR_FN
    return a;
  }();
  return api;
}

std::mutex g_comgr_mutex;

std::string status_text(const ComgrApi& api, amd_comgr_status_t s) {
  const char* text = nullptr;
  if (api.amd_comgr_status_string(s, &text) == AMD_COMGR_STATUS_SUCCESS && text) return text;
  return "status " + std::to_string(static_cast<int>(s));
}

// Owners of comgr handles.
struct DataSet {
  const ComgrApi& api;
  amd_comgr_data_set_t set{};
  bool ok = false;
  explicit DataSet(const ComgrApi& a) : api(a) { ok = api.amd_comgr_create_data_set(&set) == AMD_COMGR_STATUS_SUCCESS; }
  ~DataSet() { if (ok) api.amd_comgr_destroy_data_set(set); }
};
struct ActionInfo {
  const ComgrApi& api;
  amd_comgr_action_info_t info{};
  bool ok = false;
  explicit ActionInfo(const ComgrApi& a) : api(a) { ok = api.amd_comgr_create_action_info(&info) == AMD_COMGR_STATUS_SUCCESS; }
  ~ActionInfo() { if (ok) api.amd_comgr_destroy_action_info(info); }
};
struct Data {
  const ComgrApi& api;
  amd_comgr_data_t data{};
  bool ok = false;
  explicit Data(const ComgrApi& a) : api(a) {}
  ~Data() { if (ok) api.amd_comgr_release_data(data); }
};

void check(const ComgrApi& api, amd_comgr_status_t s, const char* what) {
  if (s != AMD_COMGR_STATUS_SUCCESS) throw Error(std::string("comgr: ") + what + " failed: " + status_text(api, s));
}

std::string data_bytes(const ComgrApi& api, amd_comgr_data_t data) {
  size_t size = 0;
  check(api, api.amd_comgr_get_data(data, &size, nullptr), "amd_comgr_get_data");
  std::string out(size, '\0');
  if (size) check(api, api.amd_comgr_get_data(data, &size, out.data()), "amd_comgr_get_data");
  out.resize(size);
  return out;
}

// The concatenated LOG data of a result set.
std::string collect_log(const ComgrApi& api, amd_comgr_data_set_t set) {
  size_t count = 0;
  if (api.amd_comgr_action_data_count(set, AMD_COMGR_DATA_KIND_LOG, &count) != AMD_COMGR_STATUS_SUCCESS) return {};
  std::string log;
  for (size_t i = 0; i < count; ++i) {
    Data d(api);
    if (api.amd_comgr_action_data_get_data(set, AMD_COMGR_DATA_KIND_LOG, i, &d.data) != AMD_COMGR_STATUS_SUCCESS)
      continue;
    d.ok = true;
    log += data_bytes(api, d.data);
  }
  return log;
}

// Parses clang-style "path/isatune_input.s:LINE:COL: error: message" lines (the next line is the source line).
std::vector<Diagnostic> parse_log(const std::string& log, const std::string& file_name) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos <= log.size();) {
    size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    lines.push_back(log.substr(pos, end - pos));
    pos = end + 1;
  }
  std::vector<Diagnostic> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    Diagnostic d;
    d.file = file_name;
    size_t sev_pos = std::string::npos, sev_len = 0;
    for (auto [word, sev] : {std::pair{": error: ", Diagnostic::Severity::error},
                             std::pair{": warning: ", Diagnostic::Severity::warning},
                             std::pair{": note: ", Diagnostic::Severity::note}}) {
      size_t p = l.find(word);
      if (p != std::string::npos && p < sev_pos) {
        sev_pos = p;
        sev_len = std::char_traits<char>::length(word);
        d.severity = sev;
      }
    }
    if (sev_pos == std::string::npos) continue;
    d.message = l.substr(sev_pos + sev_len);
    std::string place = l.substr(0, sev_pos);
    size_t at = place.find(std::string(kSourceName) + ":");
    if (at != std::string::npos) {
      place.erase(0, at + kSourceName.size() + 1);
      d.line = std::atoi(place.c_str());
      size_t colon = place.find(':');
      if (colon != std::string::npos) d.column = std::atoi(place.c_str() + colon + 1);
      if (i + 1 < lines.size()) d.source_line = lines[i + 1];
    } else {
      d.file = place.empty() ? file_name : place; // e.g. "ld.lld" or "error" from the linker
    }
    out.push_back(std::move(d));
  }
  return out;
}

class ComgrAssembler final : public Assembler {
public:
  explicit ComgrAssembler(const ComgrApi& api) : api_(api) {}

  std::string name() const override { return "comgr"; }
  std::string version() const override {
    size_t major = 0, minor = 0;
    api_.amd_comgr_get_version(&major, &minor);
    return "comgr " + std::to_string(major) + "." + std::to_string(minor);
  }
  bool supports(std::string_view isa) const override {
    size_t count = 0;
    if (api_.amd_comgr_get_isa_count(&count) != AMD_COMGR_STATUS_SUCCESS) return false;
    for (size_t i = 0; i < count; ++i) {
      const char* name = nullptr;
      if (api_.amd_comgr_get_isa_name(i, &name) != AMD_COMGR_STATUS_SUCCESS || !name) continue;
      std::string_view n(name);
      constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
      if (n.substr(0, prefix.size()) == prefix) n.remove_prefix(prefix.size());
      if (n.substr(0, n.find(':')) == isa) return true;
    }
    return false;
  }

  Assembled assemble(std::string_view text, const AssembleOptions& options) const override {
    // Resolve without LLVM-22's opinion: comgr's own ISA table decides.
    std::string_view t = options.target;
    constexpr std::string_view prefix = "amdgcn-amd-amdhsa--";
    if (t.substr(0, prefix.size()) == prefix) t.remove_prefix(prefix.size());
    std::string isa(t.substr(0, t.find(':')));
    if (!supports(isa))
      throw InputError("unknown AMD target '" + isa + "': " + version() + " does not know this processor");
    const std::string isa_name = std::string(prefix) + std::string(t);

    // The llvm backend's guards that read the text alone (llvm_text_guards.cpp):
    // comgr's LLVM has the same lexer and AMDGPU parser, and hangs on the same texts (an error token before the
    // last end of statement) and segfaults on a YAML alias in .amdgpu_metadata. The guards that hook into
    // LLVM's parser (.fill sizes, alignments, .size, included files) cannot reach comgr's: docs/reliability.md.
    // The AMDGPU MCAsmInfo (what the lexer reads) is the same for every ISA.
    const std::string buffer = detail::guarded_llvm_buffer(
        text, *detail::mc_target(detail::resolve_target("gfx90a"), options.file_name).mai, options.file_name);

    Assembled out;
    std::vector<uint8_t> image;
    {
      std::lock_guard<std::mutex> lock(g_comgr_mutex);
      image = run(buffer, isa_name, options.file_name, out.warnings);
    }
    out.code = codeobj::read_code_object(image, options.file_name);
    return out;
  }

private:
  std::vector<uint8_t> run(std::string_view text, const std::string& isa_name, const std::string& file_name,
                           std::vector<Diagnostic>& warnings) const {
    const ComgrApi& api = api_;
    DataSet input(api), relocatable(api), executable(api);
    ActionInfo info(api);
    if (!input.ok || !relocatable.ok || !executable.ok || !info.ok) throw Error("comgr: cannot create handles");

    Data source(api);
    check(api, api.amd_comgr_create_data(AMD_COMGR_DATA_KIND_SOURCE, &source.data), "amd_comgr_create_data");
    source.ok = true;
    check(api, api.amd_comgr_set_data(source.data, text.size(), text.data()), "amd_comgr_set_data");
    check(api, api.amd_comgr_set_data_name(source.data, std::string(kSourceName).c_str()), "amd_comgr_set_data_name");
    check(api, api.amd_comgr_data_set_add(input.set, source.data), "amd_comgr_data_set_add");

    check(api, api.amd_comgr_action_info_set_isa_name(info.info, isa_name.c_str()), "set_isa_name");
    check(api, api.amd_comgr_action_info_set_logging(info.info, true), "set_logging");
    check(api, api.amd_comgr_action_info_set_option_list(info.info, nullptr, 0), "set_option_list");

    auto act = [&](amd_comgr_action_kind_t kind, const DataSet& in, const DataSet& result) {
      amd_comgr_status_t s = api.amd_comgr_do_action(kind, info.info, in.set, result.set);
      std::vector<Diagnostic> diags = parse_log(collect_log(api, result.set), file_name);
      bool has_error = false;
      for (const auto& d : diags) has_error |= d.severity == Diagnostic::Severity::error;
      if (s != AMD_COMGR_STATUS_SUCCESS || has_error) {
        if (!has_error) {
          Diagnostic d;
          d.file = file_name;
          d.message = "comgr action failed: " + status_text(api, s);
          diags.insert(diags.begin(), d);
        }
        throw AssemblyError(std::move(diags));
      }
      for (auto& d : diags) warnings.push_back(std::move(d));
    };
    act(AMD_COMGR_ACTION_ASSEMBLE_SOURCE_TO_RELOCATABLE, input, relocatable);
    act(AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE, relocatable, executable);

    size_t count = 0;
    check(api, api.amd_comgr_action_data_count(executable.set, AMD_COMGR_DATA_KIND_EXECUTABLE, &count),
          "amd_comgr_action_data_count");
    if (count != 1) throw Error("comgr produced " + std::to_string(count) + " executables, expected 1");
    Data exe(api);
    check(api, api.amd_comgr_action_data_get_data(executable.set, AMD_COMGR_DATA_KIND_EXECUTABLE, 0, &exe.data),
          "amd_comgr_action_data_get_data");
    exe.ok = true;
    std::string bytes = data_bytes(api, exe.data);
    return std::vector<uint8_t>(bytes.begin(), bytes.end());
  }

  const ComgrApi& api_;
};

} // namespace

std::unique_ptr<Assembler> detail::make_comgr_assembler() {
  const ComgrApi& api = comgr_api();
  if (!api.error.empty()) throw UnavailableError(api.error);
  return std::make_unique<ComgrAssembler>(api);
}

#else

std::unique_ptr<Assembler> detail::make_comgr_assembler() {
  throw UnavailableError("comgr backend not built: amd_comgr.h was not found when isatune was configured");
}

#endif

} // namespace isatune::toolchain

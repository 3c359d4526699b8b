#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>

#include "isatune/error.h"
#include "isatune/loader/backend.h"

namespace isatune::loader {

namespace {
struct Entry {
  BackendFactory factory;
  std::shared_ptr<Backend> instance;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Entry> entries;
  bool env_plugins_loaded = false;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry; // never destroyed: backends may be used during static destruction
    reg->entries["hip"] = Entry{make_hip_backend, nullptr};
    reg->entries["cuda"] = Entry{make_cuda_backend, nullptr};
    return reg;
  }();
  return *r;
}

void load_env_plugins() {
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    if (r.env_plugins_loaded) return;
    r.env_plugins_loaded = true;
  }
  const char* env = std::getenv("ISATUNE_BACKEND_PLUGINS");
  if (!env) return;
  std::string list = env;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(':', pos);
    if (end == std::string::npos) end = list.size();
    std::string path = list.substr(pos, end - pos);
    if (!path.empty()) load_backend_plugin(path);
    pos = end + 1;
  }
}
} // namespace

void register_backend(const std::string& name, BackendFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.entries[name] = Entry{std::move(factory), nullptr};
}

std::vector<std::string> backend_names() {
  load_env_plugins();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& [name, e] : r.entries) names.push_back(name);
  return names;
}

std::shared_ptr<Backend> find_backend(const std::string& name) {
  load_env_plugins();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.entries.find(name);
  if (it == r.entries.end()) return nullptr;
  if (!it->second.instance) it->second.instance = it->second.factory();
  return it->second.instance;
}

std::vector<DeviceProperties> list_devices() {
  std::vector<DeviceProperties> all;
  for (const auto& name : backend_names()) {
    auto b = find_backend(name);
    if (!b) continue;
    for (auto& d : b->list_devices()) all.push_back(std::move(d));
  }
  return all;
}

std::shared_ptr<Device> open_device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string name = spec.substr(0, colon);
  std::string arg = colon == std::string::npos ? "0" : spec.substr(colon + 1);
  auto backend = find_backend(name);
  if (!backend) {
    std::string known;
    for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("device '" + spec + "': no backend named '" + name + "' (backends: " + known + ")");
  }
  return backend->open(arg);
}

std::string load_backend_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw UnavailableError("backend plugin " + path + ": " + dlerror());
  auto fn = reinterpret_cast<isatune_backend_plugin_fn>(dlsym(handle, "isatune_backend_plugin_v1"));
  if (!fn) throw InputError("backend plugin " + path + ": it does not export isatune_backend_plugin_v1");
  std::shared_ptr<Backend> backend(fn());
  if (!backend) throw InputError("backend plugin " + path + ": isatune_backend_plugin_v1 returned null");
  std::string name = backend->name();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.entries[name] = Entry{[backend] { return backend; }, backend};
  return name; // the library stays loaded for the life of the process
}

} // namespace isatune::loader

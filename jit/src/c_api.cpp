// The JIT's C API (isatune_jit.h) over jit::Jit.
#include "isatune_jit.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "isatune/error.h"
#include "isatune/jit/jit.h"

struct isatune_jit {
  std::unique_ptr<isatune::jit::Jit> jit;
  std::mutex mutex;
  std::unordered_map<const isatune::jit::JitKernel*, std::unique_ptr<isatune_jit_kernel>> kernels;
};

struct isatune_jit_kernel {
  isatune_jit* owner = nullptr;
  std::shared_ptr<const isatune::jit::JitKernel> kernel;
};

namespace {
thread_local std::string g_error;

template <class Fn> isatune_status guarded(Fn&& fn) {
  using namespace isatune;
  try {
    fn();
    g_error.clear();
    return ISATUNE_OK;
  } catch (const loader::NotFoundError& e) {
    g_error = e.what();
    return ISATUNE_ERROR_NOT_FOUND;
  } catch (const UnavailableError& e) {
    g_error = e.what();
    return ISATUNE_ERROR_UNAVAILABLE;
  } catch (const InputError& e) {
    g_error = e.what();
    return ISATUNE_ERROR_INPUT;
  } catch (const std::exception& e) {
    g_error = e.what();
    return ISATUNE_ERROR_INTERNAL;
  } catch (...) {
    g_error = "unknown error";
    return ISATUNE_ERROR_INTERNAL;
  }
}

void need(const void* p, const char* what) {
  if (!p) throw isatune::InputError(std::string(what) + " is NULL");
}
} // namespace

extern "C" {

const char* isatune_jit_last_error(void) { return g_error.c_str(); }

isatune_status isatune_jit_open(const char* db_path, const char* device_spec, int record, isatune_jit** out) {
  return guarded([&] {
    need(db_path, "db_path");
    need(device_spec, "device_spec");
    need(out, "out");
    auto ctx = std::make_unique<isatune_jit>();
    isatune::jit::JitOptions o;
    o.record = record != 0;
    ctx->jit = isatune::jit::Jit::open(db_path, device_spec, o);
    *out = ctx.release();
  });
}

void isatune_jit_close(isatune_jit* jit) { delete jit; }

isatune_status isatune_jit_select(isatune_jit* jit, const char* generator, const char* signature_json,
                                  const char* problem_json, isatune_jit_mode mode, isatune_jit_kernel** out) {
  return guarded([&] {
    need(jit, "jit");
    need(generator, "generator");
    need(signature_json, "signature_json");
    need(problem_json, "problem_json");
    need(out, "out");
    if (mode != ISATUNE_JIT_EXACT_ONLY && mode != ISATUNE_JIT_EXACT_OR_JIT)
      throw isatune::InputError("mode must be ISATUNE_JIT_EXACT_ONLY or ISATUNE_JIT_EXACT_OR_JIT");
    auto k = jit->jit->select(generator, signature_json, problem_json,
                              mode == ISATUNE_JIT_EXACT_ONLY ? isatune::jit::Mode::exact_only
                                                             : isatune::jit::Mode::exact_or_jit);
    std::lock_guard lock(jit->mutex);
    auto& slot = jit->kernels[k.get()];
    if (!slot) slot.reset(new isatune_jit_kernel{jit, k});
    *out = slot.get();
  });
}

isatune_status isatune_jit_kernel_describe(isatune_jit_kernel* kernel, isatune_jit_kernel_desc* out) {
  return guarded([&] {
    need(kernel, "kernel");
    need(out, "out");
    const auto& k = *kernel->kernel;
    static const char* sources[] = {"exact", "nearest", "model"};
    out->source = sources[int(k.source)];
    out->kernel = k.kernel.c_str();
    out->code_object = k.code->sha256.c_str();
    out->parameters = k.parameters_json.c_str();
    out->seed_problem = k.seed_problem.c_str();
    out->variant_id = k.variant_id;
    out->built = k.built ? 1 : 0;
    out->from_database = k.from_database ? 1 : 0;
    out->build_ms = k.build_ms;
  });
}

isatune_status isatune_jit_launch(isatune_jit_kernel* kernel, const uint64_t* addresses, size_t naddresses,
                                  const char* scalars_json) {
  return guarded([&] {
    need(kernel, "kernel");
    need(addresses, "addresses");
    std::map<std::string, double> scalars;
    if (scalars_json) {
      auto j = nlohmann::json::parse(scalars_json, nullptr, false);
      if (j.is_discarded() || !j.is_object()) throw isatune::InputError("scalars_json must be a JSON object");
      for (const auto& [name, v] : j.items()) {
        if (!v.is_number()) throw isatune::InputError("scalars_json: '" + name + "' must be a number");
        scalars[name] = v.get<double>();
      }
    }
    kernel->kernel->launch({addresses, naddresses}, scalars);
  });
}

isatune_status isatune_jit_kernel_buffers(isatune_jit_kernel* kernel, size_t* count, uint64_t* bytes,
                                          size_t capacity) {
  return guarded([&] {
    need(kernel, "kernel");
    need(count, "count");
    const auto& k = *kernel->kernel;
    const auto specs = k.generator->buffers(k.sig, k.problem);
    *count = specs.size();
    for (size_t i = 0; i < specs.size() && i < capacity && bytes; ++i)
      bytes[i] = specs[i].elements * isatune::gen::size_of(specs[i].dtype);
  });
}

isatune_status isatune_jit_alloc(isatune_jit* jit, size_t bytes, uint64_t* out) {
  return guarded([&] {
    need(jit, "jit");
    need(out, "out");
    *out = jit->jit->loader().device().alloc(bytes);
  });
}

isatune_status isatune_jit_free(isatune_jit* jit, uint64_t ptr) {
  return guarded([&] {
    need(jit, "jit");
    jit->jit->loader().device().free(ptr);
  });
}

isatune_status isatune_jit_copy_to_device(isatune_jit* jit, uint64_t dst, const void* src, size_t bytes) {
  return guarded([&] {
    need(jit, "jit");
    need(src, "src");
    jit->jit->loader().device().copy_to_device(dst, src, bytes);
  });
}

isatune_status isatune_jit_copy_to_host(isatune_jit* jit, void* dst, uint64_t src, size_t bytes) {
  return guarded([&] {
    need(jit, "jit");
    need(dst, "dst");
    jit->jit->loader().device().copy_to_host(dst, src, bytes);
  });
}

isatune_status isatune_jit_synchronize(isatune_jit* jit) {
  return guarded([&] {
    need(jit, "jit");
    jit->jit->loader().device().synchronize();
  });
}

} // extern "C"

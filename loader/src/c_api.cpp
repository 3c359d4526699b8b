#include "isatune.h"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "isatune/loader/loader.h"

struct isatune_context {
  std::unique_ptr<isatune::loader::Loader> loader;
  std::mutex mutex;
  std::unordered_map<isatune::loader::Kernel*, std::unique_ptr<isatune_kernel>> handles;
};

struct isatune_kernel {
  isatune_context* ctx;
  std::shared_ptr<isatune::loader::Kernel> kernel;
};

namespace {
thread_local std::string g_error;
thread_local std::string g_vendor_library;
thread_local double g_vendor_ms = 0, g_tuned_ms = 0;

template <class Fn> isatune_status guarded(Fn&& fn) {
  using namespace isatune;
  try {
    fn();
    g_error.clear();
    return ISATUNE_OK;
  } catch (const loader::VendorFasterError& e) {
    g_error = e.what();
    g_vendor_library = e.library;
    g_vendor_ms = e.vendor_ms;
    g_tuned_ms = e.tuned_ms;
    return ISATUNE_USE_VENDOR;
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

const char* isatune_last_error(void) { return g_error.c_str(); }

isatune_status isatune_load_plugin(const char* path) {
  return guarded([&] {
    need(path, "path");
    isatune::loader::load_backend_plugin(path);
  });
}

isatune_status isatune_device_count(size_t* count) {
  return guarded([&] {
    need(count, "count");
    *count = isatune::loader::list_devices().size();
  });
}

isatune_status isatune_open(const char* db_path, const char* device_spec, isatune_context** out) {
  return guarded([&] {
    need(db_path, "db_path");
    need(device_spec, "device_spec");
    need(out, "out");
    auto ctx = std::make_unique<isatune_context>();
    ctx->loader = isatune::loader::Loader::open(db_path, device_spec);
    *out = ctx.release();
  });
}

void isatune_close(isatune_context* ctx) { delete ctx; }

isatune_status isatune_select(isatune_context* ctx, const char* generator, const char* signature_json,
                              const char* problem_json, isatune_kernel** out) {
  return guarded([&] {
    need(ctx, "context");
    need(generator, "generator");
    need(signature_json, "signature");
    need(problem_json, "problem");
    need(out, "out");
    auto k = ctx->loader->select(generator, signature_json, problem_json);
    std::lock_guard lock(ctx->mutex);
    auto& h = ctx->handles[k.get()];
    if (!h) h = std::make_unique<isatune_kernel>(isatune_kernel{ctx, k});
    *out = h.get();
  });
}

isatune_status isatune_vendor_advice(const char** library, double* vendor_ms, double* tuned_ms) {
  if (!library || !vendor_ms || !tuned_ms) {
    g_error = "isatune_vendor_advice: NULL output";
    return ISATUNE_ERROR_INPUT;
  }
  *library = g_vendor_library.c_str();
  *vendor_ms = g_vendor_ms;
  *tuned_ms = g_tuned_ms;
  return g_vendor_library.empty() ? ISATUNE_ERROR_NOT_FOUND : ISATUNE_OK;
}

isatune_status isatune_kernel_describe(isatune_kernel* kernel, isatune_kernel_desc* out) {
  return guarded([&] {
    need(kernel, "kernel");
    need(out, "out");
    const auto& s = kernel->kernel->selection();
    out->name = s.kernel.c_str();
    out->code_object = s.code_object.c_str();
    out->tuned_problem = s.tuned_problem.c_str();
    out->parameters = s.parameters.c_str();
    out->exact = s.exact ? 1 : 0;
    out->distance = s.distance;
    out->median_ms = s.median_ms;
    out->rerank_winner = s.rerank_winner ? 1 : 0;
    out->vendor_ms = s.vendor_ms;
    out->vendor_library = s.vendor_library.c_str();
  });
}

isatune_status isatune_launch(isatune_kernel* kernel, const isatune_arg* args, size_t nargs, const isatune_dims* dims) {
  return guarded([&] {
    need(kernel, "kernel");
    if (nargs) need(args, "args");
    std::vector<isatune::loader::ArgValue> values;
    for (size_t i = 0; i < nargs; ++i) {
      need(args[i].data, "argument data");
      const auto* p = static_cast<const uint8_t*>(args[i].data);
      values.push_back({args[i].name ? args[i].name : "", std::vector<uint8_t>(p, p + args[i].size)});
    }
    if (dims) {
      isatune::loader::LaunchConfig c;
      c.grid = {dims->grid[0], dims->grid[1], dims->grid[2]};
      c.block = {dims->block[0], dims->block[1], dims->block[2]};
      c.dynamic_shared_bytes = dims->dynamic_shared_bytes;
      kernel->kernel->launch(values, c);
    } else {
      kernel->kernel->launch(values);
    }
  });
}

isatune_status isatune_alloc(isatune_context* ctx, size_t bytes, uint64_t* out) {
  return guarded([&] {
    need(ctx, "context");
    need(out, "out");
    *out = ctx->loader->device().alloc(bytes);
  });
}

isatune_status isatune_free(isatune_context* ctx, uint64_t ptr) {
  return guarded([&] {
    need(ctx, "context");
    ctx->loader->device().free(ptr);
  });
}

isatune_status isatune_copy_to_device(isatune_context* ctx, uint64_t dst, const void* src, size_t bytes) {
  return guarded([&] {
    need(ctx, "context");
    ctx->loader->device().copy_to_device(dst, src, bytes);
  });
}

isatune_status isatune_copy_to_host(isatune_context* ctx, void* dst, uint64_t src, size_t bytes) {
  return guarded([&] {
    need(ctx, "context");
    ctx->loader->device().copy_to_host(dst, src, bytes);
  });
}

isatune_status isatune_synchronize(isatune_context* ctx) {
  return guarded([&] {
    need(ctx, "context");
    ctx->loader->device().synchronize();
  });
}

} // extern "C"

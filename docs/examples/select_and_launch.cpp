// Opens a tuning database, selects the best kernel for a problem on a device, launches it on random inputs and
// checks c = a + b against the CPU.
//   select_and_launch DB DEVICE GENERATOR SIGNATURE PROBLEM N
// e.g. ISATUNE_BACKEND_PLUGINS=libisatune_emu_plugin.so \
//      select_and_launch tune.db emu:gfx942 vector_add '{"dtype":"f32"}' '{"n":1000}' 1000
// Backends outside the loader (the emulator) come from plugins named in ISATUNE_BACKEND_PLUGINS.
// The kernel takes (a, b, c, n) in that order (passed by position, whatever the names).
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "isatune.h"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s DB DEVICE GENERATOR SIGNATURE PROBLEM N\n", argv[0]);
    return 2;
  }
  isatune_context* ctx = nullptr;
  if (isatune_open(argv[1], argv[2], &ctx) != ISATUNE_OK) {
    std::fprintf(stderr, "open: %s\n", isatune_last_error());
    return 1;
  }
  isatune_kernel* kernel = nullptr;
  const isatune_status selected = isatune_select(ctx, argv[3], argv[4], argv[5], &kernel);
  if (selected == ISATUNE_USE_VENDOR) { // a tuned kernel fits, but the vendor library was recorded faster
    const char* library = nullptr;
    double vendor_ms = 0, tuned_ms = 0;
    isatune_vendor_advice(&library, &vendor_ms, &tuned_ms);
    std::printf("call the vendor library: %s (%.4f ms, tuned %.4f ms)\n", library, vendor_ms, tuned_ms);
    isatune_close(ctx);
    return 0;
  }
  if (selected != ISATUNE_OK) {
    std::fprintf(stderr, "select: %s\n", isatune_last_error());
    isatune_close(ctx);
    return 1;
  }
  isatune_kernel_desc d;
  isatune_kernel_describe(kernel, &d);
  std::printf("selected %s from %.12s... tuned for %s (%s, distance %.3f, %.4f ms) parameters %s\n", d.name,
              d.code_object, d.tuned_problem, d.exact ? "exact" : "nearest", d.distance, d.median_ms, d.parameters);
  uint32_t n = static_cast<uint32_t>(std::atoi(argv[6]));
  std::vector<float> a(n), b(n), c(n, 0.0f);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (uint32_t i = 0; i < n; ++i) a[i] = uniform(rng), b[i] = uniform(rng);
  uint64_t da = 0, db = 0, dc = 0;
  isatune_alloc(ctx, n * sizeof(float), &da);
  isatune_alloc(ctx, n * sizeof(float), &db);
  isatune_alloc(ctx, n * sizeof(float), &dc);
  isatune_copy_to_device(ctx, da, a.data(), n * sizeof(float));
  isatune_copy_to_device(ctx, db, b.data(), n * sizeof(float));
  isatune_copy_to_device(ctx, dc, c.data(), n * sizeof(float));
  isatune_arg args[] = {{nullptr, &da, 8}, {nullptr, &db, 8}, {nullptr, &dc, 8}, {nullptr, &n, 4}};
  int rc = 0;
  if (isatune_launch(kernel, args, 4, nullptr) != ISATUNE_OK || isatune_synchronize(ctx) != ISATUNE_OK) {
    std::fprintf(stderr, "launch: %s\n", isatune_last_error());
    rc = 1;
  } else {
    std::printf("launched %s on %s\n", d.name, argv[2]);
    isatune_copy_to_host(ctx, c.data(), dc, n * sizeof(float));
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < n; ++i)
      if (c[i] != a[i] + b[i]) {
        if (wrong++ == 0) std::fprintf(stderr, "wrong result: c[%u] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      }
    if (wrong) {
      std::fprintf(stderr, "%u of %u results differ from the CPU\n", wrong, n);
      rc = 1;
    } else {
      std::printf("checked %u results against the CPU: all equal\n", n);
    }
  }
  isatune_free(ctx, da);
  isatune_free(ctx, db);
  isatune_free(ctx, dc);
  isatune_close(ctx);
  return rc;
}

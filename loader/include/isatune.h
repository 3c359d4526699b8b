/* isatune loader C API: open a tuning database and a device, select the best kernel for a problem, launch it.
 * Every function returns a status; isatune_last_error() gives the message of the last failure on this thread. */
#ifndef ISATUNE_H
#define ISATUNE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum isatune_status {
  ISATUNE_OK = 0,
  ISATUNE_ERROR_INPUT = 1,       /* bad database, bad JSON, wrong arguments, corrupt blob */
  ISATUNE_ERROR_UNAVAILABLE = 2, /* a driver or device is absent */
  ISATUNE_ERROR_NOT_FOUND = 3,   /* nothing tuned fits the request; the message says what is missing */
  ISATUNE_ERROR_INTERNAL = 4,
  ISATUNE_USE_VENDOR = 5 /* a tuned kernel fits but the vendor library (cuBLAS, rocBLAS) was recorded faster for
                            that problem: call the vendor library (isatune_vendor_advice says which and how fast) */
} isatune_status;

typedef struct isatune_context isatune_context; /* a database + a device + caches */
typedef struct isatune_kernel isatune_kernel;   /* owned by its context */

typedef struct isatune_kernel_desc {
  const char* name;        /* kernel name */
  const char* code_object; /* sha256 */
  const char* tuned_problem;
  const char* parameters;
  int exact;               /* 1: tuned for this very problem */
  double distance;         /* log-space distance to the tuned problem */
  double median_ms;        /* as measured when tuned */
  int rerank_winner;       /* 1: the re-ranking's interval winner rather than the fastest single median */
  double vendor_ms;        /* the vendor library's recorded time for tuned_problem; 0: none recorded */
  const char* vendor_library; /* "" when none */
} isatune_kernel_desc;

typedef struct isatune_arg {
  const char* name; /* NULL: positional */
  const void* data;
  size_t size;
} isatune_arg;

typedef struct isatune_dims {
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dynamic_shared_bytes;
} isatune_dims;

const char* isatune_last_error(void);

/* Loads a backend plugin (e.g. libisatune_emu.so). */
isatune_status isatune_load_plugin(const char* path);
/* Number of devices of all backends (0 without drivers). */
isatune_status isatune_device_count(size_t* count);

/* device_spec: "hip:0", "cuda:0", "emu:gfx942". */
isatune_status isatune_open(const char* db_path, const char* device_spec, isatune_context** out);
void isatune_close(isatune_context* ctx);

/* The kernel stays valid until isatune_close. ISATUNE_USE_VENDOR: every tuned entry that fits is slower than the
 * vendor library's recorded time (*out is left unchanged). */
isatune_status isatune_select(isatune_context* ctx, const char* generator, const char* signature_json,
                              const char* problem_json, isatune_kernel** out);
/* After ISATUNE_USE_VENDOR on this thread: the vendor library as recorded, its time and the tuned entry's (ms). */
isatune_status isatune_vendor_advice(const char** library, double* vendor_ms, double* tuned_ms);
isatune_status isatune_kernel_describe(isatune_kernel* kernel, isatune_kernel_desc* out);
/* dims NULL: the geometry from the variant's launch template for the selected problem. */
isatune_status isatune_launch(isatune_kernel* kernel, const isatune_arg* args, size_t nargs, const isatune_dims* dims);

isatune_status isatune_alloc(isatune_context* ctx, size_t bytes, uint64_t* out);
isatune_status isatune_free(isatune_context* ctx, uint64_t ptr);
isatune_status isatune_copy_to_device(isatune_context* ctx, uint64_t dst, const void* src, size_t bytes);
isatune_status isatune_copy_to_host(isatune_context* ctx, void* dst, uint64_t src, size_t bytes);
isatune_status isatune_synchronize(isatune_context* ctx);

#ifdef __cplusplus
}
#endif
#endif

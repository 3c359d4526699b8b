/* isatune JIT C API (docs/jit.md): like isatune_select, but a request with no exact tuned entry gets a kernel
 * generated and assembled for its exact problem (from the nearest tuned configuration, or the static model's
 * best when nothing is tuned), recorded in the database as a JIT variant. Every function returns a status
 * (isatune.h); isatune_jit_last_error() gives the message of the last failure on this thread. */
#ifndef ISATUNE_JIT_H
#define ISATUNE_JIT_H
#include <stddef.h>
#include <stdint.h>

#include "isatune.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct isatune_jit isatune_jit;               /* a database + a device + the JIT's caches */
typedef struct isatune_jit_kernel isatune_jit_kernel; /* owned by its isatune_jit */

typedef enum isatune_jit_mode {
  ISATUNE_JIT_EXACT_ONLY = 0,   /* the exact tuned entry or ISATUNE_ERROR_NOT_FOUND */
  ISATUNE_JIT_EXACT_OR_JIT = 1  /* the exact tuned entry, else a kernel built for this problem */
} isatune_jit_mode;

typedef struct isatune_jit_kernel_desc {
  const char* source;       /* "exact", "nearest" or "model" */
  const char* kernel;       /* kernel name */
  const char* code_object;  /* sha256 */
  const char* parameters;   /* canonical JSON */
  const char* seed_problem; /* the tuned problem whose configuration was used ("" for model) */
  int64_t variant_id;       /* the database row (0: not recorded) */
  int built;                /* 1: generated and assembled by this process */
  int from_database;        /* 1: an earlier process's JIT build, read back */
  double build_ms;          /* generate + assemble, when built */
} isatune_jit_kernel_desc;

const char* isatune_jit_last_error(void);
/* device_spec: "hip:0", "cuda:0", "emu:gfx942" (after isatune_load_plugin for the emulator). record: 0 keeps JIT
 * builds in memory only, 1 writes them to the database (which must then be writable). */
isatune_status isatune_jit_open(const char* db_path, const char* device_spec, int record, isatune_jit** out);
void isatune_jit_close(isatune_jit* jit);
/* The kernel stays valid until isatune_jit_close. Safe from many threads; one build per problem. */
isatune_status isatune_jit_select(isatune_jit* jit, const char* generator, const char* signature_json,
                                  const char* problem_json, isatune_jit_mode mode, isatune_jit_kernel** out);
isatune_status isatune_jit_kernel_describe(isatune_jit_kernel* kernel, isatune_jit_kernel_desc* out);
/* addresses: one device address per buffer of the generator's problem, in its order (`isatune space GEN`);
 * scalars_json: {"alpha":1.0,...} or NULL (absent scalars take the lower end of the generator's range).
 * Launches every kernel of the problem; asynchronous. */
isatune_status isatune_jit_launch(isatune_jit_kernel* kernel, const uint64_t* addresses, size_t naddresses,
                                  const char* scalars_json);
/* Buffers of a kernel's problem: how many, and each one's size in bytes. */
isatune_status isatune_jit_kernel_buffers(isatune_jit_kernel* kernel, size_t* count, uint64_t* bytes, size_t capacity);
isatune_status isatune_jit_alloc(isatune_jit* jit, size_t bytes, uint64_t* out);
isatune_status isatune_jit_free(isatune_jit* jit, uint64_t ptr);
isatune_status isatune_jit_copy_to_device(isatune_jit* jit, uint64_t dst, const void* src, size_t bytes);
isatune_status isatune_jit_copy_to_host(isatune_jit* jit, void* dst, uint64_t src, size_t bytes);
isatune_status isatune_jit_synchronize(isatune_jit* jit);

#ifdef __cplusplus
}
#endif
#endif

#pragma once
// One variant of a generator, end to end: generate, assemble in process, load on a device, run a problem on
// fresh random inputs, compare every output with the generator's float64 reference, collect the device's own
// checks (the emulator's hazard reports), then time it with the timing protocol. The tuner's device stage,
// the CLI's `isatune run KERNEL` and the generator sweeps all go through here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/loader/device.h"
#include "isatune/toolchain/ptx_report.h"
#include "isatune/tune/status.h"

namespace isatune::tune {

struct VariantSpec {
  const gen::Generator* generator = nullptr;
  std::string isa; // gfx942
  gen::Signature sig;
  gen::Params params;
};

struct Compiled {
  gen::Generated generated;
  // CDNA: the hsaco. PTX: the PTX text object (what the PTX emulator runs), its registers, shared and local
  // memory filled from ptxas when ptxas compiled it.
  CodeObject code;
  // PTX compiled by ptxas: the cubin a GPU loads (run_variant prefers it on a real device), and ptxas's report.
  std::optional<CodeObject> machine_code;
  std::optional<toolchain::PtxReport> ptx_report;
  // ptxas findings that prune the variant before device time, one line each ("C7511 wgmma_serialized: ...");
  // spills and stack frames are in code's scratch_bytes (the tuner's resource check).
  std::vector<std::string> prune_reasons;
  double generate_s = 0, assemble_s = 0;

  // The code object `device` should load: the cubin on a GPU it runs on (sm_XY on X.Z with Z >= Y, an sm_XYa
  // one only on X.Y), else `code` (on a GPU: the PTX, which the driver compiles, e.g. sm_80 code on an H200).
  const CodeObject& code_for(const loader::DeviceProperties& device) const;
};

struct CompileOptions {
  // PTX: compile with ptxas (when found) to read registers, spills and serialisation warnings, and to give a
  // GPU machine code. Off: the PTX text alone (the emulator needs nothing more; a GPU's driver compiles it).
  bool ptxas = true;
};

// Throws InputError (a point outside the space) or AssemblyError (the toolchain rejected the text).
Compiled compile_variant(const VariantSpec& spec, const CompileOptions& options = {});
// Whether compile_variant can run ptxas here ("" when it can, else why not).
std::string ptxas_unavailable_reason();

struct TimingOptions {
  int warmup = 2;          // launches before timing
  int min_reps = 5;        // timed repetitions at least ...
  int max_reps = 200;      // ... and at most, until budget_ms of kernel time is spent
  double budget_ms = 100;
  // Before each repetition the device writes a buffer larger than its last-level cache, so every repetition
  // reads its inputs from memory (0: no flush).
  uint64_t flush_bytes = 512ull << 20;
};

// The bytes written before each repetition on `device`: flush_bytes, raised to twice the L2 cache where the
// backend read its size (the CUDA driver does), so that a larger cache never keeps inputs hot. 0 stays 0.
uint64_t flush_bytes_for(const TimingOptions& timing, const loader::DeviceProperties& device);

struct Timing {
  double median_ms = 0, p20_ms = 0, p80_ms = 0, min_ms = 0;
  int reps = 0;
  bool emulated = false; // the emulator's cost-model estimate, not a measurement
  std::string method;    // "events" or "emulator-estimate"
};

struct RunOptions {
  uint64_t seed = 1;
  bool check = true;  // compare with the reference (and fail wrong answers before timing)
  bool time = true;
  TimingOptions timing;
};

struct RunResult {
  Status status = Status::ok;
  std::string message;                  // why, when status != ok
  std::vector<gen::Mismatch> errors;    // one per output buffer, when checked
  double max_rel_error = 0, tolerance = 0;
  std::vector<std::string> diagnostics; // the device's own reports (emulator), in the check run
  std::optional<Timing> timing;
  double run_s = 0;                     // host wall time of loading, checking and timing
};

// Runs `problem` on `device`. Never throws for a kernel's fault: load rejections become `resource`, launch
// failures `runtime`, mismatches `wrong-answer`, device reports `runtime` (with the first lines in message).
RunResult run_variant(loader::Device& device, const Compiled& compiled, const VariantSpec& spec,
                      const gen::Problem& problem, const RunOptions& options = {});

} // namespace isatune::tune

#pragma once
// A static estimate of a variant on a problem, before any device time: resources read from its code object
// (registers, LDS, scratch, occupancy), the problem's FLOPs and compulsory bytes, and a roofline bound against
// the target's peaks (cdna::TargetInfo, shared/notes/cdna.md section 7), the compute side derated for the CUs
// (SMs) the grid leaves idle: ceil(workgroups / CUs) workgroups on the busiest CU, each at one CU's peak. It is a
// true lower bound (compute_ms at peak, memory_ms at peak bandwidth, each labelled; the emulator never reports
// less); the tuner ranks candidates by it. A bound, not a prediction.
#include <cstdint>
#include <string>

#include "isatune/code_object.h"
#include "isatune/codeobj/occupancy.h"
#include "isatune/gen/generator.h"

namespace isatune::tune {

struct Estimate {
  uint32_t vgprs = 0, agprs = 0, sgprs = 0, lds_bytes = 0, scratch_bytes = 0;
  codeobj::Occupancy occupancy;
  uint64_t workgroups = 0;     // of all launches
  uint32_t workgroup_size = 0; // threads, of the first launch
  double flops = 0, bytes = 0, intensity = 0; // FLOP per byte
  double peak_tflops = 0, peak_tbps = 0;      // the target's, for this data type (matrix or vector)
  double compute_ms = 0, memory_ms = 0;       // each resource alone at its peak
  double wave_efficiency = 1;                 // workgroups / (CUs x ceil(workgroups / CUs))
  double bound_ms = 0;                        // max(compute / wave_efficiency, memory)
  std::string bound_by;                       // "compute" or "memory"
  std::string peaks_of;                       // the chip whose peaks bound it: "MI300X", "H200 SXM"
  std::string note;                           // what the estimate could not know ("registers unknown: no ptxas")
};

// The peaks a roofline of an NVIDIA target uses (shared/notes/ptx.md section 7; A100: NVIDIA's datasheet).
struct NvidiaPeaks {
  std::string chip;          // "H200 SXM"
  uint32_t sms = 0;
  double matrix_tflops = 0;  // dense bf16/f16 tensor cores, f32 accumulation
  double fp8_tflops = 0;     // dense fp8 (0: none)
  double vector_tflops = 0;  // f32 FMA
  double hbm_tbps = 0;
};
// sm_80: A100 SXM4 80GB; sm_90/sm_90a: H200 SXM, or H100 SXM5 when `device_name` names an H100.
NvidiaPeaks nvidia_peaks(const std::string& isa, const std::string& device_name = "");

// Throws InputError for a code object of another vendor or a problem the generator rejects.
// NVIDIA: occupancy from ptxas's registers (code.kernels[].vgprs, 0 when ptxas has not run: then the
// occupancy counts shared memory and threads only, and `note` says so) and the launch's shared memory;
// workgroups_per_cu is blocks per SM, waves_per_simd warps per SM sub-partition (of 4).
Estimate estimate(const CodeObject& code, const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                  const gen::Params& params, const gen::Problem& problem, const std::string& device_name = "");

} // namespace isatune::tune

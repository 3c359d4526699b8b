#pragma once
// A static estimate of a variant on a problem, before any device time: resources read from its code object
// (registers, LDS, scratch, occupancy), the problem's FLOPs and compulsory bytes, and a roofline bound against
// the target's peaks (cdna::TargetInfo, shared/notes/cdna.md section 7), the compute side derated for the last
// partial wave of workgroups (and for grids smaller than the chip). The tuner ranks candidates by it; it is a bound, not a prediction.
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
  double wave_efficiency = 1;                 // workgroups / slots of the last full or partial wave
  double bound_ms = 0;                        // max(compute / wave_efficiency, memory)
  std::string bound_by;                       // "compute" or "memory"
};

// Throws InputError for a code object of another vendor or a problem the generator rejects.
Estimate estimate(const CodeObject& code, const gen::Generator& g, const std::string& isa, const gen::Signature& sig,
                  const gen::Params& params, const gen::Problem& problem);

} // namespace isatune::tune

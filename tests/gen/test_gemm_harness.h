#pragma once
// The GEMM tests' runner: the shared emulator runner (emu_run.h) for the gemm generator.
#include <map>
#include <string>

#include "emu_run.h"

namespace gemm_test {

using namespace isatune;

using RunOutcome = gen_test::Outcome;
using gen_test::assemble;

inline const gen::Generator& gemm() { return gen::find_generator("gemm"); }

// Runs one problem on `dev` (an emulator for isa) with code already assembled. Buffers get at least 4 bytes: a
// 1x1 f16 matrix is 2 bytes, and the kernels' dword buffer loads stay inside num_records, not the allocation.
inline RunOutcome run_problem(emu::EmuDevice& dev, const CodeObject& code, const gen::Signature& sig,
                              const gen::Params& params, const gen::Problem& prob, uint64_t seed,
                              std::map<std::string, double> scalars) {
  return gen_test::run_problem(dev, gemm(), code, sig, params, prob, seed, scalars, 4);
}

} // namespace gemm_test

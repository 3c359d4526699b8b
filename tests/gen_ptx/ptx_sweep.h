#pragma once
// The PTX generators' sweeps go through the tuner's own pipeline (tune::compile_variant, tune::run_variant)
// on the PTX emulator: generate, make the PTX object (and compile it with ptxas when present), run on fresh
// random inputs, compare every output with the float64 reference, and fail on any emulator report.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include "isatune/emu/ptx/device.h"
#include "isatune/gen/generator.h"
#include "isatune/tune/variant_runner.h"

namespace gen_ptx_test {

using namespace isatune;

// One emulator per target, shared by the tests of a program (devices are thread-safe; reports are taken per run).
// sm_90 code runs on the sm_90a emulator (a superset; the emulator has no plain sm_90 device).
inline emu::ptx::PtxEmuDevice& emu_device(const std::string& isa) {
  static std::map<std::string, std::unique_ptr<emu::ptx::PtxEmuDevice>> devices;
  const std::string target = isa == "sm_90" ? "sm_90a" : isa;
  auto& d = devices[target];
  if (!d) d = emu::ptx::make_ptx_emu_device({.target = target});
  return *d;
}

// Whether this machine has ptxas; prints why not once per program.
inline bool have_ptxas() {
  static const std::string why = tune::ptxas_unavailable_reason();
  static bool said = false;
  if (!why.empty() && !said) {
    std::printf("[ ptxas ] %s: ptxas checks are skipped here (the emulator checks still run)\n", why.c_str());
    said = true;
  }
  return why.empty();
}

struct SweepOutcome {
  tune::Compiled compiled;
  tune::RunResult result;
};

// Runs one point; `ptxas` false skips the ptxas compile (faster when the test checks only the emulator).
inline SweepOutcome run_point(const tune::VariantSpec& spec, const gen::Problem& problem, uint64_t seed,
                              bool ptxas = false) {
  SweepOutcome o;
  o.compiled = tune::compile_variant(spec, {.ptxas = ptxas});
  tune::RunOptions ro;
  ro.seed = seed;
  ro.time = false;
  o.result = tune::run_variant(emu_device(spec.isa), o.compiled, spec, problem, ro);
  return o;
}

// A description of a point and its result for a failure message.
inline std::string describe(const tune::VariantSpec& spec, const gen::Problem& problem, const tune::RunResult& r) {
  return spec.generator->name() + " " + spec.isa + " " + gen::format(spec.sig) + " " + gen::format(spec.params) +
         " on " + gen::format(problem) + ": " + std::string(tune::to_string(r.status)) + " " + r.message;
}

} // namespace gen_ptx_test

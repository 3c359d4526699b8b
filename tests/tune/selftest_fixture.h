#pragma once
// Helpers for the tuning pipeline tests: the selftest generator's job on the emulator, a temporary database.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "isatune/db/database.h"
#include "isatune/emu/emulator.h"
#include "isatune/gen/generator.h"
#include "isatune/tune/generator_evaluator.h"
#include "isatune/tune/strategy.h"
#include "isatune/tune/tuner.h"

namespace isatune::test {

inline tune::TuningJob selftest_job(int64_t n = 4096) {
  tune::TuningJob job;
  job.generator = &gen::find_generator("selftest");
  job.isa = "gfx942";
  job.sig = gen::parse_signature(*job.generator, {});
  job.problems = {{{"N", n}}};
  return job;
}

// An emulator that stops an endless loop quickly (the in-process runner has no watchdog).
inline std::shared_ptr<loader::Device> quick_emulator() {
  emu::EmuOptions o;
  o.target = "gfx942";
  o.max_instructions_per_wave = 200000;
  o.threads = 2;
  return emu::make_emu_device(o);
}

inline std::string temp_path(const std::string& name) {
  static const std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "isatune-tune-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    return tmpl;
  }();
  return dir + "/" + name;
}

inline int64_t count_rows(db::Database& d, const std::string& sql) {
  auto rows = d.query(sql);
  return std::get<int64_t>(rows.at(0).at(0));
}

inline tune::Evaluation status_of(const tune::TuneResult& r, const tune::GeneratorEvaluator& ev,
                                  const std::string& behaviour, int unroll) {
  for (const auto& h : r.history) {
    const auto* d = ev.detail(h.config);
    if (d && d->params.at("behaviour").text == behaviour && d->params.at("unroll").number == unroll) return h.eval;
  }
  ADD_FAILURE() << "no evaluation of behaviour=" << behaviour << " unroll=" << unroll;
  return {};
}

} // namespace isatune::test

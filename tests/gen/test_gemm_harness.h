#pragma once
// A small end-to-end runner for the GEMM tests: generate, assemble in process, run on the emulator, compare
// with the reference, collect the emulator's reports.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/toolchain/assembler.h"

namespace gemm_test {

using namespace isatune;

struct RunOutcome {
  double max_rel_error = 0;
  std::vector<std::string> reports;
  std::string where; // worst element
};

inline const gen::Generator& gemm() { return gen::find_generator("gemm"); }

inline CodeObject assemble(const std::string& isa, const gen::Generated& g) {
  static auto as = toolchain::make_assembler("llvm");
  return as->assemble(g.text, {isa, g.kernel_name}).code;
}

// Runs one problem on `dev` (an emulator for isa) with code already assembled.
inline RunOutcome run_problem(emu::EmuDevice& dev, const CodeObject& code, const gen::Signature& sig,
                              const gen::Params& params, const gen::Problem& prob, uint64_t seed,
                              std::map<std::string, double> scalars) {
  const gen::Generator& g = gemm();
  auto specs = g.buffers(sig, prob);
  gen::HostBuffers host = gen::make_buffers(specs, seed);
  std::vector<loader::DevicePtr> ptrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    size_t bytes = std::max<size_t>(host.bytes[i].size(), 4);
    loader::DevicePtr p = dev.alloc(bytes);
    if (!host.bytes[i].empty())
      dev.copy_to_device(p, host.bytes[i].data(), host.bytes[i].size());
    ptrs.push_back(p);
  }
  auto module = dev.load(code);
  for (const gen::Launch& l : g.launches(sig, params, prob, ptrs, scalars)) {
    auto fn = module->function(l.kernel);
    loader::LaunchConfig cfg;
    cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
    cfg.block = {l.block.x, l.block.y, l.block.z};
    dev.launch(*fn, cfg, l.kernargs);
  }
  dev.synchronize();
  std::vector<std::vector<double>> want = host.values;
  g.reference(sig, prob, scalars, want);
  RunOutcome out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].role != gen::BufferRole::output)
      continue;
    std::vector<uint8_t> bytes(host.bytes[i].size());
    dev.copy_to_host(bytes.data(), ptrs[i], bytes.size());
    auto got = gen::decode_all(specs[i].dtype, bytes);
    gen::Mismatch m = gen::compare_output(specs[i], got, want[i]);
    if (m.max_rel_error >= out.max_rel_error) {
      out.max_rel_error = m.max_rel_error;
      out.where = specs[i].name + "[col " + std::to_string(m.row) + ", row " + std::to_string(m.col) +
                  "] got " + std::to_string(m.got) + " want " + std::to_string(m.want);
    }
  }
  for (auto p : ptrs) dev.free(p);
  out.reports = dev.take_diagnostics();
  return out;
}

} // namespace gemm_test

#pragma once
// End-to-end runner for the generator tests: assemble in process, run one problem on the emulator, compare
// with the float64 reference, count writes outside the checked matrix (between rows of a strided output) and
// collect the emulator's reports. Unlike tune::run_variant it allocates buffers at their exact sizes (so the
// emulator's bounds checks see any overrun), reports where the worst element is, and counts gap writes.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isatune/emu/emulator.h"
#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/toolchain/assembler.h"

namespace gen_test {

using namespace isatune;

struct Outcome {
  double max_rel_error = 0;
  std::vector<std::string> reports;
  std::string where;
  uint64_t gap_writes = 0; // elements between output rows (ld > N) that changed
};

inline CodeObject assemble(const std::string& isa, const gen::Generated& g) {
  static auto as = toolchain::make_assembler("llvm");
  return as->assemble(g.text, {isa, g.kernel_name}).code;
}

inline Outcome run_problem(emu::EmuDevice& dev, const gen::Generator& g, const CodeObject& code,
                           const gen::Signature& sig, const gen::Params& params, const gen::Problem& prob,
                           uint64_t seed, const std::map<std::string, double>& scalars, size_t min_bytes = 1) {
  auto specs = g.buffers(sig, prob);
  gen::HostBuffers host = gen::make_buffers(specs, seed);
  std::vector<loader::DevicePtr> ptrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    // Exact sizes, so the bounds checks see any overrun; min_bytes for buffers that may be empty or tiny.
    loader::DevicePtr p = dev.alloc(std::max(host.bytes[i].size(), min_bytes));
    if (!host.bytes[i].empty())
      dev.copy_to_device(p, host.bytes[i].data(), host.bytes[i].size());
    ptrs.push_back(p);
  }
  auto module = dev.load(code);
  for (const gen::Launch& l : g.launches(code.isa, sig, params, prob, ptrs, scalars)) {
    auto fn = module->function(l.kernel);
    loader::LaunchConfig cfg;
    cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
    cfg.block = {l.block.x, l.block.y, l.block.z};
    dev.launch(*fn, cfg, l.kernargs);
  }
  dev.synchronize();
  std::vector<std::vector<double>> want = host.values;
  g.reference(sig, prob, scalars, want);
  Outcome out;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].role != gen::BufferRole::output)
      continue;
    std::vector<uint8_t> bytes(host.bytes[i].size());
    dev.copy_to_host(bytes.data(), ptrs[i], bytes.size());
    auto got = gen::decode_all(specs[i].dtype, bytes);
    gen::Mismatch m = gen::compare_output(specs[i], got, want[i]);
    if (m.max_rel_error >= out.max_rel_error) {
      out.max_rel_error = m.max_rel_error;
      out.where = specs[i].name + "[row " + std::to_string(m.row) + ", col " + std::to_string(m.col) +
                  "] got " + std::to_string(m.got) + " want " + std::to_string(m.want);
    }
    const uint64_t stride = specs[i].row_stride ? specs[i].row_stride : specs[i].cols;
    for (uint64_t e = 0; e < specs[i].elements; ++e)
      if (e % stride >= specs[i].cols &&
          std::memcmp(bytes.data() + e * size_of(specs[i].dtype),
                      host.bytes[i].data() + e * size_of(specs[i].dtype), size_of(specs[i].dtype)) != 0)
        ++out.gap_writes;
  }
  for (auto p : ptrs)
    dev.free(p);
  out.reports = dev.take_diagnostics();
  return out;
}

} // namespace gen_test

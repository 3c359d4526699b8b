#pragma once
// Runs the attention generator's kernels on an emulator (CDNA or PTX, any loader::Device) with exact buffer
// sizes and checks o against the float64 reference by the row norm and lse absolutely (tests/gen and
// tests/gen_ptx share it).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/loader/device.h"

namespace attention_test {

using namespace isatune;

inline const gen::Generator& attn() {
  return gen::find_generator("attention");
}

struct AttnOutcome {
  double o_error = 0;   // max |got - want| / row inf-norm of o
  double lse_error = 0; // max |got - want| of lse
  uint64_t gap_writes = 0;
  std::vector<std::string> reports;
  std::string where;
};

inline AttnOutcome run_attention(loader::Device& dev, const CodeObject& code, const gen::Signature& sig,
                                 const gen::Params& params, const gen::Problem& prob, uint64_t seed,
                                 double scale, const gen::Signature* reference_sig = nullptr) {
  const gen::Generator& g = attn();
  auto specs = g.buffers(sig, prob);
  gen::HostBuffers host = gen::make_buffers(specs, seed);
  std::vector<loader::DevicePtr> ptrs;
  for (size_t i = 0; i < specs.size(); ++i) {
    loader::DevicePtr p = dev.alloc(host.bytes[i].size()); // exact sizes: the bounds checks see any overrun
    dev.copy_to_device(p, host.bytes[i].data(), host.bytes[i].size());
    ptrs.push_back(p);
  }
  const std::map<std::string, double> sc{{"scale", scale}};
  auto module = dev.load(code);
  for (gen::Launch& l : g.launches(code.isa, sig, params, prob, ptrs, sc)) {
    for (const auto& tm : l.tensor_maps) { // sm_90a: the device encodes the TMA maps into their slots
      const TensorMap m = dev.encode_tensor_map(tm.map);
      std::copy(m.bytes.begin(), m.bytes.end(), l.kernargs.begin() + tm.kernarg_offset);
    }
    loader::LaunchConfig cfg;
    cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
    cfg.block = {l.block.x, l.block.y, l.block.z};
    cfg.dynamic_shared_bytes = l.dynamic_shared_bytes;
    cfg.cluster = {l.cluster.x, l.cluster.y, l.cluster.z};
    dev.launch(*module->function(l.kernel), cfg, l.kernargs);
  }
  dev.synchronize();
  std::vector<std::vector<double>> want = host.values;
  g.reference(reference_sig ? *reference_sig : sig, prob, sc, want);
  AttnOutcome out;
  for (size_t i = 3; i < specs.size(); ++i) {
    std::vector<uint8_t> bytes(host.bytes[i].size());
    dev.copy_to_host(bytes.data(), ptrs[i], bytes.size());
    auto got = gen::decode_all(specs[i].dtype, bytes);
    if (specs[i].name == "o") {
      gen::Mismatch m = gen::compare_output(specs[i], got, want[i]);
      out.o_error = m.max_rel_error;
      out.gap_writes = m.gap_writes;
      out.where = "o[row " + std::to_string(m.row) + ", col " + std::to_string(m.col) + "] got " +
                  std::to_string(m.got) + " want " + std::to_string(m.want);
    } else {
      for (size_t e = 0; e < got.size(); ++e) {
        const double d = std::fabs(got[e] - want[i][e]);
        if (!(d <= out.lse_error))
          out.lse_error = std::isnan(d) ? INFINITY : d;
      }
    }
  }
  for (auto p : ptrs)
    dev.free(p);
  out.reports = dev.take_diagnostics();
  return out;
}

} // namespace attention_test

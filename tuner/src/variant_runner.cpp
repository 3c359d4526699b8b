#include "isatune/tune/variant_runner.h"

#include <algorithm>
#include <tuple>
#include <chrono>
#include <cmath>
#include <random>

#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/kernel_assembler.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "isatune/toolchain/ptx_text_object.h"

namespace isatune::tune {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Device buffers that are freed however the run ends.
struct DeviceBuffers {
  loader::Device& device;
  std::vector<loader::DevicePtr> ptrs;
  explicit DeviceBuffers(loader::Device& d) : device(d) {}
  ~DeviceBuffers() {
    for (auto p : ptrs)
      if (p) device.free(p);
  }
  loader::DevicePtr alloc(size_t bytes) {
    ptrs.push_back(device.alloc(std::max<size_t>(bytes, 4)));
    return ptrs.back();
  }
};

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

} // namespace

namespace {
// sm_XY[a|f] -> {X, Y, arch-specific}; nullopt for anything else.
std::optional<std::tuple<int, int, bool>> parse_sm(const std::string& isa) {
  if (isa.rfind("sm_", 0) != 0 || isa.size() < 5) return std::nullopt;
  const bool specific = isa.back() == 'a' || isa.back() == 'f';
  const std::string digits = isa.substr(3, isa.size() - 3 - (specific ? 1 : 0));
  if (digits.size() < 2 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int cc = std::stoi(digits);
  return std::tuple{cc / 10, cc % 10, specific};
}

// SASS is binary compatible within a major version, forwards only; arch-specific SASS on its own chip only.
bool cubin_runs_on(const std::string& code_isa, const std::string& device_isa) {
  auto c = parse_sm(code_isa), d = parse_sm(device_isa);
  if (!c || !d) return code_isa == device_isa;
  const auto [cmaj, cmin, specific] = *c;
  const auto [dmaj, dmin, unused] = *d;
  (void)unused;
  if (specific) return cmaj == dmaj && cmin == dmin;
  return cmaj == dmaj && cmin <= dmin;
}
} // namespace

const CodeObject& Compiled::code_for(const loader::DeviceProperties& device) const {
  if (!machine_code || device.emulated) return code;
  return cubin_runs_on(machine_code->isa, device.isa) ? *machine_code : code;
}

uint64_t flush_bytes_for(const TimingOptions& timing, const loader::DeviceProperties& device) {
  if (!timing.flush_bytes) return 0;
  return std::max<uint64_t>(timing.flush_bytes, 2 * device.l2_bytes);
}

std::string ptxas_unavailable_reason() {
  return toolchain::ptx_backend_unavailable_reason(toolchain::PtxBackend::ptxas);
}

namespace {

// PTX: the text object for the emulator, then (with ptxas) the cubin and what ptxas says about it.
void compile_ptx_variant(Compiled& c, const VariantSpec& spec, const CompileOptions& options) {
  const std::string file = spec.generator->name() + "_" + spec.isa + ".ptx";
  c.code = toolchain::ptx_text_object(c.generated.text, spec.isa, file);
  if (!options.ptxas || !ptxas_unavailable_reason().empty()) return;
  toolchain::PtxCompileOptions o;
  o.target = spec.isa;
  o.backend = toolchain::PtxBackend::ptxas; // the reference: whole-program, honours setmaxnreg
  o.file_name = file;
  toolchain::PtxCompiled r = toolchain::compile_ptx(c.generated.text, o);
  toolchain::apply_ptxas_resources(c.code, r.report);
  for (const auto& issue : r.report.issues) {
    using K = toolchain::PtxIssueKind;
    if (issue.kind == K::wgmma_serialized || issue.kind == K::wgmma_wait_injected ||
        issue.kind == K::setmaxnreg_ignored)
      c.prune_reasons.push_back((issue.code.empty() ? "" : issue.code + " ") +
                                toolchain::ptx_issue_kind_name(issue.kind) + ": " + issue.message);
  }
  c.machine_code = std::move(r.code);
  c.ptx_report = std::move(r.report);
}

} // namespace

Compiled compile_variant(const VariantSpec& spec, const CompileOptions& compile_options) {
  if (!spec.generator) throw InputError("compile_variant: no generator");
  Compiled c;
  auto t0 = std::chrono::steady_clock::now();
  c.generated = spec.generator->generate(spec.isa, spec.sig, spec.params);
  c.generate_s = seconds_since(t0);
  auto t1 = std::chrono::steady_clock::now();
  if (gen::is_ptx_isa(spec.isa)) {
    compile_ptx_variant(c, spec, compile_options);
    c.assemble_s = seconds_since(t1);
    return c;
  }
  toolchain::AssembleOptions options;
  options.target = spec.isa;
  options.file_name = spec.generator->name() + ".s";
  if (c.generated.cdna) {
    // The builder's kernel goes straight to LLVM's object streamer: byte-identical to assembling the text,
    // several times faster (toolchain/kernel_assembler.h).
    c.code = toolchain::assemble_kernel(*c.generated.cdna, options).code;
  } else {
    // One assembler per thread: backends are thread-safe, and making one is cheap after the first.
    thread_local std::unique_ptr<toolchain::Assembler> assembler = toolchain::make_assembler("llvm");
    c.code = assembler->assemble(c.generated.text, options).code;
  }
  c.assemble_s = seconds_since(t1);
  return c;
}

RunResult run_variant(loader::Device& device, const Compiled& compiled, const VariantSpec& spec,
                      const gen::Problem& problem, const RunOptions& options) {
  RunResult r;
  const auto start = std::chrono::steady_clock::now();
  const gen::Generator& g = *spec.generator;
  auto finish = [&](Status s, std::string message) {
    r.status = s;
    r.message = std::move(message);
    r.run_s = seconds_since(start);
    return r;
  };

  std::shared_ptr<loader::Module> module;
  try {
    module = device.load(compiled.code_for(device.properties()));
  } catch (const Error& e) {
    return finish(Status::resource, std::string("load: ") + e.what());
  }

  const auto specs = g.buffers(spec.sig, problem);
  std::map<std::string, double> scalars;
  {
    std::mt19937_64 rng(options.seed ^ 0x5ca1a75ull);
    for (const auto& [name, range] : g.scalars(spec.sig))
      scalars[name] = std::uniform_real_distribution<double>(range.first, range.second)(rng);
  }
  gen::HostBuffers host = gen::make_buffers(specs, options.seed);
  DeviceBuffers dev(device);
  std::vector<uint64_t> addresses;
  try {
    for (size_t i = 0; i < specs.size(); ++i) {
      addresses.push_back(dev.alloc(host.bytes[i].size()));
      if (!host.bytes[i].empty()) device.copy_to_device(addresses.back(), host.bytes[i].data(), host.bytes[i].size());
    }
  } catch (const Error& e) {
    return finish(Status::resource, std::string("buffers: ") + e.what());
  }

  std::vector<gen::Launch> launches;
  std::vector<std::shared_ptr<loader::Function>> functions;
  try {
    launches = g.launches(spec.isa, spec.sig, spec.params, problem, addresses, scalars);
    for (auto& l : launches) {
      functions.push_back(module->function(l.kernel));
      // Tensor maps are encoded by the device (its driver's format) into the slots the generator left.
      for (const auto& tm : l.tensor_maps) {
        if (size_t(tm.kernarg_offset) + 128 > l.kernargs.size())
          throw InputError("tensor map at kernarg offset " + std::to_string(tm.kernarg_offset) +
                           " is beyond the " + std::to_string(l.kernargs.size()) + " bytes of arguments");
        const TensorMap m = device.encode_tensor_map(tm.map);
        std::copy(m.bytes.begin(), m.bytes.end(), l.kernargs.begin() + tm.kernarg_offset);
      }
    }
  } catch (const Error& e) {
    return finish(Status::runtime, std::string("launch setup: ") + e.what());
  }
  auto launch_all = [&] {
    for (size_t i = 0; i < launches.size(); ++i) {
      const auto& l = launches[i];
      loader::LaunchConfig cfg;
      cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
      cfg.block = {l.block.x, l.block.y, l.block.z};
      cfg.dynamic_shared_bytes = l.dynamic_shared_bytes;
      cfg.cluster = {l.cluster.x, l.cluster.y, l.cluster.z};
      device.launch(*functions[i], cfg, l.kernargs);
    }
  };

  // Check run: outputs start as random values, so a kernel that writes nothing fails.
  try {
    device.take_diagnostics(); // earlier launches' reports are not this variant's
    launch_all();
    device.synchronize();
  } catch (const Error& e) {
    return finish(Status::runtime, std::string("launch: ") + e.what());
  }
  r.diagnostics = device.take_diagnostics();
  if (options.check) {
    std::vector<std::vector<double>> want = host.values;
    g.reference(spec.sig, problem, scalars, want);
    r.tolerance = gen::tolerance(g.output_dtype(spec.sig));
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].role != gen::BufferRole::output) continue;
      std::vector<uint8_t> bytes(host.bytes[i].size());
      device.copy_to_host(bytes.data(), addresses[i], bytes.size());
      const auto got = gen::decode_all(specs[i].dtype, bytes);
      r.errors.push_back(gen::compare_output(specs[i], got, want[i]));
      r.max_rel_error = std::max(r.max_rel_error, r.errors.back().max_rel_error);
    }
  }
  if (!r.diagnostics.empty()) {
    std::string first = r.diagnostics.front();
    return finish(Status::runtime, "device checks report " + std::to_string(r.diagnostics.size()) +
                                       " problem(s); first: " + first);
  }
  if (options.check && !(r.max_rel_error <= r.tolerance)) {
    std::string worst;
    for (const auto& m : r.errors)
      if (m.max_rel_error == r.max_rel_error) {
        char buf[256];
        if (m.gap_writes)
          std::snprintf(buf, sizeof buf, "%s: %llu element(s) between rows written, first [row %llu, col %llu] = %.9g "
                        "(was %.9g)", m.buffer.c_str(), (unsigned long long)m.gap_writes, (unsigned long long)m.row,
                        (unsigned long long)m.col, m.got, m.want);
        else
          std::snprintf(buf, sizeof buf, "%s[row %llu, col %llu] = %.9g, reference %.9g", m.buffer.c_str(),
                        (unsigned long long)m.row, (unsigned long long)m.col, m.got, m.want);
        worst = buf;
      }
    char buf[128];
    std::snprintf(buf, sizeof buf, "max relative error %.3g > tolerance %.3g: ", r.max_rel_error, r.tolerance);
    return finish(Status::wrong_answer, buf + worst);
  }

  if (options.time) {
    Timing t;
    const bool emulated = device.properties().emulated;
    t.emulated = emulated;
    t.method = emulated ? "emulator-estimate" : "events";
    try {
      // The emulator's estimate is deterministic: one repetition, no warm-up, no flush.
      const int warmup = emulated ? 0 : options.timing.warmup;
      for (int i = 0; i < warmup; ++i) launch_all();
      loader::DevicePtr flush = 0;
      const uint64_t flush_bytes = flush_bytes_for(options.timing, device.properties());
      if (!emulated && flush_bytes) flush = dev.alloc(flush_bytes);
      auto begin = device.create_event(), end = device.create_event();
      std::vector<double> times;
      double spent = 0;
      const int min_reps = emulated ? 1 : options.timing.min_reps;
      const int max_reps = emulated ? 1 : options.timing.max_reps;
      while (int(times.size()) < max_reps && (int(times.size()) < min_reps || spent < options.timing.budget_ms)) {
        if (flush) device.fill(flush, uint8_t(times.size()), flush_bytes);
        device.record(*begin);
        launch_all();
        device.record(*end);
        device.synchronize();
        const double ms = device.elapsed_ms(*begin, *end);
        times.push_back(ms);
        spent += ms;
      }
      t.reps = int(times.size());
      t.median_ms = percentile(times, 0.5);
      t.p20_ms = percentile(times, 0.2);
      t.p80_ms = percentile(times, 0.8);
      t.min_ms = *std::min_element(times.begin(), times.end());
    } catch (const Error& e) {
      return finish(Status::runtime, std::string("timing: ") + e.what());
    }
    r.timing = t;
  }
  return finish(Status::ok, "");
}

} // namespace isatune::tune

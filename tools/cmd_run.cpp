// `isatune run FILE.hsaco|FILE.s --grid X[,Y,Z] --block X[,Y,Z] --arg ...`: runs one kernel once on a device
// (the CDNA emulator unless a GPU is present), with buffers made from the command line, and prints the launch,
// the emulated time and instruction counts, and the emulator's hazard reports. Syntax: docs/emulator.md.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "commands.h"
#include "emulators.h"
#include "exit_codes.h"
#include "file_io.h"
#include "isatune/codeobj/reader.h"
#include "isatune/emu/backend.h"
#include "isatune/emu/emulator.h"
#include "isatune/emu/ptx/device.h"
#include "isatune/error.h"
#include "isatune/loader/backend.h"
#include "isatune/loader/kernargs.h"
#include "isatune/ptx/tensor_map.h"
#include "isatune/toolchain/assembler.h"
#include "run_generated.h"
#include "ptx_resources.h"
#include "source_target.h"
#include "run_args.h"
#include "tensor_map_arg.h"

namespace isatune::cli {

namespace {

struct RunOptions {
  std::string input;
  GeneratorArgs gen; // KERNEL mode: a generator name instead of a file
  std::string kernel;
  std::string grid = "1";
  std::string block = "64";
  std::string cluster = "1";
  std::string scheduler = "lockstep"; // PTX emulator
  std::vector<std::string> args;
  std::vector<std::string> outs; // INDEX=PATH
  std::string kernargs;          // a raw kernarg file instead of --arg
  std::vector<std::string> buffers; // NAME=buf:...: device buffers that are not arguments (for tmap:NAME)
  std::string device;            // empty: a GPU if one is listed, else emu:<the code object's ISA>
  uint32_t dynamic_lds = 0;
  unsigned threads = 0;
  uint64_t seed = 1;
  bool strict = false;
  bool json = false;
  bool profile = false;
};

loader::Dim3 parse_dims(const std::string& what, const std::string& text) {
  uint32_t v[3] = {1, 1, 1};
  size_t n = 0, pos = 0;
  for (;;) {
    auto comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    uint64_t x = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), x);
    if (n == 3 || part.empty() || ec != std::errc() || p != part.data() + part.size() || x == 0 || x > UINT32_MAX)
      throw InputError(what + " '" + text + "': expected X[,Y[,Z]] with each a positive integer");
    v[n++] = uint32_t(x);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return {v[0], v[1], v[2]};
}

std::string dims_str(const loader::Dim3& d) {
  return std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

CodeObject load_code(const std::string& path) {
  // PTX: kernels and their parameters from the parser, each prepared by the PTX emulator (a kernel it cannot
  // run is rejected here, naming the line).
  if (ends_with(path, ".ptx")) return emu::ptx::ptx_code_object(read_text_file(path), "", path);
  if (ends_with(path, ".s") || ends_with(path, ".S") || ends_with(path, ".asm")) {
    std::string text = read_text_file(path);
    auto target = declared_amdgcn_target(text);
    if (!target) throw InputError(path + ": no .amdgcn_target directive; assemble it with `isatune asm --target`");
    return toolchain::make_assembler("llvm")->assemble(text, {*target, path}).code;
  }
  return codeobj::read_code_object_file(path);
}

std::string describe_args(const std::vector<const KernelArg*>& explicit_args) {
  std::string s;
  for (const auto* a : explicit_args)
    s += (s.empty() ? "" : ", ") + (a->name.empty() ? std::string("?") : a->name) +
         (a->value_kind == "global_buffer" ? " (buffer)" : " (" + std::to_string(a->size) + " bytes)");
  return s;
}

nlohmann::json report_json(const emu::HazardReport& r) {
  return {{"kind", std::string(emu::to_string(r.kind))},
          {"kernel", r.kernel},
          {"address", r.address},
          {"disassembly", r.disassembly},
          {"message", r.message},
          {"workgroup", {r.workgroup[0], r.workgroup[1], r.workgroup[2]}},
          {"wave", r.wave},
          {"line", r.line}, // PTX: the source line (0 on CDNA, which gives the address)
          {"thread", {r.thread[0], r.thread[1], r.thread[2]}},
          {"count", r.count}};
}

int run_run(const RunOptions& opt) {
  // A generator's name (and no file of that name): generate, run and check one variant.
  if (!std::filesystem::exists(opt.input)) {
    bool is_generator = false;
    for (const gen::Generator* g : gen::all_generators()) is_generator = is_generator || g->name() == opt.input;
    if (is_generator) {
      GeneratedRunOptions g;
      g.kernel = opt.input;
      g.args = opt.gen;
      g.device = opt.device;
      g.threads = opt.threads;
      g.seed = opt.seed;
      g.json = opt.json;
      g.profile = opt.profile;
      return run_generated(g);
    }
  }
  CodeObject code = load_code(opt.input);
  if (code.kernels.empty()) throw InputError(opt.input + ": the code object has no kernels");
  const KernelInfo* kernel = nullptr;
  if (opt.kernel.empty()) {
    if (code.kernels.size() > 1) {
      std::string names;
      for (const auto& k : code.kernels) names += (names.empty() ? "" : ", ") + k.name;
      throw InputError(opt.input + " has " + std::to_string(code.kernels.size()) + " kernels (" + names +
                       "): choose one with --kernel");
    }
    kernel = &code.kernels[0];
  } else {
    kernel = code.find_kernel(opt.kernel);
    if (!kernel) {
      std::string names;
      for (const auto& k : code.kernels) names += (names.empty() ? "" : ", ") + k.name;
      throw InputError("no kernel '" + opt.kernel + "' in " + opt.input + " (it has: " + names + ")");
    }
  }

  loader::LaunchConfig config;
  config.grid = parse_dims("--grid", opt.grid);
  config.block = parse_dims("--block", opt.block);
  config.dynamic_shared_bytes = opt.dynamic_lds;
  config.cluster = parse_dims("--cluster", opt.cluster);

  // Arguments, checked against the kernel's explicit (non-hidden) arguments in order.
  std::vector<const KernelArg*> explicit_args;
  for (const auto& a : kernel->args)
    if (a.value_kind.rfind("hidden_", 0) != 0) explicit_args.push_back(&a);
  // --arg NAME=SPEC goes to the argument of that name; the others fill the remaining places in order.
  std::vector<std::string> specs(explicit_args.size());
  std::vector<bool> given(explicit_args.size(), false);
  std::vector<std::string> positional;
  if (!opt.kernargs.empty() && !opt.args.empty())
    throw InputError("--kernargs FILE gives every argument's bytes; it does not combine with --arg");
  for (const auto& text : opt.args) {
    auto eq = text.find('='), colon = text.find(':');
    if (eq == std::string::npos || (colon != std::string::npos && colon < eq)) {
      positional.push_back(text);
      continue;
    }
    std::string name = text.substr(0, eq);
    size_t at = explicit_args.size();
    for (size_t i = 0; i < explicit_args.size(); ++i)
      if (explicit_args[i]->name == name) at = i;
    if (at == explicit_args.size())
      throw InputError("--arg '" + text + "': kernel '" + kernel->name + "' has no argument named '" + name +
                       "' (it takes: " + describe_args(explicit_args) + ")");
    if (given[at]) throw InputError("--arg '" + text + "': argument '" + name + "' is given twice");
    specs[at] = text.substr(eq + 1);
    given[at] = true;
  }
  size_t next = 0;
  for (const auto& text : positional) {
    while (next < given.size() && given[next]) ++next;
    if (next == given.size()) {
      next = given.size() + 1;
      break;
    }
    specs[next] = text;
    given[next] = true;
  }
  // With a name given, the arguments not given are zero (a null pointer for a buffer), as are pads and unnamed
  // fields; positional arguments alone must be complete, so that a forgotten one is an error, not a zero.
  const bool named = positional.size() != opt.args.size();
  if (opt.kernargs.empty() &&
      (next > given.size() || (!named && std::count(given.begin(), given.end(), true) != std::ptrdiff_t(given.size()))))
    throw InputError("kernel '" + kernel->name + "' takes " + std::to_string(explicit_args.size()) + " argument" +
                     (explicit_args.size() == 1 ? "" : "s") + " [" + describe_args(explicit_args) + "], got " +
                     std::to_string(opt.args.size()) + " --arg");
  std::mt19937_64 rng(opt.seed);
  std::vector<ParsedArg> args;
  for (size_t i = 0; i < specs.size() && opt.kernargs.empty(); ++i) {
    const KernelArg& k = *explicit_args[i];
    std::string kname = "argument " + std::to_string(i) + " (" + (k.name.empty() ? "?" : k.name) + ")";
    bool pointer_arg = k.value_kind == "global_buffer" || k.value_kind == "dynamic_shared_pointer";
    if (!given[i] || specs[i] == "zero" || specs[i] == "null") { // zero bytes: 0, or a null pointer
      ParsedArg z;
      z.text = given[i] ? specs[i] : "zero";
      z.bytes.assign(k.size, 0);
      args.push_back(std::move(z));
      continue;
    }
    ParsedArg a = parse_arg(i, specs[i], rng);
    if (a.tensor_map && (pointer_arg || k.size != sizeof(TensorMap)))
      bad_arg(i, a.text, kname + " is a " + std::to_string(k.size) + "-byte " + k.value_kind +
                             ", not a 128-byte tensor map (.param .align 64 .b8 NAME[128])");
    if (a.tensor_map) {
      args.push_back(std::move(a));
      continue;
    }
    if (a.buffer && !pointer_arg && k.size != 8)
      bad_arg(i, a.text, kname + " is a " + std::to_string(k.size) + "-byte " + k.value_kind + ", not a buffer");
    if (!a.buffer && pointer_arg)
      bad_arg(i, a.text, kname + " is a buffer; pass buf:TYPE:N:zero|random|file=PATH");
    if (!a.buffer && a.bytes.size() != k.size)
      bad_arg(i, a.text, kname + " is " + std::to_string(k.size) + " bytes; " + a.type->name + " is " +
                             std::to_string(a.bytes.size()));
    args.push_back(std::move(a));
  }
  // --buffer NAME=buf:...: device buffers that are not kernel arguments (what a tensor map covers), after the
  // arguments in `args`; named for tmap:NAME and written back with :out=PATH like the others.
  const size_t nargs = args.size();
  std::vector<std::string> buffer_names;
  for (const auto& text : opt.buffers) {
    auto eq = text.find('=');
    std::string name = eq == std::string::npos ? "" : text.substr(0, eq);
    if (name.empty() || name.find(':') != std::string::npos)
      throw InputError("--buffer '" + text + "': expected NAME=buf:TYPE:N:zero|random|file=PATH[:out=PATH]");
    for (const auto& k : explicit_args)
      if (k->name == name) throw InputError("--buffer '" + text + "': '" + name + "' is a kernel argument; use --arg");
    if (std::find(buffer_names.begin(), buffer_names.end(), name) != buffer_names.end())
      throw InputError("--buffer '" + text + "': '" + name + "' is given twice");
    ParsedArg b = parse_arg(args.size(), text.substr(eq + 1), rng);
    if (!b.buffer) throw InputError("--buffer '" + text + "': expected buf:TYPE:N:zero|random|file=PATH");
    b.text = text;
    buffer_names.push_back(name);
    args.push_back(std::move(b));
  }
  // Each tensor map names a buffer: an argument by index or name, or a --buffer by name.
  for (size_t i = 0; i < nargs; ++i) {
    if (!args[i].tensor_map) continue;
    const std::string& ref = args[i].tmap.buffer;
    size_t at = args.size();
    if (ref.find_first_not_of("0123456789") == std::string::npos) {
      at = std::stoul(ref);
    } else {
      for (size_t j = 0; j < explicit_args.size(); ++j)
        if (explicit_args[j]->name == ref) at = j;
      for (size_t j = 0; j < buffer_names.size(); ++j)
        if (buffer_names[j] == ref) at = nargs + j;
    }
    if (at >= args.size() || !args[at].buffer)
      bad_arg(i, args[i].text, "BUF '" + ref + "' is not a buffer (give the index or name of a buf:... argument, "
                               "or the name of a --buffer)");
    args[i].tmap_buffer = at;
  }
  for (const auto& o : opt.outs) {
    auto eq = o.find('=');
    size_t idx = 0;
    auto [p, ec] = std::from_chars(o.data(), o.data() + (eq == std::string::npos ? 0 : eq), idx);
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || p != o.data() + eq || eq + 1 == o.size())
      throw InputError("--out '" + o + "': expected ARGINDEX=PATH, e.g. --out 2=c.bin");
    if (idx >= args.size() || !args[idx].buffer)
      throw InputError("--out '" + o + "': argument " + std::to_string(idx) + " is not a buffer");
    args[idx].out = o.substr(eq + 1);
  }

  // PTX: ptxas's registers per thread, so the emulator refuses what the GPU would (skipped, with the reason
  // printed, when ptxas is absent). After the arguments are checked: a typo costs no compile.
  std::string registers_note;
  if (code.format == CodeFormat::ptx) registers_note = read_cubin_resources(code);

  // The device: a GPU when one is listed and the code fits it, else the emulator for the code object's ISA.
  std::string spec = opt.device;
  if (spec.empty()) {
    for (const auto& d : loader::list_devices())
      if ((d.backend == "hip" || d.backend == "cuda") && d.isa == code.isa) {
        spec = d.backend + ":" + std::to_string(d.index);
        break;
      }
    if (spec.empty()) spec = "emu:" + code.isa;
  } else if (spec == "emu") {
    spec = "emu:" + code.isa;
  }
  auto device = loader::open_device(spec);
  auto* emu_dev = dynamic_cast<emu::EmuDevice*>(device.get());
  auto* ptx_dev = dynamic_cast<emu::ptx::PtxEmuDevice*>(device.get());
  if (emu_dev) {
    emu_dev->set_strict(opt.strict);
    if (opt.threads) emu_dev->set_threads(opt.threads);
  } else if (ptx_dev) {
    ptx_dev->set_strict(opt.strict);
    if (opt.threads) ptx_dev->set_threads(opt.threads);
  } else if (opt.strict) {
    throw InputError("--strict needs the emulator (--device emu); " + spec + " has no hazard checks");
  }
  if (opt.scheduler != "lockstep") {
    if (opt.scheduler != "adversarial")
      throw InputError("--scheduler '" + opt.scheduler + "': expected lockstep or adversarial");
    if (!ptx_dev) throw InputError("--scheduler needs the PTX emulator (--device emu:sm_80|emu:sm_90a)");
    ptx_dev->set_scheduler(emu::ptx::Scheduler::adversarial);
  }
  const auto& props = device->properties();

  auto module = device->load(code);
  auto function = module->function(kernel->name);
  std::vector<loader::ArgValue> values;
  for (size_t i = 0; i < args.size(); ++i) {
    auto& a = args[i];
    if (a.buffer) {
      a.ptr = device->alloc(a.bytes.size());
      device->copy_to_device(a.ptr, a.bytes.data(), a.bytes.size());
    }
    if (i >= nargs) continue; // a --buffer: not a kernel argument
    values.push_back(a.buffer ? loader::ArgValue::pointer(a.ptr) : loader::ArgValue{"", a.bytes});
  }
  for (size_t i = 0; i < nargs; ++i) {
    auto& a = args[i];
    if (!a.tensor_map) continue;
    const ParsedArg& b = args[a.tmap_buffer];
    a.tmap.args.global_address = b.ptr;
    uint64_t span = isatune::ptx::tensor_map_span_bytes(a.tmap.args);
    if (span > b.bytes.size())
      bad_arg(i, a.text, "the tensor spans " + std::to_string(span) + " bytes, but buffer '" + a.tmap.buffer +
                             "' holds " + std::to_string(b.bytes.size()));
    TensorMap map;
    try {
      map = device->encode_tensor_map(a.tmap.args);
    } catch (const InputError& e) {
      bad_arg(i, a.text, e.what());
    }
    values[i].bytes.assign(map.bytes.begin(), map.bytes.end());
  }
  std::vector<uint8_t> kernargs;
  if (opt.kernargs.empty()) {
    kernargs = loader::pack_kernargs(*kernel, values, config);
  } else { // raw bytes, as the kernel reads them (hidden AMD arguments included), padded with zeros
    kernargs = read_binary(opt.kernargs);
    if (kernargs.size() > kernel->kernarg_size)
      throw InputError("--kernargs " + opt.kernargs + ": " + std::to_string(kernargs.size()) + " bytes, more than the " +
                       std::to_string(kernel->kernarg_size) + " bytes of kernel '" + kernel->name + "''s arguments");
    kernargs.resize(kernel->kernarg_size, 0);
  }

  bool stopped = false;
  std::string stop_message;
  double ms = 0;
  try {
    auto e0 = device->create_event(), e1 = device->create_event();
    device->record(*e0);
    device->launch(*function, config, kernargs);
    device->record(*e1);
    device->synchronize();
    ms = device->elapsed_ms(*e0, *e1);
  } catch (const emu::HazardError& e) {
    stopped = true;
    stop_message = e.what();
  }

  nlohmann::json jout = nlohmann::json::array();
  if (!stopped)
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].out.empty()) continue;
      std::vector<uint8_t> back(args[i].bytes.size());
      device->copy_to_host(back.data(), args[i].ptr, back.size());
      write_binary_file(args[i].out, back);
      if (i < nargs)
        jout.push_back({{"arg", i}, {"path", args[i].out}, {"bytes", back.size()}});
      else
        jout.push_back({{"buffer", buffer_names[i - nargs]}, {"path", args[i].out}, {"bytes", back.size()}});
    }
  for (auto& a : args)
    if (a.buffer) device->free(a.ptr);

  std::vector<emu::HazardReport> reports;
  if (emu_dev) reports = emu_dev->reports();
  if (ptx_dev) reports = ptx_dev->reports();
  if (!stopped) // a strict stop prints its one report below
    for (const auto& r : reports) std::fprintf(stderr, "hazard: %s\n", r.str().c_str());

  const uint64_t threads = uint64_t(config.block.x) * config.block.y * config.block.z;
  const uint64_t total = threads * config.grid.x * config.grid.y * config.grid.z;
  if (opt.json) {
    nlohmann::json j;
    j["kernel"] = kernel->name;
    j["file"] = opt.input;
    j["device"] = {{"spec", spec},           {"name", props.name},         {"isa", props.isa},
                   {"target_id", props.target_id}, {"emulated", props.emulated}};
    j["launch"] = {{"grid", {config.grid.x, config.grid.y, config.grid.z}},
                   {"block", {config.block.x, config.block.y, config.block.z}},
                   {"dynamic_shared_bytes", config.dynamic_shared_bytes},
                   {"threads", total}};
    nlohmann::json jargs = nlohmann::json::array();
    for (size_t i = 0; i < nargs; ++i) {
      const auto& a = args[i];
      nlohmann::json ja = {{"index", i}, {"name", explicit_args[i]->name}, {"text", a.text}};
      if (a.buffer) ja.update({{"type", a.type->name}, {"count", a.count}, {"init", a.init}});
      if (a.tensor_map) {
        const auto& m = a.tmap.args;
        ja.update({{"tensor_map", {{"buffer", a.tmap_buffer},
                                   {"type", a.tmap.type_name},
                                   {"dims", std::vector<uint64_t>(m.global_dim.begin(), m.global_dim.begin() + m.rank)},
                                   {"box", std::vector<uint32_t>(m.box_dim.begin(), m.box_dim.begin() + m.rank)},
                                   {"swizzle", uint32_t(m.swizzle)}}}});
      }
      jargs.push_back(ja);
    }
    j["args"] = jargs;
    if (code.format == CodeFormat::ptx) {
      j["registers"] = kernel->vgprs ? nlohmann::json(kernel->vgprs) : nlohmann::json(nullptr);
      if (!registers_note.empty()) j["registers_note"] = registers_note;
    }
    j["stopped"] = stopped;
    if (stopped) j["stop_reason"] = stop_message;
    if (emu_dev && !stopped) {
      const auto& s = emu_dev->last_launch();
      j["stats"] = {{"workgroups", s.workgroups},         {"waves", s.waves},
                    {"instructions", s.instructions},     {"lane_instructions", s.lane_instructions},
                    {"estimated_cycles", s.estimated_cycles}, {"estimated_ms", s.estimated_ms},
                    {"host_seconds", s.host_seconds}};
    }
    if (ptx_dev && !stopped) {
      const auto& s = ptx_dev->last_launch();
      j["stats"] = {{"ctas", s.ctas},
                    {"warps", s.warps},
                    {"instructions", s.instructions},
                    {"thread_instructions", s.thread_instructions},
                    {"estimated_cycles", s.estimated_cycles},
                    {"estimated_ms", s.estimated_ms},
                    {"host_seconds", s.host_seconds}};
    }
    j["time_ms"] = stopped ? nlohmann::json(nullptr) : nlohmann::json(ms);
    j["time_kind"] = props.emulated ? "emulated" : "measured";
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& r : reports) jr.push_back(report_json(r));
    j["reports"] = jr;
    j["outputs"] = jout;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "kernel   " << kernel->name << " on " << spec << " (" << props.name << ")\n";
    std::cout << "launch   grid " << dims_str(config.grid) << " x block " << dims_str(config.block) << " = " << total
              << " threads\n";
    if (code.format == CodeFormat::ptx)
      std::cout << "regs     " << (kernel->vgprs ? std::to_string(kernel->vgprs) + " per thread (ptxas)"
                                                 : "unknown: " + registers_note)
                << "\n";
    if (!stopped) {
      char buf[160];
      if (props.emulated) {
        std::snprintf(buf, sizeof buf, "%.6f ms emulated (an instruction-cost estimate, not a measurement)", ms);
      } else {
        std::snprintf(buf, sizeof buf, "%.6f ms measured (one launch, events)", ms);
      }
      std::cout << "time     " << buf << "\n";
      if (emu_dev) {
        const auto& s = emu_dev->last_launch();
        std::cout << "executed " << s.workgroups << " workgroups, " << s.waves << " waves, " << s.instructions
                  << " wave instructions, " << s.lane_instructions << " lane instructions, "
                  << s.estimated_cycles << " estimated cycles\n";
        std::snprintf(buf, sizeof buf, "%.3f s", s.host_seconds);
        std::cout << "host     " << buf << " to emulate\n";
      }
      if (ptx_dev) {
        const auto& s = ptx_dev->last_launch();
        std::cout << "executed " << s.ctas << " CTAs, " << s.warps << " warps, " << s.instructions
                  << " warp instructions, " << s.thread_instructions << " thread instructions, "
                  << s.estimated_cycles << " estimated cycles\n";
        std::snprintf(buf, sizeof buf, "%.3f s", s.host_seconds);
        std::cout << "host     " << buf << " to emulate\n";
      }
    }
    for (const auto& o : jout)
      std::cout << "wrote    "
                << (o.contains("arg") ? "argument " + std::to_string(o["arg"].get<size_t>())
                                      : "buffer " + o["buffer"].get<std::string>())
                << " to " << o["path"].get<std::string>() << " (" << o["bytes"].get<size_t>() << " bytes)\n";
    if (emu_dev || ptx_dev) std::cout << "hazards  " << reports.size() << (reports.empty() ? "" : " (listed on stderr)") << "\n";
  }
  if (stopped) {
    std::fprintf(stderr, "isatune: --strict: stopped at the first hazard: %s\n", stop_message.c_str());
    return kExitInputError;
  }
  return kExitOk;
}

} // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global, int& status) {
  register_emulators(); // at startup, so that `isatune devices` lists the emulator too
  auto opt = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run", "Run one kernel once (on the CDNA emulator unless a GPU is present) and report hazards and timing");
  cmd->add_option("file", opt->input,
                  "Code object (.hsaco), AMD assembly (.s, assembled in process), PTX (.ptx, run on the PTX "
                  "emulator emu:sm_80|emu:sm_90a, the .target's by default), or a generator name (gemm, "
                  "softmax, ...: generate, run and check against the reference; then use --target, --sig, "
                  "--param, --problem)")
      ->required();
  cmd->add_option("--target", opt->gen.target, "KERNEL mode: target ISA (default gfx942)");
  cmd->add_option("--sig", opt->gen.sig, "KERNEL mode: signature fields k=v[,k=v...]");
  cmd->add_option("--param", opt->gen.params, "KERNEL mode: tuning parameters k=v[,k=v...]");
  cmd->add_option("--problem", opt->gen.problem, "KERNEL mode: problem sizes k=v[,k=v...]");
  cmd->add_option("--kernel", opt->kernel, "Kernel to run (default: the only one)");
  cmd->add_option("--grid", opt->grid, "Workgroups per dimension: X[,Y,Z] (default 1)");
  cmd->add_option("--block", opt->block, "Threads per workgroup: X[,Y,Z] (default 64)");
  cmd->add_option("--arg", opt->args,
                  "Kernel argument, in order, or NAME=SPEC for the argument of that name (then the arguments not "
                  "given are zero, pointers null; `null` or `zero` as SPEC says so explicitly): TYPE:VALUE (u8 u16 u32 "
                  "i32 u64 i64 f32 f64), a buffer buf:TYPE:N:zero|random|file=PATH[:out=PATH] (random: floats in "
                  "[-1,1), integers in [0,256)), or a TMA tensor map over a buffer argument (PTX, sm_90a) "
                  "tmap:BUF:TYPE:DIMS:box=BOX[:strides=S][:swizzle=none|32B|64B|128B][:elemstrides=E]"
                  "[:interleave=none|16B|32B][:oob=zero|nan][:l2=none|64B|128B|256B] (BUF: index or name; lists "
                  "joined by 'x', innermost first; strides in bytes, default packed)");
  cmd->add_option("--buffer", opt->buffers,
                  "NAME=buf:TYPE:N:zero|random|file=PATH[:out=PATH]: a device buffer that is not a kernel argument, "
                  "for a tensor map to cover (tmap:NAME:...); written back with :out=PATH");
  cmd->add_option("--kernargs", opt->kernargs,
                  "FILE: the kernel's argument bytes as they are (hidden AMD arguments included), padded with zeros "
                  "to its kernarg size; instead of --arg");
  cmd->add_option("--out", opt->outs, "ARGINDEX=PATH: write buffer argument ARGINDEX (0-based) to PATH after the run");
  cmd->add_option("--device", opt->device,
                  "Device: emu[:gfx90a|gfx942|gfx950|sm_80|sm_90a], hip:N, cuda:N (default: a GPU if listed, else "
                  "emu for the code "
                  "object's ISA)");
  cmd->add_option("--cluster", opt->cluster, "PTX: CTAs per cluster X[,Y,Z] (sm_90a; default 1)");
  cmd->add_option("--scheduler", opt->scheduler,
                  "PTX emulator: lockstep (default) or adversarial (one lane at a time, last first: a missing "
                  "bar.warp.sync or bar.sync shows as wrong data as well as a report)");
  cmd->add_option("--dynamic-lds", opt->dynamic_lds, "Dynamic LDS (shared memory) bytes per workgroup");
  cmd->add_option("--threads", opt->threads, "Emulator worker threads (default: all cores)");
  cmd->add_option("--seed", opt->seed, "Seed of buf:...:random (default 1)");
  cmd->add_flag("--strict", opt->strict, "Stop at the first hazard and exit 1");
  cmd->add_flag("--json", opt->json, "Print one JSON object instead of text");
  cmd->add_flag("--profile", opt->profile,
                "KERNEL mode on the CDNA emulator: the timing model's view of the timed launch: busiest CU vs HBM/L2, "
                "unit busy fractions, achieved vs peak FLOP/s and bytes/s, per loop and per instruction issue and "
                "stall cycles by cause (dependency, waitcnt, lds_bank_conflict, memory_bandwidth, barrier, "
                "mfma_busy, valu_busy); with --json under \"profile\". Example: isatune run gemm --target gfx942 "
                "--sig a=bf16,b=bf16,cd=f32,layout=NT --param tile_m=128,tile_n=128 --problem M=512,N=512,K=256 "
                "--profile");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_run(*opt); }); });
}

} // namespace isatune::cli

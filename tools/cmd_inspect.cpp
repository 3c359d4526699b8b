// `isatune inspect FILE`: what a code object holds: target, kernels, metadata, descriptor, occupancy, code.
// AMD code objects and NVIDIA cubins share one output schema; vendor-only facts are extra keys.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/cdna/target.h"
#include "file_io.h"
#include "isatune/codeobj/cubin.h"
#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/occupancy.h"
#include "isatune/codeobj/reader.h"
#include "resource_names.h"
#include "table.h"

namespace isatune::cli {

namespace {
struct InspectOptions {
  std::string input;
  std::string kernel;
  uint32_t workgroup_size = 0;
  bool disasm = false;
  bool json = false;
};

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string bytes_hex(const std::vector<uint8_t>& bytes) {
  std::string s;
  // Instruction words are little-endian dwords; print them as llvm-objdump does.
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    char buf[12];
    uint32_t w = bytes[i] | bytes[i + 1] << 8 | bytes[i + 2] << 16 | static_cast<uint32_t>(bytes[i + 3]) << 24;
    std::snprintf(buf, sizeof buf, "%s%08X", s.empty() ? "" : " ", w);
    s += buf;
  }
  return s;
}

std::string denorm_name(uint32_t mode) {
  switch (mode) {
  case 0: return "flush in+out";
  case 1: return "flush out";
  case 2: return "flush in";
  default: return "keep";
  }
}

nlohmann::json descriptor_json(const KernelDescriptor& d) {
  return {{"group_segment_fixed_size", d.group_segment_fixed_size},
          {"private_segment_fixed_size", d.private_segment_fixed_size},
          {"kernarg_size", d.kernarg_size},
          {"kernel_code_entry_byte_offset", d.kernel_code_entry_byte_offset},
          {"compute_pgm_rsrc1", d.compute_pgm_rsrc1},
          {"compute_pgm_rsrc2", d.compute_pgm_rsrc2},
          {"compute_pgm_rsrc3", d.compute_pgm_rsrc3},
          {"kernel_code_properties", d.kernel_code_properties},
          {"vgprs_allocated", d.vgprs_allocated},
          {"sgprs_allocated", d.sgprs_allocated},
          {"accum_offset", d.accum_offset},
          {"user_sgpr_count", d.user_sgpr_count},
          {"wave32", d.wave32},
          {"enable_private_segment", d.enable_private_segment},
          {"workgroup_id", {d.workgroup_id_x, d.workgroup_id_y, d.workgroup_id_z}},
          {"workgroup_info", d.workgroup_info},
          {"workitem_id_vgprs", d.workitem_id_vgprs},
          {"float_round_mode_32", d.float_round_mode_32},
          {"float_round_mode_16_64", d.float_round_mode_16_64},
          {"float_denorm_mode_32", d.float_denorm_mode_32},
          {"float_denorm_mode_16_64", d.float_denorm_mode_16_64},
          {"ieee_mode", d.ieee_mode},
          {"dx10_clamp", d.dx10_clamp},
          {"tg_split", d.tg_split},
          {"user_sgpr_kernarg_segment_ptr", d.user_sgpr_kernarg_segment_ptr},
          {"user_sgpr_dispatch_ptr", d.user_sgpr_dispatch_ptr},
          {"user_sgpr_queue_ptr", d.user_sgpr_queue_ptr},
          {"user_sgpr_dispatch_id", d.user_sgpr_dispatch_id},
          {"user_sgpr_private_segment_size", d.user_sgpr_private_segment_size},
          {"kernarg_preload_length", d.kernarg_preload_length},
          {"kernarg_preload_offset", d.kernarg_preload_offset}};
}

// Reads an AMD code object or an NVIDIA cubin, whichever the ELF header says.
struct LoadedObject {
  CodeObject code;
  std::vector<codeobj::CubinKernelExtra> cubin_extra; // NVIDIA only, one per kernel
};

LoadedObject load_object(const std::string& path) {
  std::string raw = read_text_file(path);
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  if (codeobj::is_cubin(bytes)) {
    auto cubin = codeobj::read_cubin_full(bytes, path);
    return {std::move(cubin.code), std::move(cubin.extra)};
  }
  return {codeobj::read_code_object(bytes, path), {}};
}

std::string dims(const std::array<uint32_t, 3>& d) {
  if (d[0] == 0) return "-";
  return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

int run_inspect(const InspectOptions& opt) {
  LoadedObject loaded = load_object(opt.input);
  const CodeObject& code = loaded.code;
  bool nvidia = code.vendor == Vendor::nvidia;
  if (!opt.kernel.empty() && !code.find_kernel(opt.kernel)) {
    std::string names;
    for (const auto& k : code.kernels) names += (names.empty() ? "" : ", ") + k.name;
    throw InputError(opt.input + ": no kernel named '" + opt.kernel + "' (kernels: " + names + ")");
  }
  const cdna::TargetInfo* target = nvidia ? nullptr : cdna::find_target(code.isa);
  bool modelled = nvidia || target;

  nlohmann::json j_kernels = nlohmann::json::array();
  std::ostringstream text;
  text << "file      " << opt.input << "\n"
       << "target    " << code.target_id << "\n"
       << "isa       " << code.isa << (modelled ? "" : " (not a target isatune models: no occupancy)") << "\n"
       << "bytes     " << code.bytes.size() << "\n"
       << "sha256    " << code.sha256 << "\n"
       << "kernels   " << code.kernels.size() << "\n";

  for (size_t ki = 0; ki < code.kernels.size(); ++ki) {
    const KernelInfo& k = code.kernels[ki];
    if (!opt.kernel.empty() && k.name != opt.kernel) continue;
    nlohmann::json jk = {{"name", k.name},
                         {"symbol", k.symbol},
                         {"kernarg_size", k.kernarg_size},
                         {"kernarg_align", k.kernarg_align},
                         {"max_workgroup_size", k.max_workgroup_size},
                         {"wave_size", k.wave_size},
                         {"code_offset", k.code_offset},
                         {"code_size", k.code_size}};
    // Resources in the vendor's words: NVIDIA registers/shared_bytes/local_bytes, AMD vgprs/lds_bytes/...
    jk.update(resources_json(k, code.vendor));
    if (code.vendor == Vendor::amd) jk["agprs_source"] = k.agprs_source;
    nlohmann::json jargs = nlohmann::json::array();
    Table args({"arg", "offset", "size", "kind", "address space", "access"});
    for (const auto& a : k.args) {
      jargs.push_back({{"name", a.name},
                       {"offset", a.offset},
                       {"size", a.size},
                       {"value_kind", a.value_kind},
                       {"address_space", a.address_space},
                       {"access", a.access}});
      args.add({a.name.empty() ? "-" : a.name, std::to_string(a.offset), std::to_string(a.size), a.value_kind,
                a.address_space.empty() ? "-" : a.address_space, a.access.empty() ? "-" : a.access});
    }
    jk["args"] = jargs;

    text << "\nkernel " << k.name << "\n"
         << "  symbol              " << k.symbol << "\n";
    if (nvidia) {
      text << "  registers           " << k.vgprs << " per thread\n"
           << "  shared              " << k.lds_bytes << " bytes static\n"
           << "  stack               " << k.scratch_bytes << " bytes per thread\n"
           << "  params              " << k.kernarg_size << " bytes\n"
           << "  block               max " << k.max_workgroup_size << " threads, warp" << k.wave_size << "\n";
      if (ki < loaded.cubin_extra.size()) {
        const auto& x = loaded.cubin_extra[ki];
        jk["max_threads"] = x.max_threads;
        jk["req_threads"] = x.req_threads;
        jk["cluster_dims"] = x.cluster_dims;
        jk["max_registers"] = x.max_registers;
        text << "  maxntid / reqntid   " << dims(x.max_threads) << " / " << dims(x.req_threads) << "\n"
             << "  cluster             " << dims(x.cluster_dims) << "\n"
             << "  maxnreg             " << (x.max_registers ? std::to_string(x.max_registers) : "-") << "\n";
      }
    } else {
      text << "  code                offset " << hex(k.code_offset) << ", " << k.code_size << " bytes\n"
           << "  vgprs               " << k.vgprs << " (metadata, arch + AGPR), agprs " << k.agprs
           << (k.agprs_source.empty() ? " (unknown)" : " (from the " + k.agprs_source + ")") << "\n"
           << "  sgprs               " << k.sgprs << " (metadata, incl. VCC/flat scratch/xnack)\n"
           << "  lds                 " << k.lds_bytes << " bytes\n"
           << "  scratch             " << k.scratch_bytes << " bytes per lane\n"
           << "  kernarg             " << k.kernarg_size << " bytes, align " << k.kernarg_align << "\n"
           << "  workgroup           max " << k.max_workgroup_size << " threads, wave" << k.wave_size << "\n";
    }
    if (k.descriptor) {
      const auto& d = *k.descriptor;
      jk["descriptor"] = descriptor_json(d);
      std::string wg_ids = std::string(d.workgroup_id_x ? "x" : "") + (d.workgroup_id_y ? "y" : "") +
                           (d.workgroup_id_z ? "z" : "");
      text << "  descriptor          rsrc1 " << hex(d.compute_pgm_rsrc1) << ", rsrc2 " << hex(d.compute_pgm_rsrc2)
           << ", rsrc3 " << hex(d.compute_pgm_rsrc3) << ", properties " << hex(d.kernel_code_properties) << "\n"
           << "  vgprs allocated     " << d.vgprs_allocated << ", accum_offset " << d.accum_offset << "\n"
           << "  sgprs allocated     " << d.sgprs_allocated << "\n"
           << "  user sgprs          " << d.user_sgpr_count << (d.user_sgpr_kernarg_segment_ptr ? " (kernarg ptr" : " (")
           << (d.user_sgpr_dispatch_ptr ? ", dispatch ptr" : "") << (d.user_sgpr_queue_ptr ? ", queue ptr" : "")
           << ")\n"
           << "  workgroup ids       " << (wg_ids.empty() ? "none" : wg_ids) << "\n"
           << "  workitem ids        " << (d.workitem_id_vgprs == 0 ? "x" : d.workitem_id_vgprs == 1 ? "xy" : "xyz")
           << "\n"
           << "  float denorms       f32 " << denorm_name(d.float_denorm_mode_32) << ", f16/f64 "
           << denorm_name(d.float_denorm_mode_16_64) << "; ieee " << d.ieee_mode << ", dx10_clamp "
           << d.dx10_clamp << "\n";
      if (d.kernarg_preload_length)
        text << "  kernarg preload     " << d.kernarg_preload_length << " dwords from " << d.kernarg_preload_offset
             << "\n";
    }
    if (nvidia) {
      auto occ = codeobj::nvidia_occupancy(code, k, opt.workgroup_size);
      uint32_t threads = opt.workgroup_size ? opt.workgroup_size : (k.max_workgroup_size ? k.max_workgroup_size : 1024);
      jk["occupancy"] = {{"workgroup_size", threads},
                         {"blocks_per_sm", occ.blocks_per_sm},
                         {"warps_per_sm", occ.warps_per_sm},
                         {"by_registers", occ.by_registers},
                         {"by_shared", occ.by_shared},
                         {"by_threads", occ.by_threads},
                         {"occupancy", occ.occupancy},
                         {"limiter", occ.limiter}};
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", occ.occupancy * 100);
      text << "  occupancy           " << occ.blocks_per_sm << " blocks/SM of " << threads << " threads, "
           << occ.warps_per_sm << " warps/SM (" << pct << "; limited by "
           << (occ.limiter.empty() ? "none" : occ.limiter) << ": registers " << occ.by_registers << ", shared "
           << occ.by_shared << ", threads " << occ.by_threads << ")\n";
    } else if (target) {
      auto occ = codeobj::amd_occupancy(code, k, opt.workgroup_size);
      uint32_t wg = opt.workgroup_size ? opt.workgroup_size : k.max_workgroup_size;
      jk["occupancy"] = {{"workgroup_size", wg},
                         {"waves_per_simd", occ.waves_per_simd},
                         {"by_vgprs", occ.by_vgprs},
                         {"by_sgprs", occ.by_sgprs},
                         {"by_lds", occ.by_lds},
                         {"workgroups_per_cu", occ.workgroups_per_cu},
                         {"limiter", occ.limiter}};
      text << "  occupancy           " << occ.waves_per_simd << " waves/SIMD with " << wg
           << "-thread workgroups (limited by " << occ.limiter << "; vgprs " << occ.by_vgprs << ", sgprs "
           << occ.by_sgprs << ", lds " << occ.by_lds << "), " << occ.workgroups_per_cu << " workgroups/CU\n";
    }
    if (!k.args.empty()) {
      std::istringstream lines(args.str());
      for (std::string line; std::getline(lines, line);) text << "  " << line << "\n";
    }
    if (opt.disasm && nvidia) {
      text << "  disassembly         not available for cubins (use nvdisasm or cuobjdump)\n";
    } else if (opt.disasm) {
      nlohmann::json jd = nlohmann::json::array();
      text << "  disassembly\n";
      for (const auto& ins : codeobj::disassemble_kernel(code, k)) {
        jd.push_back({{"address", ins.address}, {"bytes", bytes_hex(ins.bytes)}, {"text", ins.text},
                      {"valid", ins.valid}});
        char addr[16];
        std::snprintf(addr, sizeof addr, "%6llx", static_cast<unsigned long long>(ins.address));
        std::string b = bytes_hex(ins.bytes);
        text << "    " << addr << ":  " << b << std::string(b.size() < 18 ? 18 - b.size() : 1, ' ') << ins.text
             << "\n";
      }
      jk["disassembly"] = jd;
    }
    j_kernels.push_back(jk);
  }

  if (opt.json) {
    nlohmann::json j = {{"file", opt.input},   {"vendor", code.vendor == Vendor::amd ? "amd" : "nvidia"},
                        {"isa", code.isa},     {"target_id", code.target_id},
                        {"bytes", code.bytes.size()}, {"sha256", code.sha256},
                        {"kernels", j_kernels}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << text.str();
  }
  return kExitOk;
}
} // namespace

void add_inspect_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto opt = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect", "Show what a code object holds: target, kernels, arguments, "
                                            "descriptor, occupancy, disassembly");
  cmd->add_option("file", opt->input, "AMD code object (.hsaco, .co) or NVIDIA cubin")->required();
  cmd->add_option("-k,--kernel", opt->kernel, "Only this kernel");
  cmd->add_option("-w,--workgroup-size", opt->workgroup_size,
                  "Workgroup size for the occupancy figure (default: the kernel's maximum)");
  cmd->add_flag("-d,--disasm", opt->disasm, "Disassemble each kernel");
  cmd->add_flag("--json", opt->json, "Print JSON instead of text");
  cmd->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_inspect(*opt); }); });
}

} // namespace isatune::cli

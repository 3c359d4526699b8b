#pragma once
// Helpers for the toolchain tests: sample kernels written inline, a minimal ELF64 section reader (the test
// program does not see LLVM's headers), and running the llvm-mc / ld.lld programs.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <elf.h>
#include <unistd.h>

namespace isatune::toolchain::testing {

// The minimal vector add from shared/notes/cdna.md section 2; `extra` is inserted before s_endpgm so that
// variants differ in their code. `name` is the kernel symbol.
// cov5_directive = false leaves out `.amdhsa_code_object_version 5`, which LLVM before 16 (comgr 2.4 on
// Debian 12 carries LLVM 15) does not know; the code and descriptor bytes do not depend on it.
inline std::string vadd_kernel(const std::string& isa, const std::string& name = "vadd",
                               const std::string& extra = "", bool cov5_directive = true) {
  const std::string target = "amdgcn-amd-amdhsa--" + isa;
  return ".amdgcn_target \"" + target + "\"\n" +
         std::string(cov5_directive ? ".amdhsa_code_object_version 5\n" : "\n") +
         ".text\n"
         ".globl " + name + "\n"
         ".p2align 8\n"
         ".type " + name + ",@function\n" +
         name + ":\n"
         "  s_load_dwordx4 s[4:7], s[0:1], 0x0\n"
         "  s_load_dwordx2 s[8:9], s[0:1], 0x10\n"
         "  s_load_dword   s10,    s[0:1], 0x18\n"
         "  v_and_b32      v0, 0x3ff, v0\n"
         "  s_lshl_b32     s2, s2, 8\n"
         "  v_add_u32      v1, s2, v0\n"
         "  s_waitcnt      lgkmcnt(0)\n"
         "  v_cmp_gt_u32   vcc, s10, v1\n"
         "  s_and_saveexec_b64 s[12:13], vcc\n"
         "  s_cbranch_execz .Lend\n"
         "  v_lshlrev_b32  v2, 2, v1\n"
         "  global_load_dword v3, v2, s[4:5]\n"
         "  global_load_dword v4, v2, s[6:7]\n"
         "  s_waitcnt      vmcnt(0)\n"
         "  v_add_f32      v3, v3, v4\n"
         "  global_store_dword v2, v3, s[8:9]\n"
         ".Lend:\n" + extra +
         "  s_endpgm\n"
         ".L" + name + "_end:\n"
         ".size " + name + ", .L" + name + "_end-" + name + "\n"
         ".p2alignl 6, 0xbf800000\n"
         ".fill 256, 4, 0xbf800000\n"
         ".rodata\n"
         ".p2align 6\n"
         ".amdhsa_kernel " + name + "\n"
         "  .amdhsa_user_sgpr_count 2\n"
         "  .amdhsa_user_sgpr_kernarg_segment_ptr 1\n"
         "  .amdhsa_kernarg_size 28\n"
         "  .amdhsa_system_sgpr_workgroup_id_x 1\n"
         "  .amdhsa_system_vgpr_workitem_id 0\n"
         "  .amdhsa_next_free_vgpr 5\n"
         "  .amdhsa_next_free_sgpr 14\n"
         "  .amdhsa_accum_offset 8\n"
         "  .amdhsa_group_segment_fixed_size 0\n"
         "  .amdhsa_private_segment_fixed_size 0\n"
         "  .amdhsa_float_denorm_mode_32 3\n"
         "  .amdhsa_float_denorm_mode_16_64 3\n"
         ".end_amdhsa_kernel\n"
         ".amdgpu_metadata\n"
         "---\n"
         "amdhsa.version: [ 1, 2 ]\n"
         "amdhsa.target: " + target + "\n"
         "amdhsa.kernels:\n"
         "  - .name: " + name + "\n"
         "    .symbol: " + name + ".kd\n"
         "    .kernarg_segment_size: 28\n"
         "    .kernarg_segment_align: 8\n"
         "    .group_segment_fixed_size: 0\n"
         "    .private_segment_fixed_size: 0\n"
         "    .wavefront_size: 64\n"
         "    .sgpr_count: 20\n"
         "    .vgpr_count: 5\n"
         "    .agpr_count: 0\n"
         "    .max_flat_workgroup_size: 256\n"
         "    .args:\n"
         "      - { .name: a, .offset: 0,  .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: read_only }\n"
         "      - { .name: b, .offset: 8,  .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: read_only }\n"
         "      - { .name: c, .offset: 16, .size: 8, .value_kind: global_buffer, .address_space: global, .actual_access: write_only }\n"
         "      - { .name: count, .offset: 24, .size: 4, .value_kind: by_value }\n"
         "...\n"
         ".end_amdgpu_metadata\n";
}

struct ElfInfo {
  uint16_t type = 0;    // ET_REL, ET_DYN
  uint16_t machine = 0; // EM_AMDGPU = 224
  uint32_t flags = 0;
  uint8_t abi_version = 0;
};

inline std::optional<ElfInfo> elf_header(const std::vector<uint8_t>& b) {
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0 || b[EI_CLASS] != ELFCLASS64)
    return std::nullopt;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  return ElfInfo{eh.e_type, eh.e_machine, eh.e_flags, b[EI_ABIVERSION]};
}

// The bytes of the named section, or nullopt.
inline std::optional<std::vector<uint8_t>> elf_section(const std::vector<uint8_t>& b, const std::string& name) {
  if (!elf_header(b)) return std::nullopt;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  auto shdr = [&](unsigned i) {
    Elf64_Shdr sh{};
    size_t off = eh.e_shoff + size_t(i) * eh.e_shentsize;
    if (off + sizeof sh <= b.size()) std::memcpy(&sh, b.data() + off, sizeof sh);
    return sh;
  };
  if (eh.e_shstrndx >= eh.e_shnum) return std::nullopt;
  Elf64_Shdr strtab = shdr(eh.e_shstrndx);
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = shdr(i);
    if (strtab.sh_offset + sh.sh_name >= b.size()) continue;
    const char* n = reinterpret_cast<const char*>(b.data() + strtab.sh_offset + sh.sh_name);
    if (name != n) continue;
    if (sh.sh_type == SHT_NOBITS || sh.sh_offset + sh.sh_size > b.size()) return std::vector<uint8_t>{};
    return std::vector<uint8_t>(b.begin() + sh.sh_offset, b.begin() + sh.sh_offset + sh.sh_size);
  }
  return std::nullopt;
}

inline std::string llvm_tool(const std::string& name) {
  return std::string(ISATUNE_TEST_LLVM_TOOLS_DIR) + "/" + name;
}

inline bool have_llvm_programs() {
  return ::access(llvm_tool("llvm-mc").c_str(), X_OK) == 0 && ::access(llvm_tool("ld.lld").c_str(), X_OK) == 0;
}

inline std::vector<uint8_t> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// A fresh temporary directory, removed on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "isatune-tc-XXXXXX").string();
    if (char* p = ::mkdtemp(templ.data())) path = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

// Runs `llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=ISA -filetype=obj` and `ld.lld -shared`; returns the linked
// image (empty on failure, with the commands' output in *log).
inline std::vector<uint8_t> assemble_with_programs(const std::string& text, const std::string& isa,
                                                   std::string* log = nullptr) {
  TempDir dir;
  auto s = dir.path / "k.s", o = dir.path / "k.o", so = dir.path / "k.hsaco", out = dir.path / "log.txt";
  { std::ofstream(s) << text; }
  std::string cmd = llvm_tool("llvm-mc") + " -triple=amdgcn-amd-amdhsa -mcpu=" + isa + " -filetype=obj " +
                    s.string() + " -o " + o.string() + " > " + out.string() + " 2>&1 && " + llvm_tool("ld.lld") +
                    " -shared --no-undefined " + o.string() + " -o " + so.string() + " >> " + out.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  if (log) {
    std::vector<uint8_t> l = read_file(out);
    *log = std::string(l.begin(), l.end());
  }
  if (rc != 0) return {};
  return read_file(so);
}

} // namespace isatune::toolchain::testing

// ISA names and target ids from the ELF header's e_flags.
#include <cstdio>

#include "llvm/BinaryFormat/ELF.h"

#include "internal.h"

namespace isatune::codeobj::detail {

namespace {

// EF_AMDGPU_MACH_AMDGCN_* values (llvm/BinaryFormat/ELF.h of LLVM 22, plus gfx940/gfx941 that LLVM 20 dropped).
// Numeric so that older LLVMs, which lack some of the names, compile this too. LLVM's own lookup
// (ELFObjectFileBase::tryGetCPUName) is not used: it reaches llvm_unreachable on reserved mach values.
struct Mach {
  uint32_t value;
  const char* name;
};
constexpr Mach kMachs[] = {
    {0x020, "gfx600"}, {0x021, "gfx601"}, {0x022, "gfx700"}, {0x023, "gfx701"}, {0x024, "gfx702"},
    {0x025, "gfx703"}, {0x026, "gfx704"}, {0x028, "gfx801"}, {0x029, "gfx802"}, {0x02a, "gfx803"},
    {0x02b, "gfx810"}, {0x02c, "gfx900"}, {0x02d, "gfx902"}, {0x02e, "gfx904"}, {0x02f, "gfx906"},
    {0x030, "gfx908"}, {0x031, "gfx909"}, {0x032, "gfx90c"}, {0x033, "gfx1010"}, {0x034, "gfx1011"},
    {0x035, "gfx1012"}, {0x036, "gfx1030"}, {0x037, "gfx1031"}, {0x038, "gfx1032"}, {0x039, "gfx1033"},
    {0x03a, "gfx602"}, {0x03b, "gfx705"}, {0x03c, "gfx805"}, {0x03d, "gfx1035"}, {0x03e, "gfx1034"},
    {0x03f, "gfx90a"}, {0x040, "gfx940"}, {0x041, "gfx1100"}, {0x042, "gfx1013"}, {0x043, "gfx1150"},
    {0x044, "gfx1103"}, {0x045, "gfx1036"}, {0x046, "gfx1101"}, {0x047, "gfx1102"}, {0x048, "gfx1200"},
    {0x049, "gfx1250"}, {0x04a, "gfx1151"}, {0x04b, "gfx941"}, {0x04c, "gfx942"}, {0x04e, "gfx1201"},
    {0x04f, "gfx950"}, {0x051, "gfx9-generic"}, {0x052, "gfx10-1-generic"}, {0x053, "gfx10-3-generic"},
    {0x054, "gfx11-generic"}, {0x055, "gfx1152"}, {0x058, "gfx1153"}, {0x059, "gfx12-generic"},
    {0x05a, "gfx1251"}, {0x05f, "gfx9-4-generic"},
};

} // namespace

std::string isa_from_flags(uint32_t e_flags) {
  const uint32_t mach = e_flags & llvm::ELF::EF_AMDGPU_MACH;
  for (const Mach& m : kMachs)
    if (m.value == mach) return m.name;
  char buf[48];
  std::snprintf(buf, sizeof buf, "gfxXXX (mach 0x%x)", mach);
  return buf;
}

std::string target_id_from_flags(const std::string& isa, uint32_t e_flags, uint8_t abi_version) {
  std::string id = "amdgcn-amd-amdhsa--" + isa;
  // Code object v4 and later (ABI version >= 2) encode each feature in two bits: 0 unsupported, 1 any,
  // 2 off, 3 on. Feature order in a target id is sramecc then xnack.
  if (abi_version < llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4) return id;
  auto feature = [&](const char* name, uint32_t bits) {
    if (bits == 2) id += std::string(":") + name + "-";
    if (bits == 3) id += std::string(":") + name + "+";
  };
  feature("sramecc", (e_flags & llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_V4) >> 10);
  feature("xnack", (e_flags & llvm::ELF::EF_AMDGPU_FEATURE_XNACK_V4) >> 8);
  return id;
}

uint32_t vgpr_granule_for(std::string_view isa) {
  // LLVM getVGPREncodingGranule: 8 with the gfx90a instructions (unified VGPR/AGPR file), else 4 in wave64.
  for (std::string_view n : {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic"})
    if (isa == n) return 8;
  return 4;
}

} // namespace isatune::codeobj::detail

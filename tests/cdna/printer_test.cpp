// The printer's .amdhsa_kernel block and metadata, checked by assembling in process and reading the code
// object back; and a vector-add kernel written with the builder for every target.
#include <gtest/gtest.h>

#include <cctype>

#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/codeobj/disassembler.h"
#include "isatune/codeobj/reader.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::cdna;

namespace {

// shared/notes/cdna.md section 2, written with the builder.
Kernel vadd(const std::string& target) {
  Builder b(parse_target_id(target), "vadd");
  uint32_t a_off = b.add_arg("a", 8, 8, ArgKind::global_buffer, "read_only");
  b.add_arg("b", 8, 8, ArgKind::global_buffer, "read_only");
  uint32_t c_off = b.add_arg("c", 8, 8, ArgKind::global_buffer, "write_only");
  uint32_t n_off = b.add_arg("n", 4, 4, ArgKind::by_value); // "n" is a YAML 1.1 bool unless tagged !str
  // First fit: s[4:7], s[8:9], then s3 (the hole after the workgroup id in s2), s[10:11].
  Reg ab = b.alloc_s(4), c = b.alloc_s(2), count = b.alloc_s(1);
  Reg tid = b.workitem_ids(), gid = b.alloc_v(1), addr = b.alloc_v(1), x = b.alloc_v(1), y = b.alloc_v(1);
  Reg saved = b.alloc_s(2);
  b.s_load(ab, b.kernarg_ptr(), static_cast<int>(a_off));
  b.s_load(c, b.kernarg_ptr(), static_cast<int>(c_off));
  b.s_load(count, b.kernarg_ptr(), static_cast<int>(n_off));
  b.emit("v_and_b32", {tid, 0x3ff, tid});
  Reg wg = b.workgroup_id(0);
  b.emit("s_lshl_b32", {wg, wg, 8});
  b.emit("v_add_u32", {gid, wg, tid});
  b.s_waitcnt(std::nullopt, 0);
  b.emit("v_cmp_gt_u32", {vcc(), count, gid});
  b.s_and_saveexec_b64(saved, vcc());
  Label end = b.label("end");
  b.s_cbranch("execz", end);
  b.emit("v_lshlrev_b32", {addr, 2, gid});
  b.global_load(x, addr, ab.sub(0, 2));
  b.global_load(y, addr, ab.sub(2, 2));
  b.s_waitcnt(0, std::nullopt);
  b.emit("v_add_f32", {x, x, y});
  b.global_store(addr, x, c);
  b.bind(end);
  b.s_endpgm();
  return b.finish();
}

toolchain::Assembled assemble(const std::string& text, const std::string& target) {
  static auto as = toolchain::make_assembler("llvm");
  toolchain::AssembleOptions o;
  o.target = target;
  return as->assemble(text, o);
}

} // namespace

TEST(Printer, VaddTextLayout) {
  Kernel k = vadd("gfx942");
  std::string t = print(k);
  EXPECT_EQ(
      t.rfind(".amdgcn_target \"amdgcn-amd-amdhsa--gfx942\"\n.amdhsa_code_object_version 5\n.text\n", 0), 0u);
  for (const char* line :
       {"  s_load_dwordx4 s[4:7], s[0:1], 0x0\n", "  s_load_dword s3, s[0:1], 0x18\n",
        "  v_add_u32 v1, s2, v0\n", "  s_waitcnt lgkmcnt(0)\n", "  v_cmp_gt_u32 vcc, s3, v1\n",
        "  s_cbranch_execz .Lend\n", ".Lend:\n", "  global_load_dword v4, v2, s[6:7]\n",
        ".p2alignl 6, 0xbf800000\n.fill 256, 4, 0xbf800000\n.rodata\n.p2align 6\n",
        "  .amdhsa_next_free_vgpr 5\n", "  .amdhsa_next_free_sgpr 12\n", "  .amdhsa_accum_offset 8\n",
        "  .amdhsa_kernarg_size 28\n", "  - .name: !str \"vadd\"\n", "    .symbol: !str \"vadd.kd\"\n",
        "amdhsa.target: !str \"amdgcn-amd-amdhsa--gfx942\"\n", "      - .name: !str \"n\"\n", "    .sgpr_count: 18\n",
        "    .vgpr_count: 5\n", ".end_amdgpu_metadata\n"})
    EXPECT_NE(t.find(line), std::string::npos) << "missing: " << line << "\n" << t;
}

class PrinterOnTarget : public ::testing::TestWithParam<const char*> {};

TEST_P(PrinterOnTarget, VaddAssembles) {
  const char* target = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(target);
  Kernel k = vadd(target);
  auto out = assemble(print(k), target);
  ASSERT_EQ(out.code.kernels.size(), 1u);
  const KernelInfo& ki = out.code.kernels[0];
  EXPECT_EQ(ki.name, "vadd");
  EXPECT_EQ(ki.kernarg_size, 28u);
  ASSERT_EQ(ki.args.size(), 4u);
  EXPECT_EQ(ki.args[3].name, "n");
  EXPECT_EQ(ki.args[3].offset, 24u);
  EXPECT_EQ(ki.args[2].access, "write_only");
  EXPECT_EQ(ki.sgprs, k.sgpr_count());
  EXPECT_EQ(ki.vgprs, 5u);
  auto dis = codeobj::disassemble_kernel(out.code, ki);
  size_t n = 0;
  for (const auto& st : k.body)
    n += std::holds_alternative<Instruction>(st);
  ASSERT_GE(dis.size(), n);
  EXPECT_EQ(dis[n - 1].text, "s_endpgm");
}

TEST_P(PrinterOnTarget, DescriptorMatchesBuilder) {
  const char* target = GetParam();
  ISATUNE_SKIP_IF_LLVM_LACKS(target);
  EntryOptions e;
  e.workgroup_id_y = true;
  e.workitem_id_dims = 2;
  Builder b(parse_target_id(target), "desc", e);
  b.add_arg("out", 8, 8, ArgKind::global_buffer, "write_only");
  b.add_arg("y", 4, 4, ArgKind::by_value);
  b.set_lds_bytes(4096);
  b.set_workgroup_size(512);
  b.float_modes().denorm_32 = 0;
  Reg acc = b.reserve(a(96, 5)); // AGPRs a96..a100 -> 101 AGPRs
  Reg src = b.reserve(v(20));    // arch VGPRs v0..v20 -> 21
  Reg sx = b.reserve(s(40));     // next_free_sgpr 41
  b.emit("v_accvgpr_write_b32", {acc.sub(4), src});
  b.emit("s_mov_b32", {sx, 0});
  b.s_endpgm();
  Kernel k = b.finish();
  EXPECT_EQ(k.arch_vgprs, 21u);
  EXPECT_EQ(k.accum_offset(), 24u);
  EXPECT_EQ(k.agprs, 101u);
  EXPECT_EQ(k.vgpr_total(), 125u);
  EXPECT_EQ(k.next_free_sgpr, 41u);
  std::string text = print(k);
  auto out = assemble(text, target);
  CodeObject co = codeobj::read_code_object(out.code.bytes, target);
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& ki = co.kernels[0];
  ASSERT_TRUE(ki.descriptor.has_value());
  const KernelDescriptor& d = *ki.descriptor;
  EXPECT_EQ(d.accum_offset, k.accum_offset());
  EXPECT_EQ(d.vgpr_blocks, (k.vgpr_total() + 7) / 8 - 1);
  // LLVM encodes SGPRs in granules of 8 (getSGPREncodingGranule): 47 -> 5, not 2 * (ceil(47 / 16) - 1) = 4.
  EXPECT_EQ(d.sgpr_blocks, (k.sgpr_count() + 7) / 8 - 1);
  EXPECT_EQ(d.group_segment_fixed_size, 4096u);
  EXPECT_EQ(d.kernarg_size, 12u);
  EXPECT_EQ(d.user_sgpr_count, 2u);
  EXPECT_TRUE(d.user_sgpr_kernarg_segment_ptr);
  EXPECT_TRUE(d.workgroup_id_x);
  EXPECT_TRUE(d.workgroup_id_y);
  EXPECT_FALSE(d.workgroup_id_z);
  EXPECT_EQ(d.workitem_id_vgprs, 1u);
  EXPECT_EQ(d.float_denorm_mode_32, 0u);
  EXPECT_EQ(d.float_denorm_mode_16_64, 3u);
  EXPECT_TRUE(d.ieee_mode);
  EXPECT_TRUE(d.dx10_clamp);
  EXPECT_EQ(ki.vgprs, k.vgpr_total());
  EXPECT_EQ(ki.agprs, 101u);
  EXPECT_EQ(ki.sgprs, k.sgpr_count());
  EXPECT_EQ(ki.lds_bytes, 4096u);
  EXPECT_EQ(ki.max_workgroup_size, 512u);
  EXPECT_EQ(ki.wave_size, 64u);
  ASSERT_EQ(ki.args.size(), 2u);
  EXPECT_EQ(ki.args[1].name, "y");
  EXPECT_EQ(ki.args[1].offset, 8u);
}

INSTANTIATE_TEST_SUITE_P(Targets, PrinterOnTarget,
                         ::testing::Values("gfx90a", "gfx942", "gfx950", "gfx90a:xnack-",
                                           "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"),
                         [](const auto& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c)
                             name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
                           return name;
                         });

// Names that YAML reads as something else unless tagged: YAML 1.1 booleans (LLVM 19's reading of y, n, on, off,
// yes, no), true and false, numbers, null. The metadata keeps each one a string, on every LLVM.
TEST(Printer, MetadataNamesStayStrings) {
  const std::vector<std::string> names = {"y",  "n",   "yes", "no",   "on", "off", "Y",      "NO",         "true",
                                          "false", "null", "~", "1e3", "12", "0x10", "-1.5", "a b: #c, [d]", "x"};
  for (const char* kernel : {"y", "on", "off", "true", "no", "k1e3"}) {
    SCOPED_TRACE(kernel);
    Builder b(parse_target_id("gfx942"), kernel);
    for (const auto& n : names)
      b.add_arg(n, 4, 4, ArgKind::by_value);
    b.s_endpgm();
    std::string text = print(b.finish());
    EXPECT_NE(text.find("  - .name: !str \"" + std::string(kernel) + "\"\n"), std::string::npos) << text;
    EXPECT_NE(text.find("      - .name: !str \"y\"\n"), std::string::npos) << text;
    toolchain::Assembled out;
    try {
      out = assemble(text, "gfx942");
    } catch (const Error& e) {
      FAIL() << e.what() << "\n" << text;
    }
    CodeObject co = codeobj::read_code_object(out.code.bytes, "gfx942");
    ASSERT_EQ(co.kernels.size(), 1u);
    EXPECT_EQ(co.kernels[0].name, kernel);
    EXPECT_EQ(co.kernels[0].symbol, std::string(kernel) + ".kd");
    ASSERT_EQ(co.kernels[0].args.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(co.kernels[0].args[i].name, names[i]);
      EXPECT_EQ(co.kernels[0].args[i].offset, 4 * i);
    }
  }
}

TEST(Printer, RefusesQuoteInName) {
  Builder b(parse_target_id("gfx942"), "k");
  b.add_arg("a\"b", 4, 4, ArgKind::by_value);
  b.s_endpgm();
  EXPECT_THROW(print(b.finish()), InputError);
}

TEST(Printer, SgprCountAddsTargetExtras) {
  EXPECT_EQ(vadd("gfx942").sgpr_count(), 12u + 6u);
  EXPECT_EQ(vadd("gfx950").sgpr_count(), 12u + 6u);
  EXPECT_EQ(vadd("gfx90a").sgpr_count(), 12u + 4u);        // VCC + XNACK_MASK (xnack any)
  EXPECT_EQ(vadd("gfx90a:xnack-").sgpr_count(), 12u + 2u); // VCC only
}

TEST(Printer, SwizzleText) {
  EXPECT_EQ(swizzle_text(0x401f), "swizzle(SWAP,16)");
  EXPECT_EQ(swizzle_text(0x7c1f), "swizzle(REVERSE,32)");
  EXPECT_EQ(swizzle_text(0x0018), "swizzle(BROADCAST,8,0)");
  EXPECT_EQ(swizzle_text(0x801b), "swizzle(QUAD_PERM,3,2,1,0)");
}

TEST(Printer, RefusesInvalidKernel) {
  Kernel k = vadd("gfx942");
  k.lds_bytes = 70000;
  EXPECT_THROW(print(k), InputError);
}

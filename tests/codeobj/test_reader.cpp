// Reading code objects built by the llvm-mc and ld.lld programs: every decoded descriptor and metadata value
// must equal what the assembly source declares.
#include <gtest/gtest.h>

#include "isatune/codeobj/descriptor.h"
#include "isatune/codeobj/reader.h"
#include "kernels.h"
#include "llvm_programs.h"
#include "llvm_skip.h"

using namespace isatune;
using namespace isatune::codeobj;
using namespace isatune::codeobj::test;

namespace {

struct Case {
  const char* isa;
  const char* target;  // as in the source and the metadata
  const char* mattr;
  uint32_t e_flags;
};
// gfx90a/942/950 ELF mach (notes section 1), with sramecc+ xnack- in bits 11:10 = 3, 9:8 = 2.
const Case kCases[] = {
    {"gfx90a", "amdgcn-amd-amdhsa--gfx90a", "", 0x53f},
    {"gfx942", "amdgcn-amd-amdhsa--gfx942", "", 0x54c},
    {"gfx950", "amdgcn-amd-amdhsa--gfx950", "", 0x54f},
};
const Case kFeatureCases[] = {
    {"gfx90a", "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "+sramecc,-xnack,+tgsplit", 0xe3f},
    {"gfx942", "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "+sramecc,-xnack,+tgsplit", 0xe4c},
    {"gfx950", "amdgcn-amd-amdhsa--gfx950:sramecc+:xnack-", "+sramecc,-xnack,+tgsplit", 0xe4f},
};

std::string build(const std::string& name, std::string source, const Case& c, bool link = true) {
  replace_all(source, "@TARGET@", c.target);
  std::string error;
  std::string path = build_code_object(name + "_" + c.isa, source, c.isa, c.mattr, error, link);
  EXPECT_FALSE(path.empty()) << "building " << name << " for " << c.isa << " failed:\n" << error;
  return path;
}

uint32_t e_flags_of(const std::vector<uint8_t>& b) { return b[48] | b[49] << 8 | b[50] << 16 | uint32_t(b[51]) << 24; }

class Reader : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    if (auto why = missing_programs(); !why.empty()) GTEST_SKIP() << why;
    ISATUNE_SKIP_IF_LLVM_LACKS(kCases[GetParam()].isa);
  }
};

} // namespace

TEST_P(Reader, VaddDescriptorAndMetadata) {
  const Case& c = kCases[GetParam()];
  std::string path = build("vadd", kVaddSource, c);
  ASSERT_FALSE(path.empty());
  CodeObject co = read_code_object_file(path);
  auto bytes = read_bytes(path);
  EXPECT_EQ(co.vendor, Vendor::amd);
  EXPECT_EQ(co.isa, c.isa);
  EXPECT_EQ(co.target_id, c.target);
  EXPECT_EQ(e_flags_of(bytes), c.e_flags);
  EXPECT_EQ(co.bytes, bytes);
  EXPECT_EQ(co.sha256, sha256_hex(bytes));
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& k = co.kernels[0];
  EXPECT_EQ(k.name, "vadd");
  EXPECT_EQ(k.symbol, "vadd.kd");
  EXPECT_EQ(k.kernarg_size, 28u);
  EXPECT_EQ(k.kernarg_align, 8u);
  EXPECT_EQ(k.lds_bytes, 0u);
  EXPECT_EQ(k.scratch_bytes, 0u);
  EXPECT_EQ(k.wave_size, 64u);
  EXPECT_EQ(k.sgprs, 20u);
  EXPECT_EQ(k.vgprs, 5u);
  EXPECT_EQ(k.agprs, 0u);
  EXPECT_EQ(k.max_workgroup_size, 256u);
  ASSERT_EQ(k.args.size(), 4u);
  const char* names[] = {"a", "b", "c", "count"};
  const uint32_t offsets[] = {0, 8, 16, 24}, sizes[] = {8, 8, 8, 4};
  const char* access[] = {"read_only", "read_only", "write_only", ""};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(k.args[i].name, names[i]);
    EXPECT_EQ(k.args[i].offset, offsets[i]);
    EXPECT_EQ(k.args[i].size, sizes[i]);
    EXPECT_EQ(k.args[i].value_kind, i < 3 ? "global_buffer" : "by_value");
    EXPECT_EQ(k.args[i].address_space, i < 3 ? "global" : "");
    EXPECT_EQ(k.args[i].access, access[i]);
  }
  ASSERT_TRUE(k.descriptor.has_value());
  const KernelDescriptor& d = *k.descriptor;
  // Raw words as checked in the notes (section 2).
  EXPECT_EQ(d.compute_pgm_rsrc1, 0x00af0080u);
  EXPECT_EQ(d.compute_pgm_rsrc2, 0x84u);
  EXPECT_EQ(d.compute_pgm_rsrc3, 0x1u);
  EXPECT_EQ(d.kernel_code_properties, 0x8u);
  EXPECT_EQ(d.kernarg_preload, 0u);
  EXPECT_EQ(d.group_segment_fixed_size, 0u);
  EXPECT_EQ(d.private_segment_fixed_size, 0u);
  EXPECT_EQ(d.kernarg_size, 28u);
  EXPECT_EQ(d.vgpr_blocks, 0u);
  EXPECT_EQ(d.vgprs_allocated, 8u);
  EXPECT_EQ(d.sgpr_blocks, 2u); // 14 + 6 extra = 20 -> 24 = 3 granules of 8
  EXPECT_EQ(d.sgprs_allocated, 24u);
  EXPECT_EQ(d.accum_offset, 8u);
  EXPECT_EQ(d.user_sgpr_count, 2u);
  EXPECT_TRUE(d.user_sgpr_kernarg_segment_ptr);
  EXPECT_FALSE(d.user_sgpr_dispatch_ptr);
  EXPECT_FALSE(d.user_sgpr_queue_ptr);
  EXPECT_FALSE(d.user_sgpr_dispatch_id);
  EXPECT_FALSE(d.user_sgpr_private_segment_buffer);
  EXPECT_FALSE(d.user_sgpr_flat_scratch_init);
  EXPECT_FALSE(d.user_sgpr_private_segment_size);
  EXPECT_FALSE(d.wave32);
  EXPECT_FALSE(d.enable_private_segment);
  EXPECT_TRUE(d.workgroup_id_x);
  EXPECT_FALSE(d.workgroup_id_y);
  EXPECT_FALSE(d.workgroup_id_z);
  EXPECT_FALSE(d.workgroup_info);
  EXPECT_EQ(d.workitem_id_vgprs, 0u);
  EXPECT_EQ(d.float_round_mode_32, 0u);
  EXPECT_EQ(d.float_round_mode_16_64, 0u);
  EXPECT_EQ(d.float_denorm_mode_32, 3u);
  EXPECT_EQ(d.float_denorm_mode_16_64, 3u);
  EXPECT_TRUE(d.ieee_mode);
  EXPECT_TRUE(d.dx10_clamp);
  EXPECT_FALSE(d.tg_split);
  EXPECT_EQ(d.kernarg_preload_length, 0u);
  // Code: the function symbol (.size vadd = 0x60 bytes, as llvm-objdump -t shows), 256-byte aligned.
  EXPECT_EQ(k.code_size, 0x60u);
  EXPECT_EQ(k.code_offset % 256, 0u);
  ASSERT_LE(k.code_offset + 4, bytes.size());
  EXPECT_EQ(bytes[k.code_offset + k.code_size - 1], 0xbf); // s_endpgm = 0xbf810000
  EXPECT_EQ(bytes[k.code_offset + k.code_size - 2], 0x81);
  // The descriptor's entry offset points at the same code: kd at address A, code at A + offset. In this
  // shared object file offsets equal virtual addresses for .text and .rodata, so compare through them.
  EXPECT_NE(d.kernel_code_entry_byte_offset, 0);
}

TEST_P(Reader, AgprLdsKernel) {
  const Case& c = kFeatureCases[GetParam()];
  std::string path = build("mfma_lds", kMfmaLdsSource, c);
  ASSERT_FALSE(path.empty());
  CodeObject co = read_code_object_file(path);
  EXPECT_EQ(co.isa, c.isa);
  EXPECT_EQ(co.target_id, c.target);
  EXPECT_EQ(e_flags_of(co.bytes), c.e_flags);
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& k = co.kernels[0];
  EXPECT_EQ(k.name, "mfma_lds");
  EXPECT_EQ(k.kernarg_size, 40u);
  EXPECT_EQ(k.lds_bytes, 16384u);
  EXPECT_EQ(k.vgprs, 125u);
  EXPECT_EQ(k.agprs, 101u);
  EXPECT_EQ(k.sgprs, 101u);
  EXPECT_EQ(k.max_workgroup_size, 1024u);
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[0].name, "out");
  EXPECT_EQ(k.args[0].access, "write_only");
  EXPECT_EQ(k.args[1].name, ""); // unnamed, as hipcc leaves some
  EXPECT_EQ(k.args[1].offset, 8u);
  EXPECT_EQ(k.args[1].value_kind, "by_value");
  EXPECT_EQ(k.args[2].value_kind, "hidden_block_count_x");
  EXPECT_EQ(k.args[2].offset, 16u);
  EXPECT_EQ(k.args[2].size, 4u);
  EXPECT_EQ(k.args[3].value_kind, "hidden_global_offset_x");
  EXPECT_EQ(k.args[3].offset, 24u);
  EXPECT_EQ(k.args[3].size, 8u);
  ASSERT_TRUE(k.descriptor.has_value());
  const KernelDescriptor& d = *k.descriptor;
  EXPECT_EQ(d.group_segment_fixed_size, 16384u);
  EXPECT_EQ(d.kernarg_size, 40u);
  EXPECT_EQ(d.vgpr_blocks, 15u);       // 125 -> 128 = 16 granules of 8
  EXPECT_EQ(d.vgprs_allocated, 128u);
  EXPECT_EQ(d.sgpr_blocks, 12u);       // 95 + 6 = 101 -> 104 = 13 granules of 8
  EXPECT_EQ(d.sgprs_allocated, 104u);
  EXPECT_EQ(d.accum_offset, 24u);
  EXPECT_TRUE(d.tg_split);
  EXPECT_EQ(d.user_sgpr_count, 6u);    // dispatch ptr 2 + kernarg ptr 2 + 2 preloaded dwords
  EXPECT_TRUE(d.user_sgpr_dispatch_ptr);
  EXPECT_TRUE(d.user_sgpr_kernarg_segment_ptr);
  EXPECT_FALSE(d.user_sgpr_queue_ptr);
  EXPECT_EQ(d.kernarg_preload_length, 2u);
  EXPECT_EQ(d.kernarg_preload_offset, 0u);
  EXPECT_TRUE(d.workgroup_id_x);
  EXPECT_TRUE(d.workgroup_id_y);
  EXPECT_FALSE(d.workgroup_id_z);
  EXPECT_TRUE(d.workgroup_info);
  EXPECT_EQ(d.workitem_id_vgprs, 2u);
  EXPECT_EQ(d.float_round_mode_32, 1u);
  EXPECT_EQ(d.float_round_mode_16_64, 0u);
  EXPECT_EQ(d.float_denorm_mode_32, 0u);
  EXPECT_EQ(d.float_denorm_mode_16_64, 3u);
  EXPECT_FALSE(d.ieee_mode);
  EXPECT_FALSE(d.dx10_clamp);
  EXPECT_EQ(k.code_size, 0x34u);       // 8 instructions, 52 bytes
}

TEST_P(Reader, WithoutMetadataListsDescriptors) {
  const Case& c = kCases[GetParam()];
  std::string src = kVaddSource;
  src.erase(src.find(".amdgpu_metadata"));
  std::string path = build("vadd_nomd", src, c);
  ASSERT_FALSE(path.empty());
  CodeObject co = read_code_object_file(path);
  EXPECT_EQ(co.isa, c.isa);
  EXPECT_EQ(co.target_id, c.target); // from e_flags: sramecc/xnack "any" are omitted
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& k = co.kernels[0];
  EXPECT_EQ(k.name, "vadd");
  EXPECT_EQ(k.symbol, "vadd.kd");
  ASSERT_TRUE(k.descriptor.has_value());
  EXPECT_EQ(k.kernarg_size, 28u);
  EXPECT_EQ(k.vgprs, 8u);  // allocated, from the descriptor
  EXPECT_EQ(k.sgprs, 24u);
  EXPECT_EQ(k.wave_size, 64u);
  EXPECT_EQ(k.descriptor->compute_pgm_rsrc1, 0x00af0080u);
  EXPECT_EQ(k.code_size, 0x60u);
}

TEST_P(Reader, TargetIdFromFlagsWhenMetadataHasNone) {
  const Case& c = kFeatureCases[GetParam()];
  std::string src = kVaddSource;
  replace_all(src, "amdhsa.target: @TARGET@\n", "");
  std::string path = build("vadd_notarget", src, c);
  ASSERT_FALSE(path.empty());
  CodeObject co = read_code_object_file(path);
  EXPECT_EQ(co.target_id, c.target);
  ASSERT_EQ(co.kernels.size(), 1u);
  EXPECT_EQ(co.kernels[0].args.size(), 4u);
}

TEST_P(Reader, RelocatableObject) {
  const Case& c = kCases[GetParam()];
  std::string path = build("vadd_rel", kVaddSource, c, /*link=*/false);
  ASSERT_FALSE(path.empty());
  CodeObject co = read_code_object_file(path);
  ASSERT_EQ(co.kernels.size(), 1u);
  const KernelInfo& k = co.kernels[0];
  ASSERT_TRUE(k.descriptor.has_value());
  EXPECT_EQ(k.descriptor->compute_pgm_rsrc1, 0x00af0080u);
  EXPECT_EQ(k.code_size, 0x60u);
  EXPECT_EQ(co.bytes[k.code_offset + k.code_size - 2], 0x81);
}

INSTANTIATE_TEST_SUITE_P(Targets, Reader, ::testing::Values(0, 1, 2),
                         [](const auto& info) { return std::string(kCases[info.param].isa); });

TEST(Descriptor, DecodesEveryField) {
  std::vector<uint8_t> b(64, 0);
  auto put32 = [&](size_t off, uint32_t v) { for (int i = 0; i < 4; ++i) b[off + i] = uint8_t(v >> (8 * i)); };
  put32(0, 1024);
  put32(4, 16);
  put32(8, 256);
  put32(16, 0xffffff00);     // entry offset -256 (low word)
  put32(20, 0xffffffff);
  put32(44, (1u << 16) | 63); // tg_split, accum_offset field 63 -> 256
  put32(48, 0x3f | (0xfu << 6) | (2u << 12) | (1u << 14) | (1u << 16) | (2u << 18) | (1u << 21) | (1u << 23));
  put32(52, 1 | (16u << 1) | (0xfu << 7) | (1u << 11));
  b[56] = 0x7f; b[57] = 0x04; // every user SGPR kind + wave32
  b[58] = uint8_t(3 | (5 << 7)); b[59] = uint8_t(5 >> 1);
  KernelDescriptor d = decode_kernel_descriptor(b, 8);
  EXPECT_EQ(d.group_segment_fixed_size, 1024u);
  EXPECT_EQ(d.private_segment_fixed_size, 16u);
  EXPECT_EQ(d.kernarg_size, 256u);
  EXPECT_EQ(d.kernel_code_entry_byte_offset, -256);
  EXPECT_EQ(d.accum_offset, 256u);
  EXPECT_TRUE(d.tg_split);
  EXPECT_EQ(d.vgpr_blocks, 63u);
  EXPECT_EQ(d.vgprs_allocated, 512u);
  EXPECT_EQ(d.sgpr_blocks, 15u);
  EXPECT_EQ(d.sgprs_allocated, 128u);
  EXPECT_EQ(d.float_round_mode_32, 2u);
  EXPECT_EQ(d.float_round_mode_16_64, 1u);
  EXPECT_EQ(d.float_denorm_mode_32, 1u);
  EXPECT_EQ(d.float_denorm_mode_16_64, 2u);
  EXPECT_TRUE(d.dx10_clamp);
  EXPECT_TRUE(d.ieee_mode);
  EXPECT_TRUE(d.enable_private_segment);
  EXPECT_EQ(d.user_sgpr_count, 16u);
  EXPECT_TRUE(d.workgroup_id_x && d.workgroup_id_y && d.workgroup_id_z && d.workgroup_info);
  EXPECT_EQ(d.workitem_id_vgprs, 1u);
  EXPECT_TRUE(d.user_sgpr_private_segment_buffer && d.user_sgpr_dispatch_ptr && d.user_sgpr_queue_ptr &&
              d.user_sgpr_kernarg_segment_ptr && d.user_sgpr_dispatch_id && d.user_sgpr_flat_scratch_init &&
              d.user_sgpr_private_segment_size);
  EXPECT_TRUE(d.wave32);
  EXPECT_EQ(d.kernarg_preload_length, 3u);
  EXPECT_EQ(d.kernarg_preload_offset, 5u);
  EXPECT_EQ(decode_kernel_descriptor(b, 4).vgprs_allocated, 256u);
  EXPECT_THROW(decode_kernel_descriptor(std::span<const uint8_t>(b.data(), 63)), InputError);
}

TEST(Sha256, KnownDigests) {
  EXPECT_EQ(sha256_hex({}), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const uint8_t abc[] = {'a', 'b', 'c'};
  EXPECT_EQ(sha256_hex(abc), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// What each form reads, writes and counts (later passes compute wait counts and hazards from this), and the
// checks the builder makes before text ever reaches LLVM.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "isatune/cdna/builder.h"
#include "isatune/error.h"

using namespace isatune;
using namespace isatune::cdna;

namespace {

bool has(const std::vector<Reg>& rs, const Reg& r) {
  return std::find(rs.begin(), rs.end(), r) != rs.end();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST(Instruction, GlobalLoadDefsUsesCounter) {
  auto i = make_instruction(Gfx::gfx942, "global_load_dwordx4", {v(4, 4), v(0), s(2, 2)});
  EXPECT_EQ(i.defs(), (std::vector<Reg>{v(4, 4)}));
  EXPECT_EQ(i.uses(), (std::vector<Reg>{v(0), s(2, 2), exec()}));
  EXPECT_EQ(i.counter(), Counter::vm);
  EXPECT_EQ(i.category(), Category::vmem_load);
  auto st = make_instruction(Gfx::gfx942, "global_store_dwordx4", {v(0, 2), v(4, 4), off});
  EXPECT_TRUE(st.defs().empty());
  EXPECT_EQ(st.counter(), Counter::vm);
  EXPECT_EQ(st.category(), Category::vmem_store);
  EXPECT_EQ(st.uses(), (std::vector<Reg>{v(0, 2), v(4, 4), exec()})); // 64-bit address with `off`
}

TEST(Instruction, ScalarAndLdsCounters) {
  auto sl = make_instruction(Gfx::gfx90a, "s_load_dwordx2", {s(4, 2), s(0, 2), 0x10});
  EXPECT_EQ(sl.counter(), Counter::lgkm);
  EXPECT_EQ(sl.uses(), (std::vector<Reg>{s(0, 2)})); // scalar: no EXEC
  EXPECT_EQ(make_instruction(Gfx::gfx90a, "s_memtime", {s(4, 2)}).counter(), Counter::lgkm);
  auto ds = make_instruction(Gfx::gfx942, "ds_read_b128", {a(0, 4), v(1)});
  EXPECT_EQ(ds.counter(), Counter::lgkm);
  EXPECT_EQ(ds.defs(), (std::vector<Reg>{a(0, 4)}));
  Modifiers sw;
  sw.swizzle = 0x401f;
  EXPECT_EQ(make_instruction(Gfx::gfx942, "ds_swizzle_b32", {v(1), v(0)}, sw).counter(), Counter::lgkm);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "ds_bpermute_b32", {v(1), v(0), v(2)}).counter(), Counter::lgkm);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_add_f32", {v(1), v(0), v(2)}).counter(), Counter::none);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "s_waitcnt", {}).category(), Category::waitcnt);
}

TEST(Instruction, ImplicitRegisters) {
  auto add = make_instruction(Gfx::gfx942, "s_add_u32", {s(4), s(5), 1});
  EXPECT_TRUE(has(add.defs(), scc()));
  EXPECT_FALSE(has(make_instruction(Gfx::gfx942, "s_mul_i32", {s(4), s(5), s(6)}).defs(), scc()));
  EXPECT_TRUE(has(make_instruction(Gfx::gfx942, "s_cselect_b32", {s(4), s(5), s(6)}).uses(), scc()));
  EXPECT_TRUE(has(make_instruction(Gfx::gfx942, "s_cmp_lt_u32", {s(4), s(5)}).defs(), scc()));
  auto sx = make_instruction(Gfx::gfx942, "s_and_saveexec_b64", {s(12, 2), vcc()});
  EXPECT_TRUE(has(sx.defs(), exec()));
  EXPECT_TRUE(has(sx.defs(), s(12, 2)));
  EXPECT_TRUE(has(sx.uses(), vcc()));
  EXPECT_TRUE(has(sx.uses(), exec()));
  auto cmpx = make_instruction(Gfx::gfx942, "v_cmpx_gt_u32", {vcc(), v(0), v(1)});
  EXPECT_TRUE(has(cmpx.defs(), exec()));
  EXPECT_TRUE(has(cmpx.defs(), vcc()));
  auto cmp64 = make_instruction(Gfx::gfx942, "v_cmp_lt_u32_e64", {s(4, 2), v(0), s(1)});
  EXPECT_EQ(cmp64.defs(), (std::vector<Reg>{s(4, 2)}));
  auto cnd = make_instruction(Gfx::gfx942, "v_cndmask_b32", {v(0), v(1), v(2), vcc()});
  EXPECT_TRUE(has(cnd.uses(), vcc()));
  auto addc = make_instruction(Gfx::gfx942, "v_addc_co_u32", {v(0), vcc(), v(1), v(2), vcc()});
  EXPECT_TRUE(has(addc.defs(), vcc()));
  EXPECT_TRUE(has(addc.uses(), vcc()));
  auto fmac = make_instruction(Gfx::gfx942, "v_fmac_f32", {v(0), v(1), v(2)});
  EXPECT_TRUE(has(fmac.defs(), v(0)));
  EXPECT_TRUE(has(fmac.uses(), v(0))); // accumulates
  auto d16 = make_instruction(Gfx::gfx942, "global_load_short_d16_hi", {v(3), v(0), s(2, 2)});
  EXPECT_TRUE(has(d16.uses(), v(3))); // keeps the low half
  Builder b(parse_target_id("gfx942"), "k");
  Label l = b.label("l");
  b.bind(l);
  const auto& br = b.s_cbranch("execz", l);
  EXPECT_TRUE(has(br.uses(), exec()));
  EXPECT_EQ(br.branch_target(), l);
  EXPECT_EQ(br.category(), Category::branch);
}

TEST(Instruction, Categories) {
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_exp_f32", {v(0), v(1)}).category(), Category::trans);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_dot2_f32_f16", {v(0), v(1), v(2), v(3)}).category(),
            Category::dot);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_readlane_b32", {s(4), v(0), 5}).category(), Category::lane);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_accvgpr_write_b32", {a(1), v(0)}).category(), Category::accvgpr);
  Modifiers d;
  d.dpp = DppControl::row_shr(1);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "v_add_f32_dpp", {v(0), v(1), v(0)}, d).category(), Category::dpp);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "s_barrier", {}).category(), Category::barrier);
  EXPECT_EQ(make_instruction(Gfx::gfx942, "s_nop", {3}).category(), Category::nop);
}

TEST(Instruction, MfmaPassesAndXdl) {
  auto bf = [](Gfx g) {
    return make_instruction(g, "v_mfma_f32_32x32x8_bf16", {a(0, 16), v(0, 2), v(2, 2), a(0, 16)});
  };
  EXPECT_EQ(bf(Gfx::gfx90a).mnemonic(), "v_mfma_f32_32x32x8bf16_1k");
  EXPECT_EQ(bf(Gfx::gfx942).mnemonic(), "v_mfma_f32_32x32x8_bf16");
  EXPECT_EQ(bf(Gfx::gfx90a).mfma_passes(), 16u);
  EXPECT_EQ(bf(Gfx::gfx942).mfma_passes(), 8u);
  EXPECT_TRUE(bf(Gfx::gfx942).is_xdl());
  EXPECT_EQ(bf(Gfx::gfx942).defs(), (std::vector<Reg>{a(0, 16)}));
  EXPECT_TRUE(has(bf(Gfx::gfx942).uses(), a(0, 16)));
  EXPECT_EQ(bf(Gfx::gfx942).counter(), Counter::none);
  auto f32 = [](Gfx g) { return make_instruction(g, "v_mfma_f32_16x16x4_f32", {v(0, 4), v(4), v(5), 0}); };
  EXPECT_TRUE(f32(Gfx::gfx90a).is_xdl());
  EXPECT_FALSE(f32(Gfx::gfx942).is_xdl()); // SMFMA on gfx942/950
  auto f64 = make_instruction(Gfx::gfx950, "v_mfma_f64_16x16x4_f64", {v(0, 8), v(8, 2), v(10, 2), v(0, 8)});
  EXPECT_FALSE(f64.is_xdl());
  EXPECT_EQ(f64.mfma_passes(), 16u);
  EXPECT_EQ(make_instruction(Gfx::gfx950, "v_mfma_f32_16x16x32_bf16", {v(0, 4), v(4, 4), v(8, 4), v(0, 4)})
                .mfma_passes(),
            4u);
  // The gfx90a spelling is accepted as a name on every target that has the form.
  EXPECT_EQ(
      make_instruction(Gfx::gfx942, "v_mfma_f32_32x32x8bf16_1k", {a(0, 16), v(0, 2), v(2, 2), 0}).mnemonic(),
      "v_mfma_f32_32x32x8_bf16");
}

TEST(Instruction, RejectsWhatLlvmWouldRejectOrMisassemble) {
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "v_fma_f32", {v(0), v(1), v(2), 0x1234});
            }).find("no 32-bit literal"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "v_mfma_f32_16x16x16_f16", {v(0, 4), v(4, 2), v(6, 2), 100});
            }).find("no 32-bit literal"),
            std::string::npos);
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "v_mov_b32", {v(0), 0x12345})); // VOP1 literal is fine
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "v_fma_f32", {v(0), v(1), v(2), 1.0})); // inline float
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "global_load_dwordx2", {v(3, 2), v(0), s(2, 2)});
            }).find("misaligned"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "s_load_dwordx4", {s(2, 4), s(0, 2), 0});
            }).find("misaligned"),
            std::string::npos);
  Modifiers big;
  big.offset = 4096;
  std::string e = error_of([&] {
    make_instruction(Gfx::gfx942, "buffer_load_dword", {v(1), off, s(4, 4), 0}, big);
  });
  EXPECT_NE(e.find("out of range 0..4095"), std::string::npos) << e;
  EXPECT_NE(e.find("truncate"), std::string::npos) << e;
  Modifiers g;
  g.offset = -4097;
  EXPECT_THROW(make_instruction(Gfx::gfx942, "global_load_dword", {v(1), v(0), s(2, 2)}, g), InputError);
  g.offset = -4096;
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "global_load_dword", {v(1), v(0), s(2, 2)}, g));
  Modifiers d;
  d.offset = 65536;
  EXPECT_THROW(make_instruction(Gfx::gfx942, "ds_read_b32", {v(1), v(0)}, d), InputError);
  d.offset = 65535;
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "ds_read_b32", {v(1), v(0)}, d));
  EXPECT_THROW(make_instruction(Gfx::gfx942, "s_nop", {16}), InputError);
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "s_nop", {15}));
  Modifiers sc;
  sc.sc0 = true;
  EXPECT_NE(error_of([&] {
              make_instruction(Gfx::gfx90a, "global_load_dword", {v(1), v(0), s(2, 2)}, sc);
            }).find("gfx90a uses glc/slc"),
            std::string::npos);
  Modifiers glc;
  glc.glc = true;
  EXPECT_THROW(make_instruction(Gfx::gfx950, "global_load_dword", {v(1), v(0), s(2, 2)}, glc), InputError);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "v_fma_f32", {v(0), s(1), s(2), v(3)});
            }).find("constant bus"),
            std::string::npos);
  EXPECT_NO_THROW(make_instruction(Gfx::gfx942, "v_fma_f32", {v(0), s(1), s(1), v(3)})); // same SGPR twice
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "v_mfma_f32_16x16x16_f16", {v(0, 4), v(4, 2), v(6, 2), a(0, 4)});
            }).find("both VGPRs or both AGPRs"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "v_add_f32", {v(0), v(1)});
            }).find("takes 3 operands"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx942, "ds_read_b64", {v(0), v(2)});
            }).find("expected 2"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { make_instruction(Gfx::gfx942, "v_frobnicate", {}); }).find("unknown instruction form"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              make_instruction(Gfx::gfx90a, "v_mov_b64", {v(0, 2), v(2, 2)});
            }).find("not available on gfx90a (it is on gfx942, gfx950)"),
            std::string::npos);
  EXPECT_THROW(make_instruction(Gfx::gfx942, "v_add_f32", {v(0), v(1), v(2)},
                                [] {
                                  Modifiers m;
                                  m.offset = 4;
                                  return m;
                                }()),
               InputError);
  Modifiers w;
  w.vmcnt = 64;
  EXPECT_THROW(make_instruction(Gfx::gfx942, "s_waitcnt", {}, w), InputError);
  Modifiers dpp;
  EXPECT_THROW(make_instruction(Gfx::gfx942, "v_mov_b32_dpp", {v(0), v(1)}, dpp),
               InputError); // needs a control
}

TEST(Kernel, LimitsAreChecked) {
  Builder b942(parse_target_id("gfx942"), "k");
  EXPECT_THROW(b942.set_lds_bytes(65537), InputError);
  EXPECT_NO_THROW(b942.set_lds_bytes(65536));
  Builder b950(parse_target_id("gfx950"), "k");
  EXPECT_NO_THROW(b950.set_lds_bytes(163840));
  EXPECT_THROW(b950.set_workgroup_size(1025), InputError);
  EXPECT_THROW(b950.reserve(s(102)), InputError); // s0..s101
  Kernel k = b942.finish();
  k.next_free_sgpr = 103;
  EXPECT_THROW(k.validate(), InputError);
  k.next_free_sgpr = 10;
  k.arch_vgprs = 257;
  EXPECT_THROW(k.validate(), InputError);
  k.arch_vgprs = 253;
  k.agprs = 256;
  EXPECT_EQ(k.accum_offset(), 256u);
  EXPECT_EQ(k.vgpr_total(), 512u);
  EXPECT_NO_THROW(k.validate());
  Builder lb(parse_target_id("gfx942"), "k");
  Label l = lb.label("never");
  lb.s_branch(l);
  EXPECT_THROW(lb.finish(), InputError);
  EXPECT_THROW(lb.bind(Label{7}), InputError);
}

TEST(Target, LlvmVersionCheck) {
  const TargetInfo& t950 = *find_target("gfx950");
  EXPECT_NO_THROW(check_llvm_knows(t950, 20, "20.1.0"));
  try {
    check_llvm_knows(t950, 19, "19.1.7");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "gfx950 needs LLVM >= 20; this build uses LLVM 19.1.7");
  }
  EXPECT_THROW(check_llvm_knows(*find_target("gfx942"), 16, "16.0.6"), InputError);
  EXPECT_NO_THROW(check_llvm_knows(*find_target("gfx942"), 17, "17.0.6"));
  EXPECT_NO_THROW(check_llvm_knows(*find_target("gfx90a"), 13, "13.0.1"));
  EXPECT_EQ(llvm_major_of("22.1.8"), 22u);
  EXPECT_EQ(llvm_major_of("LLVM 19.1.7"), 19u);
}

// The PTX builder and printer without any toolkit: text, version selection, builder errors.
#include <gtest/gtest.h>

#include "forms.h"
#include "isatune/ptx/module.h"

using namespace isatune::ptx;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

} // namespace

TEST(PtxBuilder, PrintsDeclarationsRegistersAndInstructions) {
  Module m("sm_90a");
  Kernel& k = m.add_kernel("gemm");
  auto tm = k.param_tensor_map("tmA");
  k.param_ptr("pC");
  k.param("K", Type::u32);
  k.reqntid(384);
  k.maxnreg(168);
  k.reqnctapercluster(2);
  k.shared("sbuf", 8192, 128);
  k.dynamic_shared("smem", 1024);
  Reg rd = k.reg(RegClass::b64);
  k.cvta_param(rd, tm);
  Reg p = k.reg(RegClass::pred);
  k.ret().pred(p, true);
  const std::string text = print(m);
  EXPECT_TRUE(contains(text, ".version 8.0\n.target sm_90a\n.address_size 64\n")) << text;
  EXPECT_TRUE(contains(text, ".extern .shared .align 1024 .b8 smem[];")) << text;
  EXPECT_TRUE(contains(text, ".param .align 64 .b8 tmA[128]")) << text;
  EXPECT_TRUE(contains(text, ".param .u64 .ptr .global .align 16 pC")) << text;
  EXPECT_TRUE(contains(text, ".reqntid 384, 1, 1\n.maxnreg 168\n.reqnctapercluster 2, 1, 1")) << text;
  EXPECT_TRUE(contains(text, ".shared .align 128 .b8 sbuf[8192];")) << text;
  EXPECT_TRUE(contains(text, ".reg .pred %p<1>;")) << text;
  EXPECT_TRUE(contains(text, ".reg .b64 %rd<1>;")) << text;
  EXPECT_TRUE(contains(text, "mov.b64 %rd0, tmA;\n  cvta.param.u64 %rd0, %rd0;")) << text;
  EXPECT_TRUE(contains(text, "@!%p0 ret;")) << text;
}

TEST(PtxBuilder, DeclaresTheLowestVersionThatCoversTheInstructions) {
  {
    Module m("sm_80");
    Kernel& k = m.add_kernel("k");
    auto a = k.regs(RegClass::b32, 4), b = k.regs(RegClass::b32, 2);
    auto c = k.regs(RegClass::f32, 4);
    k.mma_m16n8k16(MmaType::bf16, c, a, b, c);
    EXPECT_EQ(m.ptx_version(), 70);
    EXPECT_TRUE(contains(print(m), ".version 7.0\n"));
  }
  {
    Module m("sm_90");
    m.add_kernel("k").ret();
    EXPECT_EQ(m.ptx_version(), 78);
    Kernel& k2 = m.add_kernel("k2");
    k2.fence_proxy_async_shared();
    EXPECT_EQ(m.ptx_version(), 80);
  }
  {
    Module m("sm_90");
    Kernel& k = m.add_kernel("k");
    Reg g = k.reg(RegClass::b64);
    auto v = k.regs(RegClass::f32, 4);
    k.red(Space::global, "add", Type::f32, Address(g), Operand::vec(v));
    EXPECT_EQ(m.ptx_version(), 81);
    EXPECT_TRUE(contains(print(m), "red.global.add.v4.f32 [%rd0], {%f0, %f1, %f2, %f3};"));
  }
}

TEST(PtxBuilder, Sm90aFormsOnSm80AreBuilderErrors) {
  for (const auto& form : test_forms::all_forms()) {
    if (!form.sm90a_only) continue;
    Module m("sm_80");
    Kernel& k = m.add_kernel(form.name);
    EXPECT_THROW(form.build(k), BuilderError) << form.name;
  }
}

TEST(PtxBuilder, WgmmaAndSetmaxnregNeedTheArchSpecificTarget) {
  Module m("sm_90");
  Kernel& k = m.add_kernel("k");
  EXPECT_THROW(k.wgmma_fence(), BuilderError);
  EXPECT_THROW(k.setmaxnreg(true, 232), BuilderError);
  try {
    k.wgmma_commit_group();
    FAIL() << "no error";
  } catch (const BuilderError& e) {
    EXPECT_TRUE(contains(e.what(), "sm_90a")) << e.what();
    EXPECT_TRUE(contains(e.what(), "sm_90")) << e.what();
  }
  k.fence_proxy_async_shared(); // sm_90 has the async proxy
}

TEST(PtxBuilder, RejectsMalformedOperands) {
  Module m("sm_90a");
  Kernel& k = m.add_kernel("k");
  auto f4 = k.regs(RegClass::f32, 4);
  auto r4 = k.regs(RegClass::b32, 4);
  Reg d64 = k.reg(RegClass::b64), r = k.reg(RegClass::b32);
  EXPECT_THROW(k.ld(Space::global, Type::b64, {d64, d64, d64, d64}, Address(d64)), BuilderError); // 256 bits
  EXPECT_THROW(k.ld(Space::global, Type::b32, {r, r, r}, Address(d64)), BuilderError);            // .v3
  EXPECT_THROW(k.ld(Space::global, Type::f32, {r}, Address(d64)), BuilderError);                  // class
  EXPECT_THROW(k.mma_m16n8k16(MmaType::f16, f4, r4, r4, f4), BuilderError);                       // b has 2
  EXPECT_THROW(k.wgmma_mma_async(MmaType::bf16, 64, f4, d64, d64, 1), BuilderError);               // 32 accs
  EXPECT_THROW(k.wgmma_mma_async(MmaType::bf16, 12, f4, d64, d64, 1), BuilderError);               // N
  EXPECT_THROW(k.setmaxnreg(true, 250), BuilderError);
  EXPECT_THROW(k.bar_sync(16), BuilderError);
  EXPECT_THROW(k.bar_sync(1, 100), BuilderError);
  EXPECT_THROW(k.cp_async(CacheOp::cg, Address(r), Address(d64), 8), BuilderError);
  EXPECT_THROW(k.shared("s", 64, 3), BuilderError);
  k.reqntid(128);
  EXPECT_THROW(k.maxntid(128), BuilderError);
  EXPECT_THROW(Module("sm_75"), isatune::InputError);
  EXPECT_THROW(m.add_kernel("k"), BuilderError);
}

TEST(PtxBuilder, F32ImmediatesAreExactHex) {
  EXPECT_EQ(Operand::f32(1.0f).text, "0f3F800000");
  EXPECT_EQ(Operand::f32(-2.5f).text, "0fC0200000");
}

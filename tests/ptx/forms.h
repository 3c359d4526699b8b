#pragma once
// Every builder instruction form, one small kernel each, for the compile tests and the printer tests.
#include <functional>
#include <string>
#include <vector>

#include "isatune/ptx/module.h"

namespace isatune::ptx::test_forms {

struct Form {
  std::string name;
  bool sm90a_only = false; // needs sm_90 / sm_90a (a builder error on sm_80)
  std::function<void(Kernel&)> build;
};

inline std::vector<Form> all_forms() {
  using R = RegClass;
  std::vector<Form> f;
  auto add = [&](std::string n, bool h, std::function<void(Kernel&)> b) { f.push_back({std::move(n), h, std::move(b)}); };

  add("ld_st_global_vectors", false, [](Kernel& k) {
    auto p = k.param_ptr("p");
    Reg a = k.reg(R::b64), g = k.reg(R::b64);
    k.ld_param(Type::u64, a, p);
    k.cvta_to_global(g, a);
    auto v = k.regs(R::b32, 4);
    auto fv = k.regs(R::f32, 2);
    k.ld(Space::global, Type::b32, v, Address(g), CacheOp::none, true);
    k.ld(Space::global, Type::f32, fv, Address(g, 32), CacheOp::cg);
    k.st(Space::global, Type::b32, Address(g, 64), v);
    k.st(Space::global, Type::f32, Address(g, 16), fv, CacheOp::cs);
    k.st(Space::global, Type::b32, Address(g, 96), {v[0]}, CacheOp::wt);
    k.ret();
  });
  add("ld_st_shared_static_dynamic", false, [](Kernel& k) {
    k.shared("sbuf", 4096, 128);
    k.dynamic_shared("dsmem", 1024);
    Reg s = k.reg(R::b32), d = k.reg(R::b32);
    k.mov_addr(s, "sbuf");
    k.mov_addr(d, "dsmem");
    auto v = k.regs(R::b32, 4);
    k.ld(Space::shared, Type::b32, v, Address(s, 16));
    k.st(Space::shared, Type::b32, Address(d), v);
    Reg h = k.reg(R::b16);
    k.ld(Space::shared, Type::b16, {h}, Address(s, 2));
    k.st(Space::shared, Type::b16, Address(d, 64), {h});
    k.ret();
  });
  add("params_and_directives", false, [](Kernel& k) {
    auto n = k.param("n", Type::u32);
    auto x = k.param("x", Type::f32);
    k.param_tensor_map("tmap");
    k.reqntid(256);
    k.minnctapersm(2);
    Reg r = k.reg(R::b32), f = k.reg(R::f32);
    k.ld_param(Type::u32, r, n);
    k.ld_param(Type::f32, f, x);
    k.ret();
  });
  add("maxntid_maxnreg", false, [](Kernel& k) {
    k.maxntid(128, 2);
    k.maxnreg(64);
    k.ret();
  });
  add("integer_float_arith", false, [](Kernel& k) {
    Reg t = k.reg(R::b32), c = k.reg(R::b32), a = k.reg(R::b32), w = k.reg(R::b64);
    k.mov_sreg(t, SpecialReg::tid_x);
    k.mov_sreg(c, SpecialReg::ctaid_x);
    k.mov_sreg(a, SpecialReg::laneid);
    k.mad_lo(Type::u32, a, c, 128, t);
    k.add(Type::u32, a, a, 1);
    k.sub(Type::s32, a, a, t);
    k.mul_lo(Type::u32, a, a, 3);
    k.mul_wide(Type::u32, w, a, 4);
    k.binary("shl", Type::b32, a, a, 2);
    k.binary("shr", Type::u32, a, a, 1);
    k.binary("and", Type::b32, a, a, 0xff);
    k.binary("or", Type::b32, a, a, 1);
    k.binary("xor", Type::b32, a, a, t);
    k.binary("min", Type::s32, a, a, 7);
    k.binary("max", Type::u32, a, a, 1);
    Reg x = k.reg(R::f32), y = k.reg(R::f32);
    k.mov(Type::f32, x, Operand::f32(1.5f));
    k.fma_rn(Type::f32, y, x, x, Operand::f32(0.25f));
    k.add(Type::f32, y, y, x);
    k.binary("mul", Type::f32, y, y, x);
    k.unary("ex2.approx.ftz", Type::f32, y, y);
    k.unary("rcp.approx.ftz", Type::f32, y, y);
    k.binary("div.rn", Type::f32, y, y, x);
    k.ret();
  });
  add("cvt_rounding", false, [](Kernel& k) {
    Reg x = k.reg(R::f32), y = k.reg(R::f32), h = k.reg(R::b16), p = k.reg(R::b32), i = k.reg(R::b32);
    k.mov(Type::f32, x, Operand::f32(2.0f));
    k.mov(Type::f32, y, Operand::f32(3.0f));
    k.cvt(Rounding::rn, Type::bf16, Type::f32, h, x);
    k.cvt(Rounding::none, Type::f32, Type::bf16, y, h);
    k.cvt(Rounding::rn, Type::f16, Type::f32, h, x);
    k.cvt(Rounding::none, Type::f32, Type::f16, y, h);
    k.cvt_pack(Type::bf16x2, p, y, x);
    k.cvt_pack(Type::f16x2, p, y, x);
    k.cvt(Rounding::rzi, Type::s32, Type::f32, i, x);
    k.cvt(Rounding::rn, Type::f32, Type::u32, x, i);
    auto halves = k.regs(R::b16, 2);
    k.unpack(Type::b32, halves, p);
    k.pack(Type::b32, p, halves);
    k.ret();
  });
  add("setp_selp_predication_branch", false, [](Kernel& k) {
    Reg t = k.reg(R::b32), r = k.reg(R::b32), p = k.reg(R::pred), q = k.reg(R::pred);
    k.mov_sreg(t, SpecialReg::tid_x);
    k.setp(Cmp::lt, Type::u32, p, t, 16);
    k.setp(Cmp::ge, Type::s32, q, t, 4);
    k.selp(Type::b32, r, 1, 2, p);
    Label skip = k.new_label("skip"), loop = k.new_label("loop");
    k.bra(skip).pred(p, true);
    k.add(Type::u32, r, r, 1).pred(q);
    k.place(skip);
    k.place(loop);
    k.sub(Type::u32, r, r, 1);
    k.setp(Cmp::ne, Type::u32, p, r, 0);
    k.bra(loop).pred(p);
    k.bra(skip, true).pred(q, true);
    k.ret();
  });
  add("barriers_named", false, [](Kernel& k) {
    k.bar_sync(0);
    k.bar_sync(1, 256);
    k.bar_arrive(2, 128);
    k.barrier_sync(3, 64);
    k.barrier_sync(0);
    k.ret();
  });
  add("shfl_sync_modes", false, [](Kernel& k) {
    Reg a = k.reg(R::b32), d = k.reg(R::b32);
    k.mov_sreg(a, SpecialReg::laneid);
    k.shfl_sync(ShflMode::bfly, d, a, 16, 0x1f);
    k.shfl_sync(ShflMode::down, d, d, 1, 0x1f);
    k.shfl_sync(ShflMode::up, d, d, 1, 0);
    k.shfl_sync(ShflMode::idx, d, d, a, 0x1f);
    k.ret();
  });
  add("red_atom", false, [](Kernel& k) {
    auto p = k.param_ptr("p");
    Reg g = k.reg(R::b64), d = k.reg(R::b32), x = k.reg(R::f32);
    k.ld_param(Type::u64, g, p);
    k.cvta_to_global(g, g);
    k.mov(Type::f32, x, Operand::f32(1.0f));
    k.red(Space::global, "add", Type::f32, Address(g), x);
    k.atom(Space::global, "add", Type::u32, d, Address(g, 4), 1);
    k.atom(Space::global, "cas", Type::b32, d, Address(g, 8), d, 5);
    k.shared("s", 64, 16);
    Reg s = k.reg(R::b32);
    k.mov_addr(s, "s");
    k.atom(Space::shared, "max", Type::s32, d, Address(s), d);
    k.ret();
  });
  add("cp_async_groups", false, [](Kernel& k) {
    auto p = k.param_ptr("p");
    k.shared("tile", 1024, 128);
    Reg g = k.reg(R::b64), s = k.reg(R::b32);
    k.ld_param(Type::u64, g, p);
    k.cvta_to_global(g, g);
    k.mov_addr(s, "tile");
    k.cp_async(CacheOp::cg, Address(s), Address(g), 16);
    k.cp_async(CacheOp::ca, Address(s, 16), Address(g, 16), 8);
    k.cp_async(CacheOp::ca, Address(s, 32), Address(g, 32), 16, Operand(4));
    k.cp_async_commit_group();
    k.cp_async_wait_group(1);
    k.cp_async_wait_all();
    k.bar_sync(0);
    k.ret();
  });
  add("ldmatrix_mma", false, [](Kernel& k) {
    k.shared("tile", 2048, 128);
    Reg s = k.reg(R::b32);
    k.mov_addr(s, "tile");
    auto a = k.regs(R::b32, 4), b = k.regs(R::b32, 2), b1 = k.regs(R::b32, 1);
    auto c = k.regs(R::f32, 4);
    k.ldmatrix(4, false, a, Address(s));
    k.ldmatrix(2, true, b, Address(s, 1024));
    k.ldmatrix(1, false, b1, Address(s, 512));
    for (Reg r : c) k.mov(Type::f32, r, Operand::f32(0.0f));
    k.mma_m16n8k16(MmaType::f16, c, a, b, c);
    k.mma_m16n8k16(MmaType::bf16, c, a, b, c);
    k.ret();
  });

  // ---- sm_90 / sm_90a forms
  add("stmatrix", true, [](Kernel& k) {
    k.shared("tile", 2048, 128);
    Reg s = k.reg(R::b32);
    k.mov_addr(s, "tile");
    auto v = k.regs(R::b32, 4);
    for (Reg r : v) k.mov(Type::b32, r, 0);
    k.stmatrix(4, false, Address(s), v);
    k.stmatrix(2, true, Address(s, 512), {v[0], v[1]});
    k.ret();
  });
  add("cluster_sregs_elect", true, [](Kernel& k) {
    k.reqnctapercluster(2);
    Reg r = k.reg(R::b32), p = k.reg(R::pred);
    k.mov_sreg(r, SpecialReg::cluster_ctarank);
    k.mov_sreg(r, SpecialReg::cluster_nctarank);
    k.mov_sreg(r, SpecialReg::clusterid_x);
    k.mov_sreg(r, SpecialReg::cluster_ctaid_x);
    k.elect_sync(r, p);
    k.elect_sync(std::nullopt, p);
    k.ret();
  });
  add("mbarrier_tma_fences", true, [](Kernel& k) {
    auto tm = k.param_tensor_map("tmap");
    k.shared("bar", 16, 8);
    k.shared("tile", 8192, 1024);
    Reg b = k.reg(R::b32), t = k.reg(R::b32), m = k.reg(R::b64), st = k.reg(R::b64), p = k.reg(R::pred);
    auto xy = k.regs(R::b32, 2);
    k.mov_addr(b, "bar");
    k.mov_addr(t, "tile");
    k.cvta_param(m, tm);
    k.mov(Type::b32, xy[0], 0);
    k.mov(Type::b32, xy[1], 64);
    k.mbarrier_init(Address(b), 1);
    k.fence_mbarrier_init();
    k.bar_sync(0);
    k.mbarrier_arrive_expect_tx(Address(b), 8192);
    k.tma_load(2, Address(t), m, xy, Address(b));
    Label w = k.new_label("wait");
    k.place(w);
    k.mbarrier_try_wait_parity(p, Address(b), 0);
    k.bra(w).pred(p, true);
    k.mbarrier_arrive(st, Address(b, 8));
    k.mbarrier_arrive(std::nullopt, Address(b, 8));
    k.fence_proxy_async_shared();
    k.bar_sync(0);
    k.tma_store(2, m, xy, Address(t));
    k.bulk_commit_group();
    k.bulk_wait_group(0, true);
    k.bulk_wait_group(0);
    k.ret();
  });
  add("tma_multicast", true, [](Kernel& k) {
    auto tm = k.param_tensor_map("tmap");
    k.reqnctapercluster(2);
    k.shared("bar", 8, 8);
    k.shared("tile", 4096, 128);
    Reg b = k.reg(R::b32), t = k.reg(R::b32), m = k.reg(R::b64), mask = k.reg(R::b16);
    auto xyz = k.regs(R::b32, 3);
    k.mov_addr(b, "bar");
    k.mov_addr(t, "tile");
    k.cvta_param(m, tm);
    for (Reg r : xyz) k.mov(Type::b32, r, 0);
    k.mov(Type::b16, mask, 3);
    k.tma_load(3, Address(t), m, xyz, Address(b), mask);
    k.ret();
  });
  add("wgmma_ss", true, [](Kernel& k) {
    k.reqntid(128);
    auto d = k.regs(R::f32, 32);
    Reg a = k.reg(R::b64), b = k.reg(R::b64), p = k.reg(R::pred), t = k.reg(R::b32);
    k.mov(Type::b64, a, 0x4000004000010000ull);
    k.mov(Type::b64, b, 0x4000004000010040ull);
    k.mov_sreg(t, SpecialReg::tid_x);
    k.setp(Cmp::ne, Type::u32, p, t, 1000);
    k.wgmma_fence();
    k.wgmma_mma_async(MmaType::bf16, 64, d, a, b, 0);
    k.wgmma_mma_async(MmaType::f16, 64, d, a, b, p, 1, -1, 0, 1);
    k.wgmma_commit_group();
    k.wgmma_wait_group(0);
    auto p_out = k.param_ptr("out");
    Reg g = k.reg(R::b64);
    k.ld_param(Type::u64, g, p_out);
    k.cvta_to_global(g, g);
    for (size_t i = 0; i < d.size(); i += 4)
      k.st(Space::global, Type::f32, Address(g, int64_t(i * 4)), {d[i], d[i + 1], d[i + 2], d[i + 3]});
    k.ret();
  });
  add("setmaxnreg", true, [](Kernel& k) {
    k.reqntid(384);
    k.maxnreg(168);
    Reg t = k.reg(R::b32), p = k.reg(R::pred);
    k.mov_sreg(t, SpecialReg::tid_x);
    k.setp(Cmp::lt, Type::u32, p, t, 128);
    Label consumer = k.new_label("consumer");
    k.bra(consumer).pred(p, true);
    k.setmaxnreg(false, 40);
    k.ret();
    k.place(consumer);
    k.setmaxnreg(true, 232);
    k.ret();
  });
  return f;
}

} // namespace isatune::ptx::test_forms

// PTX -> cubin through ptxas and nvJitLink: every builder form, diagnostics on seeded kernels, the cubin
// reader against ptxas -v, the cache. Tests that need the CUDA toolkit skip with the reason.
#include <gtest/gtest.h>

#include "forms.h"
#include "isatune/codeobj/cubin.h"
#include "isatune/codeobj/cubin_occupancy.h"
#include "isatune/ptx/module.h"
#include "isatune/toolchain/ptx_cache.h"
#include "isatune/toolchain/ptx_compiler.h"

using namespace isatune;
using namespace isatune::ptx;
using namespace isatune::toolchain;

namespace {

#define REQUIRE_BACKEND(b)                                                                                         \
  do {                                                                                                             \
    const std::string why = ptx_backend_unavailable_reason(b);                                                     \
    if (!why.empty()) GTEST_SKIP() << why;                                                                         \
  } while (0)

std::string forms_module(const std::string& target, bool include_sm90) {
  Module m(target);
  for (const auto& f : test_forms::all_forms())
    if (include_sm90 || !f.sm90a_only) f.build(m.add_kernel(f.name));
  return print(m);
}

PtxCompiled compile(const std::string& ptx, const std::string& target, PtxBackend b, uint32_t maxreg = 0) {
  PtxCompileOptions o;
  o.target = target;
  o.backend = b;
  o.file_name = "test.ptx";
  o.max_registers = maxreg;
  return compile_ptx(ptx, o);
}

// Every kernel's cubin attributes equal what ptxas -v said for it.
void expect_cubin_matches_report(const PtxCompiled& c) {
  ASSERT_FALSE(c.code.kernels.empty());
  for (const KernelInfo& k : c.code.kernels) {
    const PtxKernelReport* r = c.report.find(k.name);
    ASSERT_NE(r, nullptr) << k.name << "\n" << c.log;
    EXPECT_EQ(k.vgprs, r->registers) << k.name;
    EXPECT_EQ(k.lds_bytes, r->shared_bytes) << k.name;
    EXPECT_EQ(k.scratch_bytes, r->stack_bytes) << k.name;
  }
}

} // namespace

TEST(PtxCompile, EverySm80FormCompilesOnSm80AndSm90a) {
  REQUIRE_BACKEND(PtxBackend::ptxas);
  for (const char* target : {"sm_80", "sm_90a"}) {
    PtxCompiled c = compile(forms_module(target, false), target, PtxBackend::ptxas);
    EXPECT_EQ(c.code.isa, target);
    EXPECT_EQ(c.code.kernels.size(), 12u) << c.log;
    EXPECT_TRUE(c.report.errors.empty());
    expect_cubin_matches_report(c);
  }
}

TEST(PtxCompile, EverySm90aFormCompilesOnSm90a) {
  REQUIRE_BACKEND(PtxBackend::ptxas);
  const std::string ptx = forms_module("sm_90a", true);
  PtxCompiled c = compile(ptx, "sm_90a", PtxBackend::ptxas);
  EXPECT_EQ(c.code.kernels.size(), test_forms::all_forms().size()) << c.log;
  expect_cubin_matches_report(c);
  EXPECT_FALSE(c.report.has(PtxIssueKind::setmaxnreg_ignored)) << c.log;
  // setmaxnreg kept its entry count under whole-program compilation.
  const PtxKernelReport* ws = c.report.find("setmaxnreg");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->registers, 168u) << c.log;
}

TEST(PtxCompile, CubinReaderAgreesWithPtxasOnLayoutThreadsAndClusters) {
  REQUIRE_BACKEND(PtxBackend::ptxas);
  const std::string ptx = forms_module("sm_90a", true);
  PtxCompiled c = compile(ptx, "sm_90a", PtxBackend::ptxas);
  codeobj::Cubin cubin = codeobj::read_cubin_full(c.code.bytes, "forms.cubin");
  EXPECT_EQ(cubin.sm, 90u);
  EXPECT_EQ(cubin.code.isa, "sm_90a");
  EXPECT_EQ(cubin.code.sha256.size(), 64u);
  auto find = [&](const std::string& n) -> std::pair<const KernelInfo*, const codeobj::CubinKernelExtra*> {
    for (size_t i = 0; i < cubin.code.kernels.size(); ++i)
      if (cubin.code.kernels[i].name == n) return {&cubin.code.kernels[i], &cubin.extra[i]};
    return {nullptr, nullptr};
  };
  auto [params, px] = find("params_and_directives");
  ASSERT_NE(params, nullptr);
  ASSERT_EQ(params->args.size(), 3u);
  EXPECT_EQ(params->args[0].size, 4u);   // n
  EXPECT_EQ(params->args[1].size, 4u);   // x
  EXPECT_EQ(params->args[1].offset, params->args[0].offset + 4);
  EXPECT_EQ(params->args[2].size, 128u); // the tensor map
  EXPECT_EQ((px->param_cbank_offset + params->args[2].offset) % 64, 0u); // 64-byte aligned in the bank
  EXPECT_EQ(params->kernarg_size, params->args[2].offset + 128);
  EXPECT_EQ(params->max_workgroup_size, 256u);
  EXPECT_EQ(px->req_threads[0], 256u);

  auto [mx, mxx] = find("maxntid_maxnreg");
  ASSERT_NE(mx, nullptr);
  EXPECT_EQ(mx->max_workgroup_size, 256u); // .maxntid 128, 2
  EXPECT_EQ(mxx->max_registers, 64u);

  auto [cl, clx] = find("cluster_sregs_elect");
  ASSERT_NE(cl, nullptr);
  EXPECT_EQ(clx->cluster_dims[0], 2u);
  EXPECT_EQ(clx->cluster_dims[1], 1u);

  auto [sh, shx] = find("ld_st_shared_static_dynamic");
  ASSERT_NE(sh, nullptr);
  EXPECT_EQ(sh->lds_bytes, 4096u);

  auto [ws, wsx] = find("setmaxnreg");
  ASSERT_NE(ws, nullptr);
  auto occ = codeobj::nvidia_occupancy(cubin.code, *ws);
  EXPECT_EQ(occ.blocks_per_sm, 1u);
  EXPECT_EQ(occ.limiter, "registers");
}

TEST(PtxCompile, NvJitLinkCompilesInProcessAndAgreesWithPtxas) {
  REQUIRE_BACKEND(PtxBackend::nvjitlink);
  REQUIRE_BACKEND(PtxBackend::ptxas);
  Module m("sm_90a");
  for (const auto& f : test_forms::all_forms())
    if (f.name != "setmaxnreg" && f.name != "maxntid_maxnreg") f.build(m.add_kernel(f.name));
  const std::string ptx = print(m);
  PtxCompiled j = compile(ptx, "sm_90a", PtxBackend::nvjitlink);
  PtxCompiled p = compile(ptx, "sm_90a", PtxBackend::ptxas);
  EXPECT_EQ(j.backend, PtxBackend::nvjitlink);
  EXPECT_EQ(j.code.kernels.size(), p.code.kernels.size());
  expect_cubin_matches_report(j);
  for (const KernelInfo& k : p.code.kernels) {
    const KernelInfo* jk = j.code.find_kernel(k.name);
    ASSERT_NE(jk, nullptr) << k.name;
    // Shared bytes differ between the backends (nvJitLink's linker lays shared memory out itself and its
    // report counts the sm_90 reserved kilobyte); each agrees with its own report (checked above).
    EXPECT_GE(jk->lds_bytes, k.lds_bytes) << k.name;
    EXPECT_EQ(jk->kernarg_size, k.kernarg_size) << k.name;
  }
}

TEST(PtxCompile, WholeProgramKernelsAreRoutedToPtxasNeverSilentlyToNvJitLink) {
  Module m("sm_90a");
  for (const auto& f : test_forms::all_forms())
    if (f.name == "setmaxnreg") f.build(m.add_kernel(f.name));
  const std::string ptx = print(m);
  EXPECT_TRUE(ptx_needs_whole_program(ptx));
  EXPECT_FALSE(ptx_needs_whole_program("// setmaxnreg.inc in a comment\nret;"));
  EXPECT_THROW(compile(ptx, "sm_90a", PtxBackend::nvjitlink), InputError);
  REQUIRE_BACKEND(PtxBackend::ptxas);
  PtxCompiled c = compile(ptx, "sm_90a", PtxBackend::automatic);
  EXPECT_EQ(c.backend, PtxBackend::ptxas);
  EXPECT_EQ(c.report.find("setmaxnreg")->registers, 168u);
}

TEST(PtxCompile, MalformedPtxGivesPtxasMessageWithLine) {
  const std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  foo.bar %r1;\n  ret;\n}\n";
  for (PtxBackend b : {PtxBackend::ptxas, PtxBackend::nvjitlink}) {
    if (!ptx_backend_unavailable_reason(b).empty()) continue;
    try {
      compile(ptx, "sm_80", b);
      ADD_FAILURE() << "no error from " << ptx_backend_name(b);
    } catch (const AssemblyError& e) {
      ASSERT_FALSE(e.diagnostics().empty());
      EXPECT_EQ(e.diagnostics()[0].line, 6) << e.what();
      EXPECT_EQ(e.diagnostics()[0].file, "test.ptx");
      EXPECT_EQ(e.diagnostics()[0].source_line, "  foo.bar %r1;");
      EXPECT_NE(std::string(e.what()).find("test.ptx:6: error:"), std::string::npos) << e.what();
    }
  }
  REQUIRE_BACKEND(PtxBackend::ptxas);
}

namespace {

// 48 loads kept live across a barrier (loads cannot move below it): with -maxrregcount 24 ptxas must spill.
std::string spilling_kernel() {
  Module m("sm_80");
  Kernel& k = m.add_kernel("spills");
  auto p = k.param_ptr("p");
  Reg g = k.reg(RegClass::b64);
  k.ld_param(Type::u64, g, p);
  k.cvta_to_global(g, g);
  auto v = k.regs(RegClass::f32, 48);
  for (size_t i = 0; i < v.size(); ++i) k.ld(Space::global, Type::f32, {v[i]}, Address(g, int64_t(i * 4)), CacheOp::cv);
  k.bar_sync(0);
  for (size_t i = 1; i < v.size(); ++i) k.fma_rn(Type::f32, v[0], v[i], v[i], v[0]);
  for (size_t i = 1; i < v.size(); ++i) k.st(Space::global, Type::f32, Address(g, int64_t(256 + i * 4)), {v[i]});
  k.st(Space::global, Type::f32, Address(g, 1024), {v[0]});
  k.ret();
  return print(m);
}

// Two m64n256k16 accumulator sets (256 registers) in flight in one pipeline stage: more than the 255 a thread
// has, so ptxas serialises the wgmma pipeline.
std::string starved_wgmma_kernel() {
  Module m("sm_90a");
  Kernel& k = m.add_kernel("starved");
  k.reqntid(128);
  auto out = k.param_ptr("out");
  auto d0 = k.regs(RegClass::f32, 128), d1 = k.regs(RegClass::f32, 128);
  Reg a = k.reg(RegClass::b64), b = k.reg(RegClass::b64), g = k.reg(RegClass::b64);
  k.mov(Type::b64, a, 0x4000004000010000ull);
  k.mov(Type::b64, b, 0x4000004000010040ull);
  k.wgmma_fence();
  k.wgmma_mma_async(MmaType::bf16, 256, d0, a, b, 0);
  k.wgmma_mma_async(MmaType::bf16, 256, d1, b, a, 0);
  k.wgmma_commit_group();
  k.wgmma_wait_group(0);
  k.ld_param(Type::u64, g, out);
  k.cvta_to_global(g, g);
  for (size_t i = 0; i < 128; i += 4) {
    k.st(Space::global, Type::f32, Address(g, int64_t(i * 4)), {d0[i], d0[i + 1], d0[i + 2], d0[i + 3]});
    k.st(Space::global, Type::f32, Address(g, int64_t(512 + i * 4)), {d1[i], d1[i + 1], d1[i + 2], d1[i + 3]});
  }
  k.ret();
  return print(m);
}

} // namespace

TEST(PtxDiagnostics, SpillingKernelIsRejectable) {
  for (PtxBackend b : {PtxBackend::ptxas, PtxBackend::nvjitlink}) {
    if (!ptx_backend_unavailable_reason(b).empty()) continue;
    PtxCompiled c = compile(spilling_kernel(), "sm_80", b, 24);
    const PtxKernelReport* r = c.report.find("spills");
    ASSERT_NE(r, nullptr) << c.log;
    EXPECT_GT(r->spill_store_bytes, 0u) << ptx_backend_name(b) << "\n" << c.log;
    EXPECT_GT(r->spill_load_bytes, 0u) << c.log;
    EXPECT_TRUE(c.report.has(PtxIssueKind::register_spill)) << c.log;
    EXPECT_TRUE(c.report.rejectable());
    EXPECT_EQ(c.code.kernels[0].scratch_bytes, r->stack_bytes);
  }
  REQUIRE_BACKEND(PtxBackend::ptxas);
}

TEST(PtxDiagnostics, StarvedWgmmaIsSerialised) {
  REQUIRE_BACKEND(PtxBackend::ptxas);
  PtxCompiled c = compile(starved_wgmma_kernel(), "sm_90a", PtxBackend::ptxas);
  EXPECT_TRUE(c.report.has(PtxIssueKind::wgmma_serialized)) << c.log;
  EXPECT_TRUE(c.report.rejectable());
  bool coded = false;
  for (const auto& i : c.report.issues) coded |= i.code.rfind("C75", 0) == 0 && i.kernel == "starved";
  EXPECT_TRUE(coded) << c.log;
}

TEST(PtxCache, CompilesEachVariantOnceAndInParallel) {
  REQUIRE_BACKEND(PtxBackend::automatic);
  PtxCompileCache cache(2);
  std::vector<PtxJob> jobs;
  for (int n : {8, 16, 24, 8, 16, 24}) {
    Module m("sm_80");
    Kernel& k = m.add_kernel("v" + std::to_string(n));
    auto regs = k.regs(RegClass::f32, n);
    for (Reg r : regs) k.mov(Type::f32, r, Operand::f32(1.0f));
    k.ret();
    PtxCompileOptions o;
    o.target = "sm_80";
    jobs.push_back({print(m), o});
  }
  jobs.push_back({"not ptx", PtxCompileOptions{}});
  auto results = cache.compile_all(jobs);
  ASSERT_EQ(results.size(), 7u);
  for (size_t i = 0; i < 6; ++i) ASSERT_TRUE(results[i].compiled) << i;
  EXPECT_TRUE(results[6].error);
  EXPECT_EQ(results[0].compiled.get(), results[3].compiled.get()); // same object, compiled once
  EXPECT_EQ(cache.misses(), 4u);
  EXPECT_EQ(cache.hits(), 3u);
  auto again = cache.compile(jobs[1].ptx, jobs[1].options);
  EXPECT_EQ(again.get(), results[1].compiled.get());
  EXPECT_EQ(cache.hits(), 4u);
  EXPECT_THROW(cache.compile("not ptx", PtxCompileOptions{}), AssemblyError);
}

TEST(PtxTargets, ListsTargetsWithTheirBackends) {
  auto targets = toolchain::ptx_targets();
  ASSERT_EQ(targets.size(), 3u);
  EXPECT_EQ(targets[2].name, "sm_90a");
  const bool have = ptx_backend_unavailable_reason(PtxBackend::automatic).empty();
  EXPECT_EQ(!targets[0].backends.empty(), have);
  EXPECT_THROW(parse_ptx_backend("clang"), InputError);
  EXPECT_THROW(compile(".version 8.0", "sm_75", PtxBackend::ptxas), InputError);
}

// The PtxEmuDevice as a loader device: code objects, malformed launches, unsupported instructions rejected at
// load naming the line, target rules, the "emu" backend names, emulated timing.
#include "emu_ptx_test.h"
#include "isatune/emu/ptx/backend.h"
#include "isatune/error.h"
#include "isatune/loader/backend.h"

using namespace emu_ptx_test;

namespace {

const char* kCopy = R"(
.visible .entry copy(.param .u64 src, .param .u64 dst, .param .u32 n)
.maxntid 256, 1, 1
{
  .reg .pred %p1;
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  ld.param.u32 %r5, [n];
  setp.ge.u32 %p1, %r4, %r5;
  @%p1 bra END;
  ld.param.u64 %rd1, [src];
  ld.param.u64 %rd2, [dst];
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r5, [%rd4];
  st.global.u32 [%rd5], %r5;
END:
  ret;
}
)";

template <class F> std::string error_of(F f) {
  try {
    f();
  } catch (const isatune::Error& e) {
    return e.what();
  }
  return "";
}

TEST(EmuPtxDevice, MalformedLaunchesGetClearErrors) {
  Runner r;
  r.load(header() + kCopy);
  const uint32_t n = ragged(100, 300);
  uint64_t a = r.upload(std::vector<uint32_t>(n, 1)), b = r.upload(std::vector<uint32_t>(n));
  auto good = Runner::Args().add(a).add(b).add(n);
  auto bad = Runner::Args().add(a).add(b);
  std::string e = error_of([&] { r.launch("copy", {1, 1, 1}, {128, 1, 1}, bad); });
  EXPECT_NE(e.find("takes 20 bytes of parameters, got 16"), std::string::npos) << e;
  e = error_of([&] { r.launch("copy", {1, 1, 1}, {512, 1, 1}, good); });
  EXPECT_NE(e.find("at most 256"), std::string::npos) << e;
  e = error_of([&] { r.launch("copy", {1, 1, 1}, {2048, 1, 1}, good); });
  EXPECT_NE(e.find("at most 1024"), std::string::npos) << e;
  e = error_of([&] { r.launch("copy", {0, 1, 1}, {32, 1, 1}, good); });
  EXPECT_NE(e.find("at least 1"), std::string::npos) << e;
  e = error_of([&] { r.launch("copy", {1, 1, 1}, {32, 1, 1}, good, 300000); });
  EXPECT_NE(e.find("bytes of shared memory"), std::string::npos) << e;
  e = error_of([&] { r.launch("copy", {3, 1, 1}, {32, 1, 1}, good, 0, {2, 1, 1}); });
  EXPECT_NE(e.find("does not divide the grid"), std::string::npos) << e;
  e = error_of([&] { r.module->function("cpy"); });
  EXPECT_NE(e.find("no kernel 'cpy'"), std::string::npos) << e;
  EXPECT_NE(e.find("copy"), std::string::npos) << e;
  // The good launch still works after all that.
  r.launch("copy", {(n + 127) / 128, 1, 1}, {128, 1, 1}, good);
  auto d = r.download<uint32_t>(b, n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(d[i], 1u);
}

TEST(EmuPtxDevice, UnsupportedInstructionsRejectedAtLoadNamingTheLine) {
  for (auto [inst, why] : std::vector<std::pair<std::string, std::string>>{
           {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r1,%r2,%r3,%r4}, {%r1,%r2,%r3,%r4}, "
            "{%r1,%r2}, {%r1,%r2,%r3,%r4};",
            "not supported yet"},
           {"cp.async.mbarrier.arrive.shared.b64 [%r1];", "not supported yet"},
           {"add.rz.f16 %h1, %h1, %h1;", "rounds .rn only"},
           {"ex2.f32 %f1, %f1;", "needs .approx"},
           {"add.u32.sat %r1, %r1, %r1;", ".sat needs .s32"},
           {"cvt.rn.s32.f32 %r1, %f1;", "float-to-integer cvt rounds with .rni"},
       }) {
    std::string ptx = header() +
                      ".visible .entry k()\n{\n  .reg .b32 %r<5>;\n  .reg .f32 %f<5>;\n  .reg .b16 %h<3>;\n"
                      "  mov.u32 %r1, 1;\n  " +
                      inst + "\n  ret;\n}\n";
    std::string e = error_of([&] {
      Runner r;
      r.load(ptx);
    });
    EXPECT_NE(e.find(why), std::string::npos) << inst << ": " << e;
    EXPECT_NE(e.find("test.ptx:10:"), std::string::npos) << inst << ": " << e; // the line of the instruction
    EXPECT_NE(e.find(inst.substr(0, inst.find_first_of(" ;"))), std::string::npos) << e;
  }
}

TEST(EmuPtxDevice, TargetsAndCodeObjects) {
  // sm_80 PTX runs on sm_90a; sm_90a PTX does not run on sm_80.
  eptx::PtxEmuOptions o80;
  o80.target = "sm_80";
  Runner r80(o80), r90;
  r90.load(header("sm_80") + kCopy);
  std::string e = error_of([&] { r80.load(header("sm_90a") + kCopy); });
  EXPECT_NE(e.find("does not run on sm_80"), std::string::npos) << e;
  EXPECT_EQ(r80.dev->properties().compute_units, 108u);
  EXPECT_EQ(r90.dev->properties().compute_units, 132u);
  EXPECT_TRUE(r90.dev->properties().emulated);
  EXPECT_EQ(r90.dev->properties().vendor, isatune::Vendor::nvidia);
  EXPECT_EQ(r90.dev->properties().wave_size, 32u);
  // AMD code objects and cubins are not PTX.
  isatune::CodeObject amd;
  amd.vendor = isatune::Vendor::amd;
  EXPECT_NE(error_of([&] { r90.dev->load(amd); }).find("PTX text"), std::string::npos);
  isatune::CodeObject cubin;
  cubin.vendor = isatune::Vendor::nvidia;
  cubin.bytes = {0x7f, 'E', 'L', 'F', 2, 1};
  EXPECT_NE(error_of([&] { r90.dev->load(cubin); }).find("PTX text"), std::string::npos);
  e = error_of([] {
    eptx::PtxEmuOptions o;
    o.target = "sm_75";
    eptx::make_ptx_emu_device(o);
  });
  EXPECT_NE(e.find("sm_80, sm_90a"), std::string::npos) << e;
}

TEST(EmuPtxDevice, BackendNamesKeepTheCdnaOnes) {
  // A stand-in for the CDNA backend registered as "emu" first: its names stay its own.
  struct Other : isatune::loader::Backend {
    std::string name() const override { return "emu"; }
    std::string unavailable_reason() override { return ""; }
    std::vector<isatune::loader::DeviceProperties> list_devices() override {
      isatune::loader::DeviceProperties p;
      p.isa = "gfx942";
      return {p, p, p};
    }
    std::shared_ptr<isatune::loader::Device> open(const std::string& arg) override {
      throw isatune::InputError("other:" + arg);
    }
  };
  auto be = eptx::make_emu_ptx_backend(std::make_shared<Other>());
  auto devs = be->list_devices();
  ASSERT_EQ(devs.size(), 5u);
  EXPECT_EQ(devs[3].isa, "sm_90a");
  EXPECT_EQ(devs[4].isa, "sm_80");
  EXPECT_EQ(devs[4].index, 4);
  EXPECT_EQ(be->open("sm_80")->properties().isa, "sm_80");
  EXPECT_EQ(be->open("3")->properties().isa, "sm_90a");
  // Plain sm_90 code (the default device of --target sm_90) runs on the sm_90a device.
  EXPECT_EQ(be->open("sm_90")->properties().isa, "sm_90a");
  EXPECT_EQ(error_of([&] { be->open("gfx942"); }), "other:gfx942");
  EXPECT_EQ(error_of([&] { be->open(""); }), "other:");
  // Registered through the loader's registry: "emu:sm_90a" opens a PTX emulator device.
  eptx::register_emu_ptx_backend();
  auto dev = isatune::loader::open_device("emu:sm_90a");
  EXPECT_EQ(dev->properties().name, "PTX emulator (sm_90a)");
  EXPECT_EQ(isatune::loader::open_device("emu:sm_80")->properties().isa, "sm_80");
}

TEST(EmuPtxDevice, EmulatedTimeIsDeterministicAndGrowsWithWork) {
  Runner r;
  r.load(header() + kCopy);
  auto time_for = [&](uint32_t n) {
    uint64_t a = r.upload(std::vector<uint32_t>(n, 3)), b = r.upload(std::vector<uint32_t>(n));
    auto e0 = r.dev->create_event(), e1 = r.dev->create_event();
    r.dev->record(*e0);
    r.launch("copy", {(n + 255) / 256, 1, 1}, {256, 1, 1}, Runner::Args().add(a).add(b).add(n));
    r.dev->record(*e1);
    r.dev->synchronize();
    return r.dev->elapsed_ms(*e0, *e1);
  };
  const uint32_t n = ragged(100000, 200000);
  double t1 = time_for(n), t2 = time_for(n), t3 = time_for(8 * n);
  EXPECT_EQ(t1, t2);
  EXPECT_GT(t3, t1);
  EXPECT_GT(r.dev->last_launch().thread_instructions, 8ull * n);
}

} // namespace

namespace {

// CTAs run on several host threads; outputs and reports (first occurrence, counts) do not depend on how many.
TEST(EmuPtxDevice, DeterministicAcrossHostThreads) {
  std::string ptx = header() + R"(
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p1;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  ld.param.u32 %r5, [n];
  mul.lo.u32 %r6, %r4, 2654435761;
  shr.u32 %r6, %r6, 13;
  rem.u32 %r6, %r6, %r5;
  setp.lt.u32 %p1, %r4, %r5;
  selp.u32 %r6, %r6, %r4, %p1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
  ret;
}
)";
  const uint32_t n = ragged(500, 2000);
  std::vector<std::vector<std::string>> diags;
  for (unsigned threads : {1u, 2u, 5u}) {
    eptx::PtxEmuOptions o;
    o.threads = threads;
    Runner r(o);
    r.load(ptx);
    uint64_t out = r.upload(std::vector<uint32_t>(n)); // threads n.. store past the end: reported
    r.launch("k", {n / 64 + 3, 1, 1}, {64, 1, 1}, Runner::Args().add(out).add(n));
    ASSERT_TRUE(r.has(HazardKind::out_of_bounds));
    diags.push_back(r.dev->take_diagnostics());
  }
  EXPECT_EQ(diags[0], diags[1]);
  EXPECT_EQ(diags[0], diags[2]);
}

// With ptxas's registers per thread in the code object (the CLI fills them), a block whose warps need more than
// the SM's 64K registers is refused, as the GPU refuses it (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES).
TEST(EmuPtxDevice, RegisterFileLimitFromTheCodeObject) {
  for (uint32_t regs : {0u, 64u, 65u, 255u}) {
    auto dev = eptx::make_ptx_emu_device({.target = "sm_90a"});
    auto code = eptx::ptx_code_object(header() + kCopy, "", "copy.ptx");
    code.kernels[0].vgprs = regs;
    auto f = dev->load(code)->function("copy");
    EXPECT_EQ(f->info().vgprs, regs);
    const uint32_t n = 1024;
    auto src = dev->alloc(n * 4), dst = dev->alloc(n * 4);
    std::vector<uint8_t> args(20);
    std::memcpy(args.data(), &src, 8);
    std::memcpy(args.data() + 8, &dst, 8);
    std::memcpy(args.data() + 16, &n, 4);
    isatune::loader::LaunchConfig c;
    c.block = {256, 1, 1};
    c.grid = {4, 1, 1};
    // 256 threads: 8 warps x regs rounded to 8 x 32 lanes; 65 -> 72 -> 18,432; 255 -> 256 -> 65,536: all fit.
    EXPECT_NO_THROW(dev->launch(*f, c, args)) << regs;
  }
  // 96 registers x 768 threads = 73,728 > 65,536.
  const char* k768 = R"(
.visible .entry k()
{
  ret;
}
)";
  auto dev = eptx::make_ptx_emu_device({.target = "sm_90a"});
  auto code = eptx::ptx_code_object(header() + k768, "", "k.ptx");
  code.kernels[0].vgprs = 96;
  auto f = dev->load(code)->function("k");
  isatune::loader::LaunchConfig c;
  c.block = {768, 1, 1};
  try {
    dev->launch(*f, c, {});
    FAIL() << "a block needing 73,728 registers was launched";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("too many resources requested for launch"), std::string::npos) << e.what();
  }
  c.block = {640, 1, 1}; // 96 x 640 = 61,440: fits
  EXPECT_NO_THROW(dev->launch(*f, c, {}));
}

} // namespace

// The tuner's pipeline for PTX generators, on a tiny generator of its own: a TMA tile copy that needs what the
// GEMM needs (a tensor map the device encodes into the kernel arguments, dynamic shared memory, an mbarrier),
// so the contract is checked here whatever the real generators do. Also the static estimate on NVIDIA targets.
#include <gtest/gtest.h>

#include <cmath>

#include "isatune/error.h"
#include "isatune/tune/estimate.h"
#include "ptx_sweep.h"

namespace {

using namespace isatune;
using gen_ptx_test::emu_device;

// y[r][c] = x[r][c] for a rows x cols f32 matrix (row-major, ld = cols), one 16 x 32 box per CTA through TMA.
const char* kTmaCopy = R"(.version 8.0
.target sm_90a
.address_size 64
.extern .shared .align 1024 .b8 smem[];
.visible .entry tma_copy(.param .u64 x, .param .u64 y, .param .u32 rows, .param .u32 cols,
                         .param .align 64 .b8 tmap[128])
.reqntid 128
{
  .reg .pred p<4>;
  .reg .b32 r<24>;
  .reg .b64 rd<8>;
  .reg .f32 f<2>;
  .shared .align 8 .b64 bar;
  mov.u32 r1, %tid.x;
  mov.u32 r2, %ctaid.x;
  mov.u32 r3, %ctaid.y;
  shl.b32 r4, r2, 5;
  shl.b32 r5, r3, 4;
  mov.u32 r6, bar;
  mov.u32 r7, smem;
  setp.ne.u32 p1, r1, 0;
  @p1 bra WAIT;
  mbarrier.init.shared::cta.b64 [r6], 1;
  fence.mbarrier_init.release.cluster;
  fence.proxy.async.shared::cta;
  mbarrier.arrive.expect_tx.shared::cta.b64 _, [r6], 2048;
  mov.b64 rd1, tmap;
  cvta.param.u64 rd1, rd1;
  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [r7], [rd1, {r4, r5}], [r6];
WAIT:
  bar.sync 0;
LOOP:
  mbarrier.try_wait.parity.shared::cta.b64 p2, [r6], 0;
  @!p2 bra LOOP;
  ld.param.u32 r8, [rows];
  ld.param.u32 r9, [cols];
  ld.param.u64 rd2, [y];
  cvta.to.global.u64 rd2, rd2;
  mov.u32 r10, r1;
COPY:
  shr.u32 r11, r10, 5;
  and.b32 r12, r10, 31;
  add.u32 r13, r5, r11;
  add.u32 r14, r4, r12;
  setp.lt.u32 p3, r13, r8;
  setp.lt.and.u32 p3, r14, r9, p3;
  shl.b32 r15, r10, 2;
  add.u32 r15, r7, r15;
  ld.shared.f32 f1, [r15];
  mad.lo.u32 r16, r13, r9, r14;
  mul.wide.u32 rd3, r16, 4;
  add.u64 rd4, rd2, rd3;
  @p3 st.global.f32 [rd4], f1;
  add.u32 r10, r10, 128;
  setp.lt.u32 p1, r10, 512;
  @p1 bra COPY;
  ret;
}
)";

class TmaCopyGenerator : public gen::Generator {
public:
  std::string name() const override { return "tma_copy_test"; }
  std::string description() const override { return "test: a TMA tile copy"; }
  std::vector<std::string> targets() const override { return {"sm_90a"}; }
  std::vector<gen::SignatureField> signature_schema() const override { return {}; }
  std::vector<gen::ProblemField> problem_schema() const override {
    return {{"rows", 1, 4096, true, ""}, {"cols", 1, 4096, true, ""}};
  }
  gen::Space space(const std::string&, const gen::Signature&) const override {
    return gen::Space(std::vector<gen::Parameter>{{"unused", {gen::Value::num(0)}, true}},
                      std::vector<gen::Constraint>{});
  }
  gen::Generated generate(const std::string& isa, const gen::Signature&, const gen::Params&) const override {
    return {isa, "tma_copy", kTmaCopy, std::nullopt};
  }
  std::vector<gen::BufferSpec> buffers(const gen::Signature&, const gen::Problem& p) const override {
    const uint64_t r = uint64_t(p.at("rows")), c = uint64_t(p.at("cols"));
    gen::BufferSpec x{"x", gen::DType::f32, gen::BufferRole::input, r * c, r, c, c, -1, 1};
    gen::BufferSpec y{"y", gen::DType::f32, gen::BufferRole::output, r * c, r, c, c, -1, 1};
    return {x, y};
  }
  std::vector<gen::Launch> launches(const std::string&, const gen::Signature&, const gen::Params&,
                                    const gen::Problem& p, std::span<const uint64_t> a,
                                    const std::map<std::string, double>&) const override {
    const uint32_t rows = uint32_t(p.at("rows")), cols = uint32_t(p.at("cols"));
    gen::KernargWriter w;
    w.u64(a[0]).u64(a[1]).u32(rows).u32(cols);
    gen::TensorMapParam tm;
    tm.kernarg_offset = w.blank(128, 64);
    tm.map.data_type = TensorMapDataType::float32;
    tm.map.rank = 2;
    tm.map.global_address = a[0];
    tm.map.global_dim = {cols, rows, 0, 0, 0};
    tm.map.global_strides = {uint64_t(cols) * 4, 0, 0, 0};
    tm.map.box_dim = {32, 16, 0, 0, 0};
    gen::Launch l;
    l.kernel = "tma_copy";
    l.grid = {(cols + 31) / 32, (rows + 15) / 16, 1};
    l.block = {128, 1, 1};
    l.kernargs = w.bytes();
    l.dynamic_shared_bytes = 2048;
    l.tensor_maps = {tm};
    return {l};
  }
  void reference(const gen::Signature&, const gen::Problem&, const std::map<std::string, double>&,
                 std::vector<std::vector<double>>& b) const override {
    b[1] = b[0];
  }
  gen::Work work(const gen::Signature&, const gen::Problem& p) const override {
    return {0, 8.0 * double(p.at("rows") * p.at("cols")), false};
  }
  gen::DType output_dtype(const gen::Signature&) const override { return gen::DType::f32; }
};

tune::VariantSpec copy_spec(const TmaCopyGenerator& g) {
  return {&g, "sm_90a", {}, {{"unused", gen::Value::num(0)}}};
}

TEST(PtxPipeline, KernargWriterLeavesAlignedBlankSlots) {
  gen::KernargWriter w;
  w.u64(1).u32(2);
  EXPECT_EQ(w.blank(128, 64), 64u);
  EXPECT_EQ(w.size(), 192u);
  w.u32(7);
  EXPECT_EQ(w.size(), 196u);
  const auto b = w.bytes();
  for (size_t i = 12; i < 192; ++i) ASSERT_EQ(b[i], 0) << i;
}

TEST(PtxPipeline, TextObjectHasTheKernelArgumentLayout) {
  TmaCopyGenerator g;
  const tune::Compiled c = tune::compile_variant(copy_spec(g), {.ptxas = false});
  ASSERT_EQ(c.code.kernels.size(), 1u);
  const KernelInfo& k = c.code.kernels[0];
  EXPECT_EQ(c.code.format, CodeFormat::ptx);
  EXPECT_EQ(k.name, "tma_copy");
  ASSERT_EQ(k.args.size(), 5u);
  EXPECT_EQ(k.args[4].offset, 64u); // the 64-byte aligned tensor map
  EXPECT_EQ(k.kernarg_size, 192u);
  EXPECT_EQ(k.lds_bytes, 8u); // the static mbarrier; the dynamic buffer is the launch's
  EXPECT_EQ(k.max_workgroup_size, 128u);
  EXPECT_EQ(k.vgprs, 0u); // unknown without ptxas
  EXPECT_FALSE(c.machine_code);
}

TEST(PtxPipeline, TensorMapsAreEncodedByTheDeviceOnRaggedShapes) {
  TmaCopyGenerator g;
  std::mt19937 rng(42);
  for (int i = 0; i < 4; ++i) {
    // Rows are 16-byte multiples (TMA's global stride rule); neither size a multiple of the 32 x 16 box.
    const gen::Problem p{{"rows", int64_t(rng() % 40 + 1)}, {"cols", int64_t(4 * (rng() % 24 + 1))}};
    const auto o = gen_ptx_test::run_point(copy_spec(g), p, rng());
    EXPECT_EQ(o.result.status, tune::Status::ok) << gen_ptx_test::describe(copy_spec(g), p, o.result);
    EXPECT_EQ(o.result.max_rel_error, 0.0);
  }
}

TEST(PtxPipeline, AnImpossibleTensorMapIsRefusedWithItsReason) {
  TmaCopyGenerator g;
  const gen::Problem p{{"rows", 5}, {"cols", 33}}; // 132-byte rows: not a multiple of 16
  const auto o = gen_ptx_test::run_point(copy_spec(g), p, 1);
  EXPECT_EQ(o.result.status, tune::Status::runtime);
  EXPECT_NE(o.result.message.find("globalStrides[0] 132 is not a multiple of 16"), std::string::npos)
      << o.result.message;
}

TEST(PtxPipeline, AMissingTensorMapIsAWrongAnswerOrAReport) {
  // The same generator without its tensor map: the kernel reads a zero map, which must not pass.
  struct NoMap : TmaCopyGenerator {
    std::vector<gen::Launch> launches(const std::string& isa, const gen::Signature& s, const gen::Params& pa,
                                      const gen::Problem& p, std::span<const uint64_t> a,
                                      const std::map<std::string, double>& sc) const override {
      auto l = TmaCopyGenerator::launches(isa, s, pa, p, a, sc);
      l[0].tensor_maps.clear();
      return l;
    }
  } g;
  const gen::Problem p{{"rows", 20}, {"cols", 40}};
  const auto o = gen_ptx_test::run_point({&g, "sm_90a", {}, {{"unused", gen::Value::num(0)}}}, p, 3);
  EXPECT_NE(o.result.status, tune::Status::ok);
}

TEST(PtxPipeline, PtxasFillsRegistersAndTheCubin) {
  if (!gen_ptx_test::have_ptxas()) GTEST_SKIP() << tune::ptxas_unavailable_reason();
  TmaCopyGenerator g;
  const tune::Compiled c = tune::compile_variant(copy_spec(g), {.ptxas = true});
  ASSERT_TRUE(c.machine_code);
  ASSERT_TRUE(c.ptx_report);
  EXPECT_EQ(c.machine_code->format, CodeFormat::elf);
  EXPECT_GT(c.code.kernels[0].vgprs, 0u);
  EXPECT_EQ(c.code.kernels[0].scratch_bytes, 0u);
  EXPECT_TRUE(c.prune_reasons.empty());
  // The emulator still runs the PTX text.
  const gen::Problem p{{"rows", 17}, {"cols", 36}};
  tune::RunOptions ro;
  ro.time = false;
  const auto r = tune::run_variant(emu_device("sm_90a"), c, copy_spec(g), p, ro);
  EXPECT_EQ(r.status, tune::Status::ok) << r.message;
}

TEST(PtxPipeline, EstimateUsesTheNvidiaPeaks) {
  TmaCopyGenerator g;
  const tune::Compiled c = tune::compile_variant(copy_spec(g), {.ptxas = false});
  const gen::Problem p{{"rows", 4096}, {"cols", 4096}};
  const tune::Estimate e = tune::estimate(c.code, g, "sm_90a", {}, copy_spec(g).params, p);
  EXPECT_EQ(e.peaks_of, "H200 SXM");
  EXPECT_EQ(e.bound_by, "memory");
  EXPECT_NEAR(e.memory_ms, 8.0 * 4096 * 4096 / 4.8e12 * 1e3, 1e-9);
  EXPECT_EQ(e.workgroups, uint64_t(128 * 256));
  EXPECT_EQ(e.lds_bytes, 8u + 2048u);
  EXPECT_FALSE(e.note.empty()); // registers unknown without ptxas
  const tune::Estimate h100 = tune::estimate(c.code, g, "sm_90a", {}, copy_spec(g).params, p, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.peaks_of, "H100 SXM5");
  EXPECT_NEAR(h100.memory_ms / e.memory_ms, 4.8 / 3.35, 1e-9);
  EXPECT_THROW(tune::nvidia_peaks("sm_70"), InputError);
}

} // namespace

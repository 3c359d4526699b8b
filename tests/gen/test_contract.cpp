// The generator contract's shared pieces: data types, parsing of signatures/problems/parameters, kernarg
// packing, output comparison; the variant runner and the static estimate on the emulator.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "isatune/emu/emulator.h"
#include "isatune/error.h"
#include "isatune/gen/buffers.h"
#include "isatune/gen/generator.h"
#include "isatune/tune/estimate.h"
#include "isatune/tune/variant_runner.h"

using namespace isatune;
using namespace isatune::gen;

TEST(DType, KnownBitPatterns) {
  EXPECT_EQ(encode(DType::f16, 1.0), 0x3c00u);
  EXPECT_EQ(encode(DType::f16, -2.0), 0xc000u);
  EXPECT_EQ(encode(DType::f16, 65504.0), 0x7bffu);
  EXPECT_EQ(encode(DType::f16, 1e6), 0x7c00u);          // overflow: inf, as v_cvt_f16_f32
  EXPECT_EQ(encode(DType::f16, std::ldexp(1.0, -24)), 0x0001u); // smallest subnormal
  EXPECT_EQ(encode(DType::bf16, 1.0), 0x3f80u);
  EXPECT_EQ(encode(DType::bf16, 1.0 + std::ldexp(1.0, -8)), 0x3f80u); // tie: to even
  EXPECT_EQ(encode(DType::bf16, 1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82u);
  EXPECT_EQ(encode(DType::fp8_e4m3, 1.0), 0x38u);
  EXPECT_EQ(encode(DType::fp8_e4m3, 1000.0), 0x7eu);    // saturates to 448
  EXPECT_EQ(decode(DType::fp8_e4m3, 0x7eu), 448.0);
  EXPECT_EQ(encode(DType::fp8_e5m2, 1.0), 0x3cu);
  EXPECT_EQ(decode(DType::fp8_e5m2, 0x7bu), 57344.0);
}

TEST(DType, RoundTripIsIdempotentAndNearest) {
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::fp8_e4m3, DType::fp8_e5m2}) {
    for (double v : {0.1, -0.3, 3.14159, 1e-3, -7.5, 100.25, 2e-6}) {
      const double r = round_to(t, v);
      EXPECT_EQ(round_to(t, r), r) << to_string(t) << " " << v;
      // The neighbours of r (one unit of the last place away) are no closer to v.
      const uint32_t bits = encode(t, v);
      for (int d : {-1, 1}) {
        const double n = decode(t, bits + d);
        if (std::isfinite(n) && std::signbit(n) == std::signbit(r)) {
          EXPECT_LE(std::fabs(r - v), std::fabs(n - v)) << to_string(t) << " " << v;
        }
      }
    }
  }
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_FALSE(parse_dtype("f64").has_value());
}

TEST(Contract, SignatureProblemAndParamsParsing) {
  const Generator& g = find_generator("gemm");
  const std::vector<std::string> sig_words{"a=bf16,b=bf16,layout=TN"};
  Signature sig = parse_signature(g, sig_words);
  EXPECT_EQ(sig.at("a"), "bf16");
  EXPECT_EQ(sig.at("layout"), "TN");
  EXPECT_TRUE(sig.count("cd")); // defaults filled in
  const std::vector<std::string> bad_field{"q=1"};
  try {
    parse_signature(g, bad_field);
    FAIL() << "no error for an unknown field";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no signature field 'q'"), std::string::npos) << e.what();
  }
  const std::vector<std::string> bad_value{"layout=XX"};
  EXPECT_THROW(parse_signature(g, bad_value), InputError);

  const std::vector<std::string> prob{"M=10,N=20", "K=30"};
  Problem p = parse_problem(g, prob);
  EXPECT_EQ(p.at("M"), 10);
  EXPECT_EQ(p.at("K"), 30);
  const std::vector<std::string> missing{"M=10,N=20"};
  EXPECT_THROW(parse_problem(g, missing), InputError);
  const std::vector<std::string> zero{"M=0,N=20,K=1"};
  EXPECT_THROW(parse_problem(g, zero), InputError);

  const Space space = g.space("gfx942", sig);
  const std::vector<std::string> words{"tile_m=64", "split_k=2"};
  Params params = parse_params(space, words);
  EXPECT_EQ(param_int(params, "tile_m"), 64);
  EXPECT_EQ(param_int(params, "split_k"), 2);
  EXPECT_TRUE(space.is_valid(config_of(space, params)));
  const std::vector<std::string> unknown{"tile_q=64"};
  EXPECT_THROW(parse_params(space, unknown), InputError);
  const std::vector<std::string> not_a_value{"tile_m=48"};
  EXPECT_THROW(parse_params(space, not_a_value), InputError);
  EXPECT_THROW(find_generator("nonesuch"), InputError);
}

TEST(Contract, KernargWriterAlignsAndPads) {
  KernargWriter w;
  w.u32(7).u64(0x1122334455667788ull).f32(1.0f).at(24).u32(9);
  const auto b = w.bytes();
  ASSERT_EQ(b.size(), 28u);
  EXPECT_EQ(b[0], 7);
  EXPECT_EQ(b[4], 0); // padding before the 8-byte value
  EXPECT_EQ(b[8], 0x88);
  float f;
  std::memcpy(&f, &b[16], 4);
  EXPECT_EQ(f, 1.0f);
  EXPECT_EQ(b[24], 9);
  EXPECT_THROW(KernargWriter().u64(1).at(4), InputError);
}

TEST(Contract, CompareOutputUsesTheRowNorm) {
  BufferSpec s;
  s.name = "y";
  s.rows = 2;
  s.cols = 3;
  s.row_stride = 4;
  std::vector<double> want{1, 2, 4, 99, 0.001, 0.002, 0.001, 99};
  std::vector<double> got = want;
  got[4] += 0.0001; // row 1's norm is 0.002: relative error 0.05
  got[7] = 12345;   // after the last row: not part of the buffer's rows
  Mismatch m = compare_output(s, got, want);
  EXPECT_NEAR(m.max_rel_error, 0.05, 1e-9);
  EXPECT_EQ(m.row, 1u);
  EXPECT_EQ(m.col, 0u);
  EXPECT_EQ(m.gap_writes, 0u);
  got[1] = NAN;
  EXPECT_TRUE(std::isinf(compare_output(s, got, want).max_rel_error));
}

TEST(Contract, CompareOutputCatchesWritesBetweenRows) {
  BufferSpec s;
  s.name = "y";
  s.rows = 3;
  s.cols = 2;
  s.row_stride = 4;
  std::vector<double> want{1, 2, 7, NAN, 3, 4, 8, 9, 5, 6};
  std::vector<double> got = want;
  EXPECT_EQ(compare_output(s, got, want).gap_writes, 0u); // NaN kept as NaN is unchanged
  got[6] = 0; // row 1's padding
  got[3] = 1; // row 0's padding
  const Mismatch m = compare_output(s, got, want);
  EXPECT_EQ(m.gap_writes, 2u);
  EXPECT_TRUE(std::isinf(m.max_rel_error));
  EXPECT_EQ(m.row, 0u);
  EXPECT_EQ(m.col, 3u);
}

TEST(Contract, MakeBuffersIsSeededAndFillsOutputs) {
  std::vector<BufferSpec> specs(3);
  specs[0] = {"x", DType::bf16, BufferRole::input, 100, 1, 100, 100, -2, 2};
  specs[1] = {"y", DType::f32, BufferRole::output, 100, 1, 100, 100};
  specs[2] = {"w", DType::f32, BufferRole::workspace, 10, 1, 10, 10};
  HostBuffers a = make_buffers(specs, 5), b = make_buffers(specs, 5), c = make_buffers(specs, 6);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_NE(a.bytes[0], c.bytes[0]);
  for (double v : a.values[0]) {
    EXPECT_LE(std::fabs(v), 2.0);
    EXPECT_EQ(round_to(DType::bf16, v), v);
  }
  int nonzero = 0;
  for (double v : a.values[1]) nonzero += v != 0;
  EXPECT_GT(nonzero, 90); // outputs start as random values, never zeros
  for (double v : a.values[2]) EXPECT_EQ(v, 0.0);
}

namespace {

tune::VariantSpec spec_of(const std::string& name, const std::string& isa, std::vector<std::string> sig,
                          std::vector<std::string> params) {
  tune::VariantSpec s;
  s.generator = &find_generator(name);
  s.isa = isa;
  s.sig = parse_signature(*s.generator, sig);
  s.params = parse_params(s.generator->space(isa, s.sig), params);
  return s;
}

} // namespace

TEST(VariantRunner, GemmOnTheEmulatorIsCheckedAndTimed) {
  auto spec = spec_of("gemm", "gfx942", {"a=f16,cd=f16,layout=NN"}, {"tile_m=32,tile_n=32"});
  auto compiled = tune::compile_variant(spec);
  EXPECT_FALSE(compiled.code.bytes.empty());
  auto device = emu::make_emu_device({.target = "gfx942"});
  const std::vector<std::string> prob{"M=45,N=37,K=19"};
  auto r = tune::run_variant(*device, compiled, spec, parse_problem(*spec.generator, prob));
  EXPECT_EQ(r.status, tune::Status::ok) << r.message;
  EXPECT_LE(r.max_rel_error, 2e-3);
  EXPECT_EQ(r.tolerance, 2e-3);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].buffer, "D");
  ASSERT_TRUE(r.timing.has_value());
  EXPECT_TRUE(r.timing->emulated);
  EXPECT_GT(r.timing->median_ms, 0);
  EXPECT_TRUE(r.diagnostics.empty());
}

TEST(VariantRunner, WrongAnswersAndFaultsAreReported) {
  auto device = emu::make_emu_device({.target = "gfx942"});
  const std::vector<std::string> prob{"N=1000"};
  auto wrong = spec_of("selftest", "gfx942", {}, {"behaviour=wrong"});
  auto r = tune::run_variant(*device, tune::compile_variant(wrong), wrong, parse_problem(*wrong.generator, prob));
  EXPECT_EQ(r.status, tune::Status::wrong_answer) << r.message;
  EXPECT_FALSE(r.timing.has_value()); // a wrong kernel is never timed
  auto fault = spec_of("selftest", "gfx942", {}, {"behaviour=fault"});
  r = tune::run_variant(*device, tune::compile_variant(fault), fault, parse_problem(*fault.generator, prob));
  EXPECT_EQ(r.status, tune::Status::runtime) << r.message;
  EXPECT_FALSE(r.diagnostics.empty());
}

TEST(Estimate, LargeGemmIsComputeBoundNearThePeak) {
  auto spec = spec_of("gemm", "gfx942", {"a=bf16,b=bf16,cd=f32,layout=NT"}, {"tile_m=128,tile_n=128"});
  auto compiled = tune::compile_variant(spec);
  const std::vector<std::string> big{"M=8192,N=8192,K=8192"};
  auto e = tune::estimate(compiled.code, *spec.generator, "gfx942", spec.sig, spec.params,
                          parse_problem(*spec.generator, big));
  EXPECT_NEAR(e.peak_tflops, 1307.4, 0.5); // notes section 7: MI300X dense bf16
  EXPECT_NEAR(e.peak_tbps, 5.3, 1e-9);
  EXPECT_EQ(e.bound_by, "compute");
  EXPECT_EQ(e.workgroups, 64u * 64u);
  const double ideal_ms = 2.0 * 8192.0 * 8192.0 * 8192.0 / 1307.4e12 * 1e3;
  EXPECT_GE(e.bound_ms, ideal_ms * 0.999);
  EXPECT_LE(e.bound_ms, ideal_ms / e.wave_efficiency * 1.001);
  EXPECT_GT(e.vgprs, 0u);
  EXPECT_GT(e.lds_bytes, 0u);
  EXPECT_GE(e.occupancy.waves_per_simd, 1u);
}

TEST(Estimate, SoftmaxIsMemoryBound) {
  auto spec = spec_of("softmax", "gfx90a", {"dtype=f16"}, {});
  auto compiled = tune::compile_variant(spec);
  const std::vector<std::string> prob{"rows=4096,N=4096"};
  auto e = tune::estimate(compiled.code, *spec.generator, "gfx90a", spec.sig, spec.params,
                          parse_problem(*spec.generator, prob));
  EXPECT_EQ(e.bound_by, "memory");
  EXPECT_NEAR(e.memory_ms, e.bytes / 1.6e12 * 1e3, 1e-12); // gfx90a: one MI250X die, 1.6 TB/s
  EXPECT_GE(e.bytes, 2.0 * 4096 * 4096 * 2);              // x read and y written once at least
}

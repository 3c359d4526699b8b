// `isatune run` arguments beyond the positional ones: NAME=SPEC puts a value in the kernel argument of that name,
// and tmap:... makes a TMA tensor map over a buffer argument, encoded by the device once the buffer exists. The
// tensor map is checked by a kernel that copies its 128 parameter bytes to a buffer: decoded, they must hold
// the buffer's address and every field given on the command line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "../fixtures/ptx/cuda/references.h"
#include "isatune/ptx/tensor_map.h"
#include "run_cli.h"
#include "skip_part.h"

namespace {

namespace ptx = isatune::ptx;

// Copies the tensor map parameter (16 x 8 bytes) to `out`, and adds `bias` to out[16] so a scalar argument
// given by name shows in the output too.
const char* kCopyMap = R"(.version 8.0
.target sm_90a
.address_size 64
.visible .entry copy_map(.param .u64 out, .param .align 64 .b8 map[128], .param .u64 data, .param .u32 bias)
{
  .reg .b64 %rd<6>;
  .reg .b32 %r<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u64 %rd2, [map+0];   st.global.u64 [%rd1+0], %rd2;
  ld.param.u64 %rd2, [map+8];   st.global.u64 [%rd1+8], %rd2;
  ld.param.u64 %rd2, [map+16];  st.global.u64 [%rd1+16], %rd2;
  ld.param.u64 %rd2, [map+24];  st.global.u64 [%rd1+24], %rd2;
  ld.param.u64 %rd2, [map+32];  st.global.u64 [%rd1+32], %rd2;
  ld.param.u64 %rd2, [map+40];  st.global.u64 [%rd1+40], %rd2;
  ld.param.u64 %rd2, [map+48];  st.global.u64 [%rd1+48], %rd2;
  ld.param.u64 %rd2, [map+56];  st.global.u64 [%rd1+56], %rd2;
  ld.param.u64 %rd2, [map+64];  st.global.u64 [%rd1+64], %rd2;
  ld.param.u64 %rd2, [map+72];  st.global.u64 [%rd1+72], %rd2;
  ld.param.u64 %rd2, [map+80];  st.global.u64 [%rd1+80], %rd2;
  ld.param.u64 %rd2, [map+88];  st.global.u64 [%rd1+88], %rd2;
  ld.param.u64 %rd2, [map+96];  st.global.u64 [%rd1+96], %rd2;
  ld.param.u64 %rd2, [map+104]; st.global.u64 [%rd1+104], %rd2;
  ld.param.u64 %rd2, [map+112]; st.global.u64 [%rd1+112], %rd2;
  ld.param.u64 %rd2, [map+120]; st.global.u64 [%rd1+120], %rd2;
  ld.param.u64 %rd3, [data];
  st.global.u64 [%rd1+128], %rd3;
  ld.param.u32 %r1, [bias];
  st.global.u32 [%rd1+136], %r1;
  ret;
}
)";

class RunArgs : public ::testing::Test {
protected:
  void SetUp() override {
    dir = make_temp_dir();
    write_file(dir + "/copy_map.ptx", kCopyMap);
  }
  std::string run_cmd(const std::string& args) const {
    return "run " + dir + "/copy_map.ptx --grid 1 --block 1 " + args;
  }
  std::string dir;
};

TEST_F(RunArgs, TensorMapByNameHoldsTheBufferAndEveryField) {
  std::mt19937 rng(std::random_device{}());
  // A ragged 3-D bf16 tensor with padded rows (strides larger than packed) and a random box.
  const uint64_t d0 = 40 + rng() % 200, d1 = 3 + rng() % 50, d2 = 2 + rng() % 5;
  const uint64_t s1 = (d0 * 2 + 15) / 16 * 16 + 16 * (rng() % 4), s2 = s1 * d1;
  const uint32_t b0 = 8 + 8 * (rng() % 8), b1 = 1 + rng() % 16, b2 = 1 + rng() % 2;
  const uint32_t bias = rng() % 100000 + 1;
  const uint64_t elems = s2 * d2 / 2;
  std::string tmap = "tmap:data:bf16:" + std::to_string(d0) + "x" + std::to_string(d1) + "x" + std::to_string(d2) +
                     ":box=" + std::to_string(b0) + "x" + std::to_string(b1) + "x" + std::to_string(b2) +
                     ":strides=" + std::to_string(s1) + "x" + std::to_string(s2) + ":swizzle=128B:oob=nan";
  // Named arguments in an order other than the kernel's, the tensor map naming its buffer by name.
  auto r = run_isatune(run_cmd("--arg bias=u32:" + std::to_string(bias) + " --arg map=" + tmap +
                               " --arg data=buf:u16:" + std::to_string(elems) + ":random --arg out=buf:u8:144:zero:out=" +
                               dir + "/map.bin --json"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["reports"].empty()) << j["reports"].dump();
  EXPECT_EQ(j["args"][1]["tensor_map"]["buffer"], 2);
  std::string bytes = read_file(dir + "/map.bin");
  ASSERT_EQ(bytes.size(), 144u);
  ptx::TensorMap m;
  std::memcpy(m.bytes.data(), bytes.data(), 128);
  uint64_t data_ptr = 0;
  uint32_t got_bias = 0;
  std::memcpy(&data_ptr, bytes.data() + 128, 8);
  std::memcpy(&got_bias, bytes.data() + 136, 4);
  EXPECT_EQ(got_bias, bias);
  ptx::TensorMapTiledArgs a = ptx::decode_tensor_map(m);
  EXPECT_EQ(a.global_address, data_ptr);
  EXPECT_NE(data_ptr, 0u);
  EXPECT_EQ(a.data_type, ptx::TensorMapDataType::bfloat16);
  EXPECT_EQ(a.rank, 3u);
  EXPECT_EQ(a.global_dim[0], d0);
  EXPECT_EQ(a.global_dim[1], d1);
  EXPECT_EQ(a.global_dim[2], d2);
  EXPECT_EQ(a.global_strides[0], s1);
  EXPECT_EQ(a.global_strides[1], s2);
  EXPECT_EQ(a.box_dim[0], b0);
  EXPECT_EQ(a.box_dim[1], b1);
  EXPECT_EQ(a.box_dim[2], b2);
  EXPECT_EQ(a.swizzle, ptx::TensorMapSwizzle::b128);
  EXPECT_EQ(a.oob_fill, ptx::TensorMapOobFill::nan_request_zero_fma);
}

TEST_F(RunArgs, PackedStridesByDefaultAndBufferByIndex) {
  auto r = run_isatune(run_cmd("--arg buf:u8:144:zero:out=" + dir + "/map.bin --arg tmap:2:f32:100x7:box=32x4 "
                               "--arg buf:f32:700:random --arg u32:5"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::string bytes = read_file(dir + "/map.bin");
  ASSERT_EQ(bytes.size(), 144u);
  ptx::TensorMap m;
  std::memcpy(m.bytes.data(), bytes.data(), 128);
  auto a = ptx::decode_tensor_map(m);
  EXPECT_EQ(a.rank, 2u);
  EXPECT_EQ(a.global_strides[0], 400u); // 100 f32 per row, packed
  EXPECT_EQ(a.swizzle, ptx::TensorMapSwizzle::none);
}

TEST_F(RunArgs, NamedArgumentsLeaveTheOthersZeroAndNullIsANullPointer) {
  auto r = run_isatune(run_cmd("--arg data=null --arg out=buf:u8:144:random:out=" + dir + "/o.bin"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::string bytes = read_file(dir + "/o.bin");
  ASSERT_EQ(bytes.size(), 144u);
  for (size_t i = 0; i < 140; ++i) EXPECT_EQ(bytes[i], 0) << "byte " << i << " of the zero map, data and bias";
  // Positional arguments alone must be complete.
  auto few = run_isatune(run_cmd("--arg buf:u8:144:zero"));
  EXPECT_EQ(few.exit_code, 1);
  EXPECT_NE(few.err.find("takes 4 arguments"), std::string::npos) << few.err;
}

TEST_F(RunArgs, RawKernargFileIsUsedAsItIs) {
  // out = 0x123400: the kernel's first store must be reported at that address, so the bytes reached it.
  std::string raw(8, '\0');
  const uint64_t bogus = 0x123400;
  std::memcpy(raw.data(), &bogus, 8);
  write_file(dir + "/args.bin", raw);
  auto r = run_isatune(run_cmd("--kernargs " + dir + "/args.bin --json"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["reports"].empty());
  EXPECT_EQ(j["reports"][0]["kind"], "out_of_bounds");
  EXPECT_NE(j["reports"][0]["message"].get<std::string>().find("0x123400"), std::string::npos) << j["reports"].dump();
  write_file(dir + "/big.bin", std::string(4096, 'x'));
  auto big = run_isatune(run_cmd("--kernargs " + dir + "/big.bin"));
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_NE(big.err.find("4096 bytes, more than"), std::string::npos) << big.err;
  auto both = run_isatune(run_cmd("--kernargs " + dir + "/args.bin --arg u32:1"));
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("does not combine with --arg"), std::string::npos) << both.err;
}

// The nvcc warp-specialised sm_90a GEMM from the command line: A and B are --buffers (not kernel arguments),
// covered by tensor maps that name them; C is compared with the float64 reference.
TEST_F(RunArgs, TmaGemmFromTheCommandLine) {
  std::mt19937 rng(std::random_device{}());
  const int M = 129 + int(rng() % 60), N = 65 + int(rng() % 60), K = 65 + int(rng() % 100);
  const int lda = (K + 7) / 8 * 8, ldc = N + 2;
  std::uniform_real_distribution<float> u(-2, 2);
  auto bf16 = [&] {
    float f = u(rng);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return uint16_t(b >> 16);
  };
  std::vector<uint16_t> a(size_t(M) * lda), b(size_t(N) * lda);
  for (auto& x : a) x = bf16();
  for (auto& x : b) x = bf16();
  write_file(dir + "/a.bin", std::string(reinterpret_cast<const char*>(a.data()), a.size() * 2));
  write_file(dir + "/b.bin", std::string(reinterpret_cast<const char*>(b.data()), b.size() * 2));
  const std::string k = std::to_string(K), stride = std::to_string(lda * 2);
  const int gx = 2 * (((M + 127) / 128 + 1) / 2), gy = (N + 127) / 128;
  auto r = run_isatune("run " + std::string(ISATUNE_FIXTURES_DIR) + "/ptx/cuda/gemm_bf16_ws_sm90a.sm_90a.ptx" +
                       " --grid " + std::to_string(gx) + "," + std::to_string(gy) +
                       " --block 384 --cluster 2 --dynamic-lds 99376 --json" + " --buffer A=buf:u16:file=" + dir +
                       "/a.bin --buffer Bt=buf:u16:file=" + dir + "/b.bin" + " --arg tmap:A:bf16:" + k + "x" +
                       std::to_string(M) + ":box=64x128:strides=" + stride + ":swizzle=128B" + " --arg tmap:Bt:bf16:" +
                       k + "x" + std::to_string(N) + ":box=64x64:strides=" + stride + ":swizzle=128B" +
                       " --arg buf:f32:" + std::to_string(M * ldc) + ":zero:out=" + dir + "/c.bin" + " --arg i32:" +
                       std::to_string(M) + " --arg i32:" + std::to_string(N) + " --arg i32:" + k + " --arg i32:" +
                       std::to_string(ldc));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["reports"].empty()) << j["reports"].dump();
  EXPECT_EQ(j["time_kind"], "emulated");
  if (j.contains("registers_note")) // ptxas absent: said so, and the launch still ran
    isatune::test::print_skipped_part("ptxas's register count", j["registers_note"].get<std::string>());
  else
    EXPECT_EQ(j["registers"], 168) << "ptxas's registers per thread for the fixture (its README: 168)";
  std::string bytes = read_file(dir + "/c.bin");
  ASSERT_EQ(bytes.size(), size_t(M) * ldc * 4);
  std::vector<float> c(size_t(M) * ldc);
  std::memcpy(c.data(), bytes.data(), bytes.size());
  auto ref = isatune::fixtures::gemm_bf16_nt_reference(a.data(), b.data(), M, N, K, lda, lda);
  for (int i = 0; i < M; ++i)
    for (int n = 0; n < N; ++n) {
      double mag = 0;
      for (int kk = 0; kk < K; ++kk)
        mag += std::fabs(isatune::fixtures::bf16_to_double(a[size_t(i) * lda + kk]) *
                         isatune::fixtures::bf16_to_double(b[size_t(n) * lda + kk]));
      ASSERT_NEAR(c[size_t(i) * ldc + n], ref[size_t(i) * N + n], 1e-5 * mag + 1e-30) << i << "," << n;
    }
  // A --buffer that is also an argument's name, or a tensor map over nothing.
  auto bad = run_isatune(run_cmd("--buffer data=buf:u8:16:zero --arg out=buf:u8:144:zero"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("is a kernel argument"), std::string::npos) << bad.err;
}

TEST_F(RunArgs, BadTensorMapsAndNamesGiveOneClearLine) {
  auto expect_error = [&](const std::string& args, const std::string& needle) {
    auto r = run_isatune(run_cmd(args));
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
  };
  const std::string rest = " --arg buf:f32:700:random --arg u32:5";
  // The buffer is too small for the tensor the map describes.
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f32:100x8:box=32x4" + rest, "spans 3200 bytes");
  // The map names something that is not a buffer, or a name the kernel does not have.
  expect_error("--arg buf:u8:144:zero --arg tmap:3:f32:100x7:box=32x4" + rest, "BUF '3' is not a buffer");
  expect_error("--arg buf:u8:144:zero --arg tmap:nothere:f32:100x7:box=32x4" + rest, "BUF 'nothere'");
  // Malformed descriptions.
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f32:100x7" + rest, "box=BOX is required");
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f8:100x7:box=32x4" + rest, "unknown element type 'f8'");
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f32:100x7:box=32" + rest, "box '32' has 1 entries");
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f32:100x7:box=32x4:swizzle=96B" + rest, "swizzle '96B'");
  // The encoder's own checks (cuTensorMapEncodeTiled's rules): strides must be multiples of 16 bytes.
  expect_error("--arg buf:u8:144:zero --arg tmap:2:f32:100x7:box=32x4:strides=404" + rest, "--arg 1");
  // A tensor map where the kernel takes a pointer, and a buffer where it takes a tensor map.
  expect_error("--arg tmap:2:f32:100x7:box=32x4 --arg buf:u8:144:zero" + rest, "not a 128-byte tensor map");
  // Named arguments.
  expect_error("--arg nope=u32:1 --arg buf:u8:144:zero --arg tmap:2:f32:100x7:box=32x4" + rest,
               "no argument named 'nope'");
  expect_error("--arg bias=u32:1 --arg bias=u32:2 --arg buf:u8:144:zero --arg tmap:2:f32:100x7:box=32x4"
               " --arg buf:f32:700:random",
               "given twice");
}

} // namespace

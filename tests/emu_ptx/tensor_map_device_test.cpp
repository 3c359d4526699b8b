// Device::encode_tensor_map on the PTX emulator: the emulator's own encoding of cuTensorMapEncodeTiled's
// arguments, with the encoder's checks and the emulator's own one (the tensor inside one allocation).
#include "emu_ptx_test.h"
#include "isatune/error.h"
#include "isatune/ptx/tensor_map.h"

using namespace emu_ptx_test;

namespace {

isatune::TensorMapTiledArgs args_over(uint64_t address, uint64_t rows, uint64_t cols) {
  isatune::TensorMapTiledArgs a;
  a.data_type = isatune::TensorMapDataType::float32;
  a.rank = 2;
  a.global_address = address;
  a.global_dim = {cols, rows, 0, 0, 0}; // entries past the rank are ignored (decoded as 0)
  a.global_strides = {cols * 4, 0, 0, 0};
  a.box_dim = {16, 8, 0, 0, 0};
  return a;
}

TEST(EmuPtxTensorMap, EncodesWhatDecodesBack) {
  auto dev = eptx::make_ptx_emu_device({.target = "sm_90a"});
  const uint64_t rows = 3 + rand_u32() % 60, cols = 4 * (1 + rand_u32() % 64);
  auto buf = dev->alloc(rows * cols * 4);
  auto a = args_over(buf, rows, cols);
  a.swizzle = isatune::TensorMapSwizzle::b64;
  isatune::TensorMap m = dev->encode_tensor_map(a);
  EXPECT_EQ(isatune::ptx::decode_tensor_map(m), a);
  dev->free(buf);
}

TEST(EmuPtxTensorMap, RejectsATensorOutsideItsAllocation) {
  auto dev = eptx::make_ptx_emu_device({.target = "sm_90a"});
  auto buf = dev->alloc(64 * 64 * 4);
  try {
    dev->encode_tensor_map(args_over(buf, 65, 64)); // one row too many
    FAIL() << "a tensor past the end of its allocation was encoded";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not inside one allocation"), std::string::npos) << e.what();
  }
  try {
    auto a = args_over(buf, 64, 64);
    a.global_strides[0] = 100; // not a multiple of 16 bytes: cuTensorMapEncodeTiled's rule
    dev->encode_tensor_map(a);
    FAIL() << "a stride that is not a multiple of 16 was encoded";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("globalStrides[0] 100"), std::string::npos) << e.what();
  }
  dev->free(buf);
}

} // namespace

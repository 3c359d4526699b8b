// The CUDA backend against a stand-in driver (fake/fake_libcuda.cpp, loaded through ISATUNE_CUDA_LIBRARY before
// anything opens the driver): properties, memory, module loading, plain and cluster launches with the packed
// argument buffer, module and library loading, dynamic shared memory above 48 KiB, tensor maps, and the errors of
// each. Nothing executes:
// what is checked is what the backend asks of the driver (nothing here has run against a real driver yet).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "isatune/error.h"
#include "isatune/loader/backend.h"
#include "isatune/loader/kernargs.h"

namespace {

namespace loader = isatune::loader;

// Before main: the backend reads the variable when it first opens the driver. A child run of this program with
// FAKE_CUDA_OLD_DRIVER set gets the stand-in for an older driver (CudaBackend.AnOlderDriver... starts it).
const bool kOldDriver = std::getenv("FAKE_CUDA_OLD_DRIVER") != nullptr;
const char* const kFakeLibrary = kOldDriver ? FAKE_CUDA_OLD_LIBRARY : FAKE_CUDA_LIBRARY;
const int kUseFakeDriver = setenv("ISATUNE_CUDA_LIBRARY", kFakeLibrary, 1);

template <class F> F fake(const char* name) {
  void* h = dlopen(kFakeLibrary, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(h, nullptr) << "the stand-in driver is not loaded";
  void* p = h ? dlsym(h, name) : nullptr;
  EXPECT_NE(p, nullptr) << name;
  return reinterpret_cast<F>(p);
}

struct LastLaunch {
  std::string api;
  unsigned v[11] = {};
};
LastLaunch last_launch() {
  LastLaunch l;
  l.api = fake<const char* (*)(unsigned*)>("fake_cuda_last_launch")(l.v);
  return l;
}

isatune::CodeObject ptx_object(uint32_t shared_bytes = 0) {
  isatune::CodeObject c;
  c.vendor = isatune::Vendor::nvidia;
  c.isa = "sm_90a";
  c.format = isatune::CodeFormat::ptx;
  const std::string text = ".version 8.0\n.target sm_90a\n.address_size 64\n";
  c.bytes.assign(text.begin(), text.end());
  c.bytes.push_back(0);
  isatune::KernelInfo k;
  k.name = k.symbol = "k";
  k.lds_bytes = shared_bytes;
  isatune::KernelArg a;
  a.name = "x";
  a.size = 8;
  a.offset = 0;
  a.value_kind = "by_value";
  k.args.push_back(a);
  k.kernarg_size = 8;
  c.kernels.push_back(k);
  c.sha256 = "fake";
  return c;
}

// The driver calls made since call number `from`.
std::vector<std::string> calls_since(size_t from) {
  std::vector<std::string> out;
  size_t n = fake<size_t (*)()>("fake_cuda_call_count")();
  for (size_t i = from; i < n; ++i) out.push_back(fake<const char* (*)(size_t)>("fake_cuda_call")(i));
  return out;
}
size_t call_count() { return fake<size_t (*)()>("fake_cuda_call_count")(); }
bool has(const std::vector<std::string>& calls, const std::string& c) {
  return std::find(calls.begin(), calls.end(), c) != calls.end();
}

std::shared_ptr<loader::Device> open() {
  (void)kUseFakeDriver;
  return loader::open_device("cuda:0");
}

TEST(CudaBackend, PropertiesFromTheDriver) {
  auto devices = loader::list_devices();
  bool found = false;
  for (const auto& d : devices)
    if (d.backend == "cuda") {
      found = true;
      EXPECT_EQ(d.name, "NVIDIA H200 (fake)");
      EXPECT_EQ(d.isa, "sm_90a"); // 9.0: the arch-specific features are there
      EXPECT_EQ(d.compute_units, 132u);
      EXPECT_EQ(d.shared_bytes_per_workgroup, 227u * 1024); // the opt-in limit
      EXPECT_EQ(d.default_shared_bytes_per_workgroup, 48u * 1024);
      EXPECT_EQ(d.clock_khz, 1980000u);
      EXPECT_EQ(d.memory_clock_khz, 3201000u);
      EXPECT_EQ(d.memory_bus_bits, 6144u);
      EXPECT_EQ(d.l2_bytes, 50ull << 20);
      EXPECT_EQ(d.shared_bytes_per_cu, 228u * 1024);
      EXPECT_EQ(d.registers_per_cu, 65536u);
      EXPECT_EQ(d.wave_size, 32u);
      EXPECT_EQ(d.driver_version, "cuda driver 13.0");
      EXPECT_FALSE(d.emulated);
    }
  EXPECT_TRUE(found);
  EXPECT_THROW(loader::open_device("cuda:1"), isatune::InputError);
  EXPECT_THROW(loader::open_device("cuda:x"), isatune::InputError);
}

TEST(CudaBackend, MemoryRoundTripsAndDriverErrorsNameTheCall) {
  auto dev = open();
  std::vector<uint32_t> in(1000), out(1000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint32_t(i * 2654435761u);
  auto p = dev->alloc(in.size() * 4);
  dev->copy_to_device(p, in.data(), in.size() * 4);
  dev->copy_to_host(out.data(), p, out.size() * 4);
  EXPECT_EQ(in, out);
  dev->free(p);
  fake<void (*)(int)>("fake_cuda_fail_next")(2); // CUDA_ERROR_OUT_OF_MEMORY
  try {
    dev->alloc(64);
    FAIL() << "a failing cuMemAlloc was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuMemAlloc"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, LaunchesPassThePackedArgumentsAndTheGeometry) {
  auto dev = open();
  auto code = ptx_object();
  auto m = dev->load(code);
  auto f = m->function("k");
  std::vector<uint8_t> args = {1, 2, 3, 4, 5, 6, 7, 8};
  loader::LaunchConfig c;
  c.grid = {7, 3, 2};
  c.block = {128, 1, 1};
  dev->launch(*f, c, args);
  auto l = last_launch();
  EXPECT_EQ(l.api, "cuLaunchKernel");
  EXPECT_EQ(l.v[0], 7u);
  EXPECT_EQ(l.v[1], 3u);
  EXPECT_EQ(l.v[2], 2u);
  EXPECT_EQ(l.v[3], 128u);
  uint8_t params[64] = {};
  size_t n = fake<size_t (*)(uint8_t*, size_t)>("fake_cuda_last_params")(params, sizeof params);
  ASSERT_EQ(n, args.size());
  EXPECT_EQ(std::memcmp(params, args.data(), n), 0);

  // Above 48 KiB of shared memory the function's opt-in attribute is set first; past the device's, an error.
  c.dynamic_shared_bytes = 100 * 1024;
  dev->launch(*f, c, args);
  EXPECT_EQ(fake<int (*)()>("fake_cuda_dynamic_shared_attribute")(), 100 * 1024);
  EXPECT_EQ(last_launch().v[9], 100u * 1024);
  c.dynamic_shared_bytes = 300 * 1024;
  EXPECT_THROW(dev->launch(*f, c, args), isatune::InputError);

  // A launch error names the kernel.
  c.dynamic_shared_bytes = 0;
  fake<void (*)(int)>("fake_cuda_fail_next")(700);
  try {
    dev->launch(*f, c, args);
    FAIL() << "a failing launch was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuLaunchKernel k"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("illegal memory access"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, ClusterLaunchesUseLaunchKernelExWithTheClusterAttribute) {
  auto dev = open();
  auto code = ptx_object();
  auto f = dev->load(code)->function("k");
  std::vector<uint8_t> args(8, 9);
  loader::LaunchConfig c;
  c.grid = {8, 4, 1};
  c.block = {384, 1, 1};
  c.cluster = {2, 1, 1};
  dev->launch(*f, c, args);
  auto l = last_launch();
  EXPECT_EQ(l.api, "cuLaunchKernelEx");
  EXPECT_EQ(l.v[0], 8u);
  EXPECT_EQ(l.v[3], 384u);
  EXPECT_EQ(l.v[6], 2u); // cluster x
  EXPECT_EQ(l.v[7], 1u);
  EXPECT_EQ(l.v[10], 1u); // one attribute
  uint8_t params[16] = {};
  EXPECT_EQ(fake<size_t (*)(uint8_t*, size_t)>("fake_cuda_last_params")(params, sizeof params), 8u);
  EXPECT_EQ(params[0], 9);
  // The grid must be a multiple of the cluster.
  c.grid = {7, 4, 1};
  try {
    dev->launch(*f, c, args);
    FAIL() << "a grid that is not a multiple of the cluster was launched";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of cluster 2,1,1"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, TensorMapsAreEncodedByTheDriver) {
  auto dev = open();
  auto buf = dev->alloc(256 * 256 * 2);
  isatune::TensorMapTiledArgs a;
  a.data_type = isatune::TensorMapDataType::bfloat16;
  a.rank = 2;
  a.global_address = buf;
  a.global_dim = {256, 256, 0, 0, 0};
  a.global_strides = {512, 0, 0, 0};
  a.box_dim = {64, 64, 0, 0, 0};
  a.swizzle = isatune::TensorMapSwizzle::b128;
  isatune::TensorMap m = dev->encode_tensor_map(a);
  EXPECT_EQ(m.bytes[0], 0xC5);
  EXPECT_EQ(m.bytes[127], 0xC5);
  unsigned rank = 0;
  int type = -1, swizzle = -1;
  fake<void (*)(unsigned*, int*, int*)>("fake_cuda_last_tensor_map")(&rank, &type, &swizzle);
  EXPECT_EQ(rank, 2u);
  EXPECT_EQ(type, 9);    // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(swizzle, 3); // CU_TENSOR_MAP_SWIZZLE_128B
  fake<void (*)(int)>("fake_cuda_fail_next")(1);
  try {
    dev->encode_tensor_map(a);
    FAIL() << "a failing cuTensorMapEncodeTiled was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuTensorMapEncodeTiled"), std::string::npos) << e.what();
  }
  a.rank = 6;
  EXPECT_THROW(dev->encode_tensor_map(a), isatune::InputError);
  dev->free(buf);
}

TEST(CudaBackend, CodeForAnotherTargetIsRejected) {
  auto dev = open();
  auto code = ptx_object();
  code.isa = "sm_100a";
  EXPECT_THROW(dev->load(code), isatune::InputError);
  code.isa = "sm_80"; // PTX for sm_80: the driver compiles it for 9.0
  code.bytes.pop_back(); // without its NUL: the backend adds one for cuModuleLoadData
  size_t from = call_count();
  EXPECT_NO_THROW(dev->load(code));
  EXPECT_TRUE(has(calls_since(from), "cuLibraryLoadData ptx"));
  code.format = isatune::CodeFormat::elf; // SASS for sm_80 does not run on 9.0
  EXPECT_THROW(dev->load(code), isatune::InputError);
  auto big = ptx_object(228 * 1024);
  EXPECT_THROW(dev->load(big), isatune::InputError);
}

} // namespace

namespace {

TEST(CudaBackend, LibrariesLoadWhenTheDriverHasThemElseModules) {
  auto dev = open();
  auto code = ptx_object();
  size_t from = call_count();
  {
    auto m = dev->load(code);
    m->function("k");
    auto calls = calls_since(from);
    EXPECT_TRUE(has(calls, "cuLibraryLoadData ptx"));
    EXPECT_TRUE(has(calls, "cuLibraryGetKernel k"));
    EXPECT_TRUE(has(calls, "cuKernelGetFunction"));
    EXPECT_FALSE(has(calls, "cuModuleLoadData ptx"));
  }
  EXPECT_TRUE(has(calls_since(from), "cuLibraryUnload")); // the module's end unloads the library

  // A kernel the library lacks: the error names the call and the kernel.
  auto missing = ptx_object();
  missing.kernels[0].name = missing.kernels[0].symbol = "missing";
  auto m = dev->load(missing);
  try {
    m->function("missing");
    FAIL() << "a kernel the library lacks was found";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuLibraryGetKernel missing"), std::string::npos) << e.what();
  }
  // A failing load names cuLibraryLoadData.
  fake<void (*)(int)>("fake_cuda_fail_next")(218); // CUDA_ERROR_INVALID_PTX
  try {
    dev->load(code);
    FAIL() << "a failing cuLibraryLoadData was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuLibraryLoadData"), std::string::npos) << e.what();
  }

  // ISATUNE_CUDA_LOADER=module: the older module API (what a driver without cuLibrary* gets).
  setenv("ISATUNE_CUDA_LOADER", "module", 1);
  from = call_count();
  dev->load(code)->function("k");
  unsetenv("ISATUNE_CUDA_LOADER");
  auto calls = calls_since(from);
  EXPECT_TRUE(has(calls, "cuModuleLoadData ptx"));
  EXPECT_TRUE(has(calls, "cuModuleGetFunction k"));
  EXPECT_FALSE(has(calls, "cuLibraryLoadData ptx"));
}

TEST(CudaBackend, DynamicSharedMemoryOptsInOnceAndNamesTheKernelPastTheLimit) {
  auto dev = open();
  auto code = ptx_object(4 * 1024); // 4 KiB of static shared memory
  auto f = dev->load(code)->function("k");
  std::vector<uint8_t> args(8, 1);
  loader::LaunchConfig c;
  c.grid = {1, 1, 1};
  c.block = {128, 1, 1};
  const std::string set_attribute = "cuFuncSetAttribute 8 ";
  auto attribute_calls = [&](size_t from) {
    size_t n = 0;
    for (const auto& s : calls_since(from)) n += s.rfind(set_attribute, 0) == 0;
    return n;
  };
  // 44 KiB + 4 static: within the default, no attribute.
  size_t from = call_count();
  c.dynamic_shared_bytes = 44 * 1024;
  dev->launch(*f, c, args);
  EXPECT_EQ(attribute_calls(from), 0u);
  // 45 KiB + 4 static is past 48 KiB: the attribute first, once for repeated launches of the same size.
  c.dynamic_shared_bytes = 45 * 1024;
  dev->launch(*f, c, args);
  dev->launch(*f, c, args);
  EXPECT_EQ(attribute_calls(from), 1u);
  EXPECT_TRUE(has(calls_since(from), set_attribute + std::to_string(45 * 1024)));
  // A larger request raises it again.
  c.dynamic_shared_bytes = 200 * 1024;
  dev->launch(*f, c, args);
  EXPECT_EQ(attribute_calls(from), 2u);
  EXPECT_EQ(last_launch().v[9], 200u * 1024);
  // 224 KiB + 4 static exceeds the 227 KiB opt-in limit: an InputError naming the kernel and the limit, and
  // nothing launched.
  c.dynamic_shared_bytes = 224 * 1024;
  size_t launches = fake<size_t (*)()>("fake_cuda_launch_count")();
  try {
    dev->launch(*f, c, args);
    FAIL() << "a launch past the opt-in limit went ahead";
  } catch (const isatune::InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("kernel k"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(227 * 1024)), std::string::npos) << what;
    EXPECT_NE(what.find("opt-in"), std::string::npos) << what;
  }
  EXPECT_EQ(fake<size_t (*)()>("fake_cuda_launch_count")(), launches);
  // The driver refusing the attribute: the error names the call and the kernel.
  auto g = dev->load(code)->function("k");
  c.dynamic_shared_bytes = 100 * 1024;
  fake<void (*)(int)>("fake_cuda_fail_next")(1);
  try {
    dev->launch(*g, c, args);
    FAIL() << "a failing cuFuncSetAttribute was not reported";
  } catch (const isatune::Error& e) {
    EXPECT_NE(std::string(e.what()).find("MAX_DYNAMIC_SHARED_SIZE_BYTES) k"), std::string::npos) << e.what();
  }
}

} // namespace

namespace {

// A driver without CUDA 12's optional calls: modules through cuModuleLoadData, and clear errors for what needs
// the missing ones. Runs in a child process (the backend opens the driver once per process).
TEST(CudaOldDriver, ModulesAndClearErrorsForTheMissingCalls) {
  if (!kOldDriver)
    GTEST_SKIP() << "runs in a child process started by CudaBackend.AnOlderDriverWithoutTheOptionalCalls";
  auto dev = open();
  size_t from = call_count();
  auto f = dev->load(ptx_object())->function("k");
  auto calls = calls_since(from);
  EXPECT_TRUE(has(calls, "cuModuleLoadData ptx"));
  EXPECT_TRUE(has(calls, "cuModuleGetFunction k"));
  std::vector<uint8_t> args(8, 1);
  loader::LaunchConfig c;
  c.grid = {4, 1, 1};
  c.block = {128, 1, 1};
  c.dynamic_shared_bytes = 100 * 1024; // the opt-in does not need CUDA 12
  dev->launch(*f, c, args);
  EXPECT_EQ(fake<int (*)()>("fake_cuda_dynamic_shared_attribute")(), 100 * 1024);
  c.cluster = {2, 1, 1};
  try {
    dev->launch(*f, c, args);
    FAIL() << "a cluster launch went ahead without cuLaunchKernelEx";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no cuLaunchKernelEx"), std::string::npos) << e.what();
  }
  isatune::TensorMapTiledArgs a;
  a.rank = 2;
  try {
    dev->encode_tensor_map(a);
    FAIL() << "a tensor map was encoded without cuTensorMapEncodeTiled";
  } catch (const isatune::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no cuTensorMapEncodeTiled"), std::string::npos) << e.what();
  }
}

TEST(CudaBackend, AnOlderDriverWithoutTheOptionalCalls) {
  if (kOldDriver) GTEST_SKIP() << "this is the child run";
  char self[4096] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  std::string cmd = "FAKE_CUDA_OLD_DRIVER=1 '" + std::string(self, size_t(n)) +
                    "' --gtest_filter='CudaOldDriver.*' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t got = fread(buf, 1, sizeof buf, p)) out.append(buf, got);
  int status = pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test."), std::string::npos) << out;
  EXPECT_EQ(out.find("SKIPPED"), std::string::npos) << out;
}

} // namespace

// The emulator as a loader backend: registry listing, device specs, and the plugin an application loads.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "isatune/emu/backend.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"
#include "isatune/toolchain/assembler.h"

using namespace isatune;

TEST(EmuBackend, ListsOneDevicePerTarget) {
  emu::register_emu_backend();
  std::vector<loader::DeviceProperties> emu_devices;
  for (const auto& d : loader::list_devices())
    if (d.backend == "emu") emu_devices.push_back(d);
  ASSERT_EQ(emu_devices.size(), 3u);
  const char* isas[] = {"gfx942", "gfx90a", "gfx950"};
  for (int i = 0; i < 3; ++i) {
    const auto& d = emu_devices[size_t(i)];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.isa, isas[i]);
    EXPECT_EQ(d.target_id, std::string("amdgcn-amd-amdhsa--") + isas[i]);
    EXPECT_TRUE(d.emulated);
    EXPECT_EQ(d.vendor, Vendor::amd);
    EXPECT_GT(d.compute_units, 0u);
  }
}

TEST(EmuBackend, OpensBySpec) {
  emu::register_emu_backend();
  struct Case {
    const char* spec;
    const char* isa;
    int index;
  };
  for (auto c : {Case{"emu", "gfx942", 0}, Case{"emu:0", "gfx942", 0}, Case{"emu:1", "gfx90a", 1},
                 Case{"emu:gfx950", "gfx950", 2}, Case{"emu:gfx942", "gfx942", 0},
                 Case{"emu:amdgcn-amd-amdhsa--gfx90a:xnack-", "gfx90a", 1}}) {
    auto dev = loader::open_device(c.spec);
    ASSERT_TRUE(dev) << c.spec;
    EXPECT_EQ(dev->properties().isa, c.isa) << c.spec;
    EXPECT_EQ(dev->properties().index, c.index) << c.spec;
    EXPECT_EQ(dev->properties().backend, "emu");
    EXPECT_TRUE(dev->properties().emulated);
    EXPECT_NE(dynamic_cast<emu::EmuDevice*>(dev.get()), nullptr);
  }
  for (const char* bad : {"emu:3", "emu:gfx1100", "emu:sm_90a", "emu:99999999999"}) {
    try {
      loader::open_device(bad);
      ADD_FAILURE() << bad << " opened";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("emu:"), std::string::npos) << e.what();
    }
  }
}

#ifdef ISATUNE_EMU_PLUGIN
// The plugin gives a backend named "emu" whose devices run kernels (vector_add on a ragged count).
TEST(EmuBackend, PluginRunsVectorAdd) {
  EXPECT_EQ(loader::load_backend_plugin(ISATUNE_EMU_PLUGIN), "emu");
  auto dev = loader::open_device("emu:gfx942");
  std::ifstream f(std::string(ISATUNE_FIXTURES_DIR) + "/vector_add.s");
  std::stringstream text;
  text << f.rdbuf();
  auto code = toolchain::make_assembler("llvm")->assemble(text.str(), {"gfx942", "vector_add.s"}).code;
  auto fn = dev->load(code)->function("vadd");
  const uint32_t n = 300;
  std::vector<float> a(n), b(n), c(n, 0);
  for (uint32_t i = 0; i < n; ++i) a[i] = float(i) * 0.25f, b[i] = 3.0f - float(i);
  auto pa = dev->alloc(n * 4), pb = dev->alloc(n * 4), pc = dev->alloc(n * 4);
  dev->copy_to_device(pa, a.data(), n * 4);
  dev->copy_to_device(pb, b.data(), n * 4);
  dev->fill(pc, 0, n * 4);
  std::vector<uint8_t> args(28);
  std::memcpy(args.data(), &pa, 8);
  std::memcpy(args.data() + 8, &pb, 8);
  std::memcpy(args.data() + 16, &pc, 8);
  std::memcpy(args.data() + 24, &n, 4);
  loader::LaunchConfig cfg;
  cfg.grid = {2, 1, 1};
  cfg.block = {256, 1, 1};
  dev->launch(*fn, cfg, args);
  dev->copy_to_host(c.data(), pc, n * 4);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
  // Errors thrown inside the plugin arrive as the loader's exception types.
  EXPECT_THROW(loader::open_device("emu:gfx1100"), InputError);
  emu::register_emu_backend(); // back to this program's backend for the other tests
}
#endif

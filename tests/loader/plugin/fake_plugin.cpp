// The test-double backend as a plugin (what libisatune_emu.so would export): used by the example test.
#include <cstring>

#include "../fake_device.h"

extern "C" __attribute__((visibility("default"))) isatune::loader::Backend* isatune_backend_plugin_v1() {
  return new fake::FakeBackend();
}

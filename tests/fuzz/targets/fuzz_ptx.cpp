// PTX text through the parser (asm/ptx), then, when it parses, through the PTX emulator (emu/ptx): every
// entry is prepared and launched once on one block of 64 threads, each pointer parameter pointing at its own
// zeroed 4 KiB buffer, each other parameter holding small values. The emulator stops a CTA after 200,000 warp
// instructions (its watchdog), so an endless loop is an EmulationError, not a hang. Only isatune::Error may
// escape.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "isatune/emu/ptx/device.h"
#include "isatune/error.h"
#include "isatune/ptx/parser.h"

ISATUNE_FUZZ_TARGET(ptx) {
  using namespace isatune;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ptx::parse(text, "fuzz.ptx");
  } catch (const Error&) {
    return;
  }
  const bool sm90 = text.find("sm_90") != std::string_view::npos;
  emu::ptx::PtxEmuOptions options;
  options.target = sm90 ? "sm_90a" : "sm_80";
  options.threads = 1;
  options.max_instructions_per_cta = 200'000;
  options.memory_bytes = 64ull << 20;
  try {
    auto device = emu::ptx::make_ptx_emu_device(options);
    CodeObject code = emu::ptx::ptx_code_object(text, "", "fuzz.ptx");
    auto module = device->load(code);
    for (const KernelInfo& k : code.kernels) {
      auto f = module->function(k.name);
      const KernelInfo& info = f->info();
      if (info.kernarg_size > 4096) continue;
      std::vector<uint8_t> args(info.kernarg_size, 0);
      for (const KernelArg& a : info.args) {
        if (uint64_t(a.offset) + a.size > args.size()) fuzz::fail("argument '" + a.name + "' outside the kernarg segment");
        if (a.size == 8) {
          loader::DevicePtr p = device->alloc(4096);
          device->fill(p, 0, 4096);
          std::memcpy(args.data() + a.offset, &p, 8);
        } else {
          for (uint32_t i = 0; i < a.size; ++i) args[a.offset + i] = uint8_t(i == 0 ? 7 : 0);
        }
      }
      loader::LaunchConfig c;
      c.grid = {1, 1, 1};
      c.block = {64, 1, 1};
      try {
        device->launch(*f, c, args);
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
}

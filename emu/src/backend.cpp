// The "emu" loader backend: lists and opens emulated CDNA devices.
#include "isatune/emu/backend.h"

#include <array>
#include <string_view>

#include "isatune/cdna/target.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"

namespace isatune::emu {

namespace {

constexpr std::array<std::string_view, 3> kTargets = {"gfx942", "gfx90a", "gfx950"}; // index order

class EmuBackend : public loader::Backend {
public:
  std::string name() const override { return "emu"; }
  std::string unavailable_reason() override { return ""; }
  std::vector<loader::DeviceProperties> list_devices() override {
    std::vector<loader::DeviceProperties> out;
    for (size_t i = 0; i < kTargets.size(); ++i) {
      EmuOptions o;
      o.target = std::string(kTargets[i]);
      o.index = int(i);
      out.push_back(EmuDevice(o).properties());
    }
    return out;
  }
  std::shared_ptr<loader::Device> open(const std::string& arg) override {
    EmuOptions o;
    if (arg.empty()) {
      o.target = std::string(kTargets[0]);
    } else if (arg.find_first_not_of("0123456789") == std::string::npos) {
      size_t i = arg.size() > 3 ? kTargets.size() : std::stoul(arg);
      if (i >= kTargets.size())
        throw InputError("emu:" + arg + ": no such emulated device (0: gfx942, 1: gfx90a, 2: gfx950)");
      o.target = std::string(kTargets[i]);
      o.index = int(i);
    } else {
      const cdna::TargetInfo* t = nullptr;
      try {
        t = cdna::parse_target_id(arg).info;
      } catch (const Error&) {
        t = nullptr;
      }
      size_t i = 0;
      while (t && i < kTargets.size() && kTargets[i] != t->name) ++i;
      if (!t || i == kTargets.size())
        throw InputError("emu:" + arg + ": the emulator runs gfx942, gfx90a and gfx950 (emu:gfx942, emu:1, ...)");
      o.target = arg;
      o.index = int(i);
    }
    return make_emu_device(o);
  }
};

} // namespace

std::shared_ptr<loader::Backend> make_emu_backend() { return std::make_shared<EmuBackend>(); }

} // namespace isatune::emu

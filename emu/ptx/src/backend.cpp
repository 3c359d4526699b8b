// The "emu" backend with the PTX emulator's targets in front of the CDNA emulator's.
#include "isatune/emu/ptx/backend.h"

#include <array>
#include <string_view>

#include "isatune/emu/ptx/device.h"
#include "isatune/error.h"

namespace isatune::emu::ptx {

namespace {

constexpr std::array<std::string_view, 2> kTargets = {"sm_90a", "sm_80"};

class EmuPtxBackend : public loader::Backend {
public:
  explicit EmuPtxBackend(std::shared_ptr<loader::Backend> other) : other_(std::move(other)) {}
  std::string name() const override { return "emu"; }
  std::string unavailable_reason() override { return ""; }
  std::vector<loader::DeviceProperties> list_devices() override {
    std::vector<loader::DeviceProperties> out;
    if (other_)
      out = other_->list_devices();
    int base = int(out.size());
    for (size_t i = 0; i < kTargets.size(); ++i) {
      PtxEmuOptions o;
      o.target = std::string(kTargets[i]);
      o.index = base + int(i);
      out.push_back(PtxEmuDevice(o).properties());
    }
    return out;
  }
  std::shared_ptr<loader::Device> open(const std::string& arg) override {
    for (size_t i = 0; i < kTargets.size(); ++i)
      if (arg == kTargets[i])
        return open_ptx(i);
    // Plain sm_90 code runs on the sm_90a device (sm_90a is sm_90 plus the arch-specific instructions), so
    // "emu:sm_90", the default device for --target sm_90, opens it rather than failing.
    if (arg == "sm_90")
      return open_ptx(0);
    if (!arg.empty() && arg.size() < 4 && arg.find_first_not_of("0123456789") == std::string::npos) {
      size_t base = other_ ? other_->list_devices().size() : 0, i = std::stoul(arg);
      if (i >= base && i < base + kTargets.size())
        return open_ptx(i - base);
    }
    if (other_)
      return other_->open(arg);
    if (arg.empty())
      return open_ptx(0);
    throw InputError("emu:" + arg + ": the PTX emulator runs sm_90a (also for sm_90 code) and sm_80 (emu:sm_90a, emu:sm_90, emu:sm_80)");
  }

private:
  std::shared_ptr<loader::Device> open_ptx(size_t i) {
    PtxEmuOptions o;
    o.target = std::string(kTargets[i]);
    o.index = int((other_ ? other_->list_devices().size() : 0) + i);
    return make_ptx_emu_device(o);
  }
  std::shared_ptr<loader::Backend> other_;
};

} // namespace

std::shared_ptr<loader::Backend> make_emu_ptx_backend(std::shared_ptr<loader::Backend> other) {
  return std::make_shared<EmuPtxBackend>(std::move(other));
}

void register_emu_ptx_backend() {
  std::shared_ptr<loader::Backend> other = loader::find_backend("emu");
  if (other && dynamic_cast<EmuPtxBackend*>(other.get()))
    return; // already in front
  loader::register_backend("emu", [other] { return make_emu_ptx_backend(other); });
}

} // namespace isatune::emu::ptx

#include "context.h"

#include <cstdio>

namespace isatune::emu {

// to_string(HazardKind) and HazardReport::str() live in emu/common/report.cpp (shared with the PTX emulator).

std::string hex_addr(uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", (unsigned long long)addr);
  return buf;
}

void LaunchContext::report(const Wave& w, HazardKind kind, const std::string& message) {
  HazardReport r;
  {
    std::lock_guard lock(mutex_);
    auto key = std::make_pair(uint64_t(w.cur ? w.cur->addr : 0), int(kind));
    auto it = reports_.find(key);
    if (it != reports_.end()) {
      ++it->second.count;
      return;
    }
    r.kind = kind;
    r.kernel = kernel;
    r.address = key.first;
    r.disassembly = w.cur ? w.cur->text : "";
    r.message = message;
    for (int i = 0; i < 3; ++i) r.workgroup[i] = w.wg ? w.wg->id[i] : 0;
    r.wave = w.index;
    reports_.emplace(key, r);
  }
  if (strict) {
    stop = true;
    throw HazardError(r);
  }
}

std::vector<HazardReport> LaunchContext::take_reports() {
  std::lock_guard lock(mutex_);
  std::vector<HazardReport> out;
  for (auto& [k, r] : reports_) out.push_back(r);
  reports_.clear();
  return out;
}

void unsupported(const Wave& w, const std::string& why) {
  std::string text = w.cur ? w.cur->text : "?";
  throw EmulationError("emu: " + why + ": '" + text + "' at " + hex_addr(w.cur ? w.cur->addr : 0) +
                       " in kernel '" + (w.ctx ? w.ctx->kernel : std::string()) + "'");
}

} // namespace isatune::emu

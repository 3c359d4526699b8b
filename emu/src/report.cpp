#include "context.h"

#include <cstdio>

namespace isatune::emu {

// to_string(HazardKind) and HazardReport::str() live in emu/common/report.cpp (shared with the PTX emulator).

std::string hex_addr(uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", (unsigned long long)addr);
  return buf;
}

namespace {

HazardReport make_report(const Wave& w, HazardKind kind, const std::string& kernel, const std::string& message) {
  HazardReport r;
  r.kind = kind;
  r.kernel = kernel;
  r.address = w.cur ? w.cur->addr : 0;
  r.disassembly = w.cur ? w.cur->text : "";
  r.message = message;
  for (int i = 0; i < 3; ++i) r.workgroup[i] = w.wg ? w.wg->id[i] : 0;
  r.wave = w.index;
  return r;
}

} // namespace

void LaunchContext::report(const Wave& w, HazardKind kind, const std::string& message) {
  const auto key = std::make_pair(uint64_t(w.cur ? w.cur->addr : 0), int(kind));
  {
    std::lock_guard lock(mutex_);
    auto it = reports_.find(key);
    if (it != reports_.end()) {
      ++it->second.count;
      // Strict: this wave stops on it too. Returning would let it run on to a later hazard, which the launch
      // could then report instead (it keeps the error of the lowest workgroup, whichever thread got here first).
      if (!strict) return;
    } else {
      reports_.emplace(key, make_report(w, kind, kernel, message));
    }
  }
  if (strict) {
    stop = true;
    throw HazardError(make_report(w, kind, kernel, message));
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

#include "context.h"

#include <cstdio>

namespace isatune::emu {

std::string_view to_string(HazardKind kind) {
  switch (kind) {
  case HazardKind::pending_read: return "pending_read";
  case HazardKind::pending_write: return "pending_write";
  case HazardKind::wait_states: return "wait_states";
  case HazardKind::out_of_bounds: return "out_of_bounds";
  case HazardKind::unaligned: return "unaligned";
  case HazardKind::register_bounds: return "register_bounds";
  }
  return "?";
}

std::string hex_addr(uint64_t addr) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", (unsigned long long)addr);
  return buf;
}

std::string HazardReport::str() const {
  char where[128];
  std::snprintf(where, sizeof where, " (x%llu, first in workgroup (%u,%u,%u) wave %u)", (unsigned long long)count,
                workgroup[0], workgroup[1], workgroup[2], wave);
  return kernel + ": " + hex_addr(address) + " " + disassembly + ": " + std::string(to_string(kind)) + ": " +
         message + where;
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

// Report names and text, shared by the CDNA and the PTX emulator.
#include <cstdio>

#include "isatune/emu/report.h"

namespace isatune::emu {

std::string_view to_string(HazardKind kind) {
  switch (kind) {
  case HazardKind::pending_read:
    return "pending_read";
  case HazardKind::pending_write:
    return "pending_write";
  case HazardKind::wait_states:
    return "wait_states";
  case HazardKind::out_of_bounds:
    return "out_of_bounds";
  case HazardKind::unaligned:
    return "unaligned";
  case HazardKind::register_bounds:
    return "register_bounds";
  case HazardKind::race:
    return "race";
  case HazardKind::uninitialized:
    return "uninitialized";
  case HazardKind::divergence:
    return "divergence";
  case HazardKind::membermask:
    return "membermask";
  case HazardKind::async_pending:
    return "async_pending";
  case HazardKind::proxy_fence:
    return "proxy_fence";
  case HazardKind::mbarrier:
    return "mbarrier";
  case HazardKind::register_budget:
    return "register_budget";
  case HazardKind::deadlock:
    return "deadlock";
  case HazardKind::barrier_count:
    return "barrier_count";
  }
  return "?";
}

std::string HazardReport::str() const {
  char where[160];
  if (line) {
    std::snprintf(where, sizeof where, " (x%llu, first in CTA (%u,%u,%u) warp %u thread (%u,%u,%u))",
                  (unsigned long long)count, workgroup[0], workgroup[1], workgroup[2], wave, thread[0],
                  thread[1], thread[2]);
    return kernel + ": line " + std::to_string(line) + " '" + disassembly +
           "': " + std::string(to_string(kind)) + ": " + message + where;
  }
  std::snprintf(where, sizeof where, " (x%llu, first in workgroup (%u,%u,%u) wave %u)",
                (unsigned long long)count, workgroup[0], workgroup[1], workgroup[2], wave);
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%04llx", (unsigned long long)address);
  return kernel + ": " + addr + " " + disassembly + ": " + std::string(to_string(kind)) + ": " + message +
         where;
}

} // namespace isatune::emu

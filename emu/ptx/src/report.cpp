// Reports of the PTX emulator's checks: deduplicated per (line, kind) in the CTA's sink; strict mode throws.
#include "warp.h"

namespace isatune::emu::ptx {

void report(Warp& w, unsigned lane, HazardKind kind, const std::string& message) {
  Cta& c = *w.cta;
  const Inst* in = w.cur;
  uint32_t line = in ? in->line : 0;
  auto key = std::make_pair(line, int(kind));
  auto it = c.sink->reports.find(key);
  if (it != c.sink->reports.end() && !c.launch->strict) {
    ++it->second.count;
    return;
  }
  HazardReport r;
  r.kind = kind;
  r.kernel = c.launch->prog->name;
  r.line = line ? line : 1;
  r.disassembly = in ? in->text : "";
  r.message = message;
  for (int i = 0; i < 3; ++i)
    r.workgroup[i] = c.id[i], r.thread[i] = w.tid[lane][i];
  r.wave = w.index;
  c.sink->reports.emplace(key, r);
  if (c.launch->strict) {
    c.launch->stop = true;
    throw HazardError(r);
  }
}

void fail(const Warp& w, const std::string& why) {
  std::string where = w.cur ? "line " + std::to_string(w.cur->line) + " '" + w.cur->text + "'" : "?";
  throw EmulationError("ptx emu: " + why + " at " + where + " in kernel '" + w.cta->launch->prog->name + "'");
}

} // namespace isatune::emu::ptx

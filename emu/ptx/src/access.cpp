// Memory accesses (#state-spaces, #generic-addressing): the generic windows, bounds and alignment checks, and
// the shadow of every shared byte for the race and initialisation checks.
#include <cstdio>

#include "warp.h"

namespace isatune::emu::ptx {

namespace {

// Two-slot update: `a` keeps the oldest access not ordered before the new one, `b` the latest.
void remember(const Cta& c, Access& a, Access& b, uint32_t t, uint32_t pc) {
  if (!a.time || a.thread == t || c.ordered(a.thread, a.time, t)) {
    a = {c.time, pc, uint16_t(t)};
    if (b.time && (b.thread == t || c.ordered(b.thread, b.time, t)))
      b.time = 0;
  } else {
    b = {c.time, pc, uint16_t(t)};
  }
}

void shared_checks(Warp& w, unsigned lane, uint32_t addr, unsigned bytes, bool is_write, bool atomic) {
  Cta& c = *w.cta;
  const Launch& L = *c.launch;
  const uint32_t t = w.index * 32 + lane;
  const uint32_t pc = w.cur->index;
  const Program& prog = *L.prog;
  auto who = [&](const Access& a) {
    const Warp& o = c.warps[a.thread / 32];
    const Inst& i = prog.code[a.pc];
    return "thread (" + std::to_string(o.tid[a.thread % 32][0]) + "," +
           std::to_string(o.tid[a.thread % 32][1]) + "," + std::to_string(o.tid[a.thread % 32][2]) +
           ") at line " + std::to_string(i.line) + " '" + i.text + "'";
  };
  // An earlier access that conflicts with this one: set, by another thread, not ordered before it, and not
  // from the same warp instruction (lanes writing one address together: one of them wins).
  auto conflicts = [&](const Access& a) {
    return a.time && !(a.time == c.time && a.pc == pc) && !c.ordered(a.thread, a.time, t);
  };
  const char* what = atomic ? "atomic" : is_write ? "write" : "read";
  for (unsigned i = 0; i < bytes; ++i) {
    ShadowByte& s = c.shadow[addr + i];
    // Formatted only for a report: this loop runs for every shared byte accessed.
    auto where = [&] {
      char buf[48];
      std::snprintf(buf, sizeof buf, "shared byte 0x%x", addr + i);
      return std::string(buf);
    };
    if ((!is_write || atomic) && !s.written && L.check_uninitialized) {
      report(w, lane, HazardKind::uninitialized,
             std::string(what) + " of " + where() + " that no thread of the CTA has written");
      break;
    }
    if (!L.check_races)
      continue;
    const Access* other = nullptr;
    const char* kind = "";
    const bool writes = is_write || atomic;
    if (conflicts(s.write)) // every access conflicts with an unordered plain write
      other = &s.write, kind = writes ? "write-after-write" : "read-after-write";
    else if (writes && (conflicts(s.read) || conflicts(s.read2))) // writes with unordered reads
      other = conflicts(s.read) ? &s.read : &s.read2, kind = "write-after-read";
    else if (!atomic && (conflicts(s.atom) || conflicts(s.atom2))) // plain accesses with unordered atomics
      other = conflicts(s.atom) ? &s.atom : &s.atom2,
      kind = writes ? "write-after-write" : "read-after-write";
    if (other) {
      report(w, lane, HazardKind::race,
             std::string(kind) + " on " + where() + ": this " + what + " and the " +
                 (other == &s.write                       ? "write"
                  : other == &s.read || other == &s.read2 ? "read"
                                                          : "atomic") +
                 " by " + who(*other) + " with no barrier between");
      break;
    }
  }
  for (unsigned i = 0; i < bytes; ++i) {
    ShadowByte& s = c.shadow[addr + i];
    if (atomic) {
      remember(c, s.atom, s.atom2, t, pc);
      s.written = true;
    } else if (is_write) {
      s.write = {c.time, pc, uint16_t(t)};
      s.written = true;
    } else {
      remember(c, s.read, s.read2, t, pc);
    }
  }
}

const char* space_name(Space s) {
  switch (s) {
  case Space::generic:
    return "generic";
  case Space::global:
    return "global";
  case Space::shared:
    return "shared";
  case Space::local:
    return "local";
  case Space::param:
    return "param";
  case Space::const_:
    return "const";
  }
  return "?";
}

} // namespace

uint8_t* access(Warp& w, unsigned lane, Space space, uint64_t addr, unsigned bytes, bool is_write,
                bool atomic, unsigned align) {
  Cta& c = *w.cta;
  const Launch& L = *c.launch;
  const uint64_t given = addr;
  if (space == Space::generic) {
    if (addr - kSharedWindow < kWindowSize)
      space = Space::shared, addr -= kSharedWindow;
    else if (addr - kLocalWindow < kWindowSize)
      space = Space::local, addr -= kLocalWindow;
    else if (addr - kParamWindow < kWindowSize)
      space = Space::param, addr -= kParamWindow;
    else
      space = Space::global;
  }
  if (!align)
    align = bytes;
  // #data-movement-and-conversion-instructions: accesses must be naturally aligned to their size.
  if (addr % align) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %s of %u bytes at 0x%llx is not %u-byte aligned", space_name(space),
                  is_write ? "store" : "load", bytes, (unsigned long long)given, align);
    report(w, lane, HazardKind::unaligned, buf);
    return nullptr;
  }
  auto oob = [&](const char* what) -> uint8_t* {
    char buf[192];
    std::snprintf(buf, sizeof buf, "%s %s of %u bytes at 0x%llx %s", space_name(space),
                  is_write ? "store" : "load", bytes, (unsigned long long)given, what);
    report(w, lane, HazardKind::out_of_bounds, buf);
    return nullptr;
  };
  switch (space) {
  case Space::global:
  case Space::const_:
  case Space::generic: {
    if (addr >= c.g_lo && addr + bytes <= c.g_hi && addr + bytes >= addr)
      return c.g_base + (addr - c.g_lo);
    uint64_t start, size;
    uint8_t* data;
    if (!L.memory->block(addr, start, size, data) || addr + bytes > start + size)
      return oob("is outside every allocation");
    c.g_lo = start, c.g_hi = start + size, c.g_base = data;
    return data + (addr - start);
  }
  case Space::shared: {
    if (addr + bytes > L.shared_bytes || addr + bytes < addr) {
      std::string what = "is outside the CTA's " + std::to_string(L.shared_bytes) + " bytes of shared memory";
      return oob(what.c_str());
    }
    if (c.async.outstanding)
      check_async_pending(w, lane, uint32_t(addr), bytes, is_write || atomic);
    if (is_write && c.async_proxy.in_flight) // a byte an in-flight async operation (wgmma) will read
      check_async_pending_write(w, lane, uint32_t(addr), bytes);
    if (L.check_races || L.check_uninitialized)
      shared_checks(w, lane, uint32_t(addr), bytes, is_write, atomic);
    return c.shared.data() + addr;
  }
  case Space::local: {
    if (addr + bytes > L.prog->local_bytes || addr + bytes < addr)
      return oob("is outside the thread's local memory");
    return w.local + size_t(lane) * L.prog->local_bytes + addr;
  }
  case Space::param: {
    if (is_write)
      return oob("writes the kernel parameters (read-only)");
    if (addr + bytes > L.prog->param_bytes || addr + bytes < addr)
      return oob("is outside the kernel parameters");
    return const_cast<uint8_t*>(L.params) + addr;
  }
  }
  return nullptr;
}

} // namespace isatune::emu::ptx

// Memory accesses (#state-spaces, #generic-addressing): the generic windows, bounds and alignment checks, and
// the shadow of every shared byte for the race and initialisation checks.
#include <cstdio>

#include "warp.h"

namespace isatune::emu::ptx {

namespace {

// Two-slot update: `a` keeps the oldest access not ordered before the new one, `b` the latest.
void remember(const Cluster& cl, uint32_t now, Access& a, Access& b, uint32_t rank, uint32_t t, uint32_t pc) {
  auto before = [&](const Access& x) {
    return (x.rank == rank && x.thread == t) || cl.ordered(x.rank, x.thread, x.time, rank, t);
  };
  if (!a.time || before(a)) {
    a = {now, pc, uint16_t(t), uint8_t(rank)};
    if (b.time && before(b))
      b.time = 0;
  } else {
    b = {now, pc, uint16_t(t), uint8_t(rank)};
  }
}

} // namespace

bool Cluster::ordered(uint32_t rank_a, uint32_t t_a, uint32_t time_a, uint32_t rank_b, uint32_t t_b) const {
  if (rank_a == rank_b && ctas[rank_a]->ordered(t_a, time_a, t_b))
    return true;
  uint32_t ga = rank_a * wpc + t_a / 32, gb = rank_b * wpc + t_b / 32;
  return time_a < xsync[size_t(ga) * nwarps() + gb];
}

// The race and initialisation shadow of CTA `tc`'s shared bytes, for an access by lane `lane` of `w` (which
// may belong to another CTA of the cluster: distributed shared memory).
void shared_shadow(Warp& w, unsigned lane, Cta& tc, uint32_t addr, unsigned bytes, bool is_write,
                   bool atomic) {
  Cta& c = *w.cta;
  const Cluster& cl = *c.cluster;
  const Launch& L = *c.launch;
  if (tc.shadow.empty())
    return;
  const uint32_t t = w.index * 32 + lane;
  const uint32_t rank = c.rank;
  const uint32_t pc = w.cur->index;
  const Program& prog = *L.prog;
  auto who = [&](const Access& a) {
    const Warp& o = cl.ctas[a.rank]->warps[a.thread / 32];
    const Inst& i = prog.code[a.pc];
    return "thread (" + std::to_string(o.tid[a.thread % 32][0]) + "," +
           std::to_string(o.tid[a.thread % 32][1]) + "," + std::to_string(o.tid[a.thread % 32][2]) + ")" +
           (a.rank != rank || tc.rank != rank ? " of CTA rank " + std::to_string(a.rank) : std::string()) +
           " at line " + std::to_string(i.line) + " '" + i.text + "'";
  };
  // An earlier access that conflicts with this one: set, by another thread, not ordered before it, and not
  // from the same warp instruction (lanes writing one address together: one of them wins).
  auto conflicts = [&](const Access& a) {
    return a.time && !(a.time == c.time && a.pc == pc && a.rank == rank) &&
           !(a.rank == rank && a.thread == t) && !cl.ordered(a.rank, a.thread, a.time, rank, t);
  };
  const char* what = atomic ? "atomic" : is_write ? "write" : "read";
  for (unsigned i = 0; i < bytes; ++i) {
    ShadowByte& s = tc.shadow[addr + i];
    // Formatted only for a report: this loop runs for every shared byte accessed.
    auto where = [&] {
      char buf[80];
      if (tc.rank != rank)
        std::snprintf(buf, sizeof buf, "shared byte 0x%x of CTA rank %u", addr + i, tc.rank);
      else
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
    ShadowByte& s = tc.shadow[addr + i];
    if (atomic) {
      remember(cl, c.time, s.atom, s.atom2, rank, t, pc);
      s.written = true;
    } else if (is_write) {
      s.write = {c.time, pc, uint16_t(t), uint8_t(rank)};
      s.written = true;
    } else {
      remember(cl, c.time, s.read, s.read2, rank, t, pc);
    }
  }
}

// Shared bytes that an asynchronous copy will still write (its mbarrier phase has not completed) or that a
// bulk store will still read (not waited for with cp.async.bulk.wait_group.read): a generic-proxy access
// there sees or clobbers data it must not.
void async_checks(Warp& w, unsigned lane, Cta& tc, uint32_t addr, unsigned bytes, bool is_write) {
  for (const AsyncRange& r : tc.async_ranges) {
    if (addr >= r.hi || addr + bytes <= r.lo || (r.store && !is_write))
      continue;
    const Inst& ci = w.cta->launch->prog->code[r.pc];
    char where[64];
    std::snprintf(where, sizeof where, "shared bytes 0x%x-0x%x", addr, addr + bytes - 1);
    std::string copy = "the asynchronous copy at line " + std::to_string(ci.line) + " '" + ci.text + "'";
    if (r.store)
      report(w, lane, HazardKind::async_pending,
             std::string("write to ") + where + " that " + copy +
                 " still has to read (wait for it with cp.async.bulk.wait_group.read first)");
    else
      report(
          w, lane, HazardKind::async_pending,
          std::string(is_write ? "write to " : "read of ") + where + " that " + copy +
              " has not written yet: the phase of the mbarrier at shared 0x" +
              [&] {
                char b[16];
                std::snprintf(b, sizeof b, "%x", r.mbar);
                return std::string(b);
              }() +
              " it completes has not completed (wait on the mbarrier first)" +
              (is_write ? "" : "; the data read is stale"));
    return;
  }
}

namespace {

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
  case Space::shared_cluster:
    return "shared::cluster";
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
      space = Space::shared_cluster, addr -= kSharedWindow; // the window covers the cluster's CTAs
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
  case Space::shared:
  case Space::shared_cluster: {
    uint32_t off = 0;
    Cta* tc = shared_target(w, lane, space, addr, bytes, off);
    if (!tc)
      return nullptr;
    // cp.async and wgmma operands: checks of the executing CTA's own shared memory.
    if (tc == &c) {
      if (c.async.outstanding)
        check_async_pending(w, lane, off, bytes, is_write || atomic);
      if (is_write && c.async_proxy.in_flight) // a byte an in-flight async operation (wgmma) will read
        check_async_pending_write(w, lane, off, bytes);
    }
    if (L.check_races || L.check_uninitialized)
      shared_shadow(w, lane, *tc, off, bytes, is_write, atomic);
    if (!tc->async_ranges.empty())
      async_checks(w, lane, *tc, off, bytes, is_write || atomic);
    return tc->shared.data() + off;
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

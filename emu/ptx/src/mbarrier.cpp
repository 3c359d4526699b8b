// mbarrier objects (#parallel-synchronization-and-communication-instructions-mbarrier; shared/notes/
// ptx-emulation.md 2.10): init, inval, arrive (count, state or `_`, remote on shared::cluster), arrive_drop,
// expect_tx, complete_tx, test_wait / try_wait (state or parity), pending_count.
//
// State: pending arrivals, expected count, tx-count and phase live in Cta::mbars (keyed by shared offset);
// the 8 bytes in shared memory hold an image of it, rewritten by every operation: bits 0-19 pending, 20-39
// expected, 40-61 tx-count (22-bit two's complement), 62 valid, 63 phase parity. A plain store over a live
// mbarrier is noticed at its next use. A phase may complete once pending = 0 and tx = 0; it completes as late
// as is legal, at the next operation on the mbarrier (a wait, or an arrival that belongs to the next phase)
// or at the end of the cluster: the copies that signal it land (their data is written) at that moment, then
// pending = expected, tx = 0, phase + 1. A thread that reads a copy's destination without waiting thus sees
// stale bytes.
// State tokens (arrive's result) are (pending after the arrive << 32) | phase index arrived on.
// Waits that would return false park the lane until the mbarrier changes (cluster.cpp); when nothing else
// in the cluster can run they return false once (try_wait's time limit), and a second such standstill with no
// change is a deadlock (cta.cpp).
#include <cstdio>

#include "async.h"
#include "async_proxy.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

constexpr int64_t kTxLimit = (1 << 20) - 1;

enum Op : uint8_t { m_init, m_inval, m_arrive, m_expect, m_complete, m_test, m_try, m_pending };

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

uint64_t image_of(const Mbar& m) {
  if (!m.valid)
    return 0;
  return uint64_t(m.pending & 0xfffff) | uint64_t(m.expected & 0xfffff) << 20 |
         (uint64_t(m.tx) & 0x3fffff) << 40 | 1ull << 62 | uint64_t(m.phase & 1) << 63;
}

void store_image(Cta& t, uint32_t off, Mbar& m) {
  m.image = image_of(m);
  std::memcpy(t.shared.data() + off, &m.image, 8);
}

std::string where(const Cta& t, uint32_t off, const Warp& w) {
  return "mbarrier at shared " + hex(off) +
         (t.rank != w.cta->rank ? " of CTA rank " + std::to_string(t.rank) : std::string());
}

} // namespace

// The mbarrier at `addr` in `sp` for lane l: its CTA and offset, and its state (nullptr after a report).
// kind: 0 init, 1 inval (both write the object), 2 any other operation (atomic on it).
Mbar* mbarrier_at(Warp& w, unsigned l, Space sp, uint64_t addr, int kind, Cta*& t, uint32_t& off) {
  const bool init = kind == 0;
  if (sp == Space::generic) {
    if (addr - kSharedWindow >= kWindowSize) {
      report(w, l, HazardKind::out_of_bounds,
             "mbarrier operation on " + hex(addr) + ", not a shared address");
      return nullptr;
    }
    addr -= kSharedWindow;
    sp = Space::shared_cluster;
  }
  if (addr % 8) {
    report(w, l, HazardKind::unaligned, "mbarrier object at " + hex(addr) + " is not 8-byte aligned");
    return nullptr;
  }
  t = shared_target(w, l, sp, addr, 8, off);
  if (!t)
    return nullptr;
  Mbar& m = t->mbars[off];
  if (!init && !m.valid) {
    report(w, l, HazardKind::mbarrier, where(*t, off, w) + " used before mbarrier.init (or after inval)");
    return nullptr;
  }
  if (m.valid && std::memcmp(t->shared.data() + off, &m.image, 8) != 0) {
    report(w, l, HazardKind::mbarrier, where(*t, off, w) + ": its 8 bytes were overwritten by a plain store");
    std::memcpy(t->shared.data() + off, &m.image, 8);
  }
  if (m.valid && m.ready && !init)
    mbarrier_complete_phase(w, *t, off, m);
  // Race shadow: init and inval write the object, the other operations are atomic on it.
  shared_shadow(w, l, *t, off, 8, true, kind == 2);
  m.pc = w.cur->index;
  m.thread = uint16_t(w.index * 32 + l);
  m.rank = uint8_t(w.cta->rank);
  return &m;
}

namespace {

Mbar* resolve(Warp& w, unsigned l, const Inst& in, const Opnd& a, Cta*& t, uint32_t& off) {
  Space sp = in.space;
  if (sp == Space::generic && !a.has_base && a.sym_space == Space::shared)
    sp = Space::shared;
  return mbarrier_at(w, l, sp, address_of(w, a, l), in.op == m_init ? 0 : in.op == m_inval ? 1 : 2, t, off);
}

void add_release(Mbar& m, uint32_t gw, uint32_t t) {
  for (auto& [g, tt] : m.release)
    if (g == gw) {
      tt = std::max(tt, t);
      return;
    }
  m.release.emplace_back(gw, t);
}

void check_tx(Warp& w, unsigned l, const Cta& t, uint32_t off, Mbar& m) {
  if (m.tx > kTxLimit || m.tx < -kTxLimit) {
    report(w, l, HazardKind::mbarrier,
           where(t, off, w) + ": tx-count " + std::to_string(m.tx) + " outside the range -(2^20-1)..2^20-1");
    m.tx = std::clamp<int64_t>(m.tx, -kTxLimit, kTxLimit);
  }
}

} // namespace

// The phase completes: its copies land, waiters may go (called by the operation that completed it).
void mbarrier_complete_phase(Warp& w, Cta& t, uint32_t off, Mbar& m) {
  Cluster& cl = *t.cluster;
  const uint32_t now = w.cta->time;
  for (Landing& ld : m.landings) {
    std::memcpy(t.shared.data() + ld.offset, ld.data.data(), ld.data.size());
    if (!t.shadow.empty())
      for (size_t i = 0; i < ld.data.size(); ++i) {
        ShadowByte& s = t.shadow[ld.offset + i];
        s.write = {now, ld.pc, ld.thread, ld.rank};
        s.written = true;
      }
    // Written by the async proxy: wgmma and TMA stores read these bytes with no fence.proxy.async.
    note_async_proxy_write(t, ld.offset, uint32_t(ld.data.size()), now);
    auto& rs = t.async_ranges;
    for (size_t i = 0; i < rs.size(); ++i)
      if (!rs[i].store && rs[i].lo == ld.offset && rs[i].mbar == off && rs[i].pc == ld.pc) {
        rs.erase(rs.begin() + long(i));
        break;
      }
    // The copy's completion is released to the waiters like an arrival of its issuing thread.
    add_release(m, ld.rank * cl.wpc + ld.thread / 32u, now + 1);
  }
  m.landings.clear();
  m.ready = false;
  m.last_release = std::move(m.release);
  m.release.clear();
  ++m.phase;
  m.pending = m.expected;
  m.tx = 0;
  store_image(t, off, m);
  ++cl.version;
  cluster_wake(cl);
}

// complete_tx by a copy or mbarrier.complete_tx (lane l of w performs it).
void mbarrier_complete_tx(Warp& w, unsigned l, Cta& t, uint32_t off, Mbar& m, int64_t bytes) {
  m.tx -= bytes;
  check_tx(w, l, t, off, m);
  store_image(t, off, m);
  mbarrier_check_ready(t, m);
}

// pending = 0 and tx = 0: the phase may complete; waiters wake to complete it.
void mbarrier_check_ready(Cta& t, Mbar& m) {
  ++t.cluster->version;
  if (m.pending == 0 && m.tx == 0 && !m.ready) {
    m.ready = true;
    cluster_wake(*t.cluster);
  }
}

namespace {

void mb_handler(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  Cluster& cl = *c.cluster;
  const Op op = Op(in.op);
  if (op == m_pending) {
    for_lanes(act, [&](unsigned l) { write(w, in.ops[0], l, read(w, in.ops[1], l) >> 32); });
    return;
  }
  const bool has_dst = op == m_arrive || op == m_test || op == m_try;
  const Opnd& a = in.ops[has_dst ? 1 : 0];
  for_lanes(act, [&](unsigned l) {
    Cta* t = nullptr;
    uint32_t off = 0;
    Mbar* mp = resolve(w, l, in, a, t, off);
    if (!mp) {
      if (has_dst)
        write(w, in.ops[0], l, 0);
      return;
    }
    Mbar& m = *mp;
    const uint32_t gw = c.rank * cl.wpc + w.index;
    switch (op) {
    case m_init: {
      uint64_t n = read(w, in.ops[1], l) & 0xffffffffu;
      if (m.valid)
        report(w, l, HazardKind::mbarrier, where(*t, off, w) + " initialised again without mbarrier.inval");
      if (n < 1 || n > uint64_t(kTxLimit))
        report(w, l, HazardKind::mbarrier, "mbarrier.init count " + std::to_string(n) + " outside 1..2^20-1");
      if (!m.landings.empty())
        report(w, l, HazardKind::mbarrier, where(*t, off, w) + " initialised while copies are still landing");
      m = Mbar{};
      m.valid = true;
      m.expected = m.pending = uint32_t(std::clamp<uint64_t>(n, 1, kTxLimit));
      m.pc = in.index;
      m.thread = uint16_t(w.index * 32 + l);
      m.rank = uint8_t(c.rank);
      store_image(*t, off, m);
      ++cl.version;
      break;
    }
    case m_inval:
      if (!m.landings.empty() || m.tx != 0)
        report(w, l, HazardKind::mbarrier,
               where(*t, off, w) + " invalidated while " + std::to_string(m.tx) +
                   " transaction bytes are pending");
      m.valid = false;
      m.landings.clear();
      store_image(*t, off, m);
      ++cl.version;
      break;
    case m_expect:
    case m_complete: {
      int64_t n = int64_t(read(w, in.ops[1], l) & 0xffffffffu);
      if (op == m_expect) {
        m.tx += n;
        check_tx(w, l, *t, off, m);
        store_image(*t, off, m);
        mbarrier_check_ready(*t, m);
      } else {
        mbarrier_complete_tx(w, l, *t, off, m, n);
      }
      break;
    }
    case m_arrive: {
      // op2: 1 expect_tx, 2 arrive_drop; the count (or tx count) operand is ops[2] when given.
      uint32_t count = 1;
      if (in.op2 & 1) {
        m.tx += int64_t(read(w, in.ops[2], l) & 0xffffffffu);
        check_tx(w, l, *t, off, m);
      } else if (in.ops.size() > 2) {
        count = uint32_t(read(w, in.ops[2], l));
      }
      const uint32_t phase = m.phase;
      if (count == 0 || count > m.pending) {
        report(w, l, HazardKind::mbarrier,
               where(*t, off, w) + ": arrive count overflow: " + std::to_string(count) +
                   " arrival(s) on phase " + std::to_string(m.phase) + " with " + std::to_string(m.pending) +
                   " of " + std::to_string(m.expected) + " pending");
        count = m.pending;
      }
      if (in.op2 & 2) {
        if (count > m.expected)
          report(w, l, HazardKind::mbarrier,
                 where(*t, off, w) + ": arrive_drop below an expected count of 0");
        m.expected -= std::min(count, m.expected);
      }
      m.pending -= count;
      add_release(m, gw, c.time);
      const uint32_t left = m.pending;
      store_image(*t, off, m);
      if (count)
        mbarrier_check_ready(*t, m);
      write(w, in.ops[0], l, uint64_t(left) << 32 | phase);
      break;
    }
    case m_test:
    case m_try: {
      uint64_t s = read(w, in.ops[2], l);
      // Parity form: true iff the phase with that parity completed, i.e. the current phase has the other
      // parity. State form: true iff the phase the token was taken in completed.
      bool done = in.op2 ? (s & 1) != (m.phase & 1) : uint32_t(s) < m.phase;
      if (done) {
        const uint32_t gb = c.rank * cl.wpc + w.index;
        for (auto& [ga, tt] : m.last_release)
          cl.sync(ga, gb, tt);
        write(w, in.ops[0], l, 1);
      } else if (w.timeout >> l & 1) {
        write(w, in.ops[0], l, 0); // the time limit: nothing else could run
      } else {
        w.park |= 1u << l;
        w.park_what[l] = t == &c ? off : ((t->rank + 1) << 24) | off;
      }
      break;
    }
    case m_pending:
      break;
    }
  });
  w.timeout &= ~act;
}

} // namespace

void mbarrier_exit_checks(Cluster& cl) {
  for (Cta* t : cl.ctas)
    for (auto& [off, m] : t->mbars) {
      Warp& w = cl.ctas[m.rank]->warps[m.thread / 32]; // the thread that last used it
      w.cur = &t->launch->prog->code[m.pc];
      if (m.valid && m.ready) // a phase nobody waited for completes now
        mbarrier_complete_phase(w, *t, off, m);
      if (!m.valid || (m.tx == 0 && m.landings.empty()))
        continue;
      std::string what = m.tx > 0
                             ? std::to_string(m.tx) + " transaction bytes expected (expect_tx) never arrived"
                             : std::to_string(-m.tx) + " bytes arrived that no expect_tx announced";
      if (!m.landings.empty())
        what += "; " + std::to_string(m.landings.size()) + " copies never landed";
      report(w, m.thread % 32, HazardKind::mbarrier,
             "at exit the " + where(*t, off, w) + " is in phase " + std::to_string(m.phase) +
                 " with tx-count " + std::to_string(m.tx) + ": " + what);
    }
}

void decode_mbarrier(Decoder& d) {
  Inst& in = d.in;
  if (d.sm < 80)
    d.error("mbarrier needs sm_80");
  d.take_any({"release", "relaxed", "acquire", "cta", "cluster"});
  const bool cl_space = d.take("shared::cluster");
  in.space = cl_space                                      ? Space::shared_cluster
             : (d.take("shared") || d.take("shared::cta")) ? Space::shared
                                                           : Space::generic;
  auto b64 = [&] {
    if (d.take_type() != Ty::b64)
      d.error("mbarrier needs .b64");
  };
  auto local_only = [&] {
    if (cl_space)
      d.error("'" + d.ai.opcode +
              "' does not take .shared::cluster (only arrive, expect_tx and complete_tx do)");
  };
  in.fn = &mb_handler;
  if (d.take("init")) {
    local_only();
    in.op = m_init;
    d.need_ops(2);
  } else if (d.take("inval")) {
    local_only();
    in.op = m_inval;
    d.need_ops(1);
  } else if (d.take("arrive") || d.take("arrive_drop")) {
    in.op = m_arrive;
    in.op2 = d.ai.has("arrive_drop") ? 2 : 0;
    if (d.take("expect_tx")) {
      in.op2 |= 1;
      d.need_ops(3);
    } else {
      if (d.take("noComplete"))
        d.not_yet();
      d.need_ops(2, 3);
    }
    if (cl_space && in.ops[0].kind != Opnd::Kind::sink)
      d.error("a .shared::cluster arrive has no state result (write _)");
  } else if (d.take("expect_tx") || d.take("complete_tx")) {
    in.op = d.ai.has("expect_tx") ? m_expect : m_complete;
    d.need_ops(2);
  } else if (d.take("test_wait") || d.take("try_wait")) {
    local_only();
    in.op = d.ai.has("test_wait") ? m_test : m_try;
    in.op2 = d.take("parity");
    in.sync = Sync::wait;
    d.need_ops(3, in.op == m_try ? 4 : 3);
  } else if (d.take("pending_count")) {
    in.op = m_pending;
    d.need_ops(2);
  } else {
    d.error("unknown mbarrier operation");
  }
  b64();
  const bool has_dst = in.op == m_arrive || in.op == m_test || in.op == m_try;
  if (in.op != m_pending && in.ops[has_dst ? 1 : 0].kind != Opnd::Kind::addr)
    d.error("the mbarrier operand must be [a]");
  in.cost = 4;
  d.finish();
}

} // namespace isatune::emu::ptx

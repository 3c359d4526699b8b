// Thread-block clusters and distributed shared memory (#thread-block-clusters, #distributed-shared-memory):
// shared::cluster addresses, mapa, getctarank, barrier.cluster, and the parking of lanes that wait for a
// cluster-wide event (Sync::wait, scheduled in cta.cpp).
//
// Address encoding (the emulator's choice; programs get such addresses only from mapa): a shared::cta address
// is the byte offset in the CTA's shared memory (< 2^24, since a CTA has at most 227 KB); the shared::cluster
// address of offset o in the CTA of rank r is ((r + 1) << 24) | o. An address below 2^24 used as a
// shared::cluster address names the executing CTA (the ISA: a shared::cta address is a valid shared::cluster
// address of the executing CTA). Generic addresses add kSharedWindow to either form. A rank outside the
// cluster or an offset outside that CTA's shared memory is reported as out_of_bounds.
#include <cstdio>

#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

constexpr unsigned kRankShift = 24;
constexpr uint64_t kOffsetMask = (1ull << kRankShift) - 1;

std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
  return b;
}

// mapa{.shared::cluster}.{u32,u64} d, a, rank: a's offset in the CTA of `rank`.
void mapa(Warp& w, const Inst& in, uint32_t act) {
  const uint32_t n = uint32_t(w.cta->cluster->ctas.size());
  for_lanes(act, [&](unsigned l) {
    uint64_t a = read(w, in.ops[1], l);
    uint32_t r = uint32_t(read(w, in.ops[2], l));
    uint64_t base = 0;
    if (in.space == Space::generic) { // generic mapa: a and d are generic addresses
      if (a - kSharedWindow >= kWindowSize) {
        report(w, l, HazardKind::out_of_bounds,
               "mapa of generic address " + hex(a) + ", not a shared address");
        write(w, in.ops[0], l, 0);
        return;
      }
      base = kSharedWindow;
      a -= kSharedWindow;
    }
    if (r >= n) {
      report(w, l, HazardKind::out_of_bounds,
             "mapa to CTA rank " + std::to_string(r) + "; the cluster has " + std::to_string(n) + " CTAs");
      r = 0;
    }
    write(w, in.ops[0], l, base + ((uint64_t(r + 1) << kRankShift) | (a & kOffsetMask)));
  });
}

// getctarank{.shared::cluster}.u32 d, a: the rank of the CTA whose shared memory a names.
void getctarank(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint64_t a = read(w, in.ops[1], l);
    if (in.space == Space::generic)
      a -= kSharedWindow;
    uint64_t r = (a & ~kOffsetMask) >> kRankShift;
    write(w, in.ops[0], l, r ? r - 1 : w.cta->rank);
  });
}

// barrier.cluster completes when every non-exited thread of the cluster has arrived
// (#parallel-synchronization-and-communication-instructions-barrier-cluster).
void try_cluster_barrier(Cluster& cl) {
  bool any = false;
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps) {
      if (w.live & ~w.cl_arrived)
        return;
      any |= w.cl_arrived != 0;
    }
  if (!any)
    return;
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps) {
      cl.bar_release[c->rank * cl.wpc + w.index] = w.cl_arrived ? w.cl_time : 0;
      w.cl_arrived = 0;
    }
  ++cl.bar_phase;
  ++cl.version;
  cluster_wake(cl);
}

void cluster_arrive(Warp& w, const Inst&, uint32_t act) {
  Cluster& cl = *w.cta->cluster;
  if (uint32_t twice = act & w.cl_arrived)
    report(w, unsigned(std::countr_zero(twice)), HazardKind::divergence,
           "threads arrive twice at barrier.cluster before it completes");
  for_lanes(act, [&](unsigned l) { w.cl_phase[l] = cl.bar_phase; });
  w.cl_arrived |= act;
  w.cl_wait |= act;
  w.cl_time = w.cta->time;
  ++cl.version;
  try_cluster_barrier(cl);
}

void cluster_wait(Warp& w, const Inst&, uint32_t act) {
  Cluster& cl = *w.cta->cluster;
  if (uint32_t never = act & ~w.cl_wait) {
    report(w, unsigned(std::countr_zero(never)), HazardKind::divergence,
           "barrier.cluster.wait by threads that did not arrive (barrier.cluster.arrive) first");
    act &= ~never;
  }
  uint32_t done = 0;
  for_lanes(act, [&](unsigned l) {
    if (w.cl_phase[l] < cl.bar_phase)
      done |= 1u << l;
    else
      w.park_what[l] = ~0u;
  });
  w.park |= act & ~done;
  if (done) {
    w.cl_wait &= ~done;
    const uint32_t gb = w.cta->rank * cl.wpc + w.index;
    for (uint32_t a = 0; a < cl.nwarps(); ++a)
      cl.sync(a, gb, cl.bar_release[a]);
    // The barrier orders the lanes of this warp among themselves too.
    Cta& c = *w.cta;
    for_lanes(done, [&](unsigned a) {
      uint32_t* row = &c.lane_sync[(size_t(w.index) * 32 + a) * 32];
      for_lanes(done, [&](unsigned b) { row[b] = std::max(row[b], w.cl_time); });
    });
  }
}

} // namespace

Cta* shared_target(Warp& w, unsigned lane, Space space, uint64_t addr, unsigned bytes, uint32_t& offset) {
  Cta& c = *w.cta;
  const Cluster& cl = *c.cluster;
  uint64_t rank_field = addr >> kRankShift;
  Cta* t = &c;
  auto oob = [&](const std::string& why) -> Cta* {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s access of %u bytes at 0x%llx ",
                  space == Space::shared ? "shared" : "shared::cluster", bytes, (unsigned long long)addr);
    report(w, lane, HazardKind::out_of_bounds, buf + why);
    return nullptr;
  };
  if (rank_field) {
    if (rank_field - 1 >= cl.ctas.size())
      return oob("names CTA rank " + std::to_string(rank_field - 1) + "; the cluster has " +
                 std::to_string(cl.ctas.size()) + " CTAs");
    t = cl.ctas[rank_field - 1];
    if (space == Space::shared && t != &c)
      return oob("is another CTA's (rank " + std::to_string(t->rank) +
                 ") shared::cluster address, used as a shared::cta address");
  }
  uint64_t off = addr & kOffsetMask;
  if (off + bytes > t->shared.size())
    return oob("is outside the " + std::string(t == &c ? "CTA's " : "target CTA's ") +
               std::to_string(t->shared.size()) + " bytes of shared memory");
  offset = uint32_t(off);
  return t;
}

void cluster_thread_exited(Warp& w) {
  Cluster& cl = *w.cta->cluster;
  ++cl.version;
  try_cluster_barrier(cl);
  cluster_wake(cl);
}

void cluster_wake(Cluster& cl) {
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps) {
      w.runm |= w.parkm;
      w.parkm = 0;
    }
}

std::string describe_park(const Warp& w, unsigned lane) {
  const uint32_t what = w.park_what[lane];
  const Cta& c = *w.cta;
  std::string at = " (line " + std::to_string(c.launch->prog->code[w.pc[lane]].line) + ")";
  if (what == ~0u)
    return "at barrier.cluster.wait, cluster phase " + std::to_string(c.cluster->bar_phase) + at;
  if (what == ~1u)
    return "at setmaxnreg.inc waiting for registers" + at;
  uint32_t rank = what >> kRankShift ? (what >> kRankShift) - 1 : c.rank;
  uint32_t off = what & uint32_t(kOffsetMask);
  const Cta& t = *c.cluster->ctas[rank];
  std::string s = "at an mbarrier wait on shared " + hex(off);
  if (rank != c.rank)
    s += " of CTA rank " + std::to_string(rank);
  auto it = t.mbars.find(off);
  if (it != t.mbars.end()) {
    const Mbar& m = it->second;
    s += " (phase " + std::to_string(m.phase) + ", parity " + std::to_string(m.phase & 1) + ", " +
         std::to_string(m.pending) + " of " + std::to_string(m.expected) + " arrivals pending, tx-count " +
         std::to_string(m.tx) + ")";
  }
  return s + at;
}

void decode_mbarrier(Decoder& d);   // mbarrier.cpp
void decode_setmaxnreg(Decoder& d); // setmaxnreg.cpp

void decode_sm90(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  if (m == "mbarrier")
    return decode_mbarrier(d);
  if (m == "setmaxnreg")
    return decode_setmaxnreg(d);
  Inst& in = d.in;
  if (d.sm < 90)
    d.error("'" + d.ai.opcode + "' needs sm_90");
  if (m == "mapa" || m == "getctarank") {
    in.space = d.take("shared::cluster") ? Space::shared_cluster : Space::generic;
    in.type = d.take_type();
    if (m == "mapa" && in.type != Ty::u32 && in.type != Ty::u64)
      d.error("mapa needs .u32 or .u64");
    if (m == "getctarank" && in.type != Ty::u32)
      d.error("getctarank needs .u32");
    d.need_ops(m == "mapa" ? 3 : 2);
    in.fn = m == "mapa" ? &mapa : &getctarank;
  } else { // barrier.cluster.{arrive,wait}
    d.take("cluster");
    if (d.take("arrive")) {
      d.take_any({"release", "relaxed"});
      in.aligned = d.take("aligned");
      // .aligned: every thread of the warp executes the same barrier.cluster (a warp collective here).
      in.sync = in.aligned ? Sync::collective : Sync::none;
      in.fn = &cluster_arrive;
    } else if (d.take("wait")) {
      d.take("acquire");
      in.aligned = d.take("aligned");
      in.sync = Sync::wait;
      in.fn = &cluster_wait;
    } else {
      d.error("barrier.cluster needs .arrive or .wait");
    }
    d.need_ops(0);
    in.cost = 20;
  }
  d.finish();
}

} // namespace isatune::emu::ptx

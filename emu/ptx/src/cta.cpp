// The CTA scheduler: independent thread scheduling (a PC per lane; lanes at equal PCs run together as one
// warp instruction), warp collectives that wait for their membermask, CTA barriers counted per warp, calls,
// exits, and the deadlock detector.
#include <algorithm>
#include <cstdio>

#include "ops.h"
#include "warp.h"

namespace isatune::emu::ptx {

namespace {

constexpr uint32_t kQuantum = 256; // warp instructions before the scheduler moves to the next warp

std::string lanes_str(uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

uint32_t member_mask(Warp& w, const Inst& in, unsigned lane) {
  if (in.mask_op < 0)
    return 0xffffffffu;
  return uint32_t(read(w, in.ops[size_t(in.mask_op)], lane));
}

void advance(Warp& w, uint32_t lanes) {
  for_lanes(lanes, [&](unsigned l) { ++w.pc[l]; });
}

// Runs a collective for `lanes` (waiting at pc): the handler, then they continue.
void release_collective(Warp& w, const Inst& in, uint32_t lanes) {
  w.collm &= ~lanes;
  w.runm |= lanes;
  w.cur = &in;
  if (in.fn)
    in.fn(w, in, lanes);
  advance(w, lanes);
}

// Tries to release the lanes waiting at the collective at `pc`: it runs once every live lane of the
// membermask waits there (PTX ISA #parallel-synchronization-and-communication-instructions-shfl-sync: the
// executing thread waits until all non-exited threads of membermask have executed it).
bool try_collective(Warp& w, uint32_t pc) {
  uint32_t waiting = 0;
  for_lanes(w.collm, [&](unsigned l) {
    if (w.pc[l] == pc)
      waiting |= 1u << l;
  });
  if (!waiting)
    return false;
  const Inst& in = w.cta->launch->prog->code[pc];
  uint32_t required = 0;
  for_lanes(waiting, [&](unsigned l) { required |= member_mask(w, in, l); });
  required &= w.live;
  if (required & ~waiting)
    return false;
  release_collective(w, in, waiting);
  return true;
}

// No lane of the warp can run, yet some wait at collectives whose other members will not come (they wait at a
// different instruction or at a CTA barrier): report and run each waiting group as it is.
void force_collectives(Warp& w) {
  while (w.collm) {
    unsigned l0 = unsigned(std::countr_zero(w.collm));
    uint32_t pc = w.pc[l0];
    const Inst& in = w.cta->launch->prog->code[pc];
    uint32_t group = 0;
    for_lanes(w.collm, [&](unsigned l) {
      if (w.pc[l] == pc)
        group |= 1u << l;
    });
    uint32_t required = 0;
    for_lanes(group, [&](unsigned l) { required |= member_mask(w, in, l); });
    required &= w.live;
    w.cur = &in;
    report(w, l0, HazardKind::divergence,
           "lanes " + lanes_str(group) + " wait here for membermask lanes " + lanes_str(required & ~group) +
               " that are at other instructions (or at a barrier)");
    release_collective(w, in, group);
  }
}

uint32_t warps_alive(const Cta& c) {
  uint32_t m = 0;
  for (const Warp& w : c.warps)
    if (w.live)
      m |= 1u << w.index;
  return m;
}

// Completes barrier `id` when enough warps have arrived (#parallel-synchronization-and-communication-
// instructions-bar: without a thread count, all threads of the CTA; exited threads do not hold it back).
bool try_barrier(Cta& c, unsigned id) {
  Barrier& b = c.bars[id];
  if (!b.arrived)
    return false;
  // A warpgroup rendezvous (wgmma.wait_group) waits for the live warps of its warpgroup and orders no memory.
  const bool wg = id >= kWarpgroupBarrier;
  const uint32_t scope = wg ? 0xfu << (4 * (id - kWarpgroupBarrier)) : ~0u;
  bool done = b.expected ? uint32_t(std::popcount(b.arrived)) * 32 >= b.expected
                         : (warps_alive(c) & scope & ~b.arrived) == 0;
  if (!done)
    return false;
  uint32_t n = c.nwarps();
  for (uint32_t a = 0; a < n && !wg; ++a)
    if (b.arrived >> a & 1)
      for (uint32_t bb = 0; bb < n; ++bb)
        if (b.waiting >> bb & 1)
          c.warp_sync[a * n + bb] = std::max(c.warp_sync[a * n + bb], b.arrive_time[a]);
  const Inst& in = c.launch->prog->code[b.pc];
  c.red_value = in.op == 1 ? b.red_popc : in.op == 2 ? uint32_t(b.red_and) : uint32_t(b.red_or);
  for (Warp& w : c.warps) {
    if (!(b.waiting >> w.index & 1))
      continue;
    uint32_t lanes = 0;
    for_lanes(w.barm, [&](unsigned l) {
      if (w.bar_id[l] == id)
        lanes |= 1u << l;
    });
    w.barm &= ~lanes;
    w.runm |= lanes;
    if ((b.red || wg) && in.fn) {
      w.cur = &in;
      in.fn(w, in, lanes);
    }
    advance(w, lanes);
  }
  Barrier fresh;
  b = fresh;
  return true;
}

// The warp's lanes have all reached a barrier (or exited): it arrives.
void warp_arrives(Warp& w, unsigned id, bool wait, const Inst& in) {
  Cta& c = *w.cta;
  Barrier& b = c.bars[id];
  if (b.arrived >> w.index & 1) {
    report(w, unsigned(std::countr_zero(w.live)), HazardKind::divergence,
           "warp " + std::to_string(w.index) + " arrives twice at barrier " + std::to_string(id) +
               " before it completes");
  }
  uint32_t expected = 0;
  if (in.count_op >= 0)
    expected = uint32_t(
        read(w, in.ops[size_t(in.count_op)], unsigned(std::countr_zero(w.live | (w.live ? 0 : 1u)))));
  if (b.arrived && b.expected != expected)
    report(w, unsigned(std::countr_zero(w.live)), HazardKind::divergence,
           "barrier " + std::to_string(id) + " used with thread counts " + std::to_string(b.expected) +
               " and " + std::to_string(expected));
  if (!b.arrived) {
    b.expected = expected;
    b.pc = in.index;
    b.red = in.op != 0;
  }
  b.arrived |= 1u << w.index;
  if (wait)
    b.waiting |= 1u << w.index;
  if (in.op) { // bar.red: this warp's predicates
               // (#parallel-synchronization-and-communication-instructions-bar)
    const Opnd& p = in.ops[in.ops.size() - 2];
    for_lanes(w.barm, [&](unsigned l) {
      if (w.bar_id[l] != id)
        return;
      bool v = read(w, p, l) & 1;
      b.red_popc += v;
      b.red_and = b.red_and && v;
      b.red_or = b.red_or || v;
    });
  }
  b.arrive_time[w.index] = c.time;
  try_barrier(c, id);
}

// After lanes of w reached a CTA barrier: when every live lane of the warp waits at one (bar.sync waits for
// all non-exited threads of its warp), the warp arrives.
void check_warp_at_barrier(Warp& w) {
  if (!w.barm || (w.live & ~w.barm))
    return;
  Cta& c = *w.cta;
  unsigned l0 = unsigned(std::countr_zero(w.barm));
  unsigned id = w.bar_id[l0];
  uint32_t pc = w.pc[l0];
  bool same = true;
  for_lanes(w.barm, [&](unsigned l) { same &= w.bar_id[l] == id && w.pc[l] == pc; });
  const Inst& in = c.launch->prog->code[pc];
  if (!same) {
    bool ids_differ = false;
    for_lanes(w.barm, [&](unsigned l) { ids_differ |= w.bar_id[l] != id; });
    // #parallel-synchronization-and-communication-instructions-bar: .aligned (bar.sync) requires every
    // thread of the warp to execute the same barrier instruction.
    if (in.aligned || ids_differ) {
      w.cur = &in;
      report(w, l0, HazardKind::divergence,
             "lanes of warp " + std::to_string(w.index) + " wait at different barrier instructions" +
                 (ids_differ ? " (different barrier ids)" : ""));
    }
  }
  warp_arrives(w, id, true, in);
}

// One scheduling step of a warp: picks the lanes to run and executes one instruction for them.
void step(Warp& w, Schedule sched) {
  Cta& c = *w.cta;
  const Program& prog = *c.launch->prog;
  uint32_t group;
  uint32_t pc;
  if (sched == Schedule::lockstep) {
    unsigned l0 = unsigned(std::countr_zero(w.runm));
    pc = w.pc[l0];
    group = 0;
    bool uniform = true;
    for_lanes(w.runm, [&](unsigned l) { uniform &= w.pc[l] == pc; });
    if (uniform)
      group = w.runm;
    else {
      for_lanes(w.runm, [&](unsigned l) { pc = std::min(pc, w.pc[l]); });
      for_lanes(w.runm, [&](unsigned l) {
        if (w.pc[l] == pc)
          group |= 1u << l;
      });
    }
  } else {
    if (w.focus >= 32 || !(w.runm >> w.focus & 1))
      w.focus = 31 - unsigned(std::countl_zero(w.runm));
    group = 1u << w.focus;
    pc = w.pc[w.focus];
  }
  const Inst& in = prog.code[pc];
  w.cur = &in;
  uint32_t active = group;
  if (in.has_guard) {
    uint32_t t = 0;
    const uint64_t* g = w.r + size_t(in.guard_slot) * 32;
    for_lanes(group, [&](unsigned l) {
      if ((g[l] & 1) != uint64_t(in.guard_negate))
        t |= 1u << l;
    });
    active = t;
  }
  ++w.instructions;
  w.thread_instructions += uint32_t(std::popcount(active));
  w.cycles += in.cost;
  ++c.time;
  if (in.wgmma_regs && active)
    wgmma_register_access(w, in, active);
  switch (in.sync) {
  case Sync::none:
    if (active)
      in.fn(w, in, active);
    advance(w, group);
    return;
  case Sync::branch:
    advance(w, group & ~active);
    if (active)
      in.fn(w, in, active);
    return;
  case Sync::exit:
    advance(w, group & ~active);
    w.runm &= ~active;
    w.live &= ~active;
    if (active && c.async.outstanding)
      async_copies_at_exit(w, active);
    if (active) {
      for (unsigned id = 0; id < kBarrierSlots; ++id)
        try_barrier(c, id); // exited threads release barriers
      for_lanes(w.collm, [&](unsigned l) { try_collective(w, w.pc[l]); });
      check_warp_at_barrier(w);
      cluster_thread_exited(w);
    }
    return;
  case Sync::call:
    advance(w, group & ~active);
    for_lanes(active, [&](unsigned l) {
      uint8_t* frame = w.local + size_t(l) * prog.local_bytes;
      for (const CallCopy& cc : in.args) {
        const uint8_t* src = cc.src_space == Space::param ? c.launch->params + cc.src : frame + cc.src;
        std::memmove(frame + cc.dst, src, cc.bytes);
      }
      w.stack[l].push_back({&in});
      w.pc[l] = in.target;
    });
    return;
  case Sync::ret: {
    advance(w, group & ~active);
    uint32_t done = 0;
    for_lanes(active, [&](unsigned l) {
      if (w.stack[l].empty()) { // ret from the entry: the thread exits
        done |= 1u << l;
        return;
      }
      const Inst* call = w.stack[l].back().call;
      w.stack[l].pop_back();
      uint8_t* frame = w.local + size_t(l) * prog.local_bytes;
      for (const CallCopy& cc : call->rets)
        std::memmove(frame + cc.dst, frame + cc.src, cc.bytes);
      w.pc[l] = call->index + 1;
    });
    if (done) {
      w.runm &= ~done;
      w.live &= ~done;
      if (c.async.outstanding)
        async_copies_at_exit(w, done);
      for (unsigned id = 0; id < kBarrierSlots; ++id)
        try_barrier(c, id);
      for_lanes(w.collm, [&](unsigned l) { try_collective(w, w.pc[l]); });
      check_warp_at_barrier(w);
      cluster_thread_exited(w);
    }
    return;
  }
  case Sync::collective: {
    advance(w, group & ~active);
    if (!active)
      return;
    // The executing thread must be in its membermask (#parallel-synchronization-and-communication-
    // instructions-shfl-sync: "undefined if the executing thread is not in the membermask").
    if (in.mask_op >= 0) {
      uint32_t outside = 0;
      for_lanes(active, [&](unsigned l) {
        if (!(member_mask(w, in, l) >> l & 1))
          outside |= 1u << l;
      });
      if (outside)
        report(w, unsigned(std::countr_zero(outside)), HazardKind::membermask,
               "lanes " + lanes_str(outside) + " execute it but are not in their membermask");
    }
    // Fast path: every member is here.
    uint32_t required = 0;
    for_lanes(active, [&](unsigned l) { required |= member_mask(w, in, l); });
    required &= w.live;
    if (!(required & ~active) && !(w.collm)) {
      if (in.fn)
        in.fn(w, in, active);
      advance(w, active);
      return;
    }
    w.runm &= ~active;
    w.collm |= active;
    try_collective(w, pc);
    return;
  }
  case Sync::warpgroup: {
    advance(w, group & ~active);
    if (!active)
      return;
    for_lanes(active, [&](unsigned l) { w.bar_id[l] = uint8_t(kWarpgroupBarrier + w.index / 4); });
    w.runm &= ~active;
    w.barm |= active;
    check_warp_at_barrier(w);
    return;
  }
  case Sync::wait: { // the handler parks the lanes that must wait (cluster.cpp)
    advance(w, group & ~active);
    if (!active)
      return;
    w.park = 0;
    in.fn(w, in, active);
    const uint32_t parked = w.park & active;
    w.park = 0;
    advance(w, active & ~parked);
    w.runm &= ~parked;
    w.parkm |= parked;
    return;
  }
  case Sync::barrier: {
    advance(w, group & ~active);
    if (!active)
      return;
    unsigned id = 0;
    if (!in.ops.empty()) {
      unsigned l0 = unsigned(std::countr_zero(active));
      id = unsigned(read(w, in.ops[0], l0));
      for_lanes(active, [&](unsigned l) {
        if (unsigned(read(w, in.ops[0], l)) != id)
          fail(w, "bar: lanes give different barrier ids");
      });
      if (id > 15)
        fail(w, "barrier id " + std::to_string(id) + " out of range 0-15");
    }
    if (in.op2 == 1) { // bar.arrive: marks arrival, does not wait
      advance(w, active);
      w.arrive_lanes[id] |= active;
      if (!(w.live & ~w.arrive_lanes[id])) {
        w.arrive_lanes[id] = 0;
        warp_arrives(w, id, false, in);
      }
      return;
    }
    for_lanes(active, [&](unsigned l) { w.bar_id[l] = uint8_t(id); });
    w.runm &= ~active;
    w.barm |= active;
    check_warp_at_barrier(w);
    return;
  }
  }
}

std::string describe_waits(Cta& c) {
  std::string s;
  const bool many = c.cluster->ctas.size() > 1;
  for (Warp& w : c.warps) {
    if (!w.live)
      continue;
    s += (s.empty() ? "" : "; ") + (many ? "CTA rank " + std::to_string(c.rank) + " " : std::string()) +
         std::string("warp ") + std::to_string(w.index) + ":";
    if (w.barm) {
      unsigned l = unsigned(std::countr_zero(w.barm));
      s += " lanes " + lanes_str(w.barm) +
           (w.bar_id[l] >= kWarpgroupBarrier ? " at the warpgroup rendezvous of warpgroup " +
                                                   std::to_string(w.bar_id[l] - kWarpgroupBarrier)
                                             : " at barrier " + std::to_string(w.bar_id[l])) +
           " (line " + std::to_string(c.launch->prog->code[w.pc[l]].line) + ")";
    }
    // Parked lanes, grouped by what they wait for.
    uint32_t rest = w.parkm;
    while (rest) {
      unsigned l = unsigned(std::countr_zero(rest));
      uint32_t same = 0;
      for_lanes(rest, [&](unsigned k) {
        if (w.park_what[k] == w.park_what[l] && w.pc[k] == w.pc[l])
          same |= 1u << k;
      });
      s += " lanes " + lanes_str(same) + " " + describe_park(w, l);
      rest &= ~same;
    }
    uint32_t other = w.live & ~w.barm & ~w.parkm;
    if (other)
      s += " lanes " + lanes_str(other) +
           (w.collm & other ? " at a warp collective or elsewhere" : " elsewhere");
  }
  return s;
}

// Nothing can run: lanes parked at an mbarrier wait give up once (try_wait's time limit; test_wait returns
// false) per change of the cluster's state. Returns whether any did.
bool time_out_waits(Cluster& cl) {
  if (cl.version == cl.forced)
    return false;
  cl.forced = cl.version;
  bool any = false;
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps) {
      uint32_t m = 0;
      for_lanes(w.parkm, [&](unsigned l) {
        if (w.park_what[l] < ~1u)
          m |= 1u << l;
      });
      if (m) {
        w.parkm &= ~m;
        w.runm |= m;
        w.timeout |= m;
        any = true;
      }
    }
  return any;
}

} // namespace

void run_cluster(Cluster& cl) {
  const Launch& L = *cl.launch;
  uint64_t budget = L.max_instructions;
  std::vector<uint64_t> executed(cl.ctas.size(), 0);
  for (;;) {
    bool progress = false, any_live = false;
    for (size_t r = 0; r < cl.ctas.size(); ++r) {
      Cta& c = *cl.ctas[r];
      c.time = cl.time; // one clock for the cluster: remote accesses compare times
      const size_t n = c.warps.size();
      for (size_t k = 0; k < n; ++k) {
        Warp& w = c.warps[L.schedule == Schedule::adversarial ? n - 1 - k : k];
        if (!w.live)
          continue;
        any_live = true;
        uint32_t steps = 0;
        while (w.runm && steps < kQuantum) {
          step(w, L.schedule);
          ++steps;
        }
        if (!w.runm && !w.parkm && w.collm) {
          force_collectives(w);
          progress = true;
        }
        if (steps)
          progress = true;
        executed[r] += steps;
        if (budget && executed[r] > budget)
          throw EmulationError("ptx emu: CTA (" + std::to_string(c.id[0]) + "," + std::to_string(c.id[1]) +
                               "," + std::to_string(c.id[2]) + ") of kernel '" + L.prog->name +
                               "' ran more than " + std::to_string(budget) +
                               " warp instructions (endless loop?)");
        if (L.stop.load(std::memory_order_relaxed))
          return;
      }
      cl.time = c.time;
    }
    if (!any_live)
      break;
    if (progress)
      continue;
    if (time_out_waits(cl))
      continue;
    // Every remaining thread of the cluster waits for something that cannot happen. Name a parked lane
    // first (mbarrier / barrier.cluster / setmaxnreg), else a lane at a CTA barrier.
    Warp* first = nullptr;
    bool parked = false;
    for (Cta* c : cl.ctas) // a setmaxnreg.inc that can never be granted is the cause when there is one
      for (Warp& w : c->warps)
        for_lanes(w.parkm, [&](unsigned k) {
          if (!first && w.park_what[k] == ~1u)
            first = &w, parked = true;
        });
    for (Cta* c : cl.ctas)
      for (Warp& w : c->warps)
        if (!first && w.live && w.parkm)
          first = &w, parked = true;
    for (Cta* c : cl.ctas)
      for (Warp& w : c->warps)
        if (!first && w.live && w.barm)
          first = &w;
    for (Cta* c : cl.ctas)
      for (Warp& w : c->warps)
        if (!first && w.live)
          first = &w;
    std::string all;
    for (Cta* c : cl.ctas) {
      std::string d = describe_waits(*c);
      if (!d.empty())
        all += (all.empty() ? "" : "; ") + d;
    }
    uint32_t lm = parked ? first->parkm : first->barm ? first->barm : first->live;
    for_lanes(first->parkm, [&](unsigned k) {
      if (first->park_what[k] == ~1u)
        lm = 1u << k;
    });
    unsigned l = unsigned(std::countr_zero(lm));
    first->cur = &L.prog->code[first->pc[l]];
    if (parked && first->park_what[l] == ~1u)
      report(*first, l, HazardKind::register_budget,
             register_budget_message(*first->cta, *first, *first->cur) + "; " + all);
    else
      report(*first, l, HazardKind::deadlock,
             "every remaining thread waits and nothing can complete: " + all);
    if (parked) // waits on other CTAs' progress: the launch cannot finish
      cl.launch->stop = true;
    break;
  }
  for (Cta* c : cl.ctas)
    for (Warp& w : c->warps)
      c->cycles = std::max(c->cycles, w.cycles);
}

} // namespace isatune::emu::ptx

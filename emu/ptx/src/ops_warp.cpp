// Warp-level collectives (#parallel-synchronization-and-communication-instructions-{shfl-sync, vote-sync,
// match-sync, redux-sync, activemask, elect-sync, bar-warp-sync}). The scheduler (cta.cpp) has gathered every
// live lane of the membermask before a handler runs; `act` is the lanes executing together.
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

std::string hex32(uint32_t m) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", m);
  return buf;
}

// shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask (ISA pseudo-code, shared/notes/ptx-emulation.md
// section 2.4): the source lane j from b and the clamp/segment mask c; out of range keeps the own value.
void shfl(Warp& w, const Inst& in, uint32_t act) {
  uint64_t a[32];
  for_lanes(act, [&](unsigned l) { a[l] = read(w, in.ops[1], l); });
  const Opnd& d = in.ops[0];
  const Opnd& dv = d.kind == Opnd::Kind::vec ? d.elems[0] : d;
  for_lanes(act, [&](unsigned l) {
    uint32_t b = uint32_t(read(w, in.ops[2], l)), c = uint32_t(read(w, in.ops[3], l));
    uint32_t mm = uint32_t(read(w, in.ops[4], l));
    uint32_t bval = b & 0x1f, cval = c & 0x1f, mask = (c >> 8) & 0x1f;
    uint32_t max_lane = (l & mask) | (cval & ~mask), min_lane = l & mask;
    int j;
    bool p;
    switch (in.op) {
    case 0:
      j = int(l) - int(bval), p = j >= int(max_lane);
      break;
    case 1:
      j = int(l + bval), p = j <= int(max_lane);
      break;
    case 2:
      j = int(l ^ bval), p = j <= int(max_lane);
      break;
    default:
      j = int(min_lane | (bval & ~mask)), p = j <= int(max_lane);
      break;
    }
    if (!p)
      j = int(l);
    uint64_t v;
    if (!(act >> j & 1) || !(mm >> j & 1)) {
      report(w, l, HazardKind::membermask,
             "lane " + std::to_string(l) + " reads lane " + std::to_string(j) + ", which " +
                 (!(mm >> j & 1) ? "is not in the membermask " + hex32(mm) : "does not execute the shuffle") +
                 " (undefined value)");
      v = w.reg(in.ops[1].kind == Opnd::Kind::reg ? in.ops[1].slot : 0, unsigned(j)); // whatever it holds
      if (in.ops[1].kind != Opnd::Kind::reg)
        v = a[l];
    } else {
      v = a[j];
    }
    write(w, dv, l, v);
    if (d.kind == Opnd::Kind::vec && d.elems.size() > 1)
      write(w, d.elems[1], l, p);
  });
}

// vote.sync.{all,any,uni}.pred d, {!}a, membermask; vote.sync.ballot.b32 d, {!}a, membermask.
void vote(Warp& w, const Inst& in, uint32_t act) {
  uint32_t ballot = 0;
  for_lanes(act, [&](unsigned l) {
    if (read(w, in.ops[1], l) & 1)
      ballot |= 1u << l;
  });
  for_lanes(act, [&](unsigned l) {
    uint32_t mm = uint32_t(read(w, in.ops[2], l)) & act;
    uint64_t r;
    switch (in.op) {
    case 0:
      r = (ballot & mm) == mm;
      break; // all
    case 1:
      r = (ballot & mm) != 0;
      break; // any
    case 2:
      r = (ballot & mm) == 0 || (ballot & mm) == mm;
      break; // uni
    default:
      r = ballot & uint32_t(read(w, in.ops[2], l));
      break; // ballot
    }
    write(w, in.ops[0], l, r);
  });
}

// match.sync.{any,all}.{b32,b64} d[|p], a, membermask.
void match(Warp& w, const Inst& in, uint32_t act) {
  uint64_t a[32];
  for_lanes(act, [&](unsigned l) { a[l] = read(w, in.ops[1], l) & width_mask(type_bits(in.type)); });
  const Opnd& d = in.ops[0];
  const Opnd& dv = d.kind == Opnd::Kind::vec ? d.elems[0] : d;
  for_lanes(act, [&](unsigned l) {
    uint32_t mm = uint32_t(read(w, in.ops[2], l)) & act;
    uint32_t same = 0;
    for_lanes(mm, [&](unsigned k) {
      if (a[k] == a[l])
        same |= 1u << k;
    });
    bool all = same == mm;
    uint64_t r = in.op == 0 ? same : (all ? mm : 0);
    write(w, dv, l, r);
    if (d.kind == Opnd::Kind::vec && d.elems.size() > 1)
      write(w, d.elems[1], l, all);
  });
}

// redux.sync.{add,min,max}.{u32,s32} / .{and,or,xor}.b32 d, a, membermask.
void redux(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) {
    uint32_t mm = uint32_t(read(w, in.ops[2], l)) & act;
    uint64_t r = 0;
    bool first = true;
    for_lanes(mm, [&](unsigned k) {
      uint32_t v = uint32_t(read(w, in.ops[1], k));
      if (first) {
        r = v;
        first = false;
        return;
      }
      switch (in.op) {
      case 0:
        r = uint32_t(r + v);
        break;
      case 1:
        r = in.type == Ty::s32 ? uint32_t(std::min(int32_t(r), int32_t(v))) : std::min(uint32_t(r), v);
        break;
      case 2:
        r = in.type == Ty::s32 ? uint32_t(std::max(int32_t(r), int32_t(v))) : std::max(uint32_t(r), v);
        break;
      case 3:
        r &= v;
        break;
      case 4:
        r |= v;
        break;
      case 5:
        r ^= v;
        break;
      }
    });
    write(w, in.ops[0], l, r);
  });
}

void activemask(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) { write(w, in.ops[0], l, act); });
}

// elect.sync d|p, membermask: the lowest executing lane of the membermask leads.
void elect(Warp& w, const Inst& in, uint32_t act) {
  const Opnd& d = in.ops[0];
  for_lanes(act, [&](unsigned l) {
    uint32_t mm = uint32_t(read(w, in.ops[1], l)) & act;
    unsigned leader = mm ? unsigned(std::countr_zero(mm)) : l;
    if (d.kind == Opnd::Kind::vec) {
      write(w, d.elems[0], l, leader);
      if (d.elems.size() > 1)
        write(w, d.elems[1], l, leader == l);
    } else {
      write(w, d, l, leader == l);
    }
  });
}

// bar.warp.sync membermask: orders the memory accesses of the lanes it joins (race checker edges).
void warp_sync(Warp& w, const Inst&, uint32_t act) {
  Cta& c = *w.cta;
  for_lanes(act, [&](unsigned a) {
    uint32_t* row = &c.lane_sync[(size_t(w.index) * 32 + a) * 32];
    for_lanes(act, [&](unsigned b) { row[b] = c.time; });
  });
}

} // namespace

void decode_warp(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  in.sync = Sync::collective;
  if (m == "activemask") {
    in.sync = Sync::none;
    if (d.take_type() != Ty::b32)
      d.error("activemask needs .b32");
    d.need_ops(1);
    in.fn = &activemask;
    d.finish();
    return;
  }
  if (m == "bar") { // bar.warp.sync
    d.take("warp");
    if (!d.take("sync"))
      d.error("bar.warp needs .sync");
    d.need_ops(1);
    in.mask_op = 0;
    in.fn = &warp_sync;
    d.finish();
    return;
  }
  if (!d.take("sync"))
    d.error(m + " without .sync is not supported (deprecated before sm_70)");
  d.take("aligned");
  if (m == "shfl") {
    static const char* modes[] = {"up", "down", "bfly", "idx"};
    in.op = 255;
    for (unsigned i = 0; i < 4; ++i)
      if (d.take(modes[i]))
        in.op = uint8_t(i);
    if (in.op == 255)
      d.error("shfl needs .up, .down, .bfly or .idx");
    if (d.take_type() != Ty::b32)
      d.error("shfl needs .b32");
    d.need_ops(5);
    in.mask_op = 4;
    in.fn = &shfl;
  } else if (m == "vote") {
    static const char* modes[] = {"all", "any", "uni", "ballot"};
    in.op = 255;
    for (unsigned i = 0; i < 4; ++i)
      if (d.take(modes[i]))
        in.op = uint8_t(i);
    if (in.op == 255)
      d.error("vote needs .all, .any, .uni or .ballot");
    Ty t = d.take_type();
    if ((in.op == 3) != (t == Ty::b32) || (in.op != 3 && t != Ty::pred))
      d.error("vote type: .pred, or .b32 for ballot");
    d.need_ops(3);
    in.mask_op = 2;
    in.fn = &vote;
  } else if (m == "match") {
    in.op = d.take("any") ? 0 : d.take("all") ? 1 : 255;
    if (in.op == 255)
      d.error("match needs .any or .all");
    in.type = d.take_type();
    if (in.type != Ty::b32 && in.type != Ty::b64)
      d.error("match needs .b32 or .b64");
    d.need_ops(3);
    in.mask_op = 2;
    in.fn = &match;
  } else if (m == "redux") {
    static const char* modes[] = {"add", "min", "max", "and", "or", "xor"};
    in.op = 255;
    for (unsigned i = 0; i < 6; ++i)
      if (d.take(modes[i]))
        in.op = uint8_t(i);
    if (in.op == 255)
      d.error("redux needs an operation");
    in.type = d.take_type();
    bool ok = in.op < 3 ? (in.type == Ty::u32 || in.type == Ty::s32) : in.type == Ty::b32;
    if (!ok)
      d.error("redux type: .u32/.s32 for add/min/max, .b32 for and/or/xor");
    d.need_ops(3);
    in.mask_op = 2;
    in.fn = &redux;
  } else if (m == "elect") {
    d.need_ops(2);
    in.mask_op = 1;
    in.fn = &elect;
  }
  d.finish();
}

} // namespace isatune::emu::ptx

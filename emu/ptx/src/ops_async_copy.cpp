// cp.async (non-bulk) and its groups (#data-movement-and-conversion-instructions-cp-async,
// -cp-async-commit-group, -cp-async-wait-group; shared/notes/ptx-emulation.md 2.3).
//
// Completion is lazy, at the latest legal point, so that a missing wait is visible both as a report and as
// wrong data: the source is read at issue, the destination bytes are written only when the issuing thread's
// cp.async.wait_group N (or wait_all) retires the copy's group, or when the thread exits. Groups are per
// thread: a copy belongs to the thread's next commit_group; wait_group N lands every committed group but the
// N most recent. bar.sync completes nothing. Until a copy lands, any shared access (by any thread of the
// CTA) to a byte it will write is reported as async_pending. Landing writes the bytes through access() as
// the issuing thread at the cp.async's line, so a reader in another thread still needs a barrier after the
// wait (the race check).
#include <cstdio>

#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

std::string thread_str(const Cta& c, uint32_t t) {
  const Warp& o = c.warps[t / 32];
  return "thread (" + std::to_string(o.tid[t % 32][0]) + "," + std::to_string(o.tid[t % 32][1]) + "," +
         std::to_string(o.tid[t % 32][2]) + ")";
}

void ensure_state(Cta& c) {
  AsyncCopies& a = c.async;
  if (a.used)
    return;
  a.used = true;
  a.pending.resize(c.threads);
  a.commits.assign(c.threads, 0);
  a.bytes.assign(c.launch->shared_bytes, PendingByte{});
}

// Writes the copy's bytes into shared memory as its issuing thread (`lane` of `w`) at its cp.async.
void land(Warp& w, unsigned lane, const PendingCopy& p) {
  Cta& c = *w.cta;
  for (unsigned i = 0; i < p.bytes; ++i)
    --c.async.bytes[p.dst + i].count;
  --c.async.outstanding;
  const Inst* saved = w.cur;
  w.cur = &c.launch->prog->code[p.pc];
  if (uint8_t* q = access(w, lane, Space::shared, p.dst, p.bytes, true))
    std::memcpy(q, p.data, p.bytes);
  w.cur = saved;
}

// Lands the copies of thread (w, lane) whose group is below `limit`, in issue order (= commit order).
void land_groups(Warp& w, unsigned lane, uint32_t limit) {
  auto& list = w.cta->async.pending[w.index * 32 + lane];
  if (list.empty())
    return;
  std::vector<PendingCopy> keep;
  for (const PendingCopy& p : list) {
    if (p.group < limit)
      land(w, lane, p);
    else
      keep.push_back(p);
  }
  list.swap(keep);
}

// cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}.
// in.op: cp-size; in.op2: 0 no 4th operand, 1 src-size, 2 ignore-src predicate.
void cp_async(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  const Launch& L = *c.launch;
  ensure_state(c);
  const unsigned size = in.op;
  for_lanes(act, [&](unsigned l) {
    const uint32_t t = w.index * 32 + l;
    const uint64_t dst = address_of(w, in.ops[0], l), src = address_of(w, in.ops[1], l);
    uint64_t src_size = size;
    if (in.op2 == 1)
      src_size = uint32_t(read(w, in.ops[3], l));
    else if (in.op2 == 2)
      src_size = (read(w, in.ops[3], l) & 1) ? 0 : size;
    if (src_size > size) {
      report(w, l, HazardKind::out_of_bounds,
             "src-size " + std::to_string(src_size) + " exceeds cp-size " + std::to_string(size) +
                 " (undefined behaviour); copying " + std::to_string(size) + " bytes");
      src_size = size;
    }
    // The destination is checked here; its shadow (races, initialisation) is updated when the data lands.
    char buf[160];
    if (dst % size) {
      std::snprintf(buf, sizeof buf, "shared store of %u bytes at 0x%llx is not %u-byte aligned", size,
                    (unsigned long long)dst, size);
      report(w, l, HazardKind::unaligned, buf);
      return;
    }
    if (dst + size > L.shared_bytes) {
      std::snprintf(buf, sizeof buf,
                    "shared store of %u bytes at 0x%llx is outside the CTA's %u bytes of shared memory", size,
                    (unsigned long long)dst, L.shared_bytes);
      report(w, l, HazardKind::out_of_bounds, buf);
      return;
    }
    PendingCopy p;
    p.dst = uint32_t(dst);
    p.bytes = uint8_t(size);
    p.group = c.async.commits[t];
    p.pc = in.index;
    if (src_size) {
      const uint8_t* s = access(w, l, Space::global, src, unsigned(src_size), false, false, size);
      if (!s)
        return;
      std::memcpy(p.data, s, src_size); // the rest stays zero (zero fill)
    }
    if (c.async.outstanding)
      check_async_pending(w, l, p.dst, size, true); // two pending copies to one byte
    for (unsigned i = 0; i < size; ++i) {
      PendingByte& b = c.async.bytes[p.dst + i];
      ++b.count;
      b.thread = uint16_t(t);
      b.pc = in.index;
    }
    c.async.pending[t].push_back(p);
    ++c.async.outstanding;
  });
}

void commit_group(Warp& w, const Inst&, uint32_t act) {
  Cta& c = *w.cta;
  ensure_state(c);
  for_lanes(act, [&](unsigned l) { ++c.async.commits[w.index * 32 + l]; });
}

// wait_group N: all but the N most recent committed groups land. in.op: 1 for wait_all (commit + wait 0).
void wait_group(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  ensure_state(c);
  const uint32_t n = in.op ? 0 : uint32_t(in.ops[0].imm);
  for_lanes(act, [&](unsigned l) {
    uint32_t& commits = c.async.commits[w.index * 32 + l];
    if (in.op)
      ++commits;
    if (commits > n)
      land_groups(w, l, commits - n);
  });
}

} // namespace

void check_async_pending(Warp& w, unsigned lane, uint32_t addr, unsigned bytes, bool is_write) {
  Cta& c = *w.cta;
  for (unsigned i = 0; i < bytes; ++i) {
    const PendingByte& b = c.async.bytes[addr + i];
    if (!b.count)
      continue;
    const Inst& cp = c.launch->prog->code[b.pc];
    char where[48];
    std::snprintf(where, sizeof where, "shared byte 0x%x", addr + i);
    report(
        w, lane, HazardKind::async_pending,
        std::string(is_write ? "write" : "read") + " of " + where + " that a pending cp.async of " +
            thread_str(c, b.thread) + " (line " + std::to_string(cp.line) + " '" + cp.text +
            "') will write: its data has not landed (no cp.async.wait_group / wait_all of the issuing thread "
            "has retired it)");
    return;
  }
}

void async_copies_at_exit(Warp& w, uint32_t lanes) {
  Cta& c = *w.cta;
  if (!c.async.used)
    return;
  for_lanes(lanes, [&](unsigned l) {
    auto& list = c.async.pending[w.index * 32 + l];
    if (list.empty())
      return;
    const Inst* saved = w.cur;
    w.cur = &c.launch->prog->code[list.front().pc];
    report(w, l, HazardKind::async_pending,
           "cp.async never waited: " + thread_str(c, w.index * 32 + l) + " exits at line " +
               std::to_string(saved ? saved->line : 0) + " with " + std::to_string(list.size()) +
               " copies pending (no cp.async.wait_group / wait_all retired them); they land at the exit");
    w.cur = saved;
    land_groups(w, l, ~0u);
  });
}

void decode_cp(Decoder& d) {
  Inst& in = d.in;
  // The bulk (TMA) forms and cp.reduce.async.bulk are the asynchronous-proxy set (ops_bulk_copy.cpp).
  if (d.ai.opcode.rfind("cp.async.bulk", 0) == 0 || d.ai.opcode.rfind("cp.reduce.async.bulk", 0) == 0) {
    decode_cp_bulk(d);
    return;
  }
  if (!d.take("async"))
    d.not_yet();
  if (d.take("mbarrier"))
    d.not_yet(); // cp.async.mbarrier.arrive: needs the mbarrier model
  if (d.take("commit_group")) {
    d.need_ops(0);
    in.fn = &commit_group;
    d.finish();
    return;
  }
  if (d.take("wait_group")) {
    d.need_ops(1);
    if (in.ops[0].kind != Opnd::Kind::imm)
      d.error("cp.async.wait_group needs an integer constant");
    in.fn = &wait_group;
    d.finish();
    return;
  }
  if (d.take("wait_all")) {
    d.need_ops(0);
    in.op = 1;
    in.fn = &wait_group;
    d.finish();
    return;
  }
  const bool cg = d.take("cg");
  if (!cg && !d.take("ca"))
    d.error("cp.async needs .ca or .cg");
  if (!d.take("shared") && !d.take("shared::cta"))
    d.error("cp.async needs a .shared destination");
  if (!d.take("global"))
    d.error("cp.async needs a .global source");
  const bool policy = d.take("L2::cache_hint");
  d.take_any({"L2::64B", "L2::128B", "L2::256B"});
  d.need_ops(3, policy ? 5 : 4);
  if (in.ops[0].kind != Opnd::Kind::addr || in.ops[1].kind != Opnd::Kind::addr)
    d.error("cp.async needs [dst], [src] address operands");
  const Opnd& sz = in.ops[2];
  if (sz.kind != Opnd::Kind::imm || (sz.imm != 4 && sz.imm != 8 && sz.imm != 16))
    d.error("cp.async cp-size must be the constant 4, 8 or 16");
  if (cg && sz.imm != 16)
    d.error("cp.async.cg copies 16 bytes only");
  in.op = uint8_t(sz.imm);
  // The optional 4th operand: src-size (integer) or ignore-src (predicate); a 4th with .L2::cache_hint and
  // only 4 operands is the cache policy.
  const size_t extra = in.ops.size() - (policy ? 1 : 0);
  if (extra == 4) {
    const Opnd& o = in.ops[3];
    if (o.kind == Opnd::Kind::reg && o.rbits == 1)
      in.op2 = 2;
    else if (o.kind == Opnd::Kind::reg || o.kind == Opnd::Kind::imm)
      in.op2 = 1;
    else
      d.error("cp.async src-size must be an integer or ignore-src a predicate");
  }
  in.space = Space::shared;
  in.cost = 8; // a global read (the cost model's global access)
  in.fn = &cp_async;
  d.finish();
}

} // namespace isatune::emu::ptx

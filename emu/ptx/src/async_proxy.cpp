// The generic / async proxy shadow of shared memory (async_proxy.h): fence.proxy.async, the fence check of
// async-proxy reads, and the in-flight async reads that generic writes must not touch.
#include "async_proxy.h"

#include <cstdio>

#include "warp.h"

namespace isatune::emu::ptx {

namespace {

std::string thread_str(const Warp& w, unsigned lane) {
  return "(" + std::to_string(w.tid[lane][0]) + "," + std::to_string(w.tid[lane][1]) + "," +
         std::to_string(w.tid[lane][2]) + ")";
}

std::string inst_str(const Inst& in) {
  return "line " + std::to_string(in.line) + " '" + in.text + "'";
}

// Reports for `w` as if `in` were executing (reports name the instruction in w.cur).
void report_as(Warp& w, unsigned lane, const Inst& in, HazardKind kind, const std::string& message) {
  const Inst* saved = w.cur;
  w.cur = &in;
  report(w, lane, kind, message);
  w.cur = saved;
}

} // namespace

void proxy_fence_async(Warp& w, const Inst& in, uint32_t active) {
  if (in.op == 0)
    return; // .global: no shared-memory ordering
  Cta& c = *w.cta;
  auto& f = c.async_proxy.fence_time;
  if (f.size() < size_t(c.nwarps()) * 32)
    f.resize(size_t(c.nwarps()) * 32, 0);
  for_lanes(active, [&](unsigned l) { f[w.index * 32 + l] = c.time; });
}

bool check_async_proxy_read(Warp& w, unsigned lane, uint32_t off, uint32_t bytes, const Inst& reader) {
  Cta& c = *w.cta;
  if (c.shadow.empty() || size_t(off) + bytes > c.shadow.size())
    return false;
  const AsyncProxyState& ap = c.async_proxy;
  const uint32_t t = w.index * 32 + lane;
  for (uint32_t i = 0; i < bytes; ++i) {
    const ShadowByte& s = c.shadow[off + i];
    const uint32_t async_time = ap.async_write_time.empty() ? 0 : ap.async_write_time[off + i];
    for (const Access* a : {&s.write, &s.atom, &s.atom2}) {
      if (!a->time || a->time <= async_time) // never written, or the async proxy wrote it since
        continue;
      const uint32_t fence = a->thread < ap.fence_time.size() ? ap.fence_time[a->thread] : 0;
      // ordered by a barrier, or by an mbarrier the writer arrived on and the reader waited for (a warp-
      // specialised producer that writes a stage with st.shared, fences and arrives on its full barrier)
      if (fence > a->time && c.cluster->ordered(a->rank, a->thread, fence, c.rank, t))
        continue;
      const Warp& o = c.warps[a->thread / 32];
      char where[48];
      std::snprintf(where, sizeof where, "shared byte 0x%x", off + i);
      std::string msg = std::string("the async proxy reads ") + where +
                        ", last written through the generic " + "proxy by thread " +
                        thread_str(o, a->thread % 32) + " at " + inst_str(c.launch->prog->code[a->pc]) +
                        (fence > a->time ? ", whose fence.proxy.async after that write is not ordered before "
                                           "this read (no barrier between)"
                                         : " with no fence.proxy.async by that thread between the write and "
                                           "this read");
      report_as(w, lane, reader, HazardKind::proxy_fence, msg);
      return true;
    }
  }
  return false;
}

void note_async_proxy_write(Cta& c, uint32_t off, uint32_t bytes, uint32_t time) {
  auto& t = c.async_proxy.async_write_time;
  if (t.size() < c.shared.size())
    t.resize(c.shared.size(), 0);
  for (uint32_t i = 0; i < bytes && size_t(off) + i < t.size(); ++i) {
    t[off + i] = time;
    if (size_t(off) + i < c.shadow.size())
      c.shadow[off + i].written = true; // initialised, for the initialisation check
  }
}

void note_async_proxy_write(Warp& w, uint32_t off, uint32_t bytes) {
  note_async_proxy_write(*w.cta, off, bytes, w.cta->time);
}

void begin_async_read(Warp& w, uint32_t off, uint32_t bytes, const Inst& reader) {
  Cta& c = *w.cta;
  AsyncProxyState& ap = c.async_proxy;
  const size_t chunks = (c.shared.size() + 15) / 16;
  if (ap.readers.size() < chunks) {
    ap.readers.resize(chunks, 0);
    ap.reader_pc.resize(chunks, 0);
  }
  for (size_t k = off / 16; k < (size_t(off) + bytes + 15) / 16 && k < chunks; ++k) {
    ++ap.readers[k];
    ap.reader_pc[k] = reader.index;
    ++ap.in_flight;
  }
}

void end_async_read(Warp& w, uint32_t off, uint32_t bytes) {
  AsyncProxyState& ap = w.cta->async_proxy;
  for (size_t k = off / 16; k < (size_t(off) + bytes + 15) / 16 && k < ap.readers.size(); ++k)
    if (ap.readers[k]) {
      --ap.readers[k];
      --ap.in_flight;
    }
}

void check_async_pending_write(Warp& w, unsigned lane, uint32_t off, uint32_t bytes) {
  const AsyncProxyState& ap = w.cta->async_proxy;
  for (size_t k = off / 16; k < (size_t(off) + bytes + 15) / 16 && k < ap.readers.size(); ++k)
    if (ap.readers[k]) {
      const Inst& r = w.cta->launch->prog->code[ap.reader_pc[k]];
      char msg[64];
      std::snprintf(msg, sizeof msg, "writes shared byte 0x%x", uint32_t(std::max<size_t>(off, k * 16)));
      report(w, lane, HazardKind::async_pending,
             std::string(msg) + ", which the in-flight " + inst_str(r) +
                 " will still read (before the wait that completes it)");
      return;
    }
}

} // namespace isatune::emu::ptx

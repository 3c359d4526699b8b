#pragma once
// The generic / async proxy boundary for shared memory (PTX ISA #async-proxy; "Accessing the same memory
// location across multiple proxies needs a cross-proxy fence. For the async proxy, fence.proxy.async should
// be used"). wgmma operands (and, later, TMA stores and bulk copies) are read by the async proxy: a shared
// byte whose last write went through the generic proxy (st, atom, red, stmatrix, ...) may be read there only
// after the writing thread executed fence.proxy.async (no state space, .shared::cta or .shared::cluster)
// after the write, with that fence ordered before the read by the race checker's happens-before (the same
// thread, or a barrier both took part in after the fence). Bytes last written by the async proxy itself (TMA
// loads: call note_async_proxy_write) need no fence.
//
// Also here: the shared bytes an in-flight async operation will still read, so that a generic write to one of
// them before the operation completes is reported (async_pending).
//
// The shadow state lives in Cta::async_proxy, sized on first use and cleared per CTA. The checks read the
// race checker's shadow (Cta::shadow): with both race and initialisation checks off there is none and nothing
// is checked.
#include <cstdint>
#include <vector>

namespace isatune::emu::ptx {

struct Warp;
struct Inst;
struct Cta;

struct AsyncProxyState {
  std::vector<uint32_t> fence_time;       // per thread (linear id in the CTA): its last shared proxy fence
  std::vector<uint32_t> async_write_time; // per shared byte: the last write through the async proxy
  std::vector<uint16_t> readers;          // per 16-byte shared chunk: in-flight async reads of it
  std::vector<uint32_t> reader_pc;        // per chunk: the instruction (Program::code index) of the latest
  uint32_t in_flight = 0;                 // sum of `readers` (0: generic writes skip the check)
};

// fence.proxy.async{,.shared::cta,.shared::cluster,.global}: the handler. op 1: a shared-memory fence (no
// state space or a shared one), op 0: .global only (orders nothing in shared memory).
void proxy_fence_async(Warp& w, const Inst& in, uint32_t active);

// The async proxy reads `bytes` of shared memory at `shared_offset` for thread `lane` of `w` on behalf of
// `reader` (the async instruction, named in the report). Reports HazardKind::proxy_fence (once per call) when
// a byte's last generic write is not covered by a fence.proxy.async of its writer that is ordered before this
// read; returns whether it reported. Call it when the async operation is issued (its reads may happen at any
// time after that).
bool check_async_proxy_read(Warp& w, unsigned lane, uint32_t shared_offset, uint32_t bytes,
                            const Inst& reader);

// The async proxy wrote these bytes (TMA load, bulk copy into shared memory): async reads need no fence, and
// the bytes count as initialised. Call it after writing them (at the time the write lands), with no generic
// access() write for them in between.
void note_async_proxy_write(Warp& w, uint32_t shared_offset, uint32_t bytes);
// The same for the shared memory of CTA `t` (a TMA landing in another CTA of the cluster), at clock `time`.
void note_async_proxy_write(Cta& t, uint32_t shared_offset, uint32_t bytes, uint32_t time);

// An async operation (`reader`) will read these bytes until end_async_read: generic writes to them are
// reported meanwhile. Offsets and sizes are rounded out to 16-byte chunks; every begin needs its end.
void begin_async_read(Warp& w, uint32_t shared_offset, uint32_t bytes, const Inst& reader);
void end_async_read(Warp& w, uint32_t shared_offset, uint32_t bytes);

// Called by access() for a generic shared write while async reads are in flight.
void check_async_pending_write(Warp& w, unsigned lane, uint32_t shared_offset, uint32_t bytes);

} // namespace isatune::emu::ptx

#pragma once
// When the LDS write of an LDS-DMA load (buffer_load_dword{,x4} ... lds, global_load_lds_dword{,x4}) becomes
// visible, and the cross-wave LDS orderings that depend on it. The hardware writes the LDS when the data
// comes back from memory, some time between issue and the vmcnt decrement (CDNA3 ISA "Buffer load to LDS":
// counted by vmcnt; shared/notes/cdna.md section 5). So the issuing wave may rely on the data after the
// s_waitcnt vmcnt that retires the load, and another wave of the workgroup only after an s_barrier that
// follows that wait. The emulator models exactly that:
//   - at issue the data is read from memory and staged per LDS dword; the LDS is not written;
//   - the issuing wave sees it once the load retires (s_waitcnt vmcnt, or its s_endpgm);
//   - every wave sees it from the first barrier release after the retire (the LDS is written then);
//   - an access whose result depends on the timing between waves is reported: another wave reading or
//     writing a staged dword before that barrier (race, RAW/WAW), an LDS-DMA overwriting a dword another wave
//     read since the last barrier (race, WAR), the issuing wave reading before its wait (pending_read).
// A kernel that orders its LDS use by waits and barriers computes the same as with writes at issue; a racy
// one reads the old data, which is what hardware gives whenever the memory latency outlasts the other wave,
// and is reported either way. Only accesses that involve an LDS-DMA write are checked (ds_write/ds_read pairs
// between waves are not).
#include <cstdint>
#include <vector>

#include "inst.h"

namespace isatune::emu {

struct Wave;
struct Workgroup;

// One LDS-DMA instruction in flight: the dwords it stages, retired in issue order with the wave's vmcnt.
struct LdsDmaOp {
  uint64_t op_id = 0;
  std::vector<uint32_t> dwords;
};

// Per workgroup, per LDS dword.
struct LdsDmaShadow {
  bool active = false;             // the kernel has LDS-DMA instructions
  uint64_t gen = 1;                // barrier generation, increasing over the runner's workgroups
  std::vector<uint8_t> state;      // 0 none, 1 in flight, 2 retired (visible to its wave only)
  std::vector<uint8_t> wave;       // the issuing wave
  std::vector<uint32_t> value;     // the staged data
  std::vector<uint32_t> issue;     // instruction address of the LDS-DMA, for messages
  std::vector<uint64_t> read_gen;  // generation of the dword's last reads
  std::vector<uint32_t> read_mask; // waves (bit index mod 32) that read it in read_gen
  std::vector<uint32_t> landing;   // retired dwords, written to the LDS at the next barrier release
};

// Clears the shadow for a new workgroup (active: the kernel issues LDS-DMA).
void lds_dma_begin_workgroup(Workgroup& wg, bool active);
// Whether a program contains an LDS-DMA instruction.
bool has_lds_dma(const Program& prog);

// The handler of an LDS-DMA instruction: begin, stage each lane's data (p = the LDS bytes at addr, already
// bounds-checked), then issued() after push_pending.
LdsDmaOp& lds_dma_begin(Wave& w);
void lds_dma_stage(Wave& w, LdsDmaOp& op, uint64_t addr, uint8_t* p, const uint32_t* data, uint32_t bytes);
void lds_dma_issued(Wave& w);

// s_waitcnt retired the wave's LDS-DMA op_id; s_endpgm with LDS-DMA still in flight (the data still lands).
void lds_dma_retire(Wave& w, uint64_t op_id);
void lds_dma_end_wave(Wave& w);
// A barrier releases: the retired data lands in the LDS and a new generation starts.
void lds_dma_barrier(Workgroup& wg);

// An LDS read of `bytes` at addr by w, `out` holding what the LDS array has: patched with this wave's retired
// data, reported where it depends on timing. A write (or atomic) about to change the bytes.
void lds_dma_observe_read(Wave& w, uint32_t addr, uint32_t bytes, uint8_t* out);
void lds_dma_observe_write(Wave& w, uint32_t addr, uint32_t bytes);

} // namespace isatune::emu

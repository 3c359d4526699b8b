// Vector memory: global, flat (global addresses only), buffer (raw, V# with num_records) and LDS, including
// ds_swizzle and ds_bpermute. Results are written at issue and the destination marked pending (scoreboard).
#include <atomic>
#include <bit>
#include <string>

#include "buffer_resource.h"
#include "checks.h"
#include "executor.h"
#include "guest_access.h"
#include "lds_dma.h"
#include "ops.h"
#include "timing.h"
#include "util.h"

namespace isatune::emu {

namespace {

enum class Ext : uint8_t { none, u8, i8, u16, i16 };

uint32_t align_of(uint32_t bytes) { return bytes >= 4 ? 4 : bytes; }

// One lane's global access; returns false (and reports) when outside every allocation.
uint8_t* global_ptr(Wave& w, uint64_t addr, uint32_t bytes, bool store) {
  if (addr % align_of(bytes))
    w.ctx->report(w, HazardKind::unaligned, std::string(store ? "store" : "load") + " of " + std::to_string(bytes) +
                                                " bytes at " + hex_addr(addr) + " is not aligned");
  uint8_t* p = w.ctx->memory->find(addr, bytes);
  if (!p)
    w.ctx->report(w, HazardKind::out_of_bounds, std::string(store ? "store" : "load") + " of " +
                                                    std::to_string(bytes) + " bytes at " + hex_addr(addr) +
                                                    " is outside every allocation");
  note_global(w, addr, bytes, store); // timing model (timing.h)
  return p;
}

uint32_t extend(uint32_t raw, Ext e) {
  switch (e) {
  case Ext::u8: return raw & 0xff;
  case Ext::i8: return uint32_t(int32_t(int8_t(raw)));
  case Ext::u16: return raw & 0xffff;
  case Ext::i16: return uint32_t(int32_t(int16_t(raw)));
  default: return raw;
  }
}

// Per-lane address of a global/flat/buffer instruction. Buffer accesses go through the V#'s address and
// range check (buffer_resource.h), one dword at a time, since x2/x3/x4 are range-checked per dword.
struct Addresser {
  enum Kind { global_saddr, global_v64, buffer } kind;
  const Inst& in;
  Wave& w;
  int vaddr = -1;      // src index of the VGPR address
  uint64_t sbase = 0;  // SGPR base (global saddr)
  uint64_t offset = 0; // immediate (global; buffer: inst_offset)
  uint32_t soffset = 0;
  BufferResource rsrc;

  // Address of byte `4 * dword` of lane l's access; in_range false for a buffer dword that fails the check.
  uint64_t at(int l, uint32_t dword, bool& in_range) const {
    in_range = true;
    if (kind == global_saddr) return sbase + w.v[in.src[vaddr].reg][l] + offset + 4ull * dword;
    if (kind == global_v64) {
      const auto& r = in.src[vaddr];
      return (uint64_t(w.v[r.reg][l]) | uint64_t(w.v[r.reg + 1][l]) << 32) + offset + 4ull * dword;
    }
    uint32_t index = 0, voff = 0;
    if (in.buf_mode == 1) voff = w.v[in.src[vaddr].reg][l];
    if (in.buf_mode == 2) index = w.v[in.src[vaddr].reg][l];
    if (in.buf_mode == 3) index = w.v[in.src[vaddr].reg][l], voff = w.v[in.src[vaddr].reg + 1][l];
    BufferResource::Access a = rsrc.at(in.buf_mode & 2, index, uint64_t(voff) + offset, soffset, l, dword);
    in_range = a.in_range;
    return a.address;
  }
};

// Operand layouts (MCInst order, tied operands dropped):
//   GLOBAL_LOAD*_SADDR  [vdst | saddr, vaddr] imm: offset   GLOBAL_LOAD*  [vdst | vaddr64] imm: offset
//   GLOBAL_STORE*_SADDR [vaddr, vdata, saddr]               GLOBAL_STORE* [vaddr64, vdata]
//   BUFFER_LOAD*_OFFEN  [vdata | vaddr, srsrc, soffset] imm: offset   _OFFSET [vdata | srsrc, soffset]
//   BUFFER_STORE*       [vdata, (vaddr,) srsrc, soffset]
//   BUFFER_LOAD*_LDS    [(vaddr,) srsrc, soffset] imm: offset (no vdata: the data goes to LDS at M0)
Addresser make_addresser(Wave& w, const Inst& in, bool store) {
  Addresser a{Addresser::global_v64, in, w, -1, 0, 0, 0, {}};
  if (in.name.starts_with("BUFFER_")) {
    a.kind = Addresser::buffer;
    int first = store ? 1 : 0; // stores: vdata first
    int rs = first + (in.buf_mode ? 1 : 0);
    if (in.buf_mode) a.vaddr = first;
    if (in.src[rs].kind != OpKind::sgpr) unsupported(w, "buffer resource not in SGPRs");
    a.rsrc = BufferResource::from_words(&w.s[in.src[rs].reg]);
    a.soffset = sread(w, in.src[rs + 1]);
    a.offset = uint64_t(in.imm[0]);
    return a;
  }
  a.vaddr = 0;
  a.offset = uint64_t(int64_t(in.imm[0]));
  if (in.saddr) { // loads: [saddr, vaddr]; stores: [vaddr, vdata, saddr]
    a.kind = Addresser::global_saddr;
    a.vaddr = store ? 0 : 1;
    a.sbase = w.s64(in.src[store ? 2 : 0].reg);
  }
  return a;
}

// One lane's load of BYTES into data[]: buffer accesses dword by dword (out-of-range dwords read 0), others
// as one access.
template <uint32_t BYTES>
void load_lane(Wave& w, const Addresser& a, int l, uint32_t* data) {
  if (a.kind == Addresser::buffer) {
    for (uint32_t k = 0; k < (BYTES + 3) / 4; ++k) {
      bool ok;
      uint64_t addr = a.at(l, k, ok);
      const uint32_t n = BYTES < 4 ? BYTES : 4;
      if (ok)
        if (const uint8_t* p = global_ptr(w, addr, n, false)) load_guest(&data[k], p, n);
    }
    return;
  }
  bool ok;
  uint64_t addr = a.at(l, 0, ok);
  if (const uint8_t* p = global_ptr(w, addr, BYTES, false)) load_guest(data, p, BYTES);
}

template <uint32_t BYTES, Ext EXT>
void vmem_load(Wave& w, const Inst& in) {
  Addresser a = make_addresser(w, in, false);
  const Opnd& d = in.dst[0];
  if (d.kind != OpKind::vgpr) unsupported(w, "load destination not modelled");
  const uint32_t dwords = BYTES < 4 ? 1 : BYTES / 4;
  for_lanes(w.exec(), [&](int l) {
    uint32_t data[4] = {0, 0, 0, 0};
    load_lane<BYTES>(w, a, l, data);
    if (BYTES < 4) data[0] = extend(data[0], EXT);
    for (uint32_t i = 0; i < dwords; ++i) w.v[d.reg + i][l] = data[i];
  });
  bool flat = in.name.starts_with("FLAT_");
  push_pending(w, {d.unified(), uint16_t(dwords)}, flat ? 3 : 1, flat, memory_latency(Cat::vmem_load));
}

// *_load_short_d16 / _d16_hi (CDNA3 ISA MUBUF/FLAT): the 16 bits land in the low (d16) or high (d16_hi) half
// of vdst and the other half is kept (the tied vdst_in operand). LLVM assumes the unused half is not kept when
// SRAMECC is on (GCNSubtarget::d16PreservesUnusedBits); the ISA text keeps it, and so does the emulator.
template <bool HI>
void vmem_load_d16(Wave& w, const Inst& in) {
  Addresser a = make_addresser(w, in, false);
  const Opnd& d = in.dst[0];
  if (d.kind != OpKind::vgpr) unsupported(w, "load destination not modelled");
  for_lanes(w.exec(), [&](int l) {
    uint32_t data[4] = {0, 0, 0, 0};
    load_lane<2>(w, a, l, data);
    uint32_t& r = w.v[d.reg][l];
    r = HI ? (r & 0xffffu) | (data[0] & 0xffffu) << 16 : (r & 0xffff0000u) | (data[0] & 0xffffu);
  });
  bool flat = in.name.starts_with("FLAT_");
  push_pending(w, {d.unified(), 1}, flat ? 3 : 1, flat, memory_latency(Cat::vmem_load));
}

template <uint32_t BYTES, bool HI16>
void vmem_store(Wave& w, const Inst& in) {
  Addresser a = make_addresser(w, in, true);
  const bool buffer = a.kind == Addresser::buffer;
  const Opnd& data = buffer ? in.src[0] : in.src[1];
  if (data.kind != OpKind::vgpr) unsupported(w, "store data not modelled");
  for_lanes(w.exec(), [&](int l) {
    uint32_t v[4];
    for (uint32_t i = 0; i < (BYTES + 3) / 4; ++i) v[i] = w.v[data.reg + i][l];
    if (HI16) v[0] >>= 16;
    if (buffer) { // per dword: the dwords past the range are dropped
      for (uint32_t k = 0; k < (BYTES + 3) / 4; ++k) {
        bool ok;
        uint64_t addr = a.at(l, k, ok);
        const uint32_t n = BYTES < 4 ? BYTES : 4;
        if (ok)
          if (uint8_t* p = global_ptr(w, addr, n, true)) store_guest(p, &v[k], n);
      }
      return;
    }
    bool ok;
    uint64_t addr = a.at(l, 0, ok);
    if (uint8_t* p = global_ptr(w, addr, BYTES, true)) store_guest(p, v, BYTES);
  });
  bool flat = in.name.starts_with("FLAT_");
  push_pending(w, {}, flat ? 3 : 1, flat, memory_latency(Cat::vmem_store));
}

// Atomics without return on global and buffer memory (the forms AITER's split-K GEMMs and MoE kernels use):
// [vaddr, vdata, saddr] / [vaddr64, vdata] / buffer [vdata, vaddr, srsrc, soffset], like stores. Workgroups
// run on several host threads, so each lane's read-modify-write is one compare-and-swap loop on the host
// word.
// A lane outside the buffer range check is dropped (atomics are range-checked all or nothing; a dword each).
template <class F>
void vmem_atomic(Wave& w, const Inst& in, F f) {
  Addresser a = make_addresser(w, in, true);
  const Opnd& data = a.kind == Addresser::buffer ? in.src[0] : in.src[1];
  if (data.kind != OpKind::vgpr) unsupported(w, "atomic data not modelled");
  for_lanes(w.exec(), [&](int l) {
    bool ok;
    uint64_t addr = a.at(l, 0, ok);
    if (!ok) return;
    uint8_t* p = global_ptr(w, addr, 4, true);
    if (!p || addr % 4) return;
    std::atomic_ref<uint32_t> word(*reinterpret_cast<uint32_t*>(p));
    const uint32_t v = w.v[data.reg][l];
    uint32_t old = word.load(std::memory_order_relaxed);
    while (!word.compare_exchange_weak(old, f(old, v), std::memory_order_relaxed)) {
    }
  });
  push_pending(w, {}, 1, false, memory_latency(Cat::vmem_store));
}

// global_atomic_cmpswap_x2 with return (CDNA3 ISA FLAT): [vdst(2) | vaddr, vdata(4), (saddr)]; DATA[0:1] is
// the new value, DATA[2:3] the compare value: old = MEM; MEM = old == cmp ? src : old; vdst = old.
void global_cmpswap_x2_rtn(Wave& w, const Inst& in) {
  Addresser a = make_addresser(w, in, true);
  const Opnd& data = in.src[1];
  const Opnd& d = in.dst[0];
  if (data.kind != OpKind::vgpr || d.kind != OpKind::vgpr) unsupported(w, "atomic operands not modelled");
  const uint64_t exec = w.exec();
  uint64_t olds[64] = {};
  for_lanes(exec, [&](int l) {
    bool ok;
    uint64_t addr = a.at(l, 0, ok);
    uint8_t* p = global_ptr(w, addr, 8, true);
    if (addr % 8) {
      w.ctx->report(w, HazardKind::unaligned, "64-bit atomic at " + hex_addr(addr) + " is not 8-byte aligned");
      return;
    }
    if (!p) return;
    std::atomic_ref<uint64_t> word(*reinterpret_cast<uint64_t*>(p));
    const uint64_t src = uint64_t(w.v[data.reg][l]) | uint64_t(w.v[data.reg + 1][l]) << 32;
    const uint64_t cmp = uint64_t(w.v[data.reg + 2][l]) | uint64_t(w.v[data.reg + 3][l]) << 32;
    uint64_t old = word.load(std::memory_order_relaxed);
    while (!word.compare_exchange_weak(old, old == cmp ? src : old, std::memory_order_relaxed)) {
    }
    olds[l] = old;
  });
  // Written after every lane read its data: vdst may overlap vdata.
  for_lanes(exec, [&](int l) {
    w.v[d.reg][l] = uint32_t(olds[l]);
    w.v[d.reg + 1][l] = uint32_t(olds[l] >> 32);
  });
  push_pending(w, {d.unified(), 2}, 1, false, memory_latency(Cat::vmem_load));
}

uint32_t add_u32(uint32_t a, uint32_t b) { return a + b; }
uint32_t add_f32(uint32_t a, uint32_t b) { return as_u(as_f(a) + as_f(b)); }
// Packed 16-bit float adds, each half rounded to nearest even.
uint32_t pk_add_bf16(uint32_t a, uint32_t b) {
  uint32_t lo = f32_to_bf16(bf16_to_f32(uint16_t(a)) + bf16_to_f32(uint16_t(b)));
  uint32_t hi = f32_to_bf16(bf16_to_f32(uint16_t(a >> 16)) + bf16_to_f32(uint16_t(b >> 16)));
  return lo | hi << 16;
}
uint32_t pk_add_f16(uint32_t a, uint32_t b) {
  uint32_t lo = f32_to_f16(f16_to_f32(uint16_t(a)) + f16_to_f32(uint16_t(b)));
  uint32_t hi = f32_to_f16(f16_to_f32(uint16_t(a >> 16)) + f16_to_f32(uint16_t(b >> 16)));
  return lo | hi << 16;
}

// LDS.
uint8_t* lds_ptr(Wave& w, uint64_t addr, uint32_t bytes, bool store) {
  uint32_t align = bytes == 12 ? 4 : bytes > 16 ? 16 : bytes;
  if (addr % align)
    w.ctx->report(w, HazardKind::unaligned, std::string("LDS ") + (store ? "write" : "read") + " of " +
                                                std::to_string(bytes) + " bytes at " + hex_addr(addr) +
                                                " is not aligned");
  if (addr + bytes > w.wg->lds_size) {
    w.ctx->report(w, HazardKind::out_of_bounds, std::string("LDS ") + (store ? "write" : "read") + " of " +
                                                    std::to_string(bytes) + " bytes at " + hex_addr(addr) +
                                                    " is past the workgroup's " + std::to_string(w.wg->lds_size) +
                                                    " bytes");
    return nullptr;
  }
  note_lds(w, addr, bytes); // timing model (timing.h)
  return w.wg->lds.data() + addr;
}

// LDS-DMA: buffer_load_dword{,x4} ... lds and global_load_lds_dword{,x4} (x4: gfx950) load memory straight
// into LDS, no VGPR result, counted by vmcnt. LDS address = M0 + inst_offset + lane * size, size 4 for a
// dword and 16 for x4 (CDNA3 ISA "Buffer load to LDS": LDS_ADDR = LDSbase + LDS_offset(M0) + inst_offset +
// TID * 4; shared/notes/cdna.md section 3). Lanes whose source fails the buffer range check write zeros (the
// loaded value of an out-of-range dword, CDNA3 ISA "Range checking"). The LDS write lands when the load retires
// (this wave) and at the next barrier (the others): lds_dma.h.
template <uint32_t BYTES>
void lds_dma(Wave& w, const Inst& in) {
  Addresser a = make_addresser(w, in, false);
  const uint64_t base = uint64_t(w.s[kM0]) + uint64_t(uint32_t(in.imm[0]));
  LdsDmaOp& op = lds_dma_begin(w);
  for_lanes(w.exec(), [&](int l) {
    uint32_t data[4] = {0, 0, 0, 0};
    load_lane<BYTES>(w, a, l, data);
    const uint64_t at = base + uint64_t(l) * BYTES;
    if (uint8_t* p = lds_ptr(w, at, BYTES, true)) lds_dma_stage(w, op, at, p, data, BYTES);
  });
  push_pending(w, {}, 1, false, memory_latency(Cat::vmem_load));
  lds_dma_issued(w);
}

// An LDS read as this wave sees it (LDS-DMA data in flight: lds_dma.h); false (out unchanged) out of bounds.
bool lds_load(Wave& w, uint64_t addr, uint32_t bytes, void* out) {
  const uint8_t* p = lds_ptr(w, addr, bytes, false);
  if (!p) return false;
  std::memcpy(out, p, bytes);
  if (w.wg->dma.active) lds_dma_observe_read(w, uint32_t(addr), bytes, static_cast<uint8_t*>(out));
  return true;
}
// The LDS bytes an ordinary write (or atomic) is about to change; null out of bounds.
uint8_t* lds_store_ptr(Wave& w, uint64_t addr, uint32_t bytes) {
  uint8_t* p = lds_ptr(w, addr, bytes, true);
  if (p && w.wg->dma.active) lds_dma_observe_write(w, uint32_t(addr), bytes);
  return p;
}

void lds_pending(Wave& w, const Inst& in, uint16_t dwords) {
  RegRange r = in.ndst ? RegRange{in.dst[0].unified(), dwords} : RegRange{};
  push_pending(w, r, 2, false, memory_latency(Cat::ds));
}

// ds_read_bN / ds_read_u8.. : [vdst | addr] imm: offset
template <uint32_t BYTES, Ext EXT>
void ds_read(Wave& w, const Inst& in) {
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const Opnd& d = in.dst[0];
  const uint32_t dwords = BYTES < 4 ? 1 : BYTES / 4;
  for_lanes(w.exec(), [&](int l) {
    uint32_t data[4] = {0, 0, 0, 0};
    lds_load(w, uint64_t(addr[l]) + uint64_t(in.imm[0]), BYTES, data);
    if (BYTES < 4) data[0] = extend(data[0], EXT);
    for (uint32_t i = 0; i < dwords; ++i) w.v[d.reg + i][l] = data[i];
  });
  lds_pending(w, in, uint16_t(dwords));
}
// gfx950 ds_read_b64_tr_b{16,8,4} (CDNA4 ISA 11.4, "MFMA Transpose Load from LDS"): each lane reads 64 bits, E
// = 64/BITS elements, and every 16-lane group transposes them: the 16 lanes hold E rows (K) x 16/E blocks of E
// columns, lane s = (16/E)*row + block, and lane i gets column i of all E rows, row r as element r (packed low
// first). So element e of lane i comes from lane (16/E)*e + i/E, element i mod E. The lane order of the blocks
// ("two interleaved 8x8 byte transposes" for b8, as AMD's descriptions of the b8 form put it) is the one that makes
// AITER's gfx950 fmha forward kernel (V through ds_read_b64_tr_b16) match its float64 reference; the blocked order
// fails it. EXEC must be all ones (the ISA leaves anything else undefined): the launch stops otherwise.
template <uint32_t BITS>
void ds_read_tr(Wave& w, const Inst& in) {
  if (w.exec() != ~0ull) unsupported(w, "ds_read_b64_tr_b* with EXEC not all ones (undefined in the CDNA4 ISA)");
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const Opnd& d = in.dst[0];
  constexpr int E = 64 / int(BITS), blocks = 16 / E;
  constexpr uint64_t mask = (1ull << BITS) - 1;
  uint64_t src[64], out[64];
  for (int l = 0; l < 64; ++l) {
    src[l] = 0;
    lds_load(w, uint64_t(addr[l]) + uint64_t(in.imm[0]), 8, &src[l]);
  }
  for (int l = 0; l < 64; ++l) {
    const int g = l & ~15, i = l & 15;
    out[l] = 0;
    for (int e = 0; e < E; ++e)
      out[l] |= ((src[g + blocks * e + i / E] >> (BITS * uint32_t(i % E))) & mask) << (BITS * uint32_t(e));
  }
  for (int l = 0; l < 64; ++l) {
    w.v[d.reg][l] = uint32_t(out[l]);
    w.v[d.reg + 1][l] = uint32_t(out[l] >> 32);
  }
  lds_pending(w, in, 2);
}
// ds_write_bN: [addr, data] imm: offset
template <uint32_t BYTES>
void ds_write(Wave& w, const Inst& in) {
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const Opnd& data = in.src[1];
  for_lanes(w.exec(), [&](int l) {
    uint32_t v[4];
    for (uint32_t i = 0; i < (BYTES + 3) / 4; ++i) v[i] = w.v[data.reg + i][l];
    if (uint8_t* p = lds_store_ptr(w, uint64_t(addr[l]) + uint64_t(in.imm[0]), BYTES)) std::memcpy(p, v, BYTES);
  });
  lds_pending(w, in, 0);
}
// ds_read2_bN: [vdst | addr] imm: offset0, offset1 (in elements; ST64: in 64 elements)
template <uint32_t BYTES, bool ST64>
void ds_read2(Wave& w, const Inst& in) {
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const Opnd& d = in.dst[0];
  const uint32_t unit = BYTES * (ST64 ? 64 : 1), dw = BYTES / 4;
  for_lanes(w.exec(), [&](int l) {
    for (int k = 0; k < 2; ++k) {
      uint32_t data[2] = {0, 0};
      uint64_t at = uint64_t(addr[l]) + uint64_t(in.imm[k] & 0xff) * unit;
      lds_load(w, at, BYTES, data);
      for (uint32_t i = 0; i < dw; ++i) w.v[d.reg + k * dw + i][l] = data[i];
    }
  });
  lds_pending(w, in, uint16_t(2 * dw));
}
// ds_write2_bN: [addr, data0, data1] imm: offset0, offset1
template <uint32_t BYTES, bool ST64>
void ds_write2(Wave& w, const Inst& in) {
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const uint32_t unit = BYTES * (ST64 ? 64 : 1);
  for_lanes(w.exec(), [&](int l) {
    for (int k = 0; k < 2; ++k) {
      uint32_t v[2] = {w.v[in.src[1 + k].reg][l], BYTES == 8 ? w.v[in.src[1 + k].reg + 1][l] : 0};
      uint64_t at = uint64_t(addr[l]) + uint64_t(in.imm[k] & 0xff) * unit;
      if (uint8_t* p = lds_store_ptr(w, at, BYTES)) std::memcpy(p, v, BYTES);
    }
  });
  lds_pending(w, in, 0);
}
// LDS atomics without return: [addr, data]; with return: [vdst | addr, data].
template <class F>
void ds_atomic(Wave& w, const Inst& in, F f) {
  const bool rtn = in.ndst > 0;
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const uint32_t* data = w.v[in.src[1].reg].data();
  for_lanes(w.exec(), [&](int l) {
    if (uint8_t* p = lds_store_ptr(w, uint64_t(addr[l]) + uint64_t(in.imm[0]), 4)) {
      uint32_t old;
      std::memcpy(&old, p, 4);
      uint32_t nv = f(old, data[l]);
      std::memcpy(p, &nv, 4);
      if (rtn) w.v[in.dst[0].reg][l] = old;
    }
  });
  lds_pending(w, in, 1);
}

void ds_swizzle(Wave& w, const Inst& in) {
  const uint32_t off = uint32_t(in.imm[0]);
  const uint32_t* src = w.v[in.src[0].reg].data();
  uint32_t out[64];
  const uint64_t exec = w.exec();
  for (int l = 0; l < 64; ++l) {
    int s;
    if (off & 0x8000) {
      s = (l & ~3) + int((off >> (2 * (l & 3))) & 3);
    } else {
      int and_mask = int(off & 0x1f), or_mask = int((off >> 5) & 0x1f), xor_mask = int((off >> 10) & 0x1f);
      s = (l & ~31) | ((((l & 31) & and_mask) | or_mask) ^ xor_mask);
    }
    out[l] = ((exec >> s) & 1) ? src[s] : 0;
  }
  uint32_t* d = w.v[in.dst[0].reg].data();
  for_lanes(exec, [&](int l) { d[l] = out[l]; });
  lds_pending(w, in, 1);
}

// ds_bpermute_b32 vdst, vaddr, vdata: lane l reads vdata of lane (vaddr[l] + offset) / 4.
// ds_permute_b32: lane l writes its vdata to lane (vaddr[l] + offset) / 4.
template <bool BACKWARD>
void ds_permute(Wave& w, const Inst& in) {
  const uint32_t* addr = w.v[in.src[0].reg].data();
  const uint32_t* data = w.v[in.src[1].reg].data();
  const uint64_t exec = w.exec();
  uint32_t out[64] = {};
  for_lanes(exec, [&](int l) {
    int t = int(((addr[l] + uint32_t(in.imm[0])) >> 2) & 63);
    if (BACKWARD) out[l] = ((exec >> t) & 1) ? data[t] : 0;
    else out[t] = data[l];
  });
  uint32_t* d = w.v[in.dst[0].reg].data();
  for_lanes(exec, [&](int l) { d[l] = out[l]; });
  lds_pending(w, in, 1);
}

} // namespace

void register_memory_ops() {
  for (const char* p : {"GLOBAL_", "FLAT_", "BUFFER_"}) {
    std::string g = p;
    Cat ld = g == "FLAT_" ? Cat::flat_load : Cat::vmem_load, st = g == "FLAT_" ? Cat::flat_store : Cat::vmem_store;
    add_op(g + "LOAD_UBYTE", vmem_load<1, Ext::u8>, ld);
    add_op(g + "LOAD_SBYTE", vmem_load<1, Ext::i8>, ld);
    add_op(g + "LOAD_USHORT", vmem_load<2, Ext::u16>, ld);
    add_op(g + "LOAD_SSHORT", vmem_load<2, Ext::i16>, ld);
    add_op(g + "LOAD_DWORD", vmem_load<4, Ext::none>, ld);
    add_op(g + "LOAD_DWORDX2", vmem_load<8, Ext::none>, ld);
    add_op(g + "LOAD_DWORDX3", vmem_load<12, Ext::none>, ld);
    add_op(g + "LOAD_DWORDX4", vmem_load<16, Ext::none>, ld);
    add_op(g + "LOAD_SHORT_D16", vmem_load_d16<false>, ld);
    add_op(g + "LOAD_SHORT_D16_HI", vmem_load_d16<true>, ld);
    add_op(g + "STORE_BYTE", vmem_store<1, false>, st);
    add_op(g + "STORE_SHORT", vmem_store<2, false>, st);
    add_op(g + "STORE_SHORT_D16_HI", vmem_store<2, true>, st);
    add_op(g + "STORE_DWORD", vmem_store<4, false>, st);
    add_op(g + "STORE_DWORDX2", vmem_store<8, false>, st);
    add_op(g + "STORE_DWORDX3", vmem_store<12, false>, st);
    add_op(g + "STORE_DWORDX4", vmem_store<16, false>, st);
  }
  for (const char* p : {"GLOBAL_", "BUFFER_"}) {
    std::string g = p;
    add_op(g + "ATOMIC_ADD_F32", [](Wave& w, const Inst& in) { vmem_atomic(w, in, add_f32); },
           Cat::vmem_store);
    add_op(g + "ATOMIC_PK_ADD_BF16", [](Wave& w, const Inst& in) { vmem_atomic(w, in, pk_add_bf16); },
           Cat::vmem_store);
    add_op(g + "ATOMIC_PK_ADD_F16", [](Wave& w, const Inst& in) { vmem_atomic(w, in, pk_add_f16); },
           Cat::vmem_store);
    add_op(g + "ATOMIC_ADD", [](Wave& w, const Inst& in) { vmem_atomic(w, in, add_u32); }, Cat::vmem_store);
  }
  add_op("GLOBAL_ATOMIC_CMPSWAP_X2_RTN", global_cmpswap_x2_rtn, Cat::vmem_load);
  add_op("GLOBAL_ATOMIC_CMPSWAP_X2_SADDR_RTN", global_cmpswap_x2_rtn, Cat::vmem_load);
  add_op("BUFFER_LOAD_DWORD_LDS", lds_dma<4>, Cat::vmem_load);
  add_op("BUFFER_LOAD_DWORDX4_LDS", lds_dma<16>, Cat::vmem_load);
  add_op("GLOBAL_LOAD_LDS_DWORD", lds_dma<4>, Cat::vmem_load);
  add_op("GLOBAL_LOAD_LDS_DWORDX4", lds_dma<16>, Cat::vmem_load);
  add_op("DS_READ_U8", ds_read<1, Ext::u8>, Cat::ds);
  add_op("DS_READ_I8", ds_read<1, Ext::i8>, Cat::ds);
  add_op("DS_READ_U16", ds_read<2, Ext::u16>, Cat::ds);
  add_op("DS_READ_I16", ds_read<2, Ext::i16>, Cat::ds);
  add_op("DS_READ_B32", ds_read<4, Ext::none>, Cat::ds);
  add_op("DS_READ_B64", ds_read<8, Ext::none>, Cat::ds);
  add_op("DS_READ_B96", ds_read<12, Ext::none>, Cat::ds);
  add_op("DS_READ_B128", ds_read<16, Ext::none>, Cat::ds);
  add_op("DS_READ_B64_TR_B16", ds_read_tr<16>, Cat::ds);
  add_op("DS_READ_B64_TR_B8", ds_read_tr<8>, Cat::ds);
  add_op("DS_READ_B64_TR_B4", ds_read_tr<4>, Cat::ds);
  add_op("DS_WRITE_B8", ds_write<1>, Cat::ds);
  add_op("DS_WRITE_B16", ds_write<2>, Cat::ds);
  add_op("DS_WRITE_B32", ds_write<4>, Cat::ds);
  add_op("DS_WRITE_B64", ds_write<8>, Cat::ds);
  add_op("DS_WRITE_B96", ds_write<12>, Cat::ds);
  add_op("DS_WRITE_B128", ds_write<16>, Cat::ds);
  add_op("DS_READ2_B32", ds_read2<4, false>, Cat::ds);
  add_op("DS_READ2_B64", ds_read2<8, false>, Cat::ds);
  add_op("DS_READ2ST64_B32", ds_read2<4, true>, Cat::ds);
  add_op("DS_READ2ST64_B64", ds_read2<8, true>, Cat::ds);
  add_op("DS_WRITE2_B32", ds_write2<4, false>, Cat::ds);
  add_op("DS_WRITE2_B64", ds_write2<8, false>, Cat::ds);
  add_op("DS_WRITE2ST64_B32", ds_write2<4, true>, Cat::ds);
  add_op("DS_WRITE2ST64_B64", ds_write2<8, true>, Cat::ds);
  add_op("DS_ADD_U32", [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a + b; }); }, Cat::ds);
  add_op("DS_ADD_RTN_U32", [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a + b; }); }, Cat::ds);
  add_op("DS_ADD_F32", [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return as_u(as_f(a) + as_f(b)); }); }, Cat::ds);
  add_op("DS_MAX_U32", [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a > b ? a : b; }); }, Cat::ds);
  add_op("DS_MIN_U32", [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a < b ? a : b; }); }, Cat::ds);
  // Bitwise LDS atomics (CDNA3 ISA DS): MEM = old OP DATA, the _RTN forms return old.
  for (const char* n : {"DS_OR_B32", "DS_OR_RTN_B32"})
    add_op(n, [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a | b; }); }, Cat::ds);
  for (const char* n : {"DS_AND_B32", "DS_AND_RTN_B32"})
    add_op(n, [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a & b; }); }, Cat::ds);
  for (const char* n : {"DS_XOR_B32", "DS_XOR_RTN_B32"})
    add_op(n, [](Wave& w, const Inst& in) { ds_atomic(w, in, [](uint32_t a, uint32_t b) { return a ^ b; }); }, Cat::ds);
  add_op("DS_SWIZZLE_B32", ds_swizzle, Cat::ds);
  add_op("DS_BPERMUTE_B32", ds_permute<true>, Cat::ds);
  add_op("DS_PERMUTE_B32", ds_permute<false>, Cat::ds);
}

} // namespace isatune::emu

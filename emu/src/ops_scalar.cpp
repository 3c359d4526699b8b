// Scalar ALU, control flow, s_waitcnt, s_barrier, scalar memory.
#include <atomic>
#include <bit>
#include <cstring>
#include <string>

#include "checks.h"
#include "executor.h"
#include "guest_access.h"
#include "ops.h"
#include "util.h"

namespace isatune::emu {

namespace {

// SOP2 32-bit: d = f(a, b, scc&) ; f returns the value and sets scc where the instruction does.
template <class F>
void sop2(Wave& w, const Inst& in, F f) {
  uint32_t a = sread(w, in.src[0]), b = sread(w, in.src[1]);
  swrite(w, in.dst[0], f(a, b, w.scc));
}
template <class F>
void sop2_64(Wave& w, const Inst& in, F f) {
  uint64_t a = sread64(w, in.src[0]), b = sread64(w, in.src[1]);
  swrite64(w, in.dst[0], f(a, b, w.scc));
}
template <class F>
void sopc(Wave& w, const Inst& in, F f) {
  w.scc = f(sread(w, in.src[0]), sread(w, in.src[1])) ? 1 : 0;
}
// SOPK compare: src[0] register against imm[0].
template <class F>
void sopk_cmp(Wave& w, const Inst& in, F f) {
  w.scc = f(sread(w, in.src[0]), uint32_t(in.imm[0])) ? 1 : 0;
}

void jump(Wave& w, const Inst& in) {
  if (in.target < 0) unsupported(w, "branch target outside the kernel");
  w.pc = uint32_t(in.target);
}

void saveexec(Wave& w, const Inst& in, uint64_t (*f)(uint64_t s, uint64_t exec)) {
  uint64_t s = sread64(w, in.src[0]);
  uint64_t old = w.exec();
  uint64_t e = f(s, old);
  swrite64(w, in.dst[0], old);
  w.set_exec(e);
  w.scc = e != 0;
}

void smem_load(Wave& w, const Inst& in) {
  // S_LOAD: [sdst, sbase(2), offset imm | soffset reg (, imm)]; S_BUFFER_LOAD: [sdst, sbase(4), ...]
  const Opnd& d = in.dst[0];
  const bool buffer = in.name.starts_with("S_BUFFER");
  uint64_t base = buffer ? (uint64_t(w.s[in.src[0].reg]) | (uint64_t(w.s[in.src[0].reg + 1] & 0xffff) << 32))
                         : w.s64(in.src[0].reg);
  uint64_t off = 0;
  for (int i = 1; i < in.nsrc; ++i) off += sread(w, in.src[i]);
  if (in.nimm >= 1 && in.nsrc < 2) off += uint64_t(int64_t(in.imm[0]));
  else if (in.nimm >= 2) off += uint64_t(int64_t(in.imm[0]));
  uint64_t bytes = uint64_t(d.width) * 4;
  uint64_t addr = base + off;
  if (addr & 3) w.ctx->report(w, HazardKind::unaligned, "scalar load address " + hex_addr(addr) + " is not 4-byte aligned");
  addr &= ~3ull;
  uint32_t num_records = buffer ? w.s[in.src[0].reg + 2] : 0;
  for (uint32_t i = 0; i < d.width; ++i) {
    uint32_t value = 0;
    if (buffer && off + 4 * i >= num_records) {
      value = 0; // out of range of the buffer descriptor: reads 0
    } else if (const uint8_t* p = w.ctx->memory->find(addr + 4 * i, 4)) {
      value = uint32_t(load_bits(p, 4));
    } else {
      w.ctx->report(w, HazardKind::out_of_bounds,
                    "scalar load of " + std::to_string(bytes) + " bytes at " + hex_addr(addr) + " outside every allocation");
      break;
    }
    w.s[d.reg + i] = value;
  }
  push_pending(w, {d.reg, d.width}, 2, true, memory_latency(Cat::smem));
}

// Scalar memory writes: s_store_dword{,x2,x4} and s_atomic_inc/dec (CDNA3 ISA, SMEM). Operands:
//   store / atomic without return [sdata, sbase(2), (soffset)] imm: offset, cpol
//   atomic with return (_RTN)     [sdst | sbase(2), (soffset)], sdata tied to sdst (read from sdst)
// The scalar cache is write-back (the kernel flushes it with s_dcache_wb); the emulator writes memory at issue,
// which is what a flush after the store sees. The operation is counted by lgkmcnt like a scalar load, out of
// order; a returned value lands in sdst at issue and is pending until the wait.
// The immediates are [offset, cpol] with an immediate offset and [cpol] alone with only an SGPR soffset (as for
// the loads above): s_store_dword s52, s[40:41], s62 glc (AITER's split-K semaphore) has no offset, its 1 is glc.
uint64_t smem_address(Wave& w, const Inst& in, int base_src) {
  uint64_t addr = w.s64(in.src[base_src].reg);
  const bool soffset = in.nsrc > base_src + 1;
  for (int i = base_src + 1; i < in.nsrc; ++i) addr += sread(w, in.src[i]);
  if (in.nimm >= 2 || (in.nimm == 1 && !soffset)) addr += uint64_t(int64_t(in.imm[0]));
  if (addr & 3)
    w.ctx->report(w, HazardKind::unaligned, "scalar store address " + hex_addr(addr) + " is not 4-byte aligned");
  return addr & ~3ull;
}

uint8_t* smem_ptr(Wave& w, uint64_t addr, uint32_t bytes) {
  uint8_t* p = w.ctx->memory->find(addr, bytes);
  if (!p)
    w.ctx->report(w, HazardKind::out_of_bounds, "scalar write of " + std::to_string(bytes) + " bytes at " +
                                                    hex_addr(addr) + " outside every allocation");
  return p;
}

void smem_store(Wave& w, const Inst& in) {
  const Opnd& data = in.src[0];
  if (data.kind != OpKind::sgpr) unsupported(w, "scalar store data not modelled");
  const uint64_t addr = smem_address(w, in, 1);
  if (uint8_t* p = smem_ptr(w, addr, 4u * data.width)) store_guest(p, &w.s[data.reg], 4u * data.width);
  push_pending(w, {}, 2, true, memory_latency(Cat::smem));
}

// S_ATOMIC_INC: MEM = (old >= DATA) ? 0 : old + 1; S_ATOMIC_DEC: MEM = (old == 0 || old > DATA) ? DATA : old - 1;
// RETURN = old (CDNA3 ISA, the same rule as the buffer/global atomic inc/dec).
template <bool INC>
void smem_atomic_incdec(Wave& w, const Inst& in) {
  const bool rtn = in.ndst > 0;
  const Opnd& data = rtn ? in.dst[0] : in.src[0];
  if (data.kind != OpKind::sgpr) unsupported(w, "scalar atomic data not modelled");
  const uint64_t addr = smem_address(w, in, rtn ? 0 : 1);
  const uint32_t v = w.s[data.reg];
  if (uint8_t* p = smem_ptr(w, addr, 4)) {
    std::atomic_ref<uint32_t> word(*reinterpret_cast<uint32_t*>(p));
    uint32_t old = word.load(std::memory_order_relaxed), nv;
    do {
      nv = INC ? (old >= v ? 0 : old + 1) : ((old == 0 || old > v) ? v : old - 1);
    } while (!word.compare_exchange_weak(old, nv, std::memory_order_relaxed));
    if (rtn) w.s[data.reg] = old;
  }
  push_pending(w, rtn ? RegRange{data.reg, 1} : RegRange{}, 2, true, memory_latency(Cat::smem));
}

} // namespace

void register_scalar_ops() {
#define OP(name, cat, ...) add_op(name, []([[maybe_unused]] Wave& w, [[maybe_unused]] const Inst& in) __VA_ARGS__, Cat::cat)
  // Moves and bit logic.
  OP("S_MOV_B32", salu, { swrite(w, in.dst[0], sread(w, in.src[0])); });
  OP("S_MOV_B64", salu, { swrite64(w, in.dst[0], sread64(w, in.src[0])); });
  OP("S_MOVK_I32", salu, { swrite(w, in.dst[0], uint32_t(int32_t(int16_t(in.imm[0])))); });
  OP("S_CMOVK_I32", salu, { if (w.scc) swrite(w, in.dst[0], uint32_t(int32_t(int16_t(in.imm[0])))); });
  OP("S_CMOV_B32", salu, { if (w.scc) swrite(w, in.dst[0], sread(w, in.src[0])); });
  OP("S_CMOV_B64", salu, { if (w.scc) swrite64(w, in.dst[0], sread64(w, in.src[0])); });
  OP("S_NOT_B32", salu, { uint32_t r = ~sread(w, in.src[0]); w.scc = r != 0; swrite(w, in.dst[0], r); });
  OP("S_NOT_B64", salu, { uint64_t r = ~sread64(w, in.src[0]); w.scc = r != 0; swrite64(w, in.dst[0], r); });
  OP("S_BREV_B32", salu, { uint32_t x = sread(w, in.src[0]), r = 0; for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1) << (31 - i); swrite(w, in.dst[0], r); });
  OP("S_BCNT1_I32_B32", salu, { uint32_t r = std::popcount(sread(w, in.src[0])); w.scc = r != 0; swrite(w, in.dst[0], r); });
  OP("S_BCNT1_I32_B64", salu, { uint32_t r = std::popcount(sread64(w, in.src[0])); w.scc = r != 0; swrite(w, in.dst[0], r); });
  OP("S_FF1_I32_B32", salu, { uint32_t x = sread(w, in.src[0]); swrite(w, in.dst[0], x ? std::countr_zero(x) : ~0u); });
  OP("S_FF1_I32_B64", salu, { uint64_t x = sread64(w, in.src[0]); swrite(w, in.dst[0], x ? std::countr_zero(x) : ~0u); });
  OP("S_ABS_I32", salu, { int32_t x = int32_t(sread(w, in.src[0])); uint32_t r = uint32_t(x < 0 ? -int64_t(x) : x); w.scc = r != 0; swrite(w, in.dst[0], r); });
  OP("S_SEXT_I32_I8", salu, { swrite(w, in.dst[0], uint32_t(int32_t(int8_t(sread(w, in.src[0]))))); });
  OP("S_SEXT_I32_I16", salu, { swrite(w, in.dst[0], uint32_t(int32_t(int16_t(sread(w, in.src[0]))))); });
#define LOGIC(N, expr)                                                                                                 \
  OP("S_" N "_B32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint32_t r = expr; scc = r != 0; return r; }); }); \
  OP("S_" N "_B64", salu, { sop2_64(w, in, [](uint64_t a, uint64_t b, uint32_t& scc) { uint64_t r = expr; scc = r != 0; return r; }); })
  LOGIC("AND", a & b);
  LOGIC("OR", a | b);
  LOGIC("XOR", a ^ b);
  LOGIC("ANDN2", a & ~b);
  LOGIC("ORN2", a | ~b);
  LOGIC("NAND", ~(a & b));
  LOGIC("NOR", ~(a | b));
  LOGIC("XNOR", ~(a ^ b));
#undef LOGIC
  // Arithmetic.
  OP("S_ADD_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint64_t r = uint64_t(a) + b; scc = r >> 32; return uint32_t(r); }); });
  OP("S_ADDC_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint64_t r = uint64_t(a) + b + scc; scc = r >> 32; return uint32_t(r); }); });
  OP("S_SUB_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { scc = b > a; return a - b; }); });
  OP("S_SUBB_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint64_t s = uint64_t(b) + scc; uint32_t r = uint32_t(a - s); scc = s > a; return r; }); });
  OP("S_ADD_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { int64_t r = int64_t(int32_t(a)) + int32_t(b); scc = r != int32_t(r); return uint32_t(r); }); });
  OP("S_SUB_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { int64_t r = int64_t(int32_t(a)) - int32_t(b); scc = r != int32_t(r); return uint32_t(r); }); });
  OP("S_MUL_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t&) { return a * b; }); });
  OP("S_MUL_HI_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t&) { return uint32_t((uint64_t(a) * b) >> 32); }); });
  OP("S_MUL_HI_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t&) { return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32); }); });
  OP("S_MIN_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { scc = a < b; return a < b ? a : b; }); });
  OP("S_MAX_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { scc = a > b; return a > b ? a : b; }); });
  OP("S_MIN_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { scc = int32_t(a) < int32_t(b); return scc ? a : b; }); });
  OP("S_MAX_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { scc = int32_t(a) > int32_t(b); return scc ? a : b; }); });
  OP("S_CSELECT_B32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { return scc ? a : b; }); });
  OP("S_CSELECT_B64", salu, { sop2_64(w, in, [](uint64_t a, uint64_t b, uint32_t& scc) { return scc ? a : b; }); });
  OP("S_LSHL_B32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint32_t r = a << (b & 31); scc = r != 0; return r; }); });
  OP("S_LSHR_B32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint32_t r = a >> (b & 31); scc = r != 0; return r; }); });
  OP("S_ASHR_I32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint32_t r = uint32_t(int32_t(a) >> (b & 31)); scc = r != 0; return r; }); });
  OP("S_LSHL_B64", salu, { uint64_t r = sread64(w, in.src[0]) << (sread(w, in.src[1]) & 63); w.scc = r != 0; swrite64(w, in.dst[0], r); });
  OP("S_LSHR_B64", salu, { uint64_t r = sread64(w, in.src[0]) >> (sread(w, in.src[1]) & 63); w.scc = r != 0; swrite64(w, in.dst[0], r); });
  OP("S_ASHR_I64", salu, { uint64_t r = uint64_t(int64_t(sread64(w, in.src[0])) >> (sread(w, in.src[1]) & 63)); w.scc = r != 0; swrite64(w, in.dst[0], r); });
  OP("S_BFE_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint32_t off = b & 31, wd = (b >> 16) & 0x7f; uint32_t r = wd == 0 ? 0 : wd >= 32 ? a >> off : (a >> off) & ((1u << wd) - 1); scc = r != 0; return r; }); });
  OP("S_BFM_B32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t&) { return ((a & 31) ? ((1u << (a & 31)) - 1) : 0u) << (b & 31); }); });
  // S_BFM_B64: D = ((1 << S0[5:0]) - 1) << S1[5:0], both sources 32-bit (CDNA3 ISA, SOP2).
  OP("S_BFM_B64", salu, {
    uint32_t a = sread(w, in.src[0]) & 63, b = sread(w, in.src[1]) & 63;
    swrite64(w, in.dst[0], (a ? (~0ull >> (64 - a)) : 0ull) << b);
  });
#define LSHLADD(n) OP("S_LSHL" #n "_ADD_U32", salu, { sop2(w, in, [](uint32_t a, uint32_t b, uint32_t& scc) { uint64_t r = (uint64_t(a) << n) + b; scc = r >> 32; return uint32_t(r); }); })
  LSHLADD(1);
  LSHLADD(2);
  LSHLADD(3);
  LSHLADD(4);
#undef LSHLADD
  OP("S_ADDK_I32", salu, { int64_t r = int64_t(int32_t(w.s[in.dst[0].reg])) + int16_t(in.imm[0]); w.scc = r != int32_t(r); swrite(w, in.dst[0], uint32_t(r)); });
  OP("S_MULK_I32", salu, { swrite(w, in.dst[0], uint32_t(int32_t(w.s[in.dst[0].reg]) * int16_t(in.imm[0]))); });
  // Compares.
  OP("S_CMP_EQ_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a == b; }); });
  OP("S_CMP_EQ_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a == b; }); });
  OP("S_CMP_LG_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a != b; }); });
  OP("S_CMP_LG_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a != b; }); });
  OP("S_CMP_LT_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a < b; }); });
  OP("S_CMP_LE_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a <= b; }); });
  OP("S_CMP_GT_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a > b; }); });
  OP("S_CMP_GE_U32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return a >= b; }); });
  OP("S_CMP_LT_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) < int32_t(b); }); });
  OP("S_CMP_LE_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) <= int32_t(b); }); });
  OP("S_CMP_GT_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) > int32_t(b); }); });
  OP("S_CMP_GE_I32", salu, { sopc(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) >= int32_t(b); }); });
  OP("S_CMP_EQ_U64", salu, { w.scc = sread64(w, in.src[0]) == sread64(w, in.src[1]); });
  OP("S_CMP_LG_U64", salu, { w.scc = sread64(w, in.src[0]) != sread64(w, in.src[1]); });
  OP("S_BITCMP0_B32", salu, { w.scc = ((sread(w, in.src[0]) >> (sread(w, in.src[1]) & 31)) & 1) == 0; });
  OP("S_BITCMP1_B32", salu, { w.scc = ((sread(w, in.src[0]) >> (sread(w, in.src[1]) & 31)) & 1) == 1; });
  OP("S_CMPK_EQ_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a == (b & 0xffff); }); });
  OP("S_CMPK_LG_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a != (b & 0xffff); }); });
  OP("S_CMPK_LT_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a < (b & 0xffff); }); });
  OP("S_CMPK_GT_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a > (b & 0xffff); }); });
  OP("S_CMPK_LE_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a <= (b & 0xffff); }); });
  OP("S_CMPK_GE_U32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return a >= (b & 0xffff); }); });
  OP("S_CMPK_EQ_I32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) == int16_t(b); }); });
  OP("S_CMPK_LG_I32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) != int16_t(b); }); });
  OP("S_CMPK_LT_I32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) < int16_t(b); }); });
  OP("S_CMPK_GT_I32", salu, { sopk_cmp(w, in, [](uint32_t a, uint32_t b) { return int32_t(a) > int16_t(b); }); });
  // EXEC manipulation.
  OP("S_AND_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return s & e; }); });
  OP("S_OR_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return s | e; }); });
  OP("S_XOR_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return s ^ e; }); });
  OP("S_ANDN2_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return s & ~e; }); });
  OP("S_ORN2_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return s | ~e; }); });
  OP("S_ANDN1_SAVEEXEC_B64", salu, { saveexec(w, in, [](uint64_t s, uint64_t e) { return ~s & e; }); });
  OP("S_GETPC_B64", salu, { swrite64(w, in.dst[0], uint64_t(in.addr) + in.size); });
  OP("S_SETPC_B64", branch, {
    int32_t i = w.prog->at(sread64(w, in.src[0]));
    if (i < 0) unsupported(w, "s_setpc_b64 to an address outside the kernel");
    w.pc = uint32_t(i);
  });
  // Control flow.
  OP("S_BRANCH", branch, { jump(w, in); });
  OP("S_CBRANCH_SCC0", branch, { if (!w.scc) jump(w, in); });
  OP("S_CBRANCH_SCC1", branch, { if (w.scc) jump(w, in); });
  OP("S_CBRANCH_VCCZ", branch, { if (!w.vcc()) jump(w, in); });
  OP("S_CBRANCH_VCCNZ", branch, { if (w.vcc()) jump(w, in); });
  OP("S_CBRANCH_EXECZ", branch, { if (!w.exec()) jump(w, in); });
  OP("S_CBRANCH_EXECNZ", branch, { if (w.exec()) jump(w, in); });
  OP("S_ENDPGM", endpgm, {
    w.done = true;
    lds_dma_end_wave(w); // LDS-DMA still in flight lands anyway (lds_dma.h)
  });
  OP("S_BARRIER", barrier, {
    w.at_barrier = true;
    ++w.barriers;
  });
  OP("S_NOP", nop, {});
  OP("S_SETPRIO", salu, {});
  // S_TRAP enters the trap handler (CDNA3 ISA SOPP); the emulator has none, so the launch stops as a GPU queue
  // would under ROCm, which aborts it (HSA trap ABI: 2 is llvm.trap / abort). AITER's only use is the
  // kernarg-preload stub at the entry, which preload-capable firmware skips (execution starts at entry + 256).
  OP("S_TRAP", salu, {
    unsupported(w, "the kernel trapped (s_trap " + std::to_string(in.imm[0] & 0xff) +
                       "; no trap handler is modelled, ROCm would abort the queue)");
  });
  // VGPR indexing (gpr_index.h; CDNA3 ISA S_SET_GPR_IDX_*): the index and the mode live in M0.
  OP("S_SET_GPR_IDX_ON", salu, {
    w.s[kM0] = (w.s[kM0] & ~0xf0ffu) | (sread(w, in.src[0]) & 0xff) | (uint32_t(in.imm[0] & 0xf) << 12);
    w.gpr_idx = true;
  });
  OP("S_SET_GPR_IDX_OFF", salu, { w.gpr_idx = false; });
  OP("S_SET_GPR_IDX_MODE", salu, { w.s[kM0] = (w.s[kM0] & ~0xf000u) | (uint32_t(in.imm[0] & 0xf) << 12); });
  OP("S_SET_GPR_IDX_IDX", salu, { w.s[kM0] = (w.s[kM0] & ~0xffu) | (sread(w, in.src[0]) & 0xff); });
  OP("S_SLEEP", salu, { w.cycle += 64 * uint64_t(in.imm[0] & 0x7f); });
  OP("S_DCACHE_INV", smem, {});
  OP("S_DCACHE_WB", smem, {});
  OP("BUFFER_INV", vmem_store, {});
  OP("BUFFER_WBL2", vmem_store, {});
  OP("BUFFER_WBINVL1_VOL", vmem_store, {});
  OP("S_WAITCNT", waitcnt, {
    uint32_t imm = uint32_t(in.imm[0]);
    wait_counters(w, (imm & 0xf) | (((imm >> 14) & 3) << 4), (imm >> 8) & 0xf);
  });
  OP("S_MEMTIME", smem, {
    w.set_s64(in.dst[0].reg, w.cycle);
    push_pending(w, {in.dst[0].reg, 2}, 2, true, memory_latency(Cat::smem));
  });
  OP("S_MEMREALTIME", smem, {
    w.set_s64(in.dst[0].reg, w.cycle / 25);
    push_pending(w, {in.dst[0].reg, 2}, 2, true, memory_latency(Cat::smem));
  });
  for (const char* n : {"S_LOAD_DWORD", "S_LOAD_DWORDX2", "S_LOAD_DWORDX4", "S_LOAD_DWORDX8", "S_LOAD_DWORDX16",
                        "S_BUFFER_LOAD_DWORD", "S_BUFFER_LOAD_DWORDX2", "S_BUFFER_LOAD_DWORDX4",
                        "S_BUFFER_LOAD_DWORDX8", "S_BUFFER_LOAD_DWORDX16"})
    add_op(n, smem_load, Cat::smem);
  for (const char* n : {"S_STORE_DWORD", "S_STORE_DWORDX2", "S_STORE_DWORDX4"}) add_op(n, smem_store, Cat::smem);
  for (const char* n : {"S_ATOMIC_INC", "S_ATOMIC_INC_IMM_RTN", "S_ATOMIC_INC_SGPR_RTN"})
    add_op(n, smem_atomic_incdec<true>, Cat::smem);
  for (const char* n : {"S_ATOMIC_DEC", "S_ATOMIC_DEC_IMM_RTN", "S_ATOMIC_DEC_SGPR_RTN"})
    add_op(n, smem_atomic_incdec<false>, Cat::smem);
  // s_setvskip S0, S1 (GCN3/Vega ISA text, kept in CDNA3: "VSKIP = S0.u[S1.u[4:0]]"): while VSKIP is set, no
  // VOP*, MUBUF, DS or FLAT instruction is issued (executor.cpp); AITER's MoE kernels bracket atomics with it.
  OP("S_SETVSKIP", salu, { w.vskip = (sread(w, in.src[0]) >> (sread(w, in.src[1]) & 31)) & 1; });
#undef OP
}

} // namespace isatune::emu

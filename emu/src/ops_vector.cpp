// Vector ALU: integer, f32, f16, bf16, packed math, compares, conversions, f64 basics.
// 16-bit results are written to the low half with the high half zeroed (no SDWA, no op_sel on the result).
#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>

#include "ops.h"
#include "util.h"

namespace isatune::emu {

namespace {

inline bool clamp_bit(const Inst& in) { return !in.dpp && in.nimm >= 1 && (in.imm[0] & 1); }
inline float clamp01(float x) { return std::isnan(x) ? 0.0f : std::min(1.0f, std::max(0.0f, x)); }

// Integer: d = f(a, b [, c]).
template <class F>
void vu1(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) { d[l] = f(a[l]); });
}
template <class F>
void vu2(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) { d[l] = f(a[l], b[l]); });
}
template <class F>
void vu3(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) { d[l] = f(a[l], b[l], c[l]); });
}
// f32 with source modifiers and clamp.
template <class F>
void vf1(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0);
  uint8_t ma = in.src[0].mods;
  bool cl = clamp_bit(in);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    float r = f(fmod32(a[l], ma));
    d[l] = as_u(cl ? clamp01(r) : r);
  });
}
template <class F>
void vf2(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
  bool cl = clamp_bit(in);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    float r = f(fmod32(a[l], ma), fmod32(b[l], mb));
    d[l] = as_u(cl ? clamp01(r) : r);
  });
}
template <class F>
void vf3(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
  uint8_t ma = in.src[0].mods, mb = in.src[1].mods, mc = in.src[2].mods;
  bool cl = clamp_bit(in);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    float r = f(fmod32(a[l], ma), fmod32(b[l], mb), fmod32(c[l], mc));
    d[l] = as_u(cl ? clamp01(r) : r);
  });
}
// Accumulating f32 (v_fmac, v_mac): d = f(a, b, d).
template <class F>
void vfacc(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) { d[l] = as_u(f(fmod32(a[l], ma), fmod32(b[l], mb), as_f(d[l]))); });
}
// f16 scalar-in-lane ops (low halves).
inline float h(uint32_t x, uint8_t mods) {
  uint16_t v = uint16_t(x);
  if (mods & 2) v &= 0x7fff;
  if (mods & 1) v ^= 0x8000;
  return f16_to_f32(v);
}
template <class F>
void vh2(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) { d[l] = f32_to_f16(f(h(a[l], in.src[0].mods), h(b[l], in.src[1].mods))); });
}
template <class F>
void vh3(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    d[l] = f32_to_f16(f(h(a[l], in.src[0].mods), h(b[l], in.src[1].mods), h(c[l], in.src[2].mods)));
  });
}

// VOP3P packed 16-bit: each source's op_sel picks the half for the low result, op_sel_hi for the high one.
inline uint16_t half_of(uint32_t x, bool hi) { return uint16_t(hi ? x >> 16 : x); }
inline float pk_src(uint32_t x, uint8_t mods, bool high_result, bool bf) {
  bool sel = high_result ? (mods & 8) : (mods & 4);
  uint16_t v = half_of(x, sel);
  if (high_result ? (mods & 2) : (mods & 1)) v ^= 0x8000;
  return bf ? bf16_to_f32(v) : f16_to_f32(v);
}
template <bool BF, class F>
void vpk16(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  const int n = in.nsrc;
  Src s[3] = {vsrc(w, in, 0), n > 1 ? vsrc(w, in, 1) : vsrc(w, in, 0), n > 2 ? vsrc(w, in, 2) : vsrc(w, in, 0)};
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    uint32_t out = 0;
    for (int hi = 0; hi < 2; ++hi) {
      float x[3];
      for (int k = 0; k < 3; ++k) x[k] = pk_src(s[k][l], k < n ? in.src[k].mods : 0, hi, BF);
      float r = f(x[0], x[1], x[2]);
      out |= uint32_t(BF ? f32_to_bf16(r) : f32_to_f16(r)) << (16 * hi);
    }
    d[l] = out;
  });
}
// VOP3P packed 32-bit (v_pk_fma_f32 ...): 64-bit operands, op_sel picks the dword.
template <class F>
void vpk32(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  const int n = in.nsrc;
  Src s[3] = {vsrc(w, in, 0), n > 1 ? vsrc(w, in, 1) : vsrc(w, in, 0), n > 2 ? vsrc(w, in, 2) : vsrc(w, in, 0)};
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    uint32_t out[2];
    for (int hi = 0; hi < 2; ++hi) {
      float x[3];
      for (int k = 0; k < 3; ++k) {
        uint8_t mods = k < n ? in.src[k].mods : 0;
        bool sel = hi ? (mods & 8) : (mods & 4);
        uint64_t v = s[k].u64(l);
        uint32_t word = sel ? uint32_t(v >> 32) : uint32_t(v);
        if (hi ? (mods & 2) : (mods & 1)) word ^= 0x80000000u;
        x[k] = as_f(word);
      }
      out[hi] = as_u(f(x[0], x[1], x[2]));
    }
    d[l] = out[0];
    d[l + 64] = out[1];
  });
}
// 64-bit integer/float: d(2) = f(a(2), b(..)).
template <class F>
void v64(Wave& w, const Inst& in, F f) {
  uint64_t m = valu_lanes(w, in);
  const int n = in.nsrc;
  Src a = vsrc(w, in, 0), b = n > 1 ? vsrc(w, in, 1) : a, c = n > 2 ? vsrc(w, in, 2) : a;
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    uint64_t r = f(a.u64(l), b.u64(l), c.u64(l), a[l], b[l], c[l]);
    d[l] = uint32_t(r);
    d[l + 64] = uint32_t(r >> 32);
  });
}
inline double dmod(uint64_t x, uint8_t mods) {
  if (mods & 2) x &= ~(1ull << 63);
  if (mods & 1) x ^= 1ull << 63;
  return as_d(x);
}

// Carry ops: carry out to dst[1] (VOP3) or VCC; carry in from src[2] (VOP3) or VCC.
template <int KIND> // 0 add_co, 1 sub_co, 2 subrev_co, 3 addc, 4 subb, 5 subbrev
void carry_op(Wave& w, const Inst& in) {
  uint64_t m = w.exec();
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint64_t cin = (KIND >= 3) ? (in.nsrc > 2 ? sread64(w, in.src[2]) : w.vcc()) : 0;
  uint32_t* d = vdst(w, in);
  uint64_t cout = 0;
  for_lanes(m, [&](int l) {
    uint64_t x = a[l], y = b[l], c = (cin >> l) & 1, r;
    bool carry;
    switch (KIND) {
    case 0: r = x + y, carry = r >> 32; break;
    case 1: r = x - y, carry = y > x; break;
    case 2: r = y - x, carry = x > y; break;
    case 3: r = x + y + c, carry = r >> 32; break;
    case 4: r = x - y - c, carry = y + c > x; break;
    default: r = y - x - c, carry = x + c > y; break;
    }
    d[l] = uint32_t(r);
    if (carry) cout |= 1ull << l;
  });
  if (in.ndst > 1) swrite64(w, in.dst[1], cout);
  else w.set_s64(kVcc, cout);
}

void cndmask(Wave& w, const Inst& in) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint64_t sel = in.nsrc > 2 ? sread64(w, in.src[2]) : w.vcc();
  uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
  uint32_t* d = vdst(w, in);
  auto mod = [](uint32_t x, uint8_t mods) { return (mods & 2 ? x & 0x7fffffffu : x) ^ (mods & 1 ? 0x80000000u : 0); };
  for_lanes(m, [&](int l) { d[l] = ((sel >> l) & 1) ? mod(b[l], mb) : mod(a[l], ma); });
}

// Compares: the 16 float predicates; integer ones use F LT EQ LE GT NE GE T (indices 0-6 and 15).
enum CmpTy { F32, F16, F64, I32, U32, I64, U64, I16, U16 }; // 16-bit: the low halves (CDNA3 ISA VOPC)
template <int TY, int OP, bool X>
void cmp(Wave& w, const Inst& in) {
  uint64_t m = w.exec();
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint64_t r = 0;
  for_lanes(m, [&](int l) {
    bool res;
    if constexpr (TY == F32 || TY == F16 || TY == F64) {
      double x, y;
      if constexpr (TY == F32) x = fmod32(a[l], in.src[0].mods), y = fmod32(b[l], in.src[1].mods);
      else if constexpr (TY == F16) x = h(a[l], in.src[0].mods), y = h(b[l], in.src[1].mods);
      else x = dmod(a.u64(l), in.src[0].mods), y = dmod(b.u64(l), in.src[1].mods);
      bool un = std::isnan(x) || std::isnan(y);
      switch (OP) {
      case 0: res = false; break;
      case 1: res = x < y; break;
      case 2: res = x == y; break;
      case 3: res = x <= y; break;
      case 4: res = x > y; break;
      case 5: res = !un && x != y; break;
      case 6: res = x >= y; break;
      case 7: res = !un; break;
      case 8: res = un; break;
      case 9: res = !(x >= y); break;
      case 10: res = !(!un && x != y); break;
      case 11: res = !(x > y); break;
      case 12: res = !(x <= y); break;
      case 13: res = !(x == y); break;
      case 14: res = !(x < y); break;
      default: res = true; break;
      }
    } else {
      int64_t x, y;
      if constexpr (TY == I32) x = int32_t(a[l]), y = int32_t(b[l]);
      else if constexpr (TY == I16) x = int16_t(a[l]), y = int16_t(b[l]);
      else if constexpr (TY == U16) x = uint16_t(a[l]), y = uint16_t(b[l]);
      else if constexpr (TY == U32) x = a[l], y = b[l];
      else if constexpr (TY == I64) x = int64_t(a.u64(l)), y = int64_t(b.u64(l));
      else x = 0, y = 0;
      if constexpr (TY == U64) {
        uint64_t ux = a.u64(l), uy = b.u64(l);
        switch (OP) {
        case 0: res = false; break;
        case 1: res = ux < uy; break;
        case 2: res = ux == uy; break;
        case 3: res = ux <= uy; break;
        case 4: res = ux > uy; break;
        case 5: res = ux != uy; break;
        case 6: res = ux >= uy; break;
        default: res = true; break;
        }
      } else {
        switch (OP) {
        case 0: res = false; break;
        case 1: res = x < y; break;
        case 2: res = x == y; break;
        case 3: res = x <= y; break;
        case 4: res = x > y; break;
        case 5: res = x != y; break;
        case 6: res = x >= y; break;
        default: res = true; break;
        }
      }
    }
    if (res) r |= 1ull << l;
  });
  if (in.ndst > 0) swrite64(w, in.dst[0], r);
  else w.set_s64(kVcc, r);
  if (X) w.set_exec(r);
}

constexpr const char* kFloatCmp[16] = {"F", "LT", "EQ", "LE", "GT", "LG", "GE", "O",
                                       "U", "NGE", "NLG", "NGT", "NLE", "NEQ", "NLT", "TRU"};
constexpr const char* kIntCmp[16] = {"F", "LT", "EQ", "LE", "GT", "NE", "GE", nullptr,
                                     nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, "T"};

template <int TY, int... OPS>
void reg_cmps(const char* ty, std::integer_sequence<int, OPS...>) {
  const bool fl = TY == F32 || TY == F16 || TY == F64;
  auto one = [&](int op, Handler h, Handler hx) {
    const char* n = fl ? kFloatCmp[op] : kIntCmp[op];
    if (!n) return;
    add_op(std::string("V_CMP_") + n + "_" + ty, h, Cat::valu);
    add_op(std::string("V_CMPX_") + n + "_" + ty, hx, Cat::valu);
  };
  (one(OPS, cmp<TY, OPS, false>, cmp<TY, OPS, true>), ...);
}

// VOPC SDWA on 32-bit integers (v_cmp_eq_u32_sdwa, v_cmp_le_i32_sdwa in AITER): both sources cut by their
// src_sel (sext modifier: sign-extended) before the compare; imm = [clamp, src0_sel, src1_sel], dst[0] the
// SGPR pair or VCC. sdwa_src is defined below with the other SDWA helpers.
uint32_t sdwa_src(uint32_t x, int64_t sel, bool sext);
template <bool SIGNED, int OP, bool X>
void cmp_sdwa(Wave& w, const Inst& in) {
  if (in.nimm < 3 || in.ndst < 1 || in.imm[0]) unsupported(w, "SDWA compare operands not modelled");
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint64_t r = 0;
  for_lanes(w.exec(), [&](int l) {
    const uint32_t ux = sdwa_src(a[l], in.imm[1], in.src[0].mods & kSextModifier);
    const uint32_t uy = sdwa_src(b[l], in.imm[2], in.src[1].mods & kSextModifier);
    const int64_t x = SIGNED ? int64_t(int32_t(ux)) : int64_t(ux), y = SIGNED ? int64_t(int32_t(uy)) : int64_t(uy);
    bool res;
    switch (OP) {
    case 0: res = false; break;
    case 1: res = x < y; break;
    case 2: res = x == y; break;
    case 3: res = x <= y; break;
    case 4: res = x > y; break;
    case 5: res = x != y; break;
    case 6: res = x >= y; break;
    default: res = true; break;
    }
    if (res) r |= 1ull << l;
  });
  swrite64(w, in.dst[0], r);
  if (X) w.set_exec(r);
}
template <bool SIGNED, int... OPS>
void reg_cmps_sdwa(const char* ty, std::integer_sequence<int, OPS...>) {
  auto one = [&](int op, Handler h, Handler hx) {
    const char* n = kIntCmp[op];
    if (!n) return;
    add_op(std::string("V_CMP_") + n + "_" + ty + "_SDWA", h, Cat::valu);
    add_op(std::string("V_CMPX_") + n + "_" + ty + "_SDWA", hx, Cat::valu);
  };
  (one(OPS, cmp_sdwa<SIGNED, OPS, false>, cmp_sdwa<SIGNED, OPS, true>), ...);
}

uint32_t bfe_u(uint32_t a, uint32_t off, uint32_t wd) {
  off &= 31, wd &= 31;
  if (wd == 0) return 0;
  return (a >> off) & ((1u << wd) - 1) & (off + wd < 32 ? ~0u : ~0u);
}
int32_t bfe_i(uint32_t a, uint32_t off, uint32_t wd) {
  off &= 31, wd &= 31;
  if (wd == 0) return 0;
  int32_t x = int32_t(a << (32 - std::min(32u, off + wd)));
  return x >> (32 - wd);
}
uint32_t perm_b32(uint32_t s0, uint32_t s1, uint32_t sel) {
  uint64_t v = (uint64_t(s0) << 32) | s1;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t sb = (sel >> (8 * i)) & 0xff, byte;
    if (sb < 8) byte = uint32_t(v >> (8 * sb)) & 0xff;
    else if (sb == 12) byte = 0;
    else if (sb >= 13) byte = 0xff;
    else {
      // 8..11: sign of bytes 1, 3 of s1 and s0 replicated
      int idx[4] = {1, 3, 5, 7};
      byte = ((v >> (8 * idx[sb - 8] + 7)) & 1) ? 0xff : 0;
    }
    r |= byte << (8 * i);
  }
  return r;
}
float fmed3(float a, float b, float c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }
uint32_t cvt_u32(float f) { return std::isnan(f) ? 0 : f <= 0 ? 0 : f >= 4294967295.0f ? 0xffffffffu : uint32_t(f); }
uint32_t cvt_i32(float f) {
  if (std::isnan(f)) return 0;
  if (f <= -2147483648.0f) return 0x80000000u;
  if (f >= 2147483647.0f) return 0x7fffffffu;
  return uint32_t(int32_t(f));
}

// v_cvt_pk_fp8_f32 / v_cvt_pk_bf8_f32 vdst, src0, src1 [op_sel:[0,0,1]] (CDNA3 ISA, VOP3; LLVM
// VOP3_CVT_PK_F8_F32_Profile: the vdst_in tied operand keeps the other word): the word of vdst that op_sel[3]
// (decoded as src0 modifier bit 3, LLVM's DST_OP_SEL) names becomes {fp8(src1), fp8(src0)}, low byte src0;
// the other word is kept. gfx942: FNUZ formats; gfx950: OCP E4M3FN/E5M2 (CDNA4 ISA; shared/notes/cdna.md
// section 4). Rounding and overflow: f32_to_fp8 (number_formats.cpp).
template <bool BF8>
void cvt_pk_f8_f32(Wave& w, const Inst& in) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  const uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
  const bool fnuz = w.ctx->gfx == cdna::Gfx::gfx942;
  const int shift = (ma & 8) ? 16 : 0;
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    uint32_t word = uint32_t(f32_to_fp8(fmod32(a[l], ma & 3), BF8, fnuz)) |
                    uint32_t(f32_to_fp8(fmod32(b[l], mb & 3), BF8, fnuz)) << 8;
    d[l] = (d[l] & ~(0xffffu << shift)) | word << shift;
  });
}

// v_cvt_pk_f32_fp8 / _bf8 vdst(2), src0 (CDNA3 ISA, VOP1): vdst[0] = f32(byte 0), vdst[1] = f32(byte 1) of
// one word of src0, exact. The word: VOP3 op_sel[0] (src0 modifier bit 2); SDWA src0_sel WORD_0/WORD_1 (AITER
// uses `v_cvt_pk_f32_fp8_sdwa v[a:b], vN src0_sel:WORD_1`; LLVM's SIPeepholeSDWA: these SDWA forms take no
// input modifiers). The SDWA operands decode as imm = [clamp, omod, src0_sel] (no dst_sel: 64-bit vdst).
template <bool BF8, bool SDWA>
void cvt_pk_f32_f8(Wave& w, const Inst& in) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0);
  bool hi = (in.src[0].mods & 4) != 0;
  if constexpr (SDWA) {
    if (in.nimm < 3) unsupported(w, "SDWA operands not modelled");
    const int64_t sel = in.imm[2]; // SdwaSel: BYTE_0..3 = 0..3, WORD_0 4, WORD_1 5, DWORD 6
    if (sel < 4) unsupported(w, "SDWA byte select on a packed fp8 conversion is not modelled");
    hi = sel == 5;
  }
  const bool fnuz = w.ctx->gfx == cdna::Gfx::gfx942;
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    const uint32_t word = hi ? a[l] >> 16 : a[l];
    d[l] = as_u(fp8_to_f32(uint8_t(word), BF8, fnuz));
    d[l + 64] = as_u(fp8_to_f32(uint8_t(word >> 8), BF8, fnuz));
  });
}

// The scale operand of the gfx950 v_cvt_scalef32_* conversions: only its exponent field counts, as an E8M0
// (2^(e - 127); 255 is NaN). CDNA4 ISA pseudocode takes exponent(S.f32); AMD's host model of these instructions
// (hip_ext_ocp amd_hip_ocp_host.hpp) passes the E8M0 exponent alone.
struct ScaleExp {
  int exp;
  bool nan;
};
inline ScaleExp scalef32(uint32_t bits) {
  const int e = int((bits >> 23) & 0xff);
  return {e - 127, e == 255};
}

// v_cvt_scalef32_pk_fp4_f32 vdst, src0, src1, scale [op_sel:[0,0,a,b]] (gfx950, VOP3; LLVM MC commit
// 1a86d44 "OPSEL[3:2] selects which dst_byte to write", checked with llc 22: byte 2 -> op_sel:[0,0,0,1]): byte
// op_sel[2] + 2 op_sel[3] of vdst becomes {fp4(src1 / scale) << 4 | fp4(src0 / scale)}; the other bytes are kept
// (vdst_in is tied). Conversion: f32_to_fp4_scaled (number_formats.cpp).
void cvt_scalef32_pk_fp4_f32(Wave& w, const Inst& in) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), sc = vsrc(w, in, 2);
  const uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
  // op_sel is the trailing immediate; op_sel[2] also sits in src2's modifiers (bit 2), op_sel[3] in src0's
  // (bit 3, LLVM's DST_OP_SEL).
  const int opsel = in.nimm >= 1 ? int(in.imm[in.nimm - 1]) : ((in.src[2].mods & 4) | (ma & 8));
  const int shift = 8 * ((opsel >> 2) & 3);
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    const ScaleExp s = scalef32(sc[l]);
    const uint32_t byte = uint32_t(f32_to_fp4_scaled(fmod32(a[l], ma & 3), s.exp, s.nan)) |
                          uint32_t(f32_to_fp4_scaled(fmod32(b[l], mb & 3), s.exp, s.nan)) << 4;
    d[l] = (d[l] & ~(0xffu << shift)) | byte << shift;
  });
}

// v_cvt_scalef32_pk_bf16_fp8 vdst, src0, scale [op_sel:[1,0,0]] (gfx950, VOP3; LLVM MC commit 7ad1084 for the
// scaled fp8 conversions: op_sel[0] = src0 modifier bit 2 selects the word; llc 22: word_sel true ->
// op_sel:[1,0,0]): the two OCP E4M3 bytes of that word, low first, become bf16(byte x scale) in the low and high
// halves of vdst. Conversion: fp8_to_bf16_scaled (number_formats.cpp).
void cvt_scalef32_pk_bf16_fp8(Wave& w, const Inst& in) {
  uint64_t m = valu_lanes(w, in);
  Src a = vsrc(w, in, 0), sc = vsrc(w, in, 1);
  const int opsel = in.nimm >= 1 ? int(in.imm[in.nimm - 1]) : ((in.src[0].mods >> 2) & 1);
  if (in.src[0].mods & 3) unsupported(w, "neg/abs on an fp8 source is not modelled");
  const int shift = (opsel & 1) ? 16 : 0;
  uint32_t* d = vdst(w, in);
  for_lanes(m, [&](int l) {
    const ScaleExp s = scalef32(sc[l]);
    const uint32_t word = a[l] >> shift;
    d[l] = uint32_t(fp8_to_bf16_scaled(uint8_t(word), s.exp, s.nan)) |
           uint32_t(fp8_to_bf16_scaled(uint8_t(word >> 8), s.exp, s.nan)) << 16;
  });
}

// v_cmp_class_f32 / v_cmpx_class_f32 (CDNA3 ISA VOPC): lane bit = S1[class of S0], classes 0 signaling NaN,
// 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal, 9 +inf. S0 takes the VOP3
// neg/abs modifiers.
template <bool X>
void cmp_class_f32(Wave& w, const Inst& in) {
  uint64_t m = w.exec();
  Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
  uint64_t r = 0;
  for_lanes(m, [&](int l) {
    uint32_t x = a[l];
    if (in.src[0].mods & 2) x &= 0x7fffffffu;
    if (in.src[0].mods & 1) x ^= 0x80000000u;
    const bool neg = x >> 31;
    const uint32_t e = (x >> 23) & 0xff, man = x & 0x7fffff;
    int cls;
    if (e == 0xff && man) cls = (man & 0x400000) ? 1 : 0;
    else if (e == 0xff) cls = neg ? 2 : 9;
    else if (e == 0 && man == 0) cls = neg ? 5 : 6;
    else if (e == 0) cls = neg ? 4 : 7;
    else cls = neg ? 3 : 8;
    if ((b[l] >> cls) & 1) r |= 1ull << l;
  });
  if (in.ndst > 0) swrite64(w, in.dst[0], r);
  else w.set_s64(kVcc, r);
  if (X) w.set_exec(r);
}

// v_cvt_pk_u8_f32 vdst, src0, src1, src2 (CDNA3 ISA): vdst = src2 with byte src1[1:0] replaced by
// u8(src0). The conversion rounds by MODE's f32 rounding (Mesa ACO lists v_cvt_pk_u8_f32 as reading
// mode_round32; the emulator runs the default, round to nearest even) and is clamped to [0, 255], NaN -> 0
// (the clamp is the emulator's reading of "convert to an 8-bit unsigned integer").
uint32_t cvt_pk_u8(uint32_t a, uint32_t sel, uint32_t c) {
  const float f = as_f(a);
  const uint32_t u = std::isnan(f) ? 0u : uint32_t(std::nearbyint(std::min(255.0f, std::max(0.0f, f))));
  const uint32_t shift = 8 * (sel & 3);
  return (c & ~(0xffu << shift)) | (u << shift);
}

// SDWA (GCN3/Vega ISA "SDWA"; the gfx9 encoding CDNA keeps): each source is first cut to src_sel (BYTE_0..3 = 0..3,
// WORD_0 4, WORD_1 5, DWORD 6) and zero- or (an integer source's sext modifier, kSextModifier) sign-extended; the result's low bits go to
// the dst_sel field of vdst and the rest of vdst is zeroed (UNUSED_PAD 0), filled with the field's sign above it
// and zeros below (UNUSED_SEXT 1) or kept (UNUSED_PRESERVE 2). The decoded immediates: VOP1 [clamp, omod,
// dst_sel, dst_unused, src0_sel], VOP2 integer [clamp, dst_sel, dst_unused, src0_sel, src1_sel].
uint32_t sdwa_src(uint32_t x, int64_t sel, bool sext) {
  if (sel >= 6) return x;
  const int bits = sel < 4 ? 8 : 16, shift = sel < 4 ? 8 * int(sel) : 16 * int(sel - 4);
  const uint32_t v = (x >> shift) & ((1u << bits) - 1);
  return sext ? uint32_t(int32_t(v << (32 - bits)) >> (32 - bits)) : v;
}
uint32_t sdwa_dst(uint32_t old, uint32_t r, int64_t sel, int64_t unused) {
  if (sel >= 6) return r;
  const int bits = sel < 4 ? 8 : 16, shift = sel < 4 ? 8 * int(sel) : 16 * int(sel - 4);
  const uint32_t field = ((1u << bits) - 1) << shift, v = (r << shift) & field;
  if (unused == 2) return (old & ~field) | v;
  if (unused == 1 && ((r >> (bits - 1)) & 1)) return v | uint32_t(~((uint64_t(1) << (shift + bits)) - 1));
  return v;
}
float cvt_off_f32_i4(uint32_t a) {
  return float(int32_t(a << 28) >> 28) * 0.0625f;
}
// f(a, b, src0 modifiers) on the selected sources. kInteger: the sources take sext; else neg/abs, which f applies
// (LLVM before 21 gives sext and neg the same bit).
template <bool kInteger, class F>
void sdwa_op(Wave& w, const Inst& in, F f) {
  const bool vop2 = in.nsrc >= 2;
  if (in.nimm < 5 || in.dpp) unsupported(w, "SDWA operands not modelled");
  const int64_t dst_sel = in.imm[vop2 ? 1 : 2], unused = in.imm[vop2 ? 2 : 3];
  const int64_t sel0 = in.imm[vop2 ? 3 : 4], sel1 = vop2 ? in.imm[4] : 6;
  if (in.imm[0] || (!vop2 && in.imm[1])) unsupported(w, "SDWA clamp/omod not modelled");
  Src a = vsrc(w, in, 0), b = vop2 ? vsrc(w, in, 1) : vsrc(w, in, 0);
  const uint8_t m0 = in.src[0].mods, m1 = vop2 ? in.src[1].mods : 0;
  uint32_t* d = vdst(w, in);
  for_lanes(w.exec(), [&](int l) {
    const bool sext0 = kInteger && (m0 & kSextModifier), sext1 = kInteger && (m1 & kSextModifier);
    const uint32_t x = sdwa_src(a[l], sel0, sext0), y = vop2 ? sdwa_src(b[l], sel1, sext1) : 0;
    d[l] = sdwa_dst(d[l], f(x, y, m0), dst_sel, unused);
  });
}

} // namespace

uint64_t valu_lanes(Wave& w, const Inst& in) {
  uint64_t exec = w.exec();
  if (!in.dpp) return exec;
  // DPP: stage src0 through the lane pattern; invalid sources read 0 (bound_ctrl) or leave the lane alone.
  const uint32_t ctrl = uint32_t(in.imm[0]), row_mask = uint32_t(in.imm[1]), bank_mask = uint32_t(in.imm[2]);
  const bool bound_zero = in.imm[3] != 0;
  if (in.src[0].kind != OpKind::vgpr) unsupported(w, "DPP source is not a VGPR");
  const uint32_t* src = w.v[in.src[0].reg].data();
  uint64_t lanes = 0;
  for (int l = 0; l < 64; ++l) {
    if (!((row_mask >> (l / 16)) & 1) || !((bank_mask >> ((l >> 2) & 3)) & 1)) continue;
    int row = l & ~15, r = l & 15, s = -1;
    if (ctrl <= 0xff) s = (l & ~3) + int((ctrl >> (2 * (l & 3))) & 3);
    else if (ctrl >= 0x101 && ctrl <= 0x10f) s = r + int(ctrl & 15) <= 15 ? l + int(ctrl & 15) : -1;
    else if (ctrl >= 0x111 && ctrl <= 0x11f) s = r >= int(ctrl & 15) ? l - int(ctrl & 15) : -1;
    else if (ctrl >= 0x121 && ctrl <= 0x12f) s = row + ((r - int(ctrl & 15)) & 15);
    else if (ctrl == 0x130) s = l + 1 <= 63 ? l + 1 : -1;
    else if (ctrl == 0x134) s = (l + 1) & 63;
    else if (ctrl == 0x138) s = l - 1;
    else if (ctrl == 0x13c) s = (l - 1) & 63;
    else if (ctrl == 0x140) s = row + 15 - r;
    else if (ctrl == 0x141) s = (l & ~7) + 7 - (l & 7);
    else if (ctrl == 0x142) s = row > 0 ? row - 1 : -1;
    else if (ctrl == 0x143) s = l >= 32 ? 31 : -1;
    else if (ctrl >= 0x150 && ctrl <= 0x15f) s = row + int(ctrl & 15);
    else unsupported(w, "DPP control not modelled");
    if (s >= 0 && s < 64 && ((exec >> s) & 1)) {
      w.tmp[size_t(l)] = src[s];
      lanes |= 1ull << l;
    } else if (bound_zero) {
      w.tmp[size_t(l)] = 0;
      lanes |= 1ull << l;
    }
  }
  return exec & lanes;
}

void register_vector_ops() {
#define OP(name, ...) add_op(name, []([[maybe_unused]] Wave& w, [[maybe_unused]] const Inst& in) __VA_ARGS__, Cat::valu)
  // Integer.
  OP("V_MOV_B32", { vu1(w, in, [](uint32_t a) { return a; }); });
  OP("V_NOT_B32", { vu1(w, in, [](uint32_t a) { return ~a; }); });
  OP("V_BFREV_B32", { vu1(w, in, [](uint32_t a) { uint32_t r = 0; for (int i = 0; i < 32; ++i) r |= ((a >> i) & 1) << (31 - i); return r; }); });
  OP("V_FFBH_U32", { vu1(w, in, [](uint32_t a) { return a ? uint32_t(std::countl_zero(a)) : ~0u; }); });
  OP("V_FFBL_B32", { vu1(w, in, [](uint32_t a) { return a ? uint32_t(std::countr_zero(a)) : ~0u; }); });
  OP("V_ADD_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a + b; }); });
  OP("V_SUB_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a - b; }); });
  OP("V_SUBREV_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return b - a; }); });
  OP("V_ADD_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a + b; }); });
  OP("V_SUB_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a - b; }); });
  OP("V_AND_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a & b; }); });
  OP("V_OR_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a | b; }); });
  OP("V_XOR_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a ^ b; }); });
  OP("V_XNOR_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return ~(a ^ b); }); });
  OP("V_LSHLREV_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return b << (a & 31); }); });
  OP("V_LSHRREV_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return b >> (a & 31); }); });
  OP("V_ASHRREV_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(int32_t(b) >> (a & 31)); }); });
  OP("V_LSHLREV_B16", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(uint16_t(b << (a & 15))); }); });
  OP("V_LSHRREV_B16", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(uint16_t(b) >> (a & 15)); }); });
  OP("V_ADD_U16", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(uint16_t(a + b)); }); });
  OP("V_MUL_LO_U16", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(uint16_t(a * b)); }); });
  OP("V_MUL_LO_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return a * b; }); });
  OP("V_MUL_HI_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t((uint64_t(a) * b) >> 32); }); });
  OP("V_MUL_HI_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(uint64_t(int64_t(int32_t(a)) * int32_t(b)) >> 32); }); });
  OP("V_MUL_U32_U24", { vu2(w, in, [](uint32_t a, uint32_t b) { return (a & 0xffffff) * (b & 0xffffff); }); });
  OP("V_MUL_I32_I24", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(((int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8))); }); });
  OP("V_MUL_HI_U32_U24", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t((uint64_t(a & 0xffffff) * (b & 0xffffff)) >> 32); }); });
  OP("V_MIN_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return std::min(a, b); }); });
  OP("V_MAX_U32", { vu2(w, in, [](uint32_t a, uint32_t b) { return std::max(a, b); }); });
  OP("V_MIN_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(std::min(int32_t(a), int32_t(b))); }); });
  OP("V_MAX_I32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(std::max(int32_t(a), int32_t(b))); }); });
  OP("V_BCNT_U32_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(std::popcount(a)) + b; }); });
  OP("V_BFM_B32", { vu2(w, in, [](uint32_t a, uint32_t b) { return ((a & 31) ? ((1u << (a & 31)) - 1) : 0u) << (b & 31); }); });
  OP("V_MBCNT_LO_U32_B32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = uint32_t(std::popcount(a[l] & ((l >= 32 ? ~0u : (1u << l) - 1)))) + b[l]; });
  });
  OP("V_MBCNT_HI_U32_B32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = uint32_t(std::popcount(a[l] & (l < 32 ? 0u : l == 63 ? 0x7fffffffu : (1u << (l - 32)) - 1))) + b[l]; });
  });
  OP("V_BFE_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return bfe_u(a, b, c); }); });
  OP("V_BFE_I32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(bfe_i(a, b, c)); }); });
  OP("V_BFI_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a & b) | (~a & c); }); });
  OP("V_ALIGNBIT_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t((((uint64_t(a) << 32) | b) >> (c & 31))); }); });
  OP("V_ALIGNBYTE_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t((((uint64_t(a) << 32) | b) >> (8 * (c & 3)))); }); });
  OP("V_LSHL_ADD_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) + c; }); });
  OP("V_ADD_LSHL_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a + b) << (c & 31); }); });
  OP("V_LSHL_OR_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a << (b & 31)) | c; }); });
  OP("V_AND_OR_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a & b) | c; }); });
  OP("V_OR3_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return a | b | c; }); });
  OP("V_XAD_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a ^ b) + c; }); });
  OP("V_ADD3_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return a + b + c; }); });
  OP("V_PERM_B32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return perm_b32(a, b, c); }); });
  OP("V_MAD_U32_U24", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return (a & 0xffffff) * (b & 0xffffff) + c; }); });
  OP("V_MAD_I32_I24", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t((int32_t(a << 8) >> 8) * (int32_t(b << 8) >> 8)) + c; }); });
  OP("V_MIN3_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return std::min({a, b, c}); }); });
  OP("V_MAX3_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return std::max({a, b, c}); }); });
  OP("V_MIN3_I32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::min({int32_t(a), int32_t(b), int32_t(c)})); }); });
  OP("V_MAX3_I32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return uint32_t(std::max({int32_t(a), int32_t(b), int32_t(c)})); }); });
  OP("V_MED3_U32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }); });
  OP("V_MED3_I32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { int32_t x = int32_t(a), y = int32_t(b), z = int32_t(c); return uint32_t(std::max(std::min(x, y), std::min(std::max(x, y), z))); }); });
  OP("V_CNDMASK_B32", { cndmask(w, in); });
  add_op("V_ADD_CO_U32", carry_op<0>, Cat::valu);
  add_op("V_SUB_CO_U32", carry_op<1>, Cat::valu);
  add_op("V_SUBREV_CO_U32", carry_op<2>, Cat::valu);
  add_op("V_ADDC_CO_U32", carry_op<3>, Cat::valu);
  add_op("V_SUBB_CO_U32", carry_op<4>, Cat::valu);
  add_op("V_SUBBREV_CO_U32", carry_op<5>, Cat::valu);
  OP("V_MAD_U64_U32", {
    uint64_t m = w.exec();
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { uint64_t r = uint64_t(a[l]) * b[l] + c.u64(l); d[l] = uint32_t(r); d[l + 64] = uint32_t(r >> 32); });
    if (in.ndst > 1) swrite64(w, in.dst[1], 0);
  });
  // 64-bit.
  OP("V_MOV_B64", { v64(w, in, [](uint64_t a, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t) { return a; }); });
  OP("V_LSHLREV_B64", { v64(w, in, [](uint64_t, uint64_t b, uint64_t, uint32_t a, uint32_t, uint32_t) { return b << (a & 63); }); });
  OP("V_LSHRREV_B64", { v64(w, in, [](uint64_t, uint64_t b, uint64_t, uint32_t a, uint32_t, uint32_t) { return b >> (a & 63); }); });
  OP("V_ASHRREV_I64", { v64(w, in, [](uint64_t, uint64_t b, uint64_t, uint32_t a, uint32_t, uint32_t) { return uint64_t(int64_t(b) >> (a & 63)); }); });
  OP("V_LSHL_ADD_U64", { v64(w, in, [](uint64_t a, uint64_t, uint64_t c, uint32_t, uint32_t b, uint32_t) { return (a << (b & 7)) + c; }); });
  OP("V_ADD_F64", { v64(w, in, [](uint64_t a, uint64_t b, uint64_t, uint32_t, uint32_t, uint32_t) { return as_u64(as_d(a) + as_d(b)); }); });
  OP("V_MUL_F64", { v64(w, in, [](uint64_t a, uint64_t b, uint64_t, uint32_t, uint32_t, uint32_t) { return as_u64(as_d(a) * as_d(b)); }); });
  OP("V_FMA_F64", { v64(w, in, [](uint64_t a, uint64_t b, uint64_t c, uint32_t, uint32_t, uint32_t) { return as_u64(std::fma(as_d(a), as_d(b), as_d(c))); }); });
  OP("V_CVT_F64_F32", { v64(w, in, [](uint64_t, uint64_t, uint64_t, uint32_t a, uint32_t, uint32_t) { return as_u64(double(as_f(a))); }); });
  OP("V_CVT_F32_F64", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = as_u(float(dmod(a.u64(l), in.src[0].mods))); });
  });
  // f32.
  OP("V_ADD_F32", { vf2(w, in, [](float a, float b) { return a + b; }); });
  OP("V_SUB_F32", { vf2(w, in, [](float a, float b) { return a - b; }); });
  OP("V_SUBREV_F32", { vf2(w, in, [](float a, float b) { return b - a; }); });
  OP("V_MUL_F32", { vf2(w, in, [](float a, float b) { return a * b; }); });
  OP("V_MUL_LEGACY_F32", { vf2(w, in, [](float a, float b) { return (a == 0 || b == 0) ? 0.0f : a * b; }); });
  OP("V_MIN_F32", { vf2(w, in, [](float a, float b) { return std::fmin(a, b); }); });
  OP("V_MAX_F32", { vf2(w, in, [](float a, float b) { return std::fmax(a, b); }); });
  OP("V_LDEXP_F32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = as_u(std::ldexp(fmod32(a[l], in.src[0].mods), int32_t(b[l]))); });
  });
  OP("V_FMA_F32", { vf3(w, in, [](float a, float b, float c) { return std::fma(a, b, c); }); });
  OP("V_MAD_F32", { vf3(w, in, [](float a, float b, float c) { return a * b + c; }); });
  OP("V_MIN3_F32", { vf3(w, in, [](float a, float b, float c) { return std::fmin(std::fmin(a, b), c); }); });
  OP("V_MAX3_F32", { vf3(w, in, [](float a, float b, float c) { return std::fmax(std::fmax(a, b), c); }); });
  OP("V_MED3_F32", { vf3(w, in, [](float a, float b, float c) { return fmed3(a, b, c); }); });
  OP("V_FMAC_F32", { vfacc(w, in, [](float a, float b, float d) { return std::fma(a, b, d); }); });
  OP("V_MAC_F32", { vfacc(w, in, [](float a, float b, float d) { return a * b + d; }); });
  OP("V_FMAMK_F32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), k = vsrc(w, in, 2);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = as_u(std::fma(as_f(a[l]), as_f(k[l]), as_f(b[l]))); });
  });
  OP("V_FMAAK_F32", { vf3(w, in, [](float a, float b, float k) { return std::fma(a, b, k); }); });
  add_op("V_EXP_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return std::exp2(a); }); }, Cat::trans);
  add_op("V_LOG_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return std::log2(a); }); }, Cat::trans);
  add_op("V_RCP_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return 1.0f / a; }); }, Cat::trans);
  // v_rcp_iflag_f32: the reciprocal, flagging integer division by zero (CDNA3 ISA); the value is v_rcp_f32's.
  add_op("V_RCP_IFLAG_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return 1.0f / a; }); },
         Cat::trans);
  add_op("V_RSQ_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return 1.0f / std::sqrt(a); }); }, Cat::trans);
  add_op("V_SQRT_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return std::sqrt(a); }); }, Cat::trans);
  add_op("V_SIN_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return std::sin(a * 6.28318530718f); }); }, Cat::trans);
  add_op("V_COS_F32", [](Wave& w, const Inst& in) { vf1(w, in, [](float a) { return std::cos(a * 6.28318530718f); }); }, Cat::trans);
  OP("V_FRACT_F32", { vf1(w, in, [](float a) { return a - std::floor(a); }); });
  OP("V_TRUNC_F32", { vf1(w, in, [](float a) { return std::trunc(a); }); });
  OP("V_CEIL_F32", { vf1(w, in, [](float a) { return std::ceil(a); }); });
  OP("V_FLOOR_F32", { vf1(w, in, [](float a) { return std::floor(a); }); });
  OP("V_RNDNE_F32", { vf1(w, in, [](float a) { return std::nearbyint(a); }); });
  // Conversions.
  OP("V_CVT_F32_U32", { vu1(w, in, [](uint32_t a) { return as_u(float(a)); }); });
  OP("V_CVT_F32_I32", { vu1(w, in, [](uint32_t a) { return as_u(float(int32_t(a))); }); });
  OP("V_CVT_U32_F32", { vu1(w, in, [](uint32_t a) { return cvt_u32(as_f(a)); }); });
  OP("V_CVT_I32_F32", { vu1(w, in, [](uint32_t a) { return cvt_i32(as_f(a)); }); });
  OP("V_CVT_F32_UBYTE0", { vu1(w, in, [](uint32_t a) { return as_u(float(a & 0xff)); }); });
  OP("V_CVT_F32_UBYTE1", { vu1(w, in, [](uint32_t a) { return as_u(float((a >> 8) & 0xff)); }); });
  OP("V_CVT_F32_UBYTE2", { vu1(w, in, [](uint32_t a) { return as_u(float((a >> 16) & 0xff)); }); });
  OP("V_CVT_F32_UBYTE3", { vu1(w, in, [](uint32_t a) { return as_u(float(a >> 24)); }); });
  OP("V_CVT_F16_F32", { vu1(w, in, [](uint32_t a) { return uint32_t(f32_to_f16(as_f(a))); }); });
  OP("V_CVT_F32_F16", { vu1(w, in, [](uint32_t a) { return as_u(f16_to_f32(uint16_t(a))); }); });
  // V_CVT_OFF_F32_I4: S0[3:0] as a signed 4-bit integer in sixteenths, 1000 -> -0.5 .. 0111 -> 0.4375 (the ISA's
  // lookup table, CDNA3 ISA VOP1; identical in the GCN3 and RDNA ISA documents).
  OP("V_CVT_OFF_F32_I4", { vu1(w, in, [](uint32_t a) { return as_u(cvt_off_f32_i4(a)); }); });
  OP("V_CVT_F32_BF16", { vu1(w, in, [](uint32_t a) { return as_u(bf16_to_f32(uint16_t(a))); }); });
  OP("V_CVT_PKRTZ_F16_F32", {
    vu2(w, in, [](uint32_t a, uint32_t b) {
      auto rtz = [](float f) { uint16_t r = f32_to_f16(f); if (std::fabs(f16_to_f32(r)) > std::fabs(f) && !std::isinf(f)) --r; return uint32_t(r); };
      return rtz(as_f(a)) | (rtz(as_f(b)) << 16);
    });
  });
  OP("V_CVT_PK_BF16_F32", { vu2(w, in, [](uint32_t a, uint32_t b) { return uint32_t(f32_to_bf16(as_f(a))) | (uint32_t(f32_to_bf16(as_f(b))) << 16); }); });
  OP("V_PACK_B32_F16", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    uint8_t ma = in.src[0].mods, mb = in.src[1].mods;
    for_lanes(m, [&](int l) { d[l] = uint32_t(half_of(a[l], ma & 4)) | (uint32_t(half_of(b[l], mb & 4)) << 16); });
  });
  // f16.
  OP("V_ADD_F16", { vh2(w, in, [](float a, float b) { return a + b; }); });
  OP("V_SUB_F16", { vh2(w, in, [](float a, float b) { return a - b; }); });
  OP("V_MUL_F16", { vh2(w, in, [](float a, float b) { return a * b; }); });
  OP("V_MAX_F16", { vh2(w, in, [](float a, float b) { return std::fmax(a, b); }); });
  OP("V_MIN_F16", { vh2(w, in, [](float a, float b) { return std::fmin(a, b); }); });
  OP("V_FMA_F16", { vh3(w, in, [](float a, float b, float c) { return std::fma(a, b, c); }); });
  // Packed.
  OP("V_PK_ADD_F16", { vpk16<false>(w, in, [](float a, float b, float) { return a + b; }); });
  OP("V_PK_MUL_F16", { vpk16<false>(w, in, [](float a, float b, float) { return a * b; }); });
  OP("V_PK_FMA_F16", { vpk16<false>(w, in, [](float a, float b, float c) { return std::fma(a, b, c); }); });
  OP("V_PK_MAX_F16", { vpk16<false>(w, in, [](float a, float b, float) { return std::fmax(a, b); }); });
  OP("V_PK_MIN_F16", { vpk16<false>(w, in, [](float a, float b, float) { return std::fmin(a, b); }); });
  OP("V_PK_ADD_F32", { vpk32(w, in, [](float a, float b, float) { return a + b; }); });
  OP("V_PK_MUL_F32", { vpk32(w, in, [](float a, float b, float) { return a * b; }); });
  OP("V_PK_FMA_F32", { vpk32(w, in, [](float a, float b, float c) { return std::fma(a, b, c); }); });
  OP("V_PK_MOV_B32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    bool s0 = in.src[0].mods & 4, s1 = in.src[1].mods & 8;
    for_lanes(m, [&](int l) {
      uint64_t x = a.u64(l), y = b.u64(l);
      d[l] = s0 ? uint32_t(x >> 32) : uint32_t(x);
      d[l + 64] = s1 ? uint32_t(y >> 32) : uint32_t(y);
    });
  });
  add_op("V_DOT2_F32_F16", [](Wave& w, const Inst& in) {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) {
      float r = pk_src(a[l], in.src[0].mods, false, false) * pk_src(b[l], in.src[1].mods, false, false) +
                pk_src(a[l], in.src[0].mods, true, false) * pk_src(b[l], in.src[1].mods, true, false);
      d[l] = as_u(r + fmod32(c[l], in.src[2].mods & 3));
    });
  }, Cat::valu);
  add_op("V_DOT2_F32_BF16", [](Wave& w, const Inst& in) {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1), c = vsrc(w, in, 2);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) {
      float r = pk_src(a[l], in.src[0].mods, false, true) * pk_src(b[l], in.src[1].mods, false, true) +
                pk_src(a[l], in.src[0].mods, true, true) * pk_src(b[l], in.src[1].mods, true, true);
      d[l] = as_u(r + fmod32(c[l], in.src[2].mods & 3));
    });
  }, Cat::valu);
  OP("V_FMA_MIX_F32", {
    uint64_t m = valu_lanes(w, in);
    Src s[3] = {vsrc(w, in, 0), vsrc(w, in, 1), vsrc(w, in, 2)};
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) {
      float x[3];
      for (int k = 0; k < 3; ++k) {
        uint8_t mods = in.src[k].mods;
        if (mods & 8) { // op_sel_hi: the source is f16, op_sel picks the half
          x[k] = f16_to_f32(half_of(s[k][l], mods & 4));
        } else {
          x[k] = as_f(s[k][l]);
        }
        if (mods & 2) x[k] = std::fabs(x[k]);
        if (mods & 1) x[k] = -x[k];
      }
      d[l] = as_u(std::fma(x[0], x[1], x[2]));
    });
  });
  add_op("V_CVT_PK_FP8_F32", cvt_pk_f8_f32<false>, Cat::valu);
  add_op("V_CVT_PK_BF8_F32", cvt_pk_f8_f32<true>, Cat::valu);
  add_op("V_CVT_SCALEF32_PK_FP4_F32", cvt_scalef32_pk_fp4_f32, Cat::valu);
  add_op("V_CVT_SCALEF32_PK_BF16_FP8", cvt_scalef32_pk_bf16_fp8, Cat::valu);
  add_op("V_CVT_PK_F32_FP8", cvt_pk_f32_f8<false, false>, Cat::valu);
  add_op("V_CVT_PK_F32_BF8", cvt_pk_f32_f8<true, false>, Cat::valu);
  add_op("V_CVT_PK_F32_FP8_SDWA", cvt_pk_f32_f8<false, true>, Cat::valu); // SDWA form (decoder: name + _SDWA)
  add_op("V_CVT_PK_F32_BF8_SDWA", cvt_pk_f32_f8<true, true>, Cat::valu);
  add_op("V_CMP_CLASS_F32", cmp_class_f32<false>, Cat::valu);
  add_op("V_CMPX_CLASS_F32", cmp_class_f32<true>, Cat::valu);
  OP("V_CVT_PK_U8_F32", { vu3(w, in, [](uint32_t a, uint32_t b, uint32_t c) { return cvt_pk_u8(a, b, c); }); });
  // gfx950 v_cvt_pk_f16_f32 vdst, src0, src1 (CDNA4 ISA): {f16(src1), f16(src0)}, low half src0, each rounded
  // to nearest even (MODE's default), VOP3 neg/abs on the sources.
  OP("V_CVT_PK_F16_F32", {
    uint64_t m = valu_lanes(w, in);
    Src a = vsrc(w, in, 0), b = vsrc(w, in, 1);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) {
      d[l] = uint32_t(f32_to_f16(fmod32(a[l], in.src[0].mods & 3))) |
             uint32_t(f32_to_f16(fmod32(b[l], in.src[1].mods & 3))) << 16;
    });
  });
  // v_swap_b32 vdst, vsrc (CDNA3 ISA VOP1; the decoder gives both as dst[0], dst[1]): the two VGPRs exchange
  // their values in the lanes on in EXEC.
  OP("V_SWAP_B32", {
    if (in.ndst < 2 || in.dst[0].kind != OpKind::vgpr || in.dst[1].kind != OpKind::vgpr)
      unsupported(w, "v_swap_b32 operands not modelled");
    uint32_t *x = w.v[in.dst[0].reg].data(), *y = w.v[in.dst[1].reg].data();
    for_lanes(w.exec(), [&](int l) { std::swap(x[l], y[l]); });
  });
  OP("V_NOP", {}); // CDNA3 ISA: "do nothing"; a VALU instruction for the wait-state count
  // SDWA forms AITER uses (selects: sdwa_src / sdwa_dst above).
  add_op("V_CVT_F32_F16_SDWA", [](Wave& w, const Inst& in) {
    sdwa_op<false>(w, in, [](uint32_t a, uint32_t, uint8_t m) { return as_u(h(a, m & 3)); });
  }, Cat::valu);
  add_op("V_CVT_F16_F32_SDWA", [](Wave& w, const Inst& in) {
    sdwa_op<false>(w, in, [](uint32_t a, uint32_t, uint8_t m) { return uint32_t(f32_to_f16(fmod32(a, m & 3))); });
  }, Cat::valu);
  add_op("V_CVT_OFF_F32_I4_SDWA", [](Wave& w, const Inst& in) {
    sdwa_op<true>(w, in, [](uint32_t a, uint32_t, uint8_t) { return as_u(cvt_off_f32_i4(a)); });
  }, Cat::valu);
  add_op("V_LSHLREV_B32_SDWA", [](Wave& w, const Inst& in) {
    sdwa_op<true>(w, in, [](uint32_t a, uint32_t b, uint8_t) { return b << (a & 31); });
  }, Cat::valu);
#undef OP
  reg_cmps<F32>("F32", std::make_integer_sequence<int, 16>{});
  reg_cmps<F16>("F16", std::make_integer_sequence<int, 16>{});
  reg_cmps<F64>("F64", std::make_integer_sequence<int, 16>{});
  reg_cmps<I32>("I32", std::make_integer_sequence<int, 16>{});
  reg_cmps<U32>("U32", std::make_integer_sequence<int, 16>{});
  reg_cmps<I64>("I64", std::make_integer_sequence<int, 16>{});
  reg_cmps<U64>("U64", std::make_integer_sequence<int, 16>{});
  reg_cmps<I16>("I16", std::make_integer_sequence<int, 16>{});
  reg_cmps<U16>("U16", std::make_integer_sequence<int, 16>{});
  reg_cmps_sdwa<true>("I32", std::make_integer_sequence<int, 16>{});
  reg_cmps_sdwa<false>("U32", std::make_integer_sequence<int, 16>{});
}

} // namespace isatune::emu

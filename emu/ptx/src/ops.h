#pragma once
// The instruction table: one decoder per mnemonic (program.cpp lists them), each of which checks the
// qualifiers and operands it is given and picks a handler. Decoders throw through Decoder::error, so a kernel
// the emulator cannot run is rejected at load, naming the line and the instruction.
#include <string>
#include <vector>

#include "program.h"
#include "warp.h"

namespace isatune::emu::ptx {

class Decoder {
public:
  Decoder(const ast::Instruction& ai, Inst& in, const std::string& file, int sm)
      : ai(ai), in(in), file(file), sm(sm), used_(ai.qualifiers.size(), false) {}
  const ast::Instruction& ai;
  Inst& in;
  const std::string& file;
  int sm; // the module's target (.target sm_80 -> 80), never above the device's

  bool take(const char* q);
  bool take_any(std::initializer_list<const char*> qs);
  // The next unused type qualifier, or Ty::none.
  Ty take_type();
  Rnd take_rnd();
  // Drops qualifiers that do not change the result in a sequentially consistent emulator (cache hints,
  // memory-order and scope qualifiers): they are listed in decoder.cpp.
  void drop_hints();
  // Errors for qualifiers nobody took.
  void finish();
  void need_ops(size_t n);
  void need_ops(size_t lo, size_t hi);
  [[noreturn]] void error(const std::string& why) const;
  [[noreturn]] void not_yet() const;
  // Reinterprets float immediates of operand i in type t (f32 or f64 bits, or f16/bf16).
  void float_imm(size_t i, Ty t);

private:
  std::vector<bool> used_;
};

using DecodeFn = void (*)(Decoder& d);
// Takes a state-space qualifier (shared, shared::cta, global, local, param..., const) if the instruction has one;
// generic otherwise. Shared by ld/st/atom/red and cvta.
Space take_space(Decoder& d);

// Decoders, by file.
void decode_int(Decoder& d);   // add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind brev
void decode_carry(Decoder& d); // addc subc madc
void decode_bits(Decoder& d);  // and or xor not cnot shl shr bfe bfi prmt lop3 shf
void decode_float(Decoder& d); // add sub mul fma mad div rcp sqrt rsqrt ex2 lg2 sin cos tanh min max abs neg
void decode_cvt(Decoder& d);   // cvt cvta
void decode_compare(Decoder& d); // setp selp slct set
void decode_mov(Decoder& d);     // mov
void decode_memory(Decoder& d);  // ld ldu st atom red prefetch
void decode_warp(Decoder& d);    // shfl vote match redux activemask elect bar.warp
void decode_control(Decoder& d); // bra call ret exit trap bar barrier membar fence nanosleep brkpt pmevent
void decode_mma(Decoder& d);     // mma.sync (ops_mma.cpp)
void decode_matrix(Decoder& d);  // ldmatrix stmatrix (ops_matrix.cpp)
void decode_cp(Decoder& d);      // cp.async, commit_group, wait_group, wait_all (ops_async_copy.cpp)

// Operand `op` must be a vector of n 32-bit registers ({%r} for one, as ptxas wants).
void need_registers(Decoder& d, size_t op, size_t n, const char* what);
// .aligned warp-wide instructions (mma.sync, ldmatrix, stmatrix): reports divergence unless every lane of
// the warp executes it (the scheduler waits for live lanes only; this also catches exited ones).
void warp_wide_check(Warp& w, uint32_t act);
void decode_wgmma(Decoder& d);   // wgmma.fence .commit_group .wait_group .mma_async (ops_wgmma.cpp)

// wgmma register checks (ops_wgmma.cpp). After decoding: flags (Inst::wgmma_regs) every other instruction
// that touches a register some wgmma.mma_async of the program uses as D or A. The scheduler calls
// wgmma_register_access for flagged instructions: in-flight registers are reported, and the access is
// remembered for the wgmma.fence rule.
void mark_wgmma_register_users(Program& p);
void wgmma_register_access(Warp& w, const Inst& in, uint32_t active);
void decode_sm90(Decoder& d);    // mapa getctarank mbarrier setmaxnreg barrier.cluster
void decode_cp_bulk(Decoder& d); // cp.async.bulk{.tensor}.* (cp.reduce.async.bulk: not yet)

// Calls of the CUDA runtime's device functions (ops_control.cpp): __assertfail stops the launch with the
// assertion's message; vprintf prints nothing and returns 0.
void builtin_assertfail(Warp& w, const Inst& in, uint32_t active);
void builtin_vprintf(Warp& w, const Inst& in, uint32_t active);

// Number formats (number.cpp).
float half_to_f32(uint16_t h);
float bf16_to_f32(uint16_t b);
// Rounds a double to f16 / bf16 / f32 bits in the given mode (rn, rz, rm, rp; rna for rn with ties away).
uint16_t to_f16(double x, Rnd r, bool sat_finite = false);
uint16_t to_bf16(double x, Rnd r, bool sat_finite = false);
uint32_t to_f32(double x, Rnd r);
// f32 -> f16 exactly in the given mode (float input avoids a double rounding in rn).
inline uint16_t f32_to_f16(float x, Rnd r) {
  return to_f16(double(x), r);
}
float flush_f32(float x); // .ftz: a subnormal becomes a zero of its sign
// Canonical NaN results (#floating-point-instructions: NaN results are the canonical 0x7fffffff).
constexpr uint32_t kNanF32 = 0x7fffffffu;
constexpr uint64_t kNanF64 = 0x7fffffffffffffffull;
constexpr uint16_t kNanF16 = 0x7fff, kNanBF16 = 0x7fff;

} // namespace isatune::emu::ptx

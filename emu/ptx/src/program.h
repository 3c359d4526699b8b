#pragma once
// A PTX kernel prepared for execution: every instruction of the entry and the functions it calls, decoded
// once at load into a handler and resolved operands (register slots, immediates in the instruction's format,
// symbol addresses), so that nothing is looked up by name while threads run. Unsupported forms are rejected
// here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/ptx/ast.h"

namespace isatune::emu::ptx {

namespace ast = isatune::ptx::ast;

// Instruction data types (PTX ISA #fundamental-types).
enum class Ty : uint8_t {
  none,
  pred,
  b8,
  b16,
  b32,
  b64,
  b128,
  u8,
  u16,
  u32,
  u64,
  s8,
  s16,
  s32,
  s64,
  f16,
  f16x2,
  bf16,
  bf16x2,
  f32,
  f64
};
Ty parse_type(const std::string& q);
unsigned type_bits(Ty t);
inline bool is_signed(Ty t) {
  return t >= Ty::s8 && t <= Ty::s64;
}
inline bool is_float(Ty t) {
  return t >= Ty::f16;
}
inline bool is_half(Ty t) {
  return t >= Ty::f16 && t <= Ty::bf16x2;
}
inline uint64_t width_mask(unsigned bits) {
  return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

// Rounding modifiers (#floating-point-instructions, #data-movement-and-conversion-instructions-cvt).
enum class Rnd : uint8_t { none, rn, rz, rm, rp, rna, rni, rzi, rmi, rpi };

// shared_cluster: .shared::cluster (an address of this CTA's or another cluster CTA's shared memory;
// cluster.cpp documents the encoding).
enum class Space : uint8_t { generic, global, shared, local, param, const_, shared_cluster };

// Generic-address windows (cvta): global addresses are the device allocations (emu/common/memory.h);
// .const variables live in device memory too, so const addresses equal their generic ones.
constexpr uint64_t kSharedWindow = 0x0000'1000'0000'0000ull;
constexpr uint64_t kLocalWindow = 0x0000'2000'0000'0000ull;
constexpr uint64_t kParamWindow = 0x0000'3000'0000'0000ull;
constexpr uint64_t kWindowSize = 1ull << 32;

struct Opnd {
  enum class Kind : uint8_t { none, reg, imm, special, addr, vec, sink };
  Kind kind = Kind::none;
  bool negate = false; // !%p
  ast::Special special = ast::Special::tid;
  uint8_t component = 0;
  uint8_t rbits = 0;                // reg: declared width
  uint32_t slot = 0;                // reg / addr base: register slot
  bool has_base = false;            // addr: a register base
  Space sym_space = Space::generic; // addr with a symbol base: the symbol's state space
  uint8_t fimm = 0; // imm from a float literal: 1 f32 bits, 2 f64 bits (decoders convert to their type)
  uint64_t imm = 0; // imm: bits; addr: constant offset (symbol address included)
  std::vector<Opnd> elems; // vec
};

struct Inst;
struct Warp;
using Handler = void (*)(Warp& w, const Inst& in, uint32_t active);

// What the scheduler must do around an instruction before its handler runs.
enum class Sync : uint8_t {
  none,
  collective, // waits for the lanes of its membermask (shfl/vote/match/redux/elect/bar.warp.sync)
  barrier,    // CTA barrier (bar.sync / barrier.sync / bar.red / bar.arrive)
  branch,     // sets PCs itself
  call,
  ret,
  exit,
  warpgroup, // waits for every live warp of its warpgroup (warp index / 4) at it: wgmma.wait_group
  wait, // may park lanes until a cluster-wide event (mbarrier phase, barrier.cluster, setmaxnreg): the
        // handler sets Warp::park for the lanes that must wait (cta.cpp)
};

struct CallCopy {
  Space src_space, dst_space;
  uint64_t src, dst;
  uint32_t bytes;
};

struct Inst {
  Handler fn = nullptr;
  Sync sync = Sync::none;
  Ty type = Ty::none, type2 = Ty::none; // e.g. cvt.<type>.<type2>, setp.<cmp>.<type>
  Rnd rnd = Rnd::none;
  bool ftz = false, sat = false, approx = false;
  uint8_t op = 0;  // sub-operation (compare, atomic op, shfl mode, ...) as the handler defines it
  uint8_t op2 = 0; // second sub-operation (setp combine, mul .lo/.hi/.wide, ...)
  uint8_t vec = 1; // ld/st .v2/.v4
  Space space = Space::generic;
  bool aligned = false; // .aligned collective / bar.sync
  int8_t mask_op = -1;  // collective: operand index of the membermask (-1: the whole warp)
  int8_t count_op = -1; // barrier: operand index of the thread count (-1: every thread of the CTA)
  bool has_guard = false;
  bool guard_negate = false;
  uint32_t guard_slot = 0;
  uint32_t index = 0;  // position in Program::code
  uint32_t target = 0; // branch / call target
  std::vector<Opnd> ops;
  std::vector<CallCopy> args, rets; // call: parameter copies in, results out
  uint32_t line = 0;
  std::string text;  // the instruction as written (reconstructed), for reports
  uint32_t cost = 1; // emulated cycles per warp instruction

  // Instruction-specific packed immediates (wgmma.mma_async: shape, types, flags).
  uint32_t aux = 0;
  // Touches a register some wgmma.mma_async uses as D or A (ops_wgmma.cpp checks those accesses).
  bool wgmma_regs = false;
};

struct SharedLayout {
  uint32_t static_bytes = 0;
  uint32_t dynamic_offset = 0; // where `.extern .shared` arrays start
  uint32_t dynamic_align = 16;
};

// One kernel, prepared.
struct Program {
  std::string name;
  std::vector<Inst> code;          // the entry function first (its first instruction at 0), then callees
  uint32_t slots = 0;              // register slots (one per register element, 64-bit each)
  std::vector<uint64_t> slot_mask; // declared width per slot
  SharedLayout shared;
  uint32_t local_bytes = 0; // per thread: .local variables and .func parameters
  uint32_t param_bytes = 0; // kernel parameter buffer
  uint32_t reqntid[3] = {0, 0, 0}, maxntid[3] = {0, 0, 0}, reqnctapercluster[3] = {0, 0, 0};
  uint32_t maxnreg = 0; // .maxnreg (0: absent)
  KernelInfo info;
};

// Module-level state a loaded PTX module owns: its .global / .const variables in device memory.
struct ModuleData {
  std::vector<std::pair<std::string, uint64_t>> globals; // name -> device address
  uint64_t find(const std::string& name) const {
    for (auto& [n, a] : globals)
      if (n == name)
        return a;
    return 0;
  }
};

// Decodes an entry function and every function it calls. Throws EmulationError naming file, line and
// instruction for anything the emulator does not run.
std::shared_ptr<const Program> build_program(const ast::Module& module, const ast::Function& entry,
                                             const ModuleData& data, int sm);

} // namespace isatune::emu::ptx

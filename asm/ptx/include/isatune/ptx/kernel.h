#pragma once
// The kernel builder: parameters, shared memory, launch directives, registers and one method per instruction
// form. Every method checks that the module's target has the form (an sm_90a form on sm_80 throws
// BuilderError here, not a ptxas message later) and records the PTX version it needs, so the printer can
// declare the lowest .version that covers the kernel. Forms and semantics: shared/notes/ptx.md.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isatune/error.h"
#include "isatune/ptx/instruction.h"
#include "isatune/ptx/operand.h"
#include "isatune/ptx/registers.h"
#include "isatune/ptx/target.h"
#include "isatune/ptx/types.h"

namespace isatune::ptx {

// An instruction form the target lacks, a bad operand count or an out-of-range immediate.
class BuilderError : public InputError {
public:
  using InputError::InputError;
};

struct Param {
  std::string name;
  Type type = Type::u64;  // u32/u64/f32/...; b8 with array_bytes for byte arrays (tensor maps)
  uint32_t align = 0;     // 0: natural
  uint32_t array_bytes = 0;
  bool pointer = false;   // .ptr .global (a device pointer)
  std::string decl() const;
};

struct SharedVar {
  std::string name;
  uint32_t bytes = 0;     // 0 with dynamic = true: `.extern .shared .align A .b8 name[];`
  uint32_t align = 16;
  bool dynamic = false;
};

struct Label {
  std::string name;
};

enum class CacheOp { none, ca, cg, cs, lu, cv, wb, wt };
enum class Cmp { eq, ne, lt, le, gt, ge, lo, ls, hi, hs };
enum class Rounding { none, rn, rz, rm, rp, rni, rzi, rmi, rpi };
enum class ShflMode { up, down, bfly, idx };
enum class MmaType { f16, bf16 };
enum class SpecialReg {
  tid_x, tid_y, tid_z, ntid_x, ntid_y, ntid_z, ctaid_x, ctaid_y, ctaid_z, nctaid_x, nctaid_y, nctaid_z,
  laneid, warpid, cluster_ctarank, cluster_nctarank, clusterid_x, clusterid_y, clusterid_z,
  cluster_ctaid_x, cluster_ctaid_y, cluster_ctaid_z, cluster_nctaid_x
};

class Kernel {
public:
  Kernel(std::string name, Target target);

  const std::string& name() const { return name_; }
  const Target& target() const { return target_; }

  // ---- Registers
  Reg reg(RegClass cls) { return regs_.alloc(cls); }
  std::vector<Reg> regs(RegClass cls, uint32_t count) { return regs_.alloc(cls, count); }
  const RegisterAllocator& allocator() const { return regs_; }

  // ---- Parameters (in declaration order)
  Param param(std::string name, Type type);               // .param .u32 K
  Param param_ptr(std::string name, uint32_t align = 16); // .param .u64 .ptr .global .align 16 pC
  Param param_tensor_map(std::string name);               // .param .align 64 .b8 tm[128] (a CUtensorMap)
  const std::vector<Param>& params() const { return params_; }

  // ---- Shared memory
  SharedVar shared(std::string name, uint32_t bytes, uint32_t align = 16);
  SharedVar dynamic_shared(std::string name, uint32_t align = 16); // one per kernel
  const std::vector<SharedVar>& shared_vars() const { return shared_; }

  // ---- Launch directives
  void maxntid(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  void reqntid(uint32_t x, uint32_t y = 1, uint32_t z = 1);
  void reqnctapercluster(uint32_t x, uint32_t y = 1, uint32_t z = 1); // sm_90
  void maxnreg(uint32_t n);
  void minnctapersm(uint32_t n);
  std::vector<std::string> directives() const;

  // ---- Labels and control flow
  Label new_label(std::string hint = "L");
  void place(const Label& l);
  Instruction& bra(const Label& l, bool uniform = false);
  Instruction& ret();
  Instruction& exit();

  // ---- Moves, special registers, address conversion
  Instruction& mov(Type t, Reg d, Operand a);
  Instruction& mov_sreg(Reg d, SpecialReg s);         // mov.u32 d, %tid.x (cluster registers: sm_90)
  Instruction& mov_addr(Reg d, const std::string& symbol); // mov.u32/u64 d, sbuf (address of a variable)
  Instruction& cvta_to_global(Reg d, Reg a);            // cvta.to.global.u64
  Instruction& cvta_param(Reg d, const Param& p);       // mov.b64 d, p; cvta.param.u64 d, d (PTX 7.7)
  Instruction& pack(Type t, Reg d, const std::vector<Reg>& parts);   // mov.b32 d, {lo, hi}
  Instruction& unpack(Type t, const std::vector<Reg>& parts, Reg a); // mov.b32 {lo, hi}, a

  // ---- Memory
  // ld.space{.cache}{.nc}{.vN}.type; d holds 1, 2 or 4 registers (<= 128 bits in all).
  Instruction& ld(Space s, Type t, const std::vector<Reg>& d, const Address& a, CacheOp c = CacheOp::none,
                  bool non_coherent = false);
  Instruction& st(Space s, Type t, const Address& a, const std::vector<Reg>& v, CacheOp c = CacheOp::none);
  Instruction& ld_param(Type t, Reg d, const Param& p, int64_t offset = 0);

  // ---- Integer and float arithmetic. op names the PTX opcode with its modifiers ("add", "mul.lo",
  // "mul.wide", "mad.lo", "fma.rn", "min", "max", "and", "or", "xor", "shl", "shr", "div.rn", "ex2.approx.ftz").
  Instruction& unary(const std::string& op, Type t, Reg d, Operand a);
  Instruction& binary(const std::string& op, Type t, Reg d, Operand a, Operand b);
  Instruction& ternary(const std::string& op, Type t, Reg d, Operand a, Operand b, Operand c);
  Instruction& add(Type t, Reg d, Operand a, Operand b) { return binary("add", t, d, a, b); }
  Instruction& sub(Type t, Reg d, Operand a, Operand b) { return binary("sub", t, d, a, b); }
  Instruction& mul_lo(Type t, Reg d, Operand a, Operand b) { return binary("mul.lo", t, d, a, b); }
  Instruction& mul_wide(Type t, Reg d, Operand a, Operand b) { return binary("mul.wide", t, d, a, b); }
  Instruction& mad_lo(Type t, Reg d, Operand a, Operand b, Operand c) { return ternary("mad.lo", t, d, a, b, c); }
  Instruction& fma_rn(Type t, Reg d, Operand a, Operand b, Operand c) { return ternary("fma.rn", t, d, a, b, c); }

  // ---- Conversion. cvt{.rnd}.dst.src d, a; cvt_pack: cvt.rn.{bf16x2,f16x2}.f32 d, hi, lo (note the order:
  // the first source goes to the upper half).
  Instruction& cvt(Rounding r, Type dst, Type src, Reg d, Reg a);
  Instruction& cvt_pack(Type dst_x2, Reg d, Reg hi, Reg lo);

  // ---- Comparison and selection
  Instruction& setp(Cmp c, Type t, Reg p, Operand a, Operand b);
  Instruction& selp(Type t, Reg d, Operand a, Operand b, Reg p);

  // ---- Barriers and warp operations
  Instruction& bar_sync(uint32_t id = 0, std::optional<uint32_t> threads = std::nullopt);
  Instruction& bar_arrive(uint32_t id, uint32_t threads);
  Instruction& barrier_sync(uint32_t id = 0, std::optional<uint32_t> threads = std::nullopt); // barrier.sync.aligned
  Instruction& shfl_sync(ShflMode m, Reg d, Reg a, Operand b, uint32_t c, uint32_t mask = 0xffffffffu);

  // ---- Atomics: red.space.op.type [a], b  and  atom.space.op.type d, [a], b{, c}
  Instruction& red(Space s, const std::string& op, Type t, const Address& a, Operand b);
  Instruction& atom(Space s, const std::string& op, Type t, Reg d, const Address& a, Operand b,
                    std::optional<Operand> c = std::nullopt);

  // ---- Asynchronous copies (sm_80)
  Instruction& cp_async(CacheOp c, const Address& dst_shared, const Address& src_global, uint32_t bytes,
                        std::optional<Operand> src_bytes = std::nullopt);
  Instruction& cp_async_commit_group();
  Instruction& cp_async_wait_group(uint32_t n);
  Instruction& cp_async_wait_all();

  // ---- Matrix fragments and tensor cores (sm_80; stmatrix sm_90)
  Instruction& ldmatrix(uint32_t num, bool trans, const std::vector<Reg>& d, const Address& a); // num 1, 2, 4
  Instruction& stmatrix(uint32_t num, bool trans, const Address& a, const std::vector<Reg>& v);
  // mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 d[4], a[4], b[2], c[4]
  Instruction& mma_m16n8k16(MmaType t, const std::vector<Reg>& d, const std::vector<Reg>& a,
                            const std::vector<Reg>& b, const std::vector<Reg>& c);

  // ---- sm_90a: wgmma
  Instruction& wgmma_fence();
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16} d[N/2], a_desc, b_desc, scale_d,
  // scale_a, scale_b, trans_a, trans_b (both operands from shared-memory descriptors).
  Instruction& wgmma_mma_async(MmaType t, uint32_t n, const std::vector<Reg>& d, Reg a_desc, Reg b_desc,
                               Operand scale_d, int scale_a = 1, int scale_b = 1, int trans_a = 0,
                               int trans_b = 0);
  Instruction& wgmma_commit_group();
  Instruction& wgmma_wait_group(uint32_t n);

  // ---- sm_90: mbarrier (addresses are .shared::cta), fences
  Instruction& mbarrier_init(const Address& bar, Operand count);
  Instruction& mbarrier_arrive(std::optional<Reg> state, const Address& bar);
  Instruction& mbarrier_arrive_expect_tx(const Address& bar, Operand bytes);
  Instruction& mbarrier_try_wait_parity(Reg p, const Address& bar, Operand parity);
  Instruction& fence_mbarrier_init();
  Instruction& fence_proxy_async_shared();

  // ---- sm_90: TMA. Coordinates are .s32 registers, innermost first.
  Instruction& tma_load(uint32_t dims, const Address& dst_shared, Reg tensor_map, const std::vector<Reg>& coords,
                        const Address& bar, std::optional<Reg> multicast_mask = std::nullopt);
  Instruction& tma_store(uint32_t dims, Reg tensor_map, const std::vector<Reg>& coords, const Address& src_shared);
  Instruction& bulk_commit_group();
  Instruction& bulk_wait_group(uint32_t n, bool read = false);

  // ---- sm_90a / sm_90: warp-group register reallocation, leader election
  Instruction& setmaxnreg(bool increase, uint32_t count); // sm_90a
  Instruction& elect_sync(std::optional<Reg> d, Reg p, uint32_t mask = 0xffffffffu);

  // ---- Escape hatch: any instruction text with its requirement (checked like the others).
  Instruction& raw(std::string opcode, std::vector<Operand> operands, Requirement req = {});

  const std::vector<Instruction>& body() const { return body_; }
  // The lowest PTX version covering the target, the directives and every instruction (x10).
  int required_ptx_version() const;

private:
  Instruction& emit(std::string opcode, std::vector<std::string> operands, Requirement req);
  void require(const Requirement& req, const std::string& what);

  std::string name_;
  Target target_;
  RegisterAllocator regs_;
  std::vector<Param> params_;
  std::vector<SharedVar> shared_;
  std::optional<std::array<uint32_t, 3>> maxntid_, reqntid_, cluster_;
  std::optional<uint32_t> maxnreg_, minnctapersm_;
  std::vector<Instruction> body_;
  uint32_t label_counter_ = 0;
  int directive_version_ = 70;
};

} // namespace isatune::ptx

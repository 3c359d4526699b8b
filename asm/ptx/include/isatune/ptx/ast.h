#pragma once
// PTX text as data: what the parser (parser.h) makes of a module, and what the PTX emulator executes.
//
// The parser resolves names so that nothing downstream looks a string up per instruction: every register
// operand carries the index of its declaration in its function (with `{ }` scopes applied, so inline-asm blocks
// may repeat register and label names), every branch or call target carries a statement or function index.
// Registers are untyped bits of their declared width (Triton writes `mul.f32` on `.b32` registers); the
// instruction's own type qualifiers say how to read them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace isatune::ptx::ast {

struct SourceLoc {
  uint32_t line = 0;   // 1-based; 0: unknown
  uint32_t column = 0; // 1-based
};

enum class StateSpace : uint8_t { none, reg, sreg, const_, global, local, param, shared, shared_cta, shared_cluster, tex };

// A register: `.reg .v4 .f32 %v;` declares one with vector = 4 (its elements are addressed as %v.x ... %v.w),
// at once. `.reg .b32 %r<10>;` declares the names %r0..%r9, and each becomes a RegDecl on its first use (named
// plainly: %r03 is %r3, as in ptxas), so a count of millions costs nothing; Function::regs lists the registers
// declared alone and those used, in the order they appeared.
struct RegDecl {
  std::string name;   // "%r3", "%p1", "P1" (inline-asm scopes use plain names)
  std::string type;   // "b32", "f32", "pred", ...
  uint32_t bits = 0;  // width of one element: 1 for .pred, 16/32/64 otherwise
  uint32_t vector = 1;
  uint32_t scope = 0; // index into Function::scopes of the `{ }` block that declares it
};

// Special registers (%tid.x and the like). `index` is the component (x=0, y=1, z=2) where there is one.
enum class Special : uint8_t {
  tid, ntid, ctaid, nctaid, laneid, warpid, nwarpid, smid, nsmid, gridid, lanemask_eq, lanemask_le, lanemask_lt,
  lanemask_ge, lanemask_gt, clock, clock64, globaltimer, cluster_ctarank, cluster_nctarank, clusterid, nclusterid,
  cluster_ctaid, cluster_nctaid, is_explicit_cluster, dynamic_smem_size, total_smem_size, envreg,
  // Added with the parser: the rest of what ptxas 13.0 accepts. pm (%pm0..%pm7) and pm64 (%pm0_64..) carry
  // the counter number in `component`, as envreg (%envreg0..%envreg31) does.
  clock_hi, globaltimer_lo, globaltimer_hi, aggr_smem_size, pm, pm64, current_graph_exec,
  reserved_smem_offset_begin, reserved_smem_offset_end, reserved_smem_offset_cap, reserved_smem_offset_0,
  reserved_smem_offset_1
};

struct Operand {
  enum class Kind : uint8_t {
    reg,      // reg: index into Function::regs; element: vector element (0..3) or -1 for the whole register
    special,  // special + component
    imm_int,  // i (as written, sign-extended to 64 bits)
    imm_float,// bits: the IEEE bits as written; f32 true for 0fXXXXXXXX and decimal literals that fit
    symbol,   // name: a parameter, a global / shared / const variable, or a function (call targets)
    address,  // [base + offset]: base is a reg (reg index), a symbol (name) or absent (absolute address)
    vector,   // {a, b, ...}: elems
    label,    // target: index into Function::body of the labelled statement
    sink,     // _
    pair,     // a|b (dual outputs of shfl.sync, elect.sync, setp): elems[0], elems[1]
  };
  // What a symbol (or an address's symbol base) names, resolved by the parser so that nothing looks the name
  // up again: index is into Function::params / Function::returns / Function::locals (the declaration visible
  // in the operand's scope) / Module::globals / Module::functions.
  enum class Ref : uint8_t { none, param, ret, local, global, function };

  Kind kind = Kind::reg;
  bool negate = false; // `!%p` as a source predicate
  int32_t reg = -1;
  int8_t element = -1;
  Special special = Special::tid;
  uint8_t component = 0;
  int64_t i = 0;
  uint64_t bits = 0;
  bool f32 = false;
  std::string name;    // symbol name; for address, the symbol base (empty when the base is a register)
  int64_t offset = 0;  // address: the constant part
  uint32_t target = 0; // label: statement index
  std::vector<Operand> elems;
  Ref ref = Ref::none; // symbol, and address with a symbol base
  int32_t index = -1;

  // Forms worth spelling out (the parser makes exactly these):
  // - `sym+8` as a source (mov.u64 %rd1, sbuf+8): symbol with offset 8.
  // - `[%rd1+-4]`: address, reg set, offset -4; `[sbuf+8]`: address, name "sbuf", ref/index set, offset 8;
  //   `[64]`: address with reg -1, empty name, offset 64. `[%v.x]` is not PTX.
  // - tensor addresses `[%rd1, {%r1, %r2}]` (cp.async.bulk.tensor, cp.reduce.async.bulk.tensor,
  //   prefetch.tensor): address whose base is the tensor map (reg or symbol) and whose elems holds one vector
  //   operand, the coordinates. Other addresses have no elems.
  // - integer constant expressions (`(1<<3)`, `4*4`, `~0`, `-1`) are folded: imm_int. Decimal float
  //   expressions (`1.5`, `-.5`, `1.0+0.5`) are folded in double precision: imm_float with f32 set and the
  //   f32 bits when the double converts to f32 exactly, else f32 false and the f64 bits. `0fXXXXXXXX` keeps
  //   its bits with f32 set, `0dXXXXXXXXXXXXXXXX` its bits with f32 false (ptxas allows no expression
  //   around them).
  // - `%r1|%p1`, `_|%p1`: pair of two reg/sink operands.
  // - `!%p1`: reg with negate. A guard `@!%p1` is the same in Instruction::guard.
  // - call (`call.uni (retval0), fname, (param0, param1);`): operands are [vector of return params, only when
  //   written], the function as symbol (ref function, index into Module::functions), and always a vector of
  //   the arguments (empty for `call f;` and `call f, ();`). Their elements are symbols naming .param
  //   variables of the caller (ref local) or, where PTX allows it, registers and immediates.
  // - branch targets (bra): label with target = the statement index of the label definition, and name =
  //   the label's name.
};

// One instruction. opcode is the whole dotted text as written; mnemonic and qualifiers split it. The mnemonic
// is always the first dotted component and the qualifiers are all the others, in the order written:
//   cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
//     -> "cp", {"async", "bulk", "tensor", "2d", "shared::cluster", "global", "tile",
//               "mbarrier::complete_tx::bytes"}
//   bar.warp.sync                   -> "bar", {"warp", "sync"}
//   barrier.cluster.arrive.aligned  -> "barrier", {"cluster", "arrive", "aligned"}
//   fence.proxy.async.shared::cta   -> "fence", {"proxy", "async", "shared::cta"}
//   wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 -> "wgmma", {"mma_async", "sync", "aligned", ...}
//   mbarrier.try_wait.parity.shared::cta.b64 -> "mbarrier", {"try_wait", "parity", "shared::cta", "b64"}
// so a consumer dispatches on mnemonic, then on qualifiers[0] where the family has sub-operations.
// ("ldmatrix.sync.aligned.x2.m8n8.shared.b16" -> "ldmatrix", {"sync", "aligned", "x2", "m8n8", "shared", "b16"},
// each without its leading dot; "::" stays inside a qualifier: "shared::cta", "L2::128B").
struct Instruction {
  std::string opcode;
  std::string mnemonic;
  std::vector<std::string> qualifiers;
  std::optional<Operand> guard; // @%p or @!%p (a reg operand, negate set for @!)
  std::vector<Operand> operands;
  SourceLoc loc;

  bool has(const char* qualifier) const {
    for (const auto& q : qualifiers)
      if (q == qualifier) return true;
    return false;
  }
};

// A statement of a function body: an instruction, or a label definition (instruction.mnemonic empty).
struct Statement {
  Instruction inst;
  std::string label;  // the label defined here (instruction empty)
  uint32_t scope = 0; // the `{ }` block the statement is in
};

struct Scope {
  int32_t parent = -1; // -1 for the function's outermost scope
};

// A variable in a state space: module-level (.global, .const, .shared, .extern .shared) or function-level
// (.shared, .local, .param inside a body).
struct Variable {
  std::string name;
  StateSpace space = StateSpace::none;
  std::string type;            // element type: "b8", "f32", "u64", ...
  uint32_t element_bytes = 0;
  uint32_t align = 0;          // 0: natural (element_bytes)
  uint32_t vector = 1;         // .v2 / .v4
  std::vector<uint64_t> dims;  // array dimensions as declared; an empty `[]` is 0 (dynamic / extern)
  bool external = false;       // .extern
  bool is_const_init = false;
  std::vector<uint8_t> init;   // initialiser bytes (little-endian), when given
  uint64_t bytes() const;      // element_bytes * vector * product(dims); 0 for dynamic
  SourceLoc loc;
  // Added with the parser. is_const_init is set whenever an initialiser was given (the parser fills init to
  // bytes(), zeros after the written elements; `name[] = {..}` takes its size from the initialiser).
  uint32_t scope = 0; // function-level variables: the `{ }` block that declares it (Function::scopes index)
};

struct Param {
  std::string name;
  std::string type;            // "u64", "b8", ...
  uint32_t element_bytes = 0;
  uint32_t align = 0;
  uint64_t array = 0;          // 0: scalar; n: `name[n]`
  bool pointer = false;        // .ptr
  std::string pointer_space;   // .ptr .global -> "global"
  uint32_t pointer_align = 0;
  uint32_t offset = 0;         // byte offset in the parameter buffer (entry kernels: kernel argument layout)
  uint32_t bytes() const { return element_bytes * static_cast<uint32_t>(array ? array : 1); }
  SourceLoc loc;
  // Added with the parser: a .func parameter or return declared in .reg (`.func f(.reg .b32 a)`) is a
  // register of the body, Function::regs[reg_index] (scope 0); it has no offset in the parameter buffer.
  bool reg = false;
  int32_t reg_index = -1;
};

struct Function {
  std::string name;
  bool entry = false;          // .entry (a kernel) or .func
  bool visible = false;        // .visible
  bool external = false;       // .extern .func (declaration only: no body)
  std::vector<Param> params;   // kernel parameters, or a .func's input parameters
  std::vector<Param> returns;  // a .func's return parameters
  std::vector<RegDecl> regs;
  std::vector<Scope> scopes;   // scopes[0] is the body
  std::vector<Variable> locals; // .local / .shared / .param declared in the body
  std::vector<Statement> body;
  // Performance directives (0: absent).
  uint32_t maxntid[3] = {0, 0, 0}, reqntid[3] = {0, 0, 0}, reqnctapercluster[3] = {0, 0, 0};
  uint32_t minnctapersm = 0, maxnreg = 0, maxclusterrank = 0;
  bool noreturn = false;
  SourceLoc loc;
  uint32_t param_bytes() const; // size of the parameter buffer, params at their offsets
  // Added with the parser.
  bool explicitcluster = false;                        // .explicitcluster
  bool defined() const { return !scopes.empty(); }    // has a body (a prototype or .extern .func has none)
};

struct Module {
  uint32_t version_major = 0, version_minor = 0; // .version 8.0
  std::string target;                              // "sm_90a"
  std::vector<std::string> target_options;         // .target sm_80, texmode_independent -> {"texmode_independent"}
  uint32_t address_size = 64;
  std::vector<Variable> globals;                   // module-level variables, in order
  std::vector<Function> functions;                 // entries and funcs, in order
  std::string file;                                // the name given to the parser (for messages)

  const Function* find(const std::string& name) const;
  const Variable* find_global(const std::string& name) const;
};

} // namespace isatune::ptx::ast

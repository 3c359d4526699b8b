#pragma once
// The instruction form catalogue: one table (forms.cpp) describing every instruction the builder offers:
// its spelling per target, encoding class, operand slots (role, register files, width), the modifiers it
// takes, the wait counter it increments and a category for hazard rules. Later passes (wait counts, hazards)
// work from this table only.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "isatune/cdna/registers.h"
#include "isatune/cdna/target.h"

namespace isatune::cdna {

enum class Encoding : uint8_t {
  sop1,
  sop2,
  sopk,
  sopc,
  sopp,
  smem,
  vop1,
  vop2,
  vop3,
  vop3p,
  vopc,
  vopc_e64,
  dpp,
  ds,
  mubuf,
  global,
  mfma
};

enum class Category : uint8_t {
  salu,       // scalar ALU
  smem,       // scalar memory (s_load, s_memtime)
  branch,     // s_branch, s_cbranch_*
  waitcnt,    // s_waitcnt
  barrier,    // s_barrier
  nop,        // s_nop
  endpgm,     // s_endpgm
  sched,      // s_setprio, s_sleep
  valu,       // vector ALU (not one of the below)
  trans,      // transcendental VALU: exp, log, rcp, rsq, sqrt
  dot,        // v_dot*
  dpp,        // VALU with DPP controls
  lane,       // v_readlane, v_writelane, v_readfirstlane
  accvgpr,    // v_accvgpr_read/write/mov
  mfma,       // matrix instructions: see Form::mfma_class and passes
  vmem_load,  // global/buffer loads
  vmem_store, // global/buffer stores
  ds,         // LDS: read, write, atomics, swizzle, permute
};

// The wait counter an instruction increments (shared/notes/cdna.md section 5).
enum class Counter : uint8_t { none, vm, lgkm, vm_lgkm };

// MFMA class for hazard rules: on gfx942/950 only `xdl` ones are XDL; `f32` ones are SMFMA there and XDL on
// gfx90a; `f64` are DGEMM everywhere.
enum class MfmaClass : uint8_t { none, xdl, f32, f64 };

enum class Role : uint8_t { def, use, def_use };

// Operand kinds a slot accepts (bit set).
enum OperandKind : uint16_t {
  k_sgpr = 1, // SGPRs and scalar special registers of the same width (vcc, exec, m0)
  k_vgpr = 2,
  k_agpr = 4,
  k_vcc = 8,      // exactly vcc (VOP2/VOPC implicit operand spelled out)
  k_inline = 16,  // inline constant: integer -16..64 or 0.5, 1.0, 2.0, 4.0 (either sign), 1/(2*pi)
  k_literal = 32, // any 32-bit constant (VOP1/VOP2/SOP only)
  k_label = 64,
  k_off = 128,  // the word `off` (no SGPR base / no VGPR address)
  k_simm = 256, // an immediate field with its own range (offsets, s_nop count, lane select)
};

// Modifiers a form takes (bit set).
enum ModifierKind : uint32_t {
  m_offset = 1,      // offset:N
  m_offset01 = 2,    // offset0:N offset1:N (ds_read2/write2)
  m_cache = 4,       // glc slc (gfx90a) / sc0 sc1 nt (gfx942, gfx950)
  m_offen_idxen = 8, // MUBUF offen idxen
  m_op_sel = 16,     // VOP3P op_sel op_sel_hi
  m_dpp = 32,        // DPP control, row_mask, bank_mask, bound_ctrl
  m_mfma = 64,       // cbsz abid blgp
  m_waitcnt = 128,   // vmcnt expcnt lgkmcnt
  m_swizzle = 256,   // ds_swizzle offset pattern
};

struct Slot {
  std::string_view name;
  Role role;
  uint16_t kinds;
  uint8_t width; // dwords (for registers)
};

struct Form {
  std::string_view name;                    // canonical name (gfx942 spelling): what Builder::emit takes
  std::array<std::string_view, 3> spelling; // per Gfx; empty: the target does not have this form
  Encoding encoding;
  Category category;
  Counter counter;
  std::vector<Slot> slots;
  uint32_t modifiers = 0;
  std::vector<Reg> implicit_defs;
  std::vector<Reg> implicit_uses;
  MfmaClass mfma_class = MfmaClass::none;
  std::array<uint8_t, 3> passes{};    // MFMA passes per Gfx (cycles / 4)
  int64_t simm_min = 0, simm_max = 0; // range of a k_simm slot (or of the offset modifier)

  bool available_on(Gfx g) const { return !spelling[static_cast<int>(g)].empty(); }
  std::string_view mnemonic(Gfx g) const { return spelling[static_cast<int>(g)]; }
  bool is_vector() const; // executes per lane (observes EXEC)
  bool is_memory_store() const { return category == Category::vmem_store; }
};

const std::vector<Form>& all_forms();
// By canonical name or any target spelling; nullptr when unknown.
const Form* find_form(std::string_view name);

std::string_view to_string(Encoding e);
std::string_view to_string(Category c);
std::string_view to_string(Counter c);

} // namespace isatune::cdna

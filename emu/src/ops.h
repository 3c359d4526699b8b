#pragma once
// The instruction handlers, registered by base name (the LLVM opcode name without encoding suffixes).
#include <string>
#include <string_view>

#include "inst.h"

namespace isatune::emu {

struct OpInfo {
  Handler fn = nullptr;
  Cat cat = Cat::other;
};

void add_op(std::string_view name, Handler fn, Cat cat);
const OpInfo* find_op(std::string_view base_name);

// One per file; called once by find_op.
void register_scalar_ops();
void register_vector_ops();
void register_lane_ops();
void register_memory_ops();
void register_mfma_ops();

// MFMA shapes the emulator computes (shared/notes/cdna.md section 4).
// f8f6f4: gfx950's format-selected operands (the format comes from cbsz / blgp at run time).
enum class MType : uint8_t { f16, bf16, fp8, bf8, f32, i8, f8f6f4 };
struct MfmaShape {
  const char* name;  // base name
  uint8_t m, n, k;
  MType a, b;
  uint8_t ab_regs, cd_regs;
  uint16_t cycles[3]; // gfx90a, gfx942, gfx950 (0: not on that target)
  // f8f6f4 and sparse shapes (gfx950): B's register count where it differs from A's (ab_regs), the E8M0
  // block scales of v_mfma_scale_*, and the 4:2 sparse A of v_smfmac_* (its index in SrcC's field).
  uint8_t b_regs = 0;
  bool scaled = false, sparse = false;
};
const MfmaShape* find_mfma(std::string_view base_name);

} // namespace isatune::emu

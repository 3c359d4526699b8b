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
enum class MType : uint8_t { f16, bf16, fp8, bf8, f32, i8 };
struct MfmaShape {
  const char* name;  // base name
  uint8_t m, n, k;
  MType a, b;
  uint8_t ab_regs, cd_regs;
  uint16_t cycles[3]; // gfx90a, gfx942, gfx950 (0: not on that target)
};
const MfmaShape* find_mfma(std::string_view base_name);

} // namespace isatune::emu

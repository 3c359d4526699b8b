#pragma once
// Register fragment layouts of the warp- and warpgroup-level matrix instructions as pure functions:
// which matrix element a thread's register (and 16-/8-bit part of it) holds. The emulator executes mma.sync,
// ldmatrix/stmatrix and wgmma through these maps. Sources: PTX ISA anchors
// #warp-level-matrix-fragment-mma-16816-float, #warp-level-matrix-fragment-mma-1688,
// #warp-level-matrix-instructions-ldmatrix / -stmatrix,
// #asynchronous-warpgroup-level-matrix-register-fragment; CuTe mma_traits_sm80.hpp, copy_traits_sm75.hpp,
// mma_traits_sm90_gmma.hpp (shared/notes/ptx-emulation.md 2.1-2.6). Every function throws isatune::InputError
// for an index out of range.
#include <cstdint>

namespace isatune::ptx {

struct MatrixCoord {
  uint32_t row = 0;
  uint32_t col = 0;
  friend bool operator==(const MatrixCoord&, const MatrixCoord&) = default;
};

// One 16-bit (or 8-bit) part of one thread's register: register index and part (half 0 = low 16 bits;
// byte 0 = lowest 8 bits). A packed .b32 holds the lower element index in its low part (ISA: "each .b32
// holds two .f16/.bf16 elements", a0 in bits 15:0).
struct FragmentSlot {
  uint32_t lane = 0; // lane 0..31 (warp) or thread 0..127 (warpgroup)
  uint32_t reg = 0;
  uint32_t part = 0;
  friend bool operator==(const FragmentSlot&, const FragmentSlot&) = default;
};

// ---- mma.sync.aligned.m16n8k16 / m16n8k8 with .f16/.bf16 inputs
// --------------------------------------------
enum class MmaShape { m16n8k16, m16n8k8 };

uint32_t mma_m(MmaShape s); // 16
uint32_t mma_n(MmaShape s); // 8
uint32_t mma_k(MmaShape s); // 16 or 8

// Registers per thread: A 4 (k16) / 2 (k8) .b32, B 2 / 1 .b32, C/D 4 .f32 or 2 .f16x2.
uint32_t mma_a_registers(MmaShape s);
uint32_t mma_b_registers(MmaShape s);

// A (M x K, "row"): lane, register, half -> (row m, col k).
MatrixCoord mma_a(MmaShape s, uint32_t lane, uint32_t reg, uint32_t half);
// B (K x N, "col"): lane, register, half -> (row k, col n).
MatrixCoord mma_b(MmaShape s, uint32_t lane, uint32_t reg, uint32_t half);
// C/D with .f32 accumulators (the layout is the same for both shapes): lane, register 0..3 -> (row m, col n).
MatrixCoord mma_c_f32(uint32_t lane, uint32_t reg);
// C/D with .f16 accumulators: 2 .f16x2 registers, element 2*reg+half has the f32 layout of register
// 2*reg+half.
MatrixCoord mma_c_f16(uint32_t lane, uint32_t reg, uint32_t half);

// mma.sync.aligned.m16n8k8 with .tf32 inputs (#warp-level-matrix-fragment-mma-1688, CuTe
// SM80_16x8x8_F32TF32TF32F32_TN): one element per .b32 register. A (16 x 8), registers 0..3: row = groupID
// (+8 for a1, a3), col = threadID_in_group (+4 for a2, a3). B (8 x 8), registers 0..1: row = threadID_in_group
// (+4 for b1), col = groupID. C/D: mma_c_f32.
MatrixCoord mma_a_tf32(uint32_t lane, uint32_t reg);
MatrixCoord mma_b_tf32(uint32_t lane, uint32_t reg);

// ---- ldmatrix / stmatrix .m8n8 .b16, .x1/.x2/.x4, optional .trans
// -------------------------------------------- num is the matrix count 1, 2 or 4. Lanes 8m..8m+7 give the
// addresses of rows 0..7 of matrix m; lanes at and above 8*num give no address (the ISA ignores them).
uint32_t ldmatrix_address_lane(uint32_t num, uint32_t matrix, uint32_t row);
bool ldmatrix_lane_gives_address(uint32_t num, uint32_t lane);
struct MatrixRow {
  uint32_t matrix = 0;
  uint32_t row = 0;
  friend bool operator==(const MatrixRow&, const MatrixRow&) = default;
};
MatrixRow ldmatrix_lane_row(uint32_t num, uint32_t lane); // throws for a lane that gives no address

// Element of an 8x8 b16 matrix as stored: matrix index, row = which of the 8 addressed rows, col = 16-bit
// element 0..7 within that 16-byte row.
struct MatrixElement {
  uint32_t matrix = 0;
  uint32_t row = 0;
  uint32_t col = 0;
  friend bool operator==(const MatrixElement&, const MatrixElement&) = default;
};
// Destination register reg (0..num-1) of `lane`, half 0/1 -> the stored element it receives.
// Without .trans: matrix reg, row lane/4, col 2(lane%4)+half. With .trans: row 2(lane%4)+half, col lane/4.
MatrixElement ldmatrix_element(uint32_t num, bool trans, uint32_t lane, uint32_t reg, uint32_t half);
// stmatrix (sm_90) is the inverse, with the same address lanes (ldmatrix_address_lane): the (lane, register,
// half) whose value is written to the stored element.
FragmentSlot stmatrix_source(uint32_t num, bool trans, const MatrixElement& e);

// ---- wgmma.mma_async m64nNk16 / m64nNk32 (warpgroup of 128 threads)
// ------------------------------------------ N is 8..256 in steps of 8. thread = %tid within the warpgroup (w
// = thread/32, g = lane/4, q = lane%4). D with .f32 accumulators, register 0..N/2-1: row 16w + g +
// 8((i>>1)&1), col 8(i>>2) + 2q + (i&1).
MatrixCoord wgmma_d_f32(uint32_t n, uint32_t thread, uint32_t reg);
// D with .f16 accumulators: N/4 .f16x2 registers, element 2*reg+half placed as f32 register 2*reg+half.
MatrixCoord wgmma_d_f16(uint32_t n, uint32_t thread, uint32_t reg, uint32_t half);
// A from registers, .f16/.bf16, m64k16: 4 .b32 per thread, = mma.m16n8k16's A per warp with rows + 16w.
MatrixCoord wgmma_a_16bit(uint32_t thread, uint32_t reg, uint32_t half);
// A from registers, .e4m3/.e5m2, m64k32: 4 .b32 per thread, 4 bytes each (byte 0 = lowest bits).
// (unverified) Derived from the m16n8k32 8-bit A fragment (row = g + 8((i>>2)&1), col = 4q + (i&3) + 16(i>>3)
// for element i = 4*reg+byte) per warp with rows + 16w, i.e. CuTe's ALayout_64x32; the ISA gives it only as
// the figure #wgmma-64n32-a, not quoted in the notes.
MatrixCoord wgmma_a_8bit(uint32_t thread, uint32_t reg, uint32_t byte);

} // namespace isatune::ptx

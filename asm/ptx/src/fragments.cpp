#include "isatune/ptx/fragments.h"

#include <string>

#include "isatune/error.h"

namespace isatune::ptx {
namespace {

void check(bool ok, const char* what, uint32_t value, uint32_t limit) {
  if (!ok)
    throw InputError(std::string(what) + " " + std::to_string(value) + " out of range (must be < " +
                     std::to_string(limit) + ")");
}

void check_num(uint32_t num) {
  if (num != 1 && num != 2 && num != 4)
    throw InputError("ldmatrix/stmatrix matrix count " + std::to_string(num) +
                     " invalid (must be 1, 2 or 4)");
}

void check_wgmma_n(uint32_t n) {
  if (n < 8 || n > 256 || n % 8 != 0)
    throw InputError("wgmma N " + std::to_string(n) + " invalid (must be 8..256 in steps of 8)");
}

// The element index form of the ISA tables: element i of the thread's fragment.
uint32_t group_id(uint32_t lane) {
  return lane >> 2;
}
uint32_t thread_in_group(uint32_t lane) {
  return lane & 3;
}

} // namespace

uint32_t mma_m(MmaShape) {
  return 16;
}
uint32_t mma_n(MmaShape) {
  return 8;
}
uint32_t mma_k(MmaShape s) {
  return s == MmaShape::m16n8k16 ? 16 : 8;
}
uint32_t mma_a_registers(MmaShape s) {
  return s == MmaShape::m16n8k16 ? 4 : 2;
}
uint32_t mma_b_registers(MmaShape s) {
  return s == MmaShape::m16n8k16 ? 2 : 1;
}

// #warp-level-matrix-fragment-mma-16816-float: a_i row = groupID (+8 for i in 2,3,6,7),
// col = tig*2 + (i&1) (+8 for i >= 4). m16n8k8 (#warp-level-matrix-fragment-mma-1688): the first four.
MatrixCoord mma_a(MmaShape s, uint32_t lane, uint32_t reg, uint32_t half) {
  check(lane < 32, "mma lane", lane, 32);
  check(reg < mma_a_registers(s), "mma A register", reg, mma_a_registers(s));
  check(half < 2, "mma A half", half, 2);
  uint32_t i = 2 * reg + half;
  return {group_id(lane) + 8 * ((i >> 1) & 1), 2 * thread_in_group(lane) + (i & 1) + 8 * (i >> 2)};
}

// b_i row (k) = tig*2 + (i&1) (+8 for i >= 2), col (n) = groupID.
MatrixCoord mma_b(MmaShape s, uint32_t lane, uint32_t reg, uint32_t half) {
  check(lane < 32, "mma lane", lane, 32);
  check(reg < mma_b_registers(s), "mma B register", reg, mma_b_registers(s));
  check(half < 2, "mma B half", half, 2);
  uint32_t i = 2 * reg + half;
  return {2 * thread_in_group(lane) + (i & 1) + 8 * (i >> 1), group_id(lane)};
}

// #warp-level-matrix-fragment-mma-1688, .tf32: a_i row = groupID (+8 for a1, a3), col = tig (+4 for a2, a3);
// b_i row = tig (+4 for b1), col = groupID.
MatrixCoord mma_a_tf32(uint32_t lane, uint32_t reg) {
  check(lane < 32, "mma lane", lane, 32);
  check(reg < 4, "mma tf32 A register", reg, 4);
  return {group_id(lane) + 8 * (reg & 1), thread_in_group(lane) + 4 * (reg >> 1)};
}
MatrixCoord mma_b_tf32(uint32_t lane, uint32_t reg) {
  check(lane < 32, "mma lane", lane, 32);
  check(reg < 2, "mma tf32 B register", reg, 2);
  return {thread_in_group(lane) + 4 * reg, group_id(lane)};
}

// c_i row = groupID (+8 for i >= 2), col = tig*2 + (i&1).
MatrixCoord mma_c_f32(uint32_t lane, uint32_t reg) {
  check(lane < 32, "mma lane", lane, 32);
  check(reg < 4, "mma C register", reg, 4);
  return {group_id(lane) + 8 * (reg >> 1), 2 * thread_in_group(lane) + (reg & 1)};
}

MatrixCoord mma_c_f16(uint32_t lane, uint32_t reg, uint32_t half) {
  check(reg < 2, "mma C f16x2 register", reg, 2);
  check(half < 2, "mma C half", half, 2);
  return mma_c_f32(lane, 2 * reg + half);
}

bool ldmatrix_lane_gives_address(uint32_t num, uint32_t lane) {
  check_num(num);
  check(lane < 32, "ldmatrix lane", lane, 32);
  return lane < 8 * num;
}

// "addr0-addr7 correspond to the rows of the first matrix, addr8-addr15 to the second ..."
uint32_t ldmatrix_address_lane(uint32_t num, uint32_t matrix, uint32_t row) {
  check_num(num);
  check(matrix < num, "ldmatrix matrix", matrix, num);
  check(row < 8, "ldmatrix row", row, 8);
  return 8 * matrix + row;
}

MatrixRow ldmatrix_lane_row(uint32_t num, uint32_t lane) {
  if (!ldmatrix_lane_gives_address(num, lane))
    throw InputError("ldmatrix .x" + std::to_string(num) + ": lane " + std::to_string(lane) +
                     " gives no row address");
  return {lane / 8, lane % 8};
}

// Each lane receives two consecutive b16 of one row: row lane/4, elements 2(lane%4), +1 (CuTe
// SM75_U32x4_LDSM_N DstLayout (32,(32,4)):(32,(1,1024)) in bits). .trans delivers the transposed element
// (CuTe SM75_U16x8_LDSM_T ((4,8),(16,2,4)):((256,16),(1,128,1024))).
MatrixElement ldmatrix_element(uint32_t num, bool trans, uint32_t lane, uint32_t reg, uint32_t half) {
  check_num(num);
  check(lane < 32, "ldmatrix lane", lane, 32);
  check(reg < num, "ldmatrix register", reg, num);
  check(half < 2, "ldmatrix half", half, 2);
  if (!trans)
    return {reg, lane / 4, 2 * (lane % 4) + half};
  return {reg, 2 * (lane % 4) + half, lane / 4};
}

FragmentSlot stmatrix_source(uint32_t num, bool trans, const MatrixElement& e) {
  check_num(num);
  check(e.matrix < num, "stmatrix matrix", e.matrix, num);
  check(e.row < 8, "stmatrix row", e.row, 8);
  check(e.col < 8, "stmatrix column", e.col, 8);
  if (!trans)
    return {4 * e.row + e.col / 2, e.matrix, e.col % 2};
  return {4 * e.col + e.row / 2, e.matrix, e.row % 2};
}

// CuTe CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)) over the 64 x N column-major tile.
MatrixCoord wgmma_d_f32(uint32_t n, uint32_t thread, uint32_t reg) {
  check_wgmma_n(n);
  check(thread < 128, "wgmma thread", thread, 128);
  check(reg < n / 2, "wgmma D register", reg, n / 2);
  uint32_t w = thread / 32, lane = thread % 32;
  return {16 * w + group_id(lane) + 8 * ((reg >> 1) & 1),
          8 * (reg >> 2) + 2 * thread_in_group(lane) + (reg & 1)};
}

MatrixCoord wgmma_d_f16(uint32_t n, uint32_t thread, uint32_t reg, uint32_t half) {
  check_wgmma_n(n);
  check(reg < n / 4, "wgmma D f16x2 register", reg, n / 4);
  check(half < 2, "wgmma D half", half, 2);
  return wgmma_d_f32(n, thread, 2 * reg + half);
}

// #asynchronous-warpgroup-level-matrix-register-fragment (m64nNk16 A): mma.m16n8k16's A per warp, + 16w rows.
MatrixCoord wgmma_a_16bit(uint32_t thread, uint32_t reg, uint32_t half) {
  check(thread < 128, "wgmma thread", thread, 128);
  MatrixCoord c = mma_a(MmaShape::m16n8k16, thread % 32, reg, half);
  c.row += 16 * (thread / 32);
  return c;
}

MatrixCoord wgmma_a_8bit(uint32_t thread, uint32_t reg, uint32_t byte) {
  check(thread < 128, "wgmma thread", thread, 128);
  check(reg < 4, "wgmma A register", reg, 4);
  check(byte < 4, "wgmma A byte", byte, 4);
  uint32_t lane = thread % 32, i = 4 * reg + byte;
  return {16 * (thread / 32) + group_id(lane) + 8 * ((i >> 2) & 1),
          4 * thread_in_group(lane) + (i & 3) + 16 * (i >> 3)};
}

} // namespace isatune::ptx

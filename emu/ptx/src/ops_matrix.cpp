// ldmatrix / stmatrix .m8n8.{x1,x2,x4}{.trans}.b16 (#warp-level-matrix-instructions-ldmatrix, -stmatrix):
// lanes 8m..8m+7 give the row addresses of matrix m (16 bytes each, 16-byte aligned, in shared memory); the
// rows are spread over the warp's registers as isatune/ptx/fragments.h gives (ldmatrix_element,
// stmatrix_source). Each row is one 16-byte access of its address lane through access(), so bounds,
// alignment, races, uninitialised bytes and pending cp.async data are checked as for ld/st.shared.
#include <cstdio>

#include "isatune/ptx/fragments.h"
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace frag = isatune::ptx;

namespace {

// For x1/x2/x4 (index 0/1/2) and .trans: lane, register, half -> the stored element it holds.
struct MatrixTables {
  frag::MatrixElement el[3][2][32][4][2];
  frag::FragmentSlot src[3][2][4][8][8]; // stmatrix: matrix, row, col -> (lane, register, half)
};

const MatrixTables& tables() {
  static const MatrixTables t = [] {
    MatrixTables x{};
    const uint32_t nums[3] = {1, 2, 4};
    for (uint32_t k = 0; k < 3; ++k)
      for (uint32_t tr = 0; tr < 2; ++tr) {
        for (uint32_t l = 0; l < 32; ++l)
          for (uint32_t r = 0; r < nums[k]; ++r)
            for (uint32_t h = 0; h < 2; ++h)
              x.el[k][tr][l][r][h] = frag::ldmatrix_element(nums[k], tr != 0, l, r, h);
        for (uint32_t m = 0; m < nums[k]; ++m)
          for (uint32_t row = 0; row < 8; ++row)
            for (uint32_t col = 0; col < 8; ++col)
              x.src[k][tr][m][row][col] = frag::stmatrix_source(nums[k], tr != 0, {m, row, col});
      }
    return x;
  }();
  return t;
}

unsigned num_index(unsigned num) {
  return num == 1 ? 0 : num == 2 ? 1 : 2;
}

// The shared offset of lane l's row address; false (after a report) for a generic address outside the
// shared window.
bool row_address(Warp& w, const Inst& in, const Opnd& a, unsigned l, uint64_t& addr) {
  addr = address_of(w, a, l);
  if (in.space == Space::shared || (!a.has_base && a.sym_space == Space::shared))
    return true;
  if (addr - kSharedWindow < kWindowSize) {
    addr -= kSharedWindow;
    return true;
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "row address 0x%llx is not in the shared window (generic addressing)",
                (unsigned long long)addr);
  report(w, l, HazardKind::out_of_bounds, buf);
  return false;
}

// in.vec: matrices (1, 2, 4); in.op: .trans.
void ldmatrix(Warp& w, const Inst& in, uint32_t act) {
  warp_wide_check(w, act);
  const unsigned num = in.vec;
  uint16_t rows[4][8][8] = {};
  for (unsigned m = 0; m < num; ++m)
    for (unsigned r = 0; r < 8; ++r) {
      const unsigned l = frag::ldmatrix_address_lane(num, m, r);
      uint64_t addr;
      if (!(act >> l & 1) || !row_address(w, in, in.ops[1], l, addr))
        continue;
      if (const uint8_t* p = access(w, l, Space::shared, addr, 16, false, false, 16))
        std::memcpy(rows[m][r], p, 16);
    }
  const auto& el = tables().el[num_index(num)][in.op];
  const Opnd& d = in.ops[0];
  for_lanes(act, [&](unsigned l) {
    for (unsigned i = 0; i < num; ++i) {
      const frag::MatrixElement lo = el[l][i][0], hi = el[l][i][1];
      write(w, d.elems[i], l,
            uint64_t(rows[lo.matrix][lo.row][lo.col]) | uint64_t(rows[hi.matrix][hi.row][hi.col]) << 16);
    }
  });
}

void stmatrix(Warp& w, const Inst& in, uint32_t act) {
  warp_wide_check(w, act);
  const unsigned num = in.vec;
  const auto& src = tables().src[num_index(num)][in.op];
  const Opnd& s = in.ops[1];
  for (unsigned m = 0; m < num; ++m)
    for (unsigned r = 0; r < 8; ++r) {
      const unsigned l = frag::ldmatrix_address_lane(num, m, r);
      uint64_t addr;
      if (!(act >> l & 1) || !row_address(w, in, in.ops[0], l, addr))
        continue;
      uint16_t row[8];
      for (unsigned c = 0; c < 8; ++c) {
        const frag::FragmentSlot f = src[m][r][c];
        row[c] = uint16_t(read(w, s.elems[f.reg], f.lane) >> (16 * f.part));
      }
      if (uint8_t* p = access(w, l, Space::shared, addr, 16, true, false, 16))
        std::memcpy(p, row, 16);
    }
}

} // namespace

void decode_matrix(Decoder& d) {
  Inst& in = d.in;
  const bool st = d.ai.mnemonic == "stmatrix";
  if (st && d.sm < 90)
    d.error("stmatrix needs sm_90 (this module targets sm_" + std::to_string(d.sm) + ")");
  if (!d.take("sync") || !d.take("aligned"))
    d.error(d.ai.mnemonic + " needs .sync.aligned");
  if (!d.take("m8n8"))
    d.not_yet(); // .m16n16 / .m8n16 (8-bit and 6/4-bit element forms)
  in.vec = d.take("x1") ? 1 : d.take("x2") ? 2 : d.take("x4") ? 4 : 0;
  if (!in.vec)
    d.error(d.ai.mnemonic + " needs .x1, .x2 or .x4");
  in.op = d.take("trans");
  in.space = Space::generic;
  if (d.take("shared") || d.take("shared::cta"))
    in.space = Space::shared;
  if (d.take_type() != Ty::b16)
    d.not_yet(); // .b8 / .b8x16 forms
  d.need_ops(2);
  const size_t addr = st ? 0 : 1, regs = st ? 1 : 0;
  if (in.ops[addr].kind != Opnd::Kind::addr)
    d.error(d.ai.mnemonic + " needs an address operand");
  need_registers(d, regs, in.vec, st ? "stmatrix source" : "ldmatrix destination");
  in.sync = Sync::collective; // the whole warp
  in.aligned = true;
  in.fn = st ? &stmatrix : &ldmatrix;
  d.finish();
}

} // namespace isatune::emu::ptx

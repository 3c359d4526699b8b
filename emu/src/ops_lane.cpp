// Cross-lane and AGPR moves: v_readlane, v_readfirstlane, v_writelane, v_permlane{16,32}_swap, v_accvgpr_*.
#include <bit>

#include "ops.h"
#include "util.h"

namespace isatune::emu {

namespace {

// gfx950 v_permlane16_swap_b32 vdst, vsrc / v_permlane32_swap_b32: both registers are read and written (the
// decoder gives them as dst[0], dst[1]). permlane32 swaps the upper 32 lanes of vdst with the lower 32 of
// vsrc; permlane16 swaps the odd rows (16 lanes each) of vdst with the even rows of vsrc: vdst lane
// 32p+16+i <-> vsrc lane 32p+i. Direction as Triton's AMD backend uses the intrinsics ("swap the row 2 and 3
// of vec0 and the row 0 and 1 of vec2", ConvertLayoutOpToLLVM.cpp) and as AITER's gfx950 dq_convert needs
// for its bit-exact result (tests/emu/aiter_kernels_test.cpp). A lane is written only when active in EXEC;
// the fetch-inactive and bound_ctrl modifiers are not modelled.
void permlane_swap(Wave& w, const Inst& in, int half) {
  if (in.ndst < 2 || in.dst[0].kind != OpKind::vgpr || in.dst[1].kind != OpKind::vgpr)
    unsupported(w, "v_permlane_swap operands not modelled");
  uint32_t* d = w.v[in.dst[0].reg].data();
  uint32_t* s = w.v[in.dst[1].reg].data();
  const uint64_t exec = w.exec();
  for (int l = 0; l < 64; ++l) {
    if (l & half) continue; // l: a vsrc lane of the even half; l + half: the vdst lane it swaps with
    const int a = l + half, b = l;
    const uint32_t da = d[a], sb = s[b];
    if ((exec >> a) & 1) d[a] = sb;
    if ((exec >> b) & 1) s[b] = da;
  }
}

} // namespace

void register_lane_ops() {
  add_op("V_READLANE_B32", [](Wave& w, const Inst& in) {
    uint32_t lane = sread(w, in.src[1]) & 63;
    swrite(w, in.dst[0], w.v[in.src[0].reg][lane]);
  }, Cat::valu);
  add_op("V_READFIRSTLANE_B32", [](Wave& w, const Inst& in) {
    uint64_t e = w.exec();
    int lane = e ? std::countr_zero(e) : 0;
    Src a = vsrc(w, in, 0);
    swrite(w, in.dst[0], a[lane]);
  }, Cat::valu);
  add_op("V_WRITELANE_B32", [](Wave& w, const Inst& in) {
    uint32_t lane = sread(w, in.src[1]) & 63;
    vdst(w, in)[lane] = sread(w, in.src[0]);
  }, Cat::valu);
  add_op("V_PERMLANE16_SWAP_B32", [](Wave& w, const Inst& in) { permlane_swap(w, in, 16); }, Cat::valu);
  add_op("V_PERMLANE32_SWAP_B32", [](Wave& w, const Inst& in) { permlane_swap(w, in, 32); }, Cat::valu);
  auto mov = [](Wave& w, const Inst& in) {
    uint64_t m = w.exec();
    Src a = vsrc(w, in, 0);
    uint32_t* d = vdst(w, in);
    for_lanes(m, [&](int l) { d[l] = a[l]; });
  };
  add_op("V_ACCVGPR_WRITE_B32", mov, Cat::valu);
  add_op("V_ACCVGPR_READ_B32", mov, Cat::valu);
  add_op("V_ACCVGPR_MOV_B32", mov, Cat::valu);
}

} // namespace isatune::emu

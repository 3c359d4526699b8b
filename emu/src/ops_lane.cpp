// Cross-lane and AGPR moves: v_readlane, v_readfirstlane, v_writelane, v_accvgpr_*.
#include <bit>

#include "ops.h"
#include "util.h"

namespace isatune::emu {

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

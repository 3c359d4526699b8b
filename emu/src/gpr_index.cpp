#include "gpr_index.h"

#include <string>

#include "context.h"

namespace isatune::emu {

namespace {

RegRange range(const Opnd& o) {
  if (o.kind == OpKind::sgpr)
    return {o.reg, o.width};
  if (o.kind == OpKind::vgpr)
    return {uint16_t(kVgprBase + o.reg), o.width};
  return {};
}

// Offsets one VGPR operand (not an AGPR).
bool shift(Wave& w, Opnd& o, uint32_t index) {
  if (o.kind != OpKind::vgpr || o.reg >= 256)
    return false;
  if (o.reg + index + o.width > 256)
    unsupported(w, "indexed VGPR v" + std::to_string(o.reg + index) + " is past v255");
  o.reg = uint16_t(o.reg + index);
  return true;
}

} // namespace

const Inst& apply_gpr_index(Wave& w, const Inst& in) {
  const uint32_t m0 = w.s[kM0];
  const uint32_t index = m0 & 0xff, mode = (m0 >> 12) & 0xf;
  Inst& out = w.indexed;
  out = in;
  if (index == 0 || mode == 0)
    return out;
  // Operand order follows the encoding's: src[0..2] = VSRC0..2, dst[0] = VDST. The hazard view lists the
  // operands' ranges first, in operand order (decoder.cpp, fill_hazard_view): the shifted ones are replaced.
  size_t ri = 0;
  for (int k = 0; k < out.nsrc; ++k) {
    if (!range(out.src[k]).count)
      continue;
    if (k < 3 && (mode >> k) & 1 && shift(w, out.src[k], index))
      out.reads[ri] = range(out.src[k]);
    ++ri;
  }
  if (mode & 8 && out.ndst > 0 && range(out.dst[0]).count && shift(w, out.dst[0], index)) {
    out.writes[0] = range(out.dst[0]);
    out.vwrites.clear();
    for (const auto& r : out.writes)
      if (r.first >= kVgprBase && r.first < kScc)
        out.vwrites.push_back(r);
  }
  return out;
}

} // namespace isatune::emu

#pragma once
// VGPR indexing mode, gfx9/CDNA (CDNA3 ISA, S_SET_GPR_IDX_ON / _OFF / _MODE / _IDX): s_set_gpr_idx_on S0,
// SIMM4 sets MODE.gpr_idx_en, M0[7:0] = S0[7:0] (the index) and M0[15:12] = SIMM4 (which operands are
// relative: bit 0 VSRC0, bit 1 VSRC1, bit 2 VSRC2, bit 3 VDST). While it is on, each vector instruction adds
// M0[7:0] to the VGPR number of each operand its mode bit names; SGPR and constant operands are not indexed.
#include "wave.h"

namespace isatune::emu {

// `in` with its indexed operands, in the wave's scratch instruction (valid until the next call).
const Inst& apply_gpr_index(Wave& w, const Inst& in);

} // namespace isatune::emu

#pragma once
// LDS-DMA loads in the form catalogue (forms.cpp): `buffer_load_dword_lds` and, on gfx950,
// `buffer_load_dwordx4_lds`, printed as the plain load plus ` lds`. They have no vdata: lane l's data goes to
// LDS at M0 + offset + l * size (shared/notes/cdna.md section 3), counted by vmcnt. Private to isatune_cdna.
#include "isatune/cdna/form.h"

namespace isatune::cdna::detail {

inline bool is_lds_dma(const Form& f) {
  return f.encoding == Encoding::mubuf && f.name.ends_with("_lds");
}

} // namespace isatune::cdna::detail

#include "isatune/cdna/registers.h"

#include "isatune/error.h"

namespace isatune::cdna {

Reg Reg::sub(uint8_t i, uint8_t n) const {
  if (i + n > count)
    throw InputError("register " + to_string(*this) + " has no dwords " + std::to_string(i) + ".." +
                     std::to_string(i + n - 1));
  return Reg{file, static_cast<uint16_t>(index + i), n};
}

Reg v(uint16_t index, uint8_t count) {
  return Reg{RegFile::vgpr, index, count};
}
Reg s(uint16_t index, uint8_t count) {
  return Reg{RegFile::sgpr, index, count};
}
Reg a(uint16_t index, uint8_t count) {
  return Reg{RegFile::agpr, index, count};
}
static Reg special(SpecialIndex i, uint8_t count) {
  return Reg{RegFile::special, static_cast<uint16_t>(i), count};
}
Reg vcc() {
  return special(SpecialIndex::vcc_lo, 2);
}
Reg vcc_lo() {
  return special(SpecialIndex::vcc_lo, 1);
}
Reg vcc_hi() {
  return special(SpecialIndex::vcc_hi, 1);
}
Reg exec() {
  return special(SpecialIndex::exec_lo, 2);
}
Reg exec_lo() {
  return special(SpecialIndex::exec_lo, 1);
}
Reg exec_hi() {
  return special(SpecialIndex::exec_hi, 1);
}
Reg m0() {
  return special(SpecialIndex::m0, 1);
}
Reg scc() {
  return special(SpecialIndex::scc, 1);
}

std::string to_string(const Reg& r) {
  if (r.file == RegFile::special) {
    auto i = static_cast<SpecialIndex>(r.index);
    if (i == SpecialIndex::vcc_lo)
      return r.count == 2 ? "vcc" : "vcc_lo";
    if (i == SpecialIndex::vcc_hi)
      return "vcc_hi";
    if (i == SpecialIndex::exec_lo)
      return r.count == 2 ? "exec" : "exec_lo";
    if (i == SpecialIndex::exec_hi)
      return "exec_hi";
    if (i == SpecialIndex::m0)
      return "m0";
    if (i == SpecialIndex::scc)
      return "scc";
    return "special" + std::to_string(r.index);
  }
  const char* p = r.file == RegFile::sgpr ? "s" : r.file == RegFile::vgpr ? "v" : "a";
  if (r.count == 1)
    return p + std::to_string(r.index);
  return std::string(p) + "[" + std::to_string(r.index) + ":" + std::to_string(r.last()) + "]";
}

uint16_t required_alignment(RegFile file, uint8_t count) {
  if (count <= 1)
    return 1;
  switch (file) {
  case RegFile::vgpr:
  case RegFile::agpr:
    return 2;
  case RegFile::sgpr:
    return count == 2 ? 2 : 4;
  case RegFile::special:
    return 1;
  }
  return 1;
}

void check_alignment(const Reg& r) {
  if (r.count == 0)
    throw InputError("register range with no dwords");
  if (r.file == RegFile::special)
    return;
  static const uint8_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 16};
  bool ok = false;
  for (auto n : sizes)
    ok = ok || n == r.count;
  if (!ok)
    throw InputError("register range " + to_string(r) + " has " + std::to_string(r.count) +
                     " dwords: allowed sizes are 1-8 and 16");
  uint16_t al = required_alignment(r.file, r.count);
  if (r.index % al != 0)
    throw InputError("register range " + to_string(r) + " is misaligned: a " + std::to_string(r.count) +
                     "-dword " +
                     (r.file == RegFile::sgpr   ? "SGPR"
                      : r.file == RegFile::vgpr ? "VGPR"
                                                : "AGPR") +
                     " range must start at a multiple of " + std::to_string(al));
}

} // namespace isatune::cdna

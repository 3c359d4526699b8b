#pragma once
// CDNA registers: a Reg is a contiguous range in one register file (v4, v[4:7], s[0:1], a[0:15]) or a special
// register (vcc, exec, scc, m0). Alignment rules (gfx90a+, shared/notes/cdna.md section 1): multi-dword VGPR
// and AGPR ranges start at an even register; SGPR pairs are even, ranges of 4 or more dwords 4-aligned.
#include <cstdint>
#include <string>

namespace isatune::cdna {

enum class RegFile : uint8_t { sgpr, vgpr, agpr, special };

// Special registers live in their own small index space so that overlap tests work: vcc = {vcc_lo, vcc_hi},
// exec = {exec_lo, exec_hi}.
enum class SpecialIndex : uint16_t { vcc_lo = 0, vcc_hi = 1, exec_lo = 2, exec_hi = 3, m0 = 4, scc = 5 };

struct Reg {
  RegFile file = RegFile::vgpr;
  uint16_t index = 0;
  uint8_t count = 1; // dwords

  uint16_t last() const { return static_cast<uint16_t>(index + count - 1); }
  bool overlaps(const Reg& o) const { return file == o.file && index <= o.last() && o.index <= last(); }
  bool contains(const Reg& o) const { return file == o.file && index <= o.index && o.last() <= last(); }
  // A single dword of this range (i < count).
  Reg sub(uint8_t i, uint8_t n = 1) const;
  bool is_scalar() const { return file == RegFile::sgpr || file == RegFile::special; }
  friend bool operator==(const Reg&, const Reg&) = default;
};

// Constructors: v(4), v(4, 4) = v[4:7], s(0, 2) = s[0:1], a(0, 16) = a[0:15].
Reg v(uint16_t index, uint8_t count = 1);
Reg s(uint16_t index, uint8_t count = 1);
Reg a(uint16_t index, uint8_t count = 1);
Reg vcc();
Reg vcc_lo();
Reg vcc_hi();
Reg exec();
Reg exec_lo();
Reg exec_hi();
Reg m0();
Reg scc();

// "v4", "v[4:7]", "s[0:1]", "a[0:15]", "vcc", "exec".
std::string to_string(const Reg& r);
// Throws InputError when the range breaks the alignment rules or has an impossible size.
void check_alignment(const Reg& r);
// The alignment (in registers) a range of `count` dwords needs in `file`.
uint16_t required_alignment(RegFile file, uint8_t count);

} // namespace isatune::cdna

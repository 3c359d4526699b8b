#pragma once
// A register allocator for one register file: first fit with the alignment the range needs, free and reuse,
// and a high-water mark that becomes .amdhsa_next_free_vgpr/sgpr and the AGPR count.
#include <cstdint>
#include <string>
#include <vector>

#include "isatune/cdna/registers.h"

namespace isatune::cdna {

class RegisterAllocator {
public:
  // `limit`: registers in the file (SGPR 102, arch VGPR 256, AGPR 256; see TargetInfo).
  RegisterAllocator(RegFile file, uint16_t limit);

  // A free range of `count` dwords aligned as the file requires (or to `align` if larger).
  // Throws InputError naming the file, the request and what is in use when nothing fits.
  Reg alloc(uint8_t count, uint16_t align = 1, const std::string& what = "");
  // Marks a fixed range as used (entry registers, hand-picked ranges). Throws if any of it is already used.
  Reg reserve(const Reg& r);
  void free(const Reg& r);
  bool is_used(uint16_t index) const { return index < used_.size() && used_[index]; }
  uint16_t in_use() const;
  // One past the highest register ever used (0 when none).
  uint16_t high_water() const { return high_water_; }
  uint16_t limit() const { return limit_; }
  RegFile file() const { return file_; }

private:
  RegFile file_;
  uint16_t limit_;
  uint16_t high_water_ = 0;
  std::vector<bool> used_;
};

} // namespace isatune::cdna

#include "isatune/cdna/allocator.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::cdna {

static const char* file_name(RegFile f) {
  switch (f) {
  case RegFile::sgpr:
    return "SGPR";
  case RegFile::vgpr:
    return "VGPR";
  case RegFile::agpr:
    return "AGPR";
  case RegFile::special:
    return "special";
  }
  return "?";
}

RegisterAllocator::RegisterAllocator(RegFile file, uint16_t limit)
    : file_(file), limit_(limit), used_(limit, false) {
  if (file == RegFile::special)
    throw InputError("special registers are not allocated");
}

Reg RegisterAllocator::alloc(uint8_t count, uint16_t align, const std::string& what) {
  if (count == 0)
    throw InputError("cannot allocate 0 registers");
  align = std::max(align, required_alignment(file_, count));
  for (uint32_t start = 0; start + count <= limit_; start += align) {
    bool free_run = true;
    for (uint32_t i = start; i < start + count && free_run; ++i)
      free_run = !used_[i];
    if (free_run) {
      Reg r{file_, static_cast<uint16_t>(start), count};
      return reserve(r);
    }
  }
  throw InputError(std::string("out of ") + file_name(file_) + "s: cannot allocate " + std::to_string(count) +
                   " (aligned to " + std::to_string(align) + ")" + (what.empty() ? "" : " for " + what) +
                   "; " + std::to_string(in_use()) + " of " + std::to_string(limit_) + " in use");
}

Reg RegisterAllocator::reserve(const Reg& r) {
  if (r.file != file_)
    throw InputError("register " + to_string(r) + " is not a " + file_name(file_));
  if (r.last() >= limit_)
    throw InputError("register " + to_string(r) + " is beyond the " + std::to_string(limit_) + " " +
                     file_name(file_) + "s of this target");
  for (uint32_t i = r.index; i <= r.last(); ++i)
    if (used_[i])
      throw InputError("register " + to_string(r) + " overlaps a register already in use");
  for (uint32_t i = r.index; i <= r.last(); ++i)
    used_[i] = true;
  high_water_ = std::max<uint16_t>(high_water_, r.last() + 1);
  return r;
}

void RegisterAllocator::free(const Reg& r) {
  if (r.file != file_)
    throw InputError("register " + to_string(r) + " is not a " + file_name(file_));
  for (uint32_t i = r.index; i <= r.last(); ++i)
    if (i >= limit_ || !used_[i])
      throw InputError("freeing register " + to_string(r) + " that is not allocated");
  for (uint32_t i = r.index; i <= r.last(); ++i)
    used_[i] = false;
}

uint16_t RegisterAllocator::in_use() const {
  return static_cast<uint16_t>(std::count(used_.begin(), used_.end(), true));
}

} // namespace isatune::cdna

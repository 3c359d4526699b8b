// Register classes and the allocator.
#include "isatune/ptx/registers.h"

namespace isatune::ptx {

const char* reg_prefix(RegClass cls) {
  switch (cls) {
  case RegClass::pred: return "%p";
  case RegClass::b16: return "%h";
  case RegClass::b32: return "%r";
  case RegClass::b64: return "%rd";
  case RegClass::f32: return "%f";
  }
  return "%?";
}

const char* reg_decl_type(RegClass cls) {
  switch (cls) {
  case RegClass::pred: return ".pred";
  case RegClass::b16: return ".b16";
  case RegClass::b32: return ".b32";
  case RegClass::b64: return ".b64";
  case RegClass::f32: return ".f32";
  }
  return ".b32";
}

std::string Reg::name() const { return reg_prefix(cls) + std::to_string(index); }

Reg RegisterAllocator::alloc(RegClass cls) { return Reg{cls, counts_[static_cast<int>(cls)]++}; }

std::vector<Reg> RegisterAllocator::alloc(RegClass cls, uint32_t count) {
  std::vector<Reg> out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) out.push_back(alloc(cls));
  return out;
}

} // namespace isatune::ptx

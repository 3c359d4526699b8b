#pragma once
// Typed PTX registers and the per-kernel allocator. Each class is one `.reg` vector: %p<N> (.pred), %h<N> (.b16),
// %r<N> (.b32, also holding .f16x2/.bf16x2 pairs), %rd<N> (.b64), %f<N> (.f32).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace isatune::ptx {

enum class RegClass { pred, b16, b32, b64, f32 };
constexpr int kRegClassCount = 5;

struct Reg {
  RegClass cls = RegClass::b32;
  uint32_t index = 0;
  std::string name() const; // "%r5"
  bool operator==(const Reg&) const = default;
};

// Hands out fresh registers of each class; the printer declares exactly the counts used.
class RegisterAllocator {
public:
  Reg alloc(RegClass cls);
  std::vector<Reg> alloc(RegClass cls, uint32_t count);
  uint32_t count(RegClass cls) const { return counts_[static_cast<int>(cls)]; }

private:
  std::array<uint32_t, kRegClassCount> counts_{};
};

const char* reg_prefix(RegClass cls);   // "%rd"
const char* reg_decl_type(RegClass cls); // ".b64"

} // namespace isatune::ptx

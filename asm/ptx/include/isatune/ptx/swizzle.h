#pragma once
// Shared-memory swizzles. CuTe cute/swizzle.hpp: Swizzle<B,M,S>(x) = x ^ ((x & (((1<<B)-1) << (M+S))) >> S)
// (B mask bits, M base bits kept, S shift; S > 0 here). TMA (#tensor-swizzling-modes) and the wgmma
// descriptor use M = 4, S = 3 on byte addresses: the 16-byte chunk index (bits 4..) is XORed with the row
// bits 7.. of the ABSOLUTE shared address; the pattern repeats every 256/512/1024 bytes for 32B/64B/128B
// (shared/notes/ptx-emulation.md 2.8; CuTe copy_traits_sm90_tma_swizzle.hpp maps Swizzle<1,4,3>,
// <2,4,3>, <3,4,3> to 32B/64B/128B).
#include <cstdint>

namespace isatune::ptx {

constexpr uint64_t swizzle(uint32_t b, uint32_t m, uint32_t s, uint64_t x) {
  uint64_t mask = ((uint64_t{1} << b) - 1) << (m + s);
  return x ^ ((x & mask) >> s);
}

template <uint32_t B, uint32_t M, uint32_t S> struct Swizzle {
  static_assert(S >= B, "the XOR source and destination bit ranges must not overlap");
  static constexpr uint64_t apply(uint64_t x) { return swizzle(B, M, S, x); }
  constexpr uint64_t operator()(uint64_t x) const { return apply(x); }
};

// The byte-address swizzles of TMA and wgmma descriptors (16-byte atoms within a 32/64/128-byte span).
enum class SwizzleMode { none, b32, b64, b128 };

constexpr uint32_t swizzle_span_bytes(SwizzleMode m) { // 0 / 32 / 64 / 128: the swizzled row width
  return m == SwizzleMode::b32 ? 32 : m == SwizzleMode::b64 ? 64 : m == SwizzleMode::b128 ? 128 : 0;
}
constexpr uint32_t swizzle_repeat_bytes(SwizzleMode m) { // 0 / 256 / 512 / 1024: the pattern period
  return swizzle_span_bytes(m) * 8;
}
constexpr uint32_t swizzle_bits(SwizzleMode m) { // B of Swizzle<B,4,3>
  return m == SwizzleMode::b32 ? 1 : m == SwizzleMode::b64 ? 2 : m == SwizzleMode::b128 ? 3 : 0;
}
// The physical byte address at which the swizzled layout stores logical byte address `addr` (an involution).
constexpr uint64_t swizzle_address(SwizzleMode m, uint64_t addr) {
  return m == SwizzleMode::none ? addr : swizzle(swizzle_bits(m), 4, 3, addr);
}

} // namespace isatune::ptx

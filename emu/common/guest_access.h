#pragma once
// Loads and stores of guest global memory through relaxed host atomics. A guest program may race, legally on a
// GPU (two workgroups or CTAs storing to one word: one of the values lands; a wave polling a semaphore that
// another one updates), and both emulators run workgroups/CTAs on several host threads, so plain copies would
// make such a guest race a data race in the emulator itself, undefined behaviour in C++ (ThreadSanitizer found
// it in EmuPtxDevice.DeterministicAcrossHostThreads, whose kernel stores to hashed, colliding addresses). A
// relaxed access of the element's natural size is one ordinary move on x86-64 and AArch64; an unaligned element
// goes byte by byte.
#include <atomic>
#include <cstdint>

namespace isatune::emu {

template <class T>
bool aligned_for(const uint8_t* p) {
  return reinterpret_cast<uintptr_t>(p) % std::atomic_ref<T>::required_alignment == 0;
}

// The BYTES (1 to 8) at p, little-endian.
inline uint64_t load_bits(const uint8_t* p, unsigned bytes) {
  uint8_t* q = const_cast<uint8_t*>(p); // atomic_ref needs a non-const object; nothing is written
  if (bytes == 8 && aligned_for<uint64_t>(p))
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(q)).load(std::memory_order_relaxed);
  if (bytes == 4 && aligned_for<uint32_t>(p))
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(q)).load(std::memory_order_relaxed);
  if (bytes == 2 && aligned_for<uint16_t>(p))
    return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(q)).load(std::memory_order_relaxed);
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes && i < 8; ++i)
    v |= uint64_t(std::atomic_ref<uint8_t>(q[i]).load(std::memory_order_relaxed)) << (8 * i);
  return v;
}

inline void store_bits(uint8_t* p, uint64_t v, unsigned bytes) {
  if (bytes == 8 && aligned_for<uint64_t>(p))
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(p)).store(v, std::memory_order_relaxed);
  if (bytes == 4 && aligned_for<uint32_t>(p))
    return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(p)).store(uint32_t(v), std::memory_order_relaxed);
  if (bytes == 2 && aligned_for<uint16_t>(p))
    return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(p)).store(uint16_t(v), std::memory_order_relaxed);
  for (unsigned i = 0; i < bytes && i < 8; ++i)
    std::atomic_ref<uint8_t>(p[i]).store(uint8_t(v >> (8 * i)), std::memory_order_relaxed);
}

// A guest copy of any size in dwords (and a tail of bytes), each dword one relaxed access when aligned.
inline void load_guest(void* dst, const uint8_t* p, unsigned bytes) {
  uint8_t* d = static_cast<uint8_t*>(dst);
  for (unsigned o = 0; o < bytes; o += 4) {
    unsigned n = bytes - o < 4 ? bytes - o : 4;
    uint32_t v = uint32_t(load_bits(p + o, n));
    for (unsigned i = 0; i < n; ++i) d[o + i] = uint8_t(v >> (8 * i));
  }
}

inline void store_guest(uint8_t* p, const void* src, unsigned bytes) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  for (unsigned o = 0; o < bytes; o += 4) {
    unsigned n = bytes - o < 4 ? bytes - o : 4;
    uint32_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint32_t(s[o + i]) << (8 * i);
    store_bits(p + o, v, n);
  }
}

} // namespace isatune::emu

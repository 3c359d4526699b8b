#pragma once
// SHA-256 (FIPS 180-4), small and dependency-free: the loader verifies every code object blob against its
// stored digest without linking LLVM.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace isatune::loader {

class Sha256 {
public:
  Sha256();
  void update(std::span<const uint8_t> data);
  std::array<uint8_t, 32> finish();

private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

// Lower-case hex digest of bytes.
std::string sha256_hex(std::span<const uint8_t> bytes);

} // namespace isatune::loader

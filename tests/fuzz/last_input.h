// Keeps the input being run in a file mapped MAP_SHARED, so it survives the process's death. A SEGV inside
// LLVM's decoder (ASan's own handler is off there, handle_segv=0, see scripts/fuzz.sh) or a stack overflow
// kills the fuzzer before libFuzzer can write crash-*; the kernel still writes the shared pages back, so
// ISATUNE_FUZZ_LAST_INPUT=<file> holds the input that killed it: an 8-byte little-endian size, then the bytes.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace isatune::fuzz {

inline void keep_last_input(const uint8_t* data, size_t size) {
  // Larger inputs than this are not kept (libFuzzer's -max_len is far below it unless set by hand).
  constexpr size_t kCapacity = size_t{64} << 20;
  static uint8_t* map = [] () -> uint8_t* {
    const char* path = std::getenv("ISATUNE_FUZZ_LAST_INPUT");
    if (path == nullptr || *path == '\0') return nullptr;
    int fd = ::open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(kCapacity + 8)) != 0) {
      std::fprintf(stderr, "fuzz: cannot create ISATUNE_FUZZ_LAST_INPUT=%s: %s\n", path, std::strerror(errno));
      std::abort();
    }
    void* p = ::mmap(nullptr, kCapacity + 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "fuzz: cannot map ISATUNE_FUZZ_LAST_INPUT=%s: %s\n", path, std::strerror(errno));
      std::abort();
    }
    return static_cast<uint8_t*>(p);
  }();
  if (map == nullptr || size > kCapacity) return;
  uint64_t n = size;
  std::memcpy(map, &n, 8);
  if (size != 0) std::memcpy(map + 8, data, size);
}

}  // namespace isatune::fuzz

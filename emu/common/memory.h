#pragma once
// The emulated device's global memory: allocations at private addresses with guard gaps, looked up on every
// access so that an access outside them is found and reported.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace isatune::emu {

class Memory {
public:
  static constexpr uint64_t kBase = 0x0000'7e00'0000'0000ull;
  static constexpr uint64_t kGuard = 1ull << 20; // unmapped bytes after every allocation

  uint64_t alloc(uint64_t bytes);
  void free(uint64_t addr);
  // Host pointer for [addr, addr+bytes) when it lies inside one allocation, else nullptr.
  uint8_t* find(uint64_t addr, uint64_t bytes) const;
  // Host pointer for an exact allocation start, else throws InputError naming the address.
  uint8_t* checked(uint64_t addr, uint64_t bytes, const char* what) const;
  // The allocation holding addr: its start, size and host data; false when none does. No lock: for launches,
  // during which nothing is allocated or freed.
  bool block(uint64_t addr, uint64_t& start, uint64_t& size, uint8_t*& data) const;
  uint64_t allocated() const { return total_; }

private:
  struct Block {
    uint64_t size;
    std::unique_ptr<uint8_t[]> data;
  };
  std::map<uint64_t, Block> blocks_;
  uint64_t next_ = kBase;
  uint64_t total_ = 0;
  mutable std::mutex mutex_; // alloc/free against lookups from other host threads (not during a launch)
};

} // namespace isatune::emu

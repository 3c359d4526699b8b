#include "memory.h"

#include <cstdio>
#include <cstring>

#include "isatune/error.h"

namespace isatune::emu {

uint64_t Memory::alloc(uint64_t bytes) {
  std::lock_guard lock(mutex_);
  uint64_t size = bytes ? bytes : 1;
  uint64_t addr = next_;
  Block b{size, std::make_unique<uint8_t[]>(size)};
  std::memset(b.data.get(), 0, size);
  blocks_.emplace(addr, std::move(b));
  next_ = (addr + size + kGuard + 0xffff) & ~0xffffull;
  total_ += size;
  return addr;
}

void Memory::free(uint64_t addr) {
  std::lock_guard lock(mutex_);
  auto it = blocks_.find(addr);
  if (it == blocks_.end()) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "free of 0x%llx: not an allocation of the emu device",
                  (unsigned long long)addr);
    throw InputError(buf);
  }
  total_ -= it->second.size;
  blocks_.erase(it);
}

uint8_t* Memory::find(uint64_t addr, uint64_t bytes) const {
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin())
    return nullptr;
  --it;
  uint64_t off = addr - it->first;
  if (off > it->second.size || bytes > it->second.size - off)
    return nullptr;
  return it->second.data.get() + off;
}

bool Memory::block(uint64_t addr, uint64_t& start, uint64_t& size, uint8_t*& data) const {
  auto it = blocks_.upper_bound(addr);
  if (it == blocks_.begin())
    return false;
  --it;
  if (addr - it->first >= it->second.size)
    return false;
  start = it->first, size = it->second.size, data = it->second.data.get();
  return true;
}

uint8_t* Memory::checked(uint64_t addr, uint64_t bytes, const char* what) const {
  std::lock_guard lock(mutex_);
  uint8_t* p = find(addr, bytes);
  if (!p) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s of %llu bytes at 0x%llx: outside every allocation of the emu device",
                  what, (unsigned long long)bytes, (unsigned long long)addr);
    throw InputError(buf);
  }
  return p;
}

} // namespace isatune::emu

#pragma once
// Shadow state of the asynchronous set on sm_90 (mbarrier objects, bulk / tensor copies in flight, bulk async
// groups), kept beside the CTA's shared memory. Plain data: the handlers are in mbarrier.cpp and
// bulk_copy.cpp.
#include <array>
#include <cstdint>
#include <vector>

#include "isatune/ptx/tensor_map.h"

namespace isatune::emu::ptx {

// A copy into shared memory that lands when the phase of the mbarrier it signals completes (data read from
// its source at issue, written at phase completion: reading the destination before waiting sees stale bytes).
struct Landing {
  uint32_t offset = 0; // destination in the mbarrier's CTA
  std::vector<uint8_t> data;
  uint32_t pc = 0;  // the copy instruction
  uint8_t rank = 0; // issuing thread: CTA rank in the cluster, thread in the CTA
  uint16_t thread = 0;
};

// One mbarrier object (#parallel-synchronization-and-communication-instructions-mbarrier): the state lives
// here; the 8 bytes in shared memory hold `image` (mbarrier.cpp documents the encoding) so a plain store over
// a live mbarrier is noticed.
struct Mbar {
  bool valid = false;
  uint32_t phase = 0; // phases completed since init (the current phase's parity is phase & 1)
  uint32_t expected = 0, pending = 0;
  int64_t tx = 0;
  bool ready = false; // pending = 0 and tx = 0: the phase completes at the next operation on the mbarrier
  uint64_t image = 0;
  uint32_t pc = 0; // the last instruction that changed it, and by whom (exit-time reports)
  uint16_t thread = 0;
  uint8_t rank = 0;
  // Happens-before: (cluster warp, time) of the arrivals of the current phase, and of the last completed one
  // (a successful wait acquires those).
  std::vector<std::pair<uint32_t, uint32_t>> release, last_release;
  std::vector<Landing> landings;
};

// Shared bytes an asynchronous operation will still write (a landing) or read (a bulk store not yet waited
// for with wait_group.read).
struct AsyncRange {
  uint32_t lo = 0, hi = 0; // [lo, hi) in this CTA's shared memory
  bool store = false;      // false: a copy will land here; true: a bulk store will read it
  uint32_t pc = 0;         // the copy instruction
  uint32_t mbar = 0;       // landing: the mbarrier offset it completes
};

// A bulk store (shared -> global) issued by a thread: performed at the thread's wait_group(.read).
struct BulkStore {
  uint32_t pc = 0;
  uint32_t src = 0, bytes = 0; // shared::cta source
  uint64_t dst = 0;            // plain bulk copy: global destination
  bool tensor = false;
  isatune::ptx::TensorMapTiledArgs map; // tensor store
  std::array<int32_t, 5> coords{};
};

} // namespace isatune::emu::ptx

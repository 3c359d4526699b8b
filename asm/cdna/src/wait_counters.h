#pragma once
// Outstanding memory operations of one wait counter (shared/notes/cdna.md section 5), as insert_waits tracks
// them: per register, how many operations of the counter were issued after its load. Private to isatune_cdna.
#include <algorithm>
#include <array>
#include <cstdint>

#include "wait_state_rules.h"

namespace isatune::cdna::detail {

constexpr uint8_t kNone = 0xff; // register not pending
constexpr uint8_t kCap = 200;   // "many operations after": anything from the counter maximum up behaves alike

// Counter maxima (notes section 5): vmcnt 63, lgkmcnt 15. The hardware counter saturates at its maximum, so
// waiting for the maximum proves nothing when more were issued: the deepest useful wait is maximum - 1.
constexpr uint8_t kVmMax = 63, kLgkmMax = 15;

// Outstanding operations of one counter.
struct Queue {
  std::array<uint8_t, kNumUnits> after; // per register: operations issued after its load, or kNone
  bool out_of_order = false;            // SMEM (lgkm) or flat outstanding: only a wait for 0 is exact
  uint8_t ds_newest = kNone;            // lgkm: operations after the newest LDS operation (barrier ordering)
  uint8_t dma_newest = kNone; // vm: operations after the newest LDS-DMA load (it writes no register)
  uint8_t max = 0;

  explicit Queue(uint8_t maximum) : max(maximum) { after.fill(kNone); }

  void issue() {
    for (auto& a : after)
      if (a != kNone && a < kCap)
        ++a;
    if (ds_newest != kNone && ds_newest < kCap)
      ++ds_newest;
    if (dma_newest != kNone && dma_newest < kCap)
      ++dma_newest;
  }
  // The count that retires an operation with `a` operations after it.
  uint8_t count_for(uint8_t a) const { return out_of_order ? 0 : std::min<uint8_t>(a, max - 1); }
  void wait(uint8_t c) {
    if (c >= max)
      return; // the encoding's "no wait"
    if (c == 0) {
      after.fill(kNone);
      out_of_order = false;
      ds_newest = kNone;
      dma_newest = kNone;
      return;
    }
    if (out_of_order)
      return; // which operations completed is unknown
    for (auto& a : after)
      if (a != kNone && a >= c)
        a = kNone;
    if (ds_newest != kNone && ds_newest >= c)
      ds_newest = kNone;
    if (dma_newest != kNone && dma_newest >= c)
      dma_newest = kNone;
  }
  bool join(const Queue& o) {
    bool changed = false;
    auto merge = [&](uint8_t& a, uint8_t b) {
      if (b != kNone && (a == kNone || b < a)) {
        a = b;
        changed = true;
      }
    };
    for (size_t i = 0; i < after.size(); ++i)
      merge(after[i], o.after[i]);
    merge(ds_newest, o.ds_newest);
    merge(dma_newest, o.dma_newest);
    if (o.out_of_order && !out_of_order)
      out_of_order = changed = true;
    return changed;
  }
};

} // namespace isatune::cdna::detail

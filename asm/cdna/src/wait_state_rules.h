#pragma once
// Wait-state rules (shared/notes/cdna.md section 6): how many wait states a consumer needs after one earlier
// producer, per target. Used by insert_waits (waits.cpp); private to isatune_cdna.
#include <array>
#include <cstdint>

#include "isatune/cdna/instruction.h"

namespace isatune::cdna::detail {

// Registers in one numbering for every file, so that VCC overlaps the SGPRs it aliases in rules that name
// "SGPR or VCC": s0.. = 0.., vcc 106-107, m0 124, exec 126-127, v0.. = 128.., a0.. = 384.., scc 640.
struct Units {
  uint16_t first = 0, count = 0;
  bool overlaps(const Units& o) const {
    return count && o.count && first < o.first + o.count && o.first < first + count;
  }
};
constexpr uint16_t kNumUnits = 641;
Units units_of(const Reg& r);

// A few register ranges in a fixed array: an instruction names at most 5 uses (EXEC included) and 3 defs, and
// the pass compares these lists for every producer-consumer pair, so they must not allocate (nor be large:
// the pass keeps five per statement).
class UnitList {
public:
  void add(const Reg& r);
  const Units* begin() const { return items_.data(); }
  const Units* end() const { return items_.data() + n_; }
  bool empty() const { return n_ == 0; }
  bool overlaps(const Units& u) const;
  bool overlaps(const UnitList& o) const;

private:
  std::array<Units, 6> items_{};
  uint8_t n_ = 0;
};

// An instruction's registers by role, split the way the rules name them. insert_waits builds one per
// statement once per run and reuses it for every pair and every fixed-point iteration.
struct View {
  const Instruction* inst = nullptr;
  UnitList uses;    // uses(), EXEC included (memory counters)
  UnitList reads;   // uses() without EXEC (every vector instruction reads it)
  UnitList writes;  // defs()
  UnitList vwrites; // VGPR/AGPR writes
  UnitList swrites; // SGPR/VCC/M0 writes (not EXEC, not SCC)
  bool writes_exec = false;
  bool has_defs = false;
};
View view_of(const Instruction& i);

// The longest wait any rule asks for (gfx950 16-pass XDL result read: N+4 = 20): a producer this far back
// needs nothing more.
constexpr int kMaxWaitStates = 20;

// Wait states `consumer` needs after `producer` (same target); 0 when no rule applies. Rules that need more
// than the pair (a DGEMM issued in between) are in waits.cpp.
int wait_states_needed(const View& producer, const View& consumer);

// Whether the instruction reads/writes like a VALU for hazard rules (v_readlane, v_accvgpr_*, DPP, dot,
// trans).
bool is_valu_like(const Instruction& i);

} // namespace isatune::cdna::detail

#pragma once
// Execution state: a launch (shared by every CTA), a CTA (its shared memory, barriers, shadow state for the
// checks) and its warps (32 lanes, each with its own program counter: independent thread scheduling).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "async_proxy.h"
#include "async_state.h"
#include "isatune/emu/report.h"
#include "memory.h"
#include "program.h"

namespace isatune::emu::ptx {

enum class Schedule : uint8_t {
  lockstep,    // lanes at equal PCs run together; the lowest PC first (reconverges at joins)
  adversarial, // one lane at a time, the highest first, each as far as it may go before another runs
};

// What every CTA of a launch shares.
struct Launch {
  const Program* prog = nullptr;
  Memory* memory = nullptr;
  const uint8_t* params = nullptr; // kernel parameter buffer
  uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, cluster[3] = {1, 1, 1};
  uint32_t dynamic_shared = 0, shared_bytes = 0;
  uint32_t sm_count = 132;
  Schedule schedule = Schedule::lockstep;
  bool strict = false;
  bool check_races = true, check_uninitialized = true;
  uint64_t max_instructions = 0; // per CTA (warp instructions); 0: no limit
  std::atomic<bool> stop{false};
};

// Reports collected by one worker, deduplicated per (line, kind).
struct ReportSink {
  std::map<std::pair<uint32_t, int>, HazardReport> reports;
  void merge_into(std::map<std::pair<uint32_t, int>, HazardReport>& all) {
    for (auto& [k, r] : reports) {
      auto it = all.find(k);
      if (it == all.end())
        all.emplace(k, r);
      else
        it->second.count += r.count;
    }
    reports.clear();
  }
};

struct Frame {
  const Inst* call; // the call instruction (return to call->index + 1; results per call->rets)
};

struct Cta;
struct WgmmaWarp; // ops_wgmma.cpp: a warp's in-flight wgmma.mma_async operations and register shadow

// Barrier slots: ids 0-15 are the CTA barriers; 16 + (warp index / 4) is the warpgroup rendezvous of
// wgmma.wait_group (Sync::warpgroup), up to 8 warpgroups (1024 threads).
constexpr unsigned kWarpgroupBarrier = 16, kBarrierSlots = 16 + 8;

struct Warp {
  Cta* cta = nullptr;
  uint32_t index = 0;
  uint32_t lanes = 32;      // threads of the CTA in this warp
  uint32_t live = 0;        // lanes not exited
  uint64_t* r = nullptr;    // registers: r[slot * 32 + lane]
  uint8_t* local = nullptr; // local memory: lane l at local + l * local_bytes
  uint32_t pc[32];
  uint32_t runm = 0, collm = 0, barm = 0; // lanes running, waiting at a warp collective, at a CTA barrier
  uint32_t arrive_lanes[16] = {}; // bar.arrive executed by these lanes (warp arrives when all live did)
  uint32_t focus = 32;            // adversarial scheduler: the lane running alone
  uint8_t bar_id[32];
  uint8_t cc[32] = {}; // carry flag (add.cc / addc)
  uint32_t tid[32][3];
  std::vector<Frame> stack[32];
  uint64_t instructions = 0, thread_instructions = 0, cycles = 0;
  const Inst* cur = nullptr; // the instruction executing, for reports
  // wgmma state (ops_wgmma.cpp), created by the first instruction that needs it.
  std::shared_ptr<WgmmaWarp> wgmma;
  // Sync::wait (cluster.cpp): lanes parked until a cluster-wide event, what they wait for, and lanes whose
  // next wait gives up (try_wait's time limit) because nothing else could run.
  uint32_t park = 0;  // set by a Sync::wait handler: lanes that must park
  uint32_t parkm = 0; // parked lanes
  uint32_t timeout = 0;
  uint32_t park_what[32] = {}; // mbarrier: shared::cluster address; barrier.cluster: ~0u; setmaxnreg: ~1u
  // barrier.cluster: lanes arrived in the current phase, the phase each lane arrived in, the last arrival
  // time.
  uint32_t cl_arrived = 0;
  uint32_t cl_wait = 0; // lanes that arrived and have not yet completed their wait
  uint32_t cl_phase[32] = {};
  uint32_t cl_time = 0;
  uint32_t nreg = 0; // setmaxnreg: registers per thread
  // Bulk async groups per thread (cp.async.bulk.commit_group / wait_group): uncommitted stores, then the
  // committed groups, oldest first.
  std::vector<BulkStore> bulk_open[32];
  std::vector<std::vector<BulkStore>> bulk_groups[32];

  uint64_t& reg(uint32_t slot, unsigned lane) { return r[slot * 32 + lane]; }
};

struct Barrier {
  uint32_t arrived = 0;          // warps arrived (bit per warp)
  uint32_t waiting = 0;          // of them, those that wait (bar.sync / bar.red) rather than arrive
  uint32_t expected = 0;         // threads (0: every thread of the CTA)
  uint32_t pc = ~0u;             // instruction of the first arrival (the .aligned check)
  uint32_t arrive_time[32] = {}; // per warp: when it arrived (happens-before edges start there)
  uint32_t red_popc = 0;         // bar.red accumulators
  bool red_and = true, red_or = false;
  bool red = false;
};

// One access remembered by the shadow: when, by which thread (linear id in the CTA), which instruction.
struct Access {
  uint32_t time = 0; // 0: none
  uint32_t pc = 0;
  uint16_t thread = 0;
  uint8_t rank = 0; // the CTA (rank in the cluster) of the thread: remote accesses through shared::cluster
};

// Shadow state of one shared byte for the race and initialisation checks. Plain writes, plain reads and
// atomics are kept apart (atomics do not race with atomics). Reads and atomics keep two slots each: the
// oldest access not ordered before a later one, and the latest, so that a conflicting access is checked
// against both.
struct ShadowByte {
  Access write, read, read2, atom, atom2;
  bool written = false;
};

// cp.async (ops_async_copy.cpp): copies issued and not landed yet. The source is read at issue; the data
// lands in shared memory when the issuing thread's wait_group/wait_all retires the copy's group (or when the
// thread exits). Until then every shared access to the destination bytes is reported.
struct PendingCopy {
  uint32_t dst = 0;   // shared offset
  uint32_t group = 0; // the issuing thread's commit count at issue: the copy belongs to its next commit
  uint32_t pc = 0;    // the cp.async instruction
  uint8_t bytes = 0;
  uint8_t data[16] = {};
};
struct PendingByte {
  uint16_t count = 0;  // pending copies that will write this byte
  uint16_t thread = 0; // the latest of them: issuing thread and instruction
  uint32_t pc = 0;
};
struct AsyncCopies {
  std::vector<std::vector<PendingCopy>> pending; // per thread of the CTA, in issue order
  std::vector<uint32_t> commits;                 // per thread: cp.async.commit_group executed
  std::vector<PendingByte> bytes;                // per shared byte
  uint32_t outstanding = 0;                      // copies pending in the CTA (0: nothing to check)
  bool used = false;
  void reset() {
    if (!used)
      return;
    for (auto& p : pending)
      p.clear();
    std::fill(commits.begin(), commits.end(), 0);
    std::fill(bytes.begin(), bytes.end(), PendingByte{});
    outstanding = 0;
  }
};
struct Cluster;

struct Cta {
  Launch* launch = nullptr;
  Cluster* cluster = nullptr; // the CTAs that run together (a cluster of one without a cluster launch)
  uint32_t rank = 0;          // %cluster_ctarank
  ReportSink* sink = nullptr;
  uint32_t id[3] = {0, 0, 0};
  uint32_t linear = 0;
  uint32_t threads = 0;
  std::vector<Warp> warps;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> local;
  std::vector<uint8_t> shared;
  std::vector<ShadowByte> shadow;
  std::array<Barrier, kBarrierSlots> bars;
  uint32_t time = 1; // warp instructions executed in this CTA (+1): the race checker's clock
  // Happens-before edges: the last time warps a and b completed a barrier together, and lanes a and b of a
  // warp a bar.warp.sync (or a barrier).
  std::vector<uint32_t> warp_sync; // [a * nwarps + b]
  std::vector<uint32_t> lane_sync; // [(warp * 32 + a) * 32 + b]
  // Global memory: the allocation of the last access (most accesses hit it).
  uint64_t g_lo = 1, g_hi = 0;
  uint8_t* g_base = nullptr;
  uint64_t cycles = 0;
  uint32_t red_value = 0; // bar.red result while the completing barrier releases its threads
  AsyncCopies async;      // cp.async
  // fence.proxy.async and in-flight async reads (async_proxy.h).
  AsyncProxyState async_proxy;
  std::map<uint32_t, Mbar> mbars;       // by shared offset
  std::vector<AsyncRange> async_ranges; // shared bytes asynchronous operations will still write or read

  uint32_t nwarps() const { return uint32_t(warps.size()); }
  bool ordered(uint32_t t_a, uint32_t time_a, uint32_t t_b) const {
    if (t_a == t_b)
      return true;
    uint32_t wa = t_a / 32, wb = t_b / 32;
    if (time_a < warp_sync[wa * nwarps() + wb])
      return true;
    return wa == wb && time_a < lane_sync[(wa * 32 + t_a % 32) * 32 + t_b % 32];
  }
};

// The CTAs of one cluster: they run interleaved on one host thread (so they can wait on each other) and share
// one clock. Happens-before across warps of the cluster from barrier.cluster and mbarrier waits.
struct Cluster {
  Launch* launch = nullptr;
  std::vector<Cta*> ctas; // by rank
  uint32_t wpc = 0;       // warps per CTA
  uint32_t time = 1;
  // xsync[a * N + b]: accesses of cluster warp a (rank * wpc + warp) before this time are ordered before
  // the later accesses of cluster warp b.
  std::vector<uint32_t> xsync;
  uint64_t version = 0;              // changes of waitable state (arrivals, phases, exits, register releases)
  uint64_t forced = ~0ull;           // version at the last forced try_wait time-out
  uint32_t bar_phase = 0;            // barrier.cluster phases completed
  std::vector<uint32_t> bar_release; // per cluster warp: its arrival time in the last completed phase

  uint32_t nwarps() const { return wpc * uint32_t(ctas.size()); }
  // Is an access (rank_a, thread t_a, time_a) ordered before the present access of (rank_b, t_b)?
  bool ordered(uint32_t rank_a, uint32_t t_a, uint32_t time_a, uint32_t rank_b, uint32_t t_b) const;
  void sync(uint32_t ga, uint32_t gb, uint32_t t) {
    uint32_t& x = xsync[size_t(ga) * nwarps() + gb];
    x = std::max(x, t);
  }
};

// Runs the CTAs of a cluster to completion (cta.cpp).
void run_cluster(Cluster& cl);
// A thread exited (cluster.cpp): barrier.cluster no longer waits for it.
void cluster_thread_exited(Warp& w);
// Wakes every parked lane of the cluster (something they may wait for changed): they try again.
void cluster_wake(Cluster& cl);
// After a launch's cluster finished: reports mbarrier phases with bytes that never arrived, copies that never
// landed, bulk stores never waited for (mbarrier.cpp, bulk_copy.cpp).
void mbarrier_exit_checks(Cluster& cl);
void bulk_exit_checks(Cluster& cl);
// Describes what parked lanes wait for (deadlock reports).
std::string describe_park(const Warp& w, unsigned lane);
// The CTA and offset a shared / shared::cluster / generic address names for lane `lane`, or nullptr after
// reporting an out-of-bounds access (cluster.cpp documents the encoding).
Cta* shared_target(Warp& w, unsigned lane, Space space, uint64_t addr, unsigned bytes, uint32_t& offset);
// Shared-memory race shadow for an access by (w, lane) to `bytes` at `offset` of CTA `t` (access.cpp).
void shared_shadow(Warp& w, unsigned lane, Cta& t, uint32_t offset, unsigned bytes, bool is_write,
                   bool atomic);
// Asynchronous-copy checks for a generic-proxy access of shared bytes (access.cpp).
void async_checks(Warp& w, unsigned lane, Cta& t, uint32_t offset, unsigned bytes, bool is_write);

// setmaxnreg (setmaxnreg.cpp): the registers per thread every warp starts with, and the message for a
// setmaxnreg.inc that can never be granted.
uint32_t initial_registers(uint32_t threads);
std::string register_budget_message(const Cta& c, const Warp& w, const Inst& in);

// Records a report for the instruction running in `w` (lane `lane`); throws HazardError in strict mode.
void report(Warp& w, unsigned lane, HazardKind kind, const std::string& message);
// Thrown for an instruction that cannot execute (unsupported at run time).
[[noreturn]] void fail(const Warp& w, const std::string& why);

// Operand access.
inline uint64_t read(Warp& w, const Opnd& o, unsigned lane);
uint64_t read_special(Warp& w, const Opnd& o, unsigned lane);

inline uint64_t read(Warp& w, const Opnd& o, unsigned lane) {
  switch (o.kind) {
  case Opnd::Kind::reg: {
    uint64_t v = w.r[o.slot * 32 + lane];
    return o.negate ? (v ^ 1) : v;
  }
  case Opnd::Kind::imm:
    return o.imm;
  case Opnd::Kind::special:
    return read_special(w, o, lane);
  default:
    return 0;
  }
}
inline void write(Warp& w, const Opnd& o, unsigned lane, uint64_t v) {
  if (o.kind == Opnd::Kind::reg)
    w.r[o.slot * 32 + lane] = v & width_mask(o.rbits);
}

// Memory: host pointer for `bytes` at `addr` in `space` for lane `lane`, or nullptr after reporting an
// out-of-bounds or misaligned access. `write`: the access stores (shared: race and initialisation shadow).
uint8_t* access(Warp& w, unsigned lane, Space space, uint64_t addr, unsigned bytes, bool write,
                bool atomic = false, unsigned align = 0);
// The effective address of an address operand.
inline uint64_t address_of(Warp& w, const Opnd& o, unsigned lane) {
  uint64_t a = o.imm;
  if (o.has_base)
    a += w.r[o.slot * 32 + lane];
  return a;
}

template <class F> inline void for_lanes(uint32_t mask, F&& f) {
  while (mask) {
    unsigned l = unsigned(std::countr_zero(mask));
    mask &= mask - 1;
    f(l);
  }
}

// cp.async (ops_async_copy.cpp): reports a shared access to bytes a pending copy will write; lands (and
// reports) the copies still pending in threads that exit.
void check_async_pending(Warp& w, unsigned lane, uint32_t addr, unsigned bytes, bool is_write);
void async_copies_at_exit(Warp& w, uint32_t lanes);

// Instruction cost model (emulated cycles), by handler group.
uint32_t instruction_cost(const Inst& in);

} // namespace isatune::emu::ptx

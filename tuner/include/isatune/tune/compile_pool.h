#pragma once
// Compile ahead: a pool of threads (all CPU cores by default) that generates and assembles variants of one
// (generator, isa, signature) before the device asks for them, so the device does not wait for the compiler.
// The evaluator calls prefetch() with the configurations a strategy is likely to ask for next (neighbours of the
// one just requested, the next ones in order) and get() for the one it needs now. Code objects do not depend on
// the problem, so one compilation serves every problem of a job. Speculation is bounded: at most `capacity`
// entries are queued or kept; a new prefetch() drops queued speculation that has not started.
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "isatune/tune/variant_runner.h"

namespace isatune::tune {

struct CompileOutcome {
  Status status = Status::ok; // ok, constraint (generate refused the point) or compile (toolchain error)
  std::string message;
  std::shared_ptr<const Compiled> compiled; // when ok
  double compile_s = 0;                     // generate + assemble, on whichever thread did it
  bool ahead = false;                       // compiled by a pool thread before it was needed
};

struct CompileStats {
  unsigned threads = 0;
  size_t compiled = 0;          // compilations finished (speculative ones included)
  size_t on_pool = 0;           // ... of which on pool threads
  size_t requested = 0;         // get() calls
  size_t ready = 0;             // get() found it compiled already
  size_t waited = 0;            // get() waited for a pool thread that was compiling it
  size_t inline_compiles = 0;   // get() compiled it on the caller's thread
  size_t dropped = 0;           // speculation dropped unstarted or evicted unused
  double idle_s = 0;            // time get() spent waiting or compiling: the device's idle time
};

class CompilePool {
public:
  // threads 0: compile only on the caller's thread (no speculation).
  CompilePool(const gen::Generator& generator, std::string isa, gen::Signature sig,
              unsigned threads = std::thread::hardware_concurrency(), size_t capacity = 256);
  ~CompilePool();
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  // Queues these (most likely first) behind nothing: replaces the unstarted speculation.
  void prefetch(const std::vector<gen::Params>& likely);
  // The outcome for params, compiling it now if nobody has started it. Never throws for a bad variant.
  CompileOutcome get(const gen::Params& params);
  CompileStats stats() const;

private:
  struct Entry {
    gen::Params params;
    bool started = false, done = false;
    CompileOutcome outcome;
  };
  CompileOutcome compile(const gen::Params& params) const;
  void work();
  void evict_locked();

  const gen::Generator& generator_;
  std::string isa_;
  gen::Signature sig_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable queue_cv_, done_cv_;
  std::deque<std::shared_ptr<Entry>> queue_;          // not started, most likely first
  std::map<std::string, std::shared_ptr<Entry>> entries_; // queued, running or done, by format(params)
  std::deque<std::string> done_order_;
  CompileStats stats_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

} // namespace isatune::tune

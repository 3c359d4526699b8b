#include "isatune/tune/compile_pool.h"

#include <chrono>

#include "isatune/error.h"
#include "isatune/toolchain/diagnostic.h"

namespace isatune::tune {

CompilePool::CompilePool(const gen::Generator& generator, std::string isa, gen::Signature sig, unsigned threads,
                         size_t capacity)
    : generator_(generator), isa_(std::move(isa)), sig_(std::move(sig)), capacity_(std::max<size_t>(capacity, 1)) {
  stats_.threads = threads;
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

CompilePool::~CompilePool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

CompileOutcome CompilePool::compile(const gen::Params& params) const {
  CompileOutcome o;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    VariantSpec spec{&generator_, isa_, sig_, params};
    o.compiled = std::make_shared<Compiled>(compile_variant(spec));
  } catch (const toolchain::AssemblyError& e) {
    o.status = Status::compile;
    o.message = e.what();
  } catch (const InputError& e) { // the generator refused the point
    o.status = Status::constraint;
    o.message = e.what();
  } catch (const std::exception& e) {
    o.status = Status::compile;
    o.message = e.what();
  }
  o.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return o;
}

void CompilePool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queue_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::shared_ptr<Entry> e = queue_.front();
    queue_.pop_front();
    e->started = true;
    lock.unlock();
    CompileOutcome o = compile(e->params);
    o.ahead = true;
    lock.lock();
    e->outcome = std::move(o);
    e->done = true;
    ++stats_.compiled;
    ++stats_.on_pool;
    const std::string key = gen::format(e->params);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second == e) done_order_.push_back(key);
    evict_locked();
    done_cv_.notify_all();
  }
}

void CompilePool::evict_locked() {
  while (entries_.size() > capacity_ && !done_order_.empty()) {
    auto it = entries_.find(done_order_.front());
    done_order_.pop_front();
    if (it != entries_.end() && it->second->done) {
      entries_.erase(it);
      ++stats_.dropped;
    }
  }
}

void CompilePool::prefetch(const std::vector<gen::Params>& likely) {
  if (threads_.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (const auto& e : queue_) {
      entries_.erase(gen::format(e->params));
      ++stats_.dropped;
    }
    queue_.clear();
    for (const auto& p : likely) {
      if (entries_.size() >= capacity_) break;
      const std::string key = gen::format(p);
      if (entries_.count(key)) continue;
      auto e = std::make_shared<Entry>();
      e->params = p;
      entries_[key] = e;
      queue_.push_back(e);
    }
  }
  queue_cv_.notify_all();
}

CompileOutcome CompilePool::get(const gen::Params& params) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string key = gen::format(params);
  std::unique_lock lock(mutex_);
  ++stats_.requested;
  auto it = entries_.find(key);
  std::shared_ptr<Entry> e = it == entries_.end() ? nullptr : it->second;
  CompileOutcome out;
  if (e && e->done) {
    ++stats_.ready;
    out = e->outcome;
  } else if (e && e->started) {
    ++stats_.waited;
    done_cv_.wait(lock, [&] { return e->done; });
    out = e->outcome;
  } else {
    if (e) { // queued, not started: take it out and compile here
      for (auto q = queue_.begin(); q != queue_.end(); ++q)
        if (*q == e) {
          queue_.erase(q);
          break;
        }
    }
    entries_.erase(key);
    ++stats_.inline_compiles;
    lock.unlock();
    out = compile(params);
    lock.lock();
    ++stats_.compiled;
  }
  entries_.erase(key); // each configuration is requested once; keep the room for speculation
  stats_.idle_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

CompileStats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

} // namespace isatune::tune

// Content-addressed, parallel PTX compiles.
#include <algorithm>
#include <atomic>
#include <thread>

#include "isatune/codeobj/reader.h"
#include "isatune/toolchain/ptx_cache.h"

namespace isatune::toolchain {

PtxCompileCache::PtxCompileCache(unsigned threads)
    : threads_(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {}

std::string PtxCompileCache::key(const std::string& ptx, const PtxCompileOptions& o) {
  // Backend "auto" resolves the same way for the same text in one process, so it is part of the key as is.
  std::string k = std::string(ptx_backend_name(o.backend)) + "\n" + o.target + "\n" + std::to_string(o.opt_level) +
                  "\n" + std::to_string(o.max_registers) + "\n" + o.file_name + "\n" + ptx;
  return codeobj::sha256_hex({reinterpret_cast<const uint8_t*>(k.data()), k.size()});
}

PtxJobResult PtxCompileCache::lookup_or_compile(const std::string& ptx, const PtxCompileOptions& options) {
  const std::string k = key(ptx, options);
  std::promise<std::shared_ptr<const PtxCompiled>> promise;
  Future future;
  bool owner = false;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(k);
    if (it != entries_.end()) {
      ++hits_;
      future = it->second;
    } else {
      ++misses_;
      future = promise.get_future().share();
      entries_.emplace(k, future);
      owner = true;
    }
  }
  if (owner) {
    try {
      promise.set_value(std::make_shared<const PtxCompiled>(compile_ptx(ptx, options)));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  PtxJobResult r;
  r.cache_hit = !owner;
  try {
    r.compiled = future.get();
  } catch (...) {
    r.error = std::current_exception();
  }
  return r;
}

std::shared_ptr<const PtxCompiled> PtxCompileCache::compile(const std::string& ptx, const PtxCompileOptions& options) {
  PtxJobResult r = lookup_or_compile(ptx, options);
  if (r.error) std::rethrow_exception(r.error);
  return r.compiled;
}

std::vector<PtxJobResult> PtxCompileCache::compile_all(const std::vector<PtxJob>& jobs) {
  std::vector<PtxJobResult> results(jobs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) results[i] = lookup_or_compile(jobs[i].ptx, jobs[i].options);
  };
  const unsigned n = static_cast<unsigned>(std::min<size_t>(threads_, jobs.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return results;
}

size_t PtxCompileCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

size_t PtxCompileCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

size_t PtxCompileCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void PtxCompileCache::clear() {
  std::lock_guard lock(mutex_);
  entries_.clear();
  hits_ = misses_ = 0;
}

} // namespace isatune::toolchain

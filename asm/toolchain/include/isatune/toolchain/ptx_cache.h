#pragma once
// Parallel, content-addressed PTX compiles: the key is the SHA-256 of (backend, target, options, PTX text), so
// an unchanged variant is compiled once; a failed compile is remembered too. Concurrent requests for the same
// key wait for the one compile in flight.
#include <cstddef>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "isatune/toolchain/ptx_compiler.h"

namespace isatune::toolchain {

struct PtxJob {
  std::string ptx;
  PtxCompileOptions options;
};

struct PtxJobResult {
  std::shared_ptr<const PtxCompiled> compiled; // null on failure
  std::exception_ptr error;                    // the compile's exception on failure
  bool cache_hit = false;
};

class PtxCompileCache {
public:
  // threads: compiles run at once in compile_all; 0 = hardware concurrency.
  explicit PtxCompileCache(unsigned threads = 0);

  // Compiles or returns the cached result; rethrows the compile's exception.
  std::shared_ptr<const PtxCompiled> compile(const std::string& ptx, const PtxCompileOptions& options);
  // Compiles all jobs in parallel; one result per job, in order; never throws for a job's failure.
  std::vector<PtxJobResult> compile_all(const std::vector<PtxJob>& jobs);

  size_t hits() const;
  size_t misses() const;
  size_t size() const;
  void clear();

  static std::string key(const std::string& ptx, const PtxCompileOptions& options);

private:
  using Future = std::shared_future<std::shared_ptr<const PtxCompiled>>;
  PtxJobResult lookup_or_compile(const std::string& ptx, const PtxCompileOptions& options);

  unsigned threads_;
  mutable std::mutex mutex_;
  std::map<std::string, Future> entries_;
  size_t hits_ = 0, misses_ = 0;
};

} // namespace isatune::toolchain

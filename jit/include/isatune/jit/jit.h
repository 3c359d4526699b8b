#pragma once
// The JIT (docs/jit.md): select() answers every request with a launchable kernel for the exact problem. An
// exact tuned entry is used as it is; otherwise (when the call allows it) the configuration of the nearest tuned
// problem of the same generator, signature and device, or the static model's best when nothing is tuned, is
// generated and assembled in process, recorded in the tuning database as a JIT variant (measurable later), and
// returned. Concurrent requests for one problem build once; a later process reuses what the database recorded.
#include <atomic>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/gen/generator.h"
#include "isatune/loader/loader.h"

namespace isatune::jit {

// What a call accepts.
enum class Mode {
  exact_only,   // the exact tuned entry or NotFoundError (the loader's strict behaviour)
  exact_or_jit, // the exact tuned entry, else a kernel built for this problem
};

// Where a kernel's configuration came from.
enum class Source {
  exact,   // tuned (measured) for this very problem
  nearest, // the configuration of the nearest tuned problem, built for this one
  model,   // nothing tuned for this generator, signature and device: the static model's best configuration
};
std::string_view to_string(Source s);

struct JitOptions {
  bool record = true;          // write JIT variants into the database (false: in memory only)
  bool ptxas = true;           // PTX: compile with ptxas when present (the cubin a GPU runs)
  size_t model_candidates = 8; // model source: shape-ranked configurations compiled and estimated
};

// A kernel for one exact problem, ready to launch on the JIT's device. Valid while its Jit lives.
struct JitKernel {
  const gen::Generator* generator = nullptr;
  std::string isa;
  gen::Signature sig;
  gen::Problem problem;
  gen::Params params;
  std::string signature_json, problem_json, parameters_json; // canonical, as the database stores them
  Source source = Source::exact;
  std::string seed_problem;     // the tuned problem whose configuration was taken (exact, nearest)
  double seed_median_ms = 0;    // its recorded time (exact, nearest)
  std::string seed_device_kind; // real | emulated (exact, nearest)
  std::shared_ptr<const CodeObject> code; // what the device loaded
  std::string kernel;                     // the generator's entry kernel
  int64_t variant_id = 0;                 // the variant row (0: not recorded)
  std::string run_guid;                   // the JIT build's runs row (strategy 'jit'); empty when not recorded
  bool built = false;                     // generated and assembled by this process (false: tuned or reused)
  bool from_database = false;             // a JIT build of an earlier process, read back
  double build_ms = 0;                    // generate + assemble (+ ptxas), when built
  double generate_ms = 0, assemble_ms = 0;
  double model_ms = 0;  // model source: ranking the space and compiling its best few
  double record_ms = 0; // writing the code object, variant and runs row
  double load_ms = 0;   // loading the code object on the device
  double total_ms = 0;  // the whole select() that resolved it

  // The generator's launches of the problem for these buffers (kernel-argument order of gen::Generator::
  // buffers) and scalars (alpha, beta, eps; absent ones take the lower end of the generator's range).
  std::vector<gen::Launch> launches(std::span<const uint64_t> addresses,
                                    const std::map<std::string, double>& scalars = {}) const;
  // Launches every kernel of the problem on the device (tensor maps encoded by the device). Asynchronous.
  void launch(std::span<const uint64_t> addresses, const std::map<std::string, double>& scalars = {}) const;

  std::shared_ptr<loader::Module> module; // loaded once
  loader::Device* device = nullptr;
};

class Jit {
public:
  // `loader` (read-only selection, device, module cache) must outlive the Jit. JIT variants are written through
  // a second, writable connection to the loader's database file.
  Jit(loader::Loader& loader, JitOptions options = {});
  // Opens the database and the device ("emu:gfx942", "hip:0", "cuda:0") and owns them.
  static std::unique_ptr<Jit> open(const std::string& db_path, const std::string& device_spec,
                                   JitOptions options = {});
  ~Jit();

  // signature and problem are JSON objects ({"a":"f16",...}, {"M":4096,...}). Throws loader::NotFoundError
  // (exact_only and no exact entry), InputError (bad JSON, unknown generator, a problem the generator rejects)
  // and AssemblyError (the toolchain refused the text). Safe from many threads; the result is cached per request.
  std::shared_ptr<const JitKernel> select(std::string_view generator, std::string_view signature,
                                          std::string_view problem, Mode mode = Mode::exact_or_jit);

  struct Stats {
    size_t requests = 0;      // select() calls
    size_t exact = 0;         // answered by an exact tuned entry
    size_t builds = 0;        // kernels generated and assembled
    size_t from_database = 0; // JIT builds of an earlier process reused
    size_t cached = 0;        // answered from this process's cache (including waits on a build in flight)
  };
  Stats stats() const;
  loader::Loader& loader() { return loader_; }

private:
  struct Records; // the writable database connection and one recorder per (generator, ISA, signature)
  std::shared_ptr<const JitKernel> resolve(const std::string& generator, const std::string& signature,
                                           const std::string& problem);
  Records& records(); // opened on first use, under records_mutex_

  std::unique_ptr<loader::Loader> owned_loader_;
  loader::Loader& loader_;
  JitOptions options_;
  std::mutex records_mutex_;
  std::unique_ptr<Records> records_;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const JitKernel>>> kernels_;
  std::atomic<size_t> requests_{0}, exact_{0}, builds_{0}, from_db_{0}, cached_{0};
};

} // namespace isatune::jit

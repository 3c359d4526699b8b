#pragma once
// Choosing a kernel from the tuning database: the exact tuned problem if present, else the nearest tuned
// problem by log-space distance, else an error that says what is missing (docs/loader.md).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "isatune/code_object.h"
#include "isatune/db/database.h"
#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/loader/device.h"

namespace isatune::loader {

// Nothing tuned fits the request; the message says what is missing.
class NotFoundError : public InputError {
public:
  using InputError::InputError;
};

// A tuned kernel exists for the request but the vendor library (cuBLAS, rocBLAS) was recorded faster for that
// problem (vendor_times, docs/database.md): the application should call the vendor library. A NotFoundError, so
// code that falls back on "nothing tuned" does the right thing; the C API returns ISATUNE_USE_VENDOR.
class VendorFasterError : public NotFoundError {
public:
  VendorFasterError(const std::string& message, std::string library, double vendor_ms, double tuned_ms)
      : NotFoundError(message), library(std::move(library)), vendor_ms(vendor_ms), tuned_ms(tuned_ms) {}
  std::string library; // as recorded ("cublas 13.0 cublasGemmEx")
  double vendor_ms = 0, tuned_ms = 0;
};

struct Selection {
  std::string generator, generator_version;
  std::string signature;     // canonical JSON
  std::string problem;       // the requested problem, canonical JSON
  std::string tuned_problem; // the problem the kernel was tuned for
  bool exact = false;        // tuned_problem == problem
  double distance = 0;       // problem_distance(problem, tuned_problem)
  std::string target_id;     // the device target the measurement ran on
  uint32_t compute_units = 0;
  bool compute_units_exact = true; // false: tuned on the same target with another CU count
  std::string device_kind;   // real | emulated
  int64_t variant_id = 0, measurement_id = 0;
  double median_ms = 0;
  std::string parameters;    // canonical JSON
  std::string code_object;   // sha256
  std::string kernel;        // kernel name in the code object
  std::string launch;        // launch template, canonical JSON
  bool rerank_winner = false; // the re-ranking's winner (rerank_winners), not the fastest single median
  double vendor_ms = 0;       // the vendor library's recorded time for tuned_problem (0: none recorded)
  std::string vendor_library;
};

// sqrt(sum over numeric fields of (ln max(a,1) - ln max(b,1))^2); numeric arrays count element by element.
// Problems with different keys, or different non-numeric values, are not comparable: +infinity.
double problem_distance(const db::JsonValue& a, const db::JsonValue& b);

// The launch geometry a variant's template gives for a problem. Template: {"block":[x,y,z],
// "grid":[g,g,g], "dynamic_shared_bytes":n} where g is a number, a problem field name, or
// {"ceil_div":[field or number, number]}. Throws InputError when the template has no grid.
LaunchConfig launch_config_for(const std::string& launch_template, const std::string& problem);

// A tuning database opened read-only for selection; safe to use from many threads.
class TuningDb {
public:
  static std::shared_ptr<TuningDb> open(const std::string& path);
  const std::string& path() const { return path_; }

  // Throws NotFoundError when nothing fits, VendorFasterError when every tuned entry that fits is slower than the
  // vendor library's recorded time for its problem (never returns such an entry), InputError for malformed JSON.
  std::shared_ptr<const Selection> select(std::string_view generator, std::string_view signature,
                                          std::string_view problem, const DeviceProperties& device);
  // The code object, its hash verified once, then cached.
  std::shared_ptr<const CodeObject> code_object(const std::string& sha256);

private:
  struct Point {
    std::string problem;
    db::JsonValue parsed;
    std::shared_ptr<Selection> base;
  };
  struct Group {
    std::vector<Point> points;
    std::unordered_map<std::string, size_t> by_problem;
  };
  explicit TuningDb(db::Database db);
  std::shared_ptr<Group> group(const std::string& generator, const std::string& signature, const std::string& target,
                               int64_t cus, const std::string& kind);
  [[noreturn]] void not_found(const std::string& generator, const std::string& signature,
                              const DeviceProperties& device, const std::string& kind);

  std::string path_;
  std::mutex conn_mutex_;
  db::Database db_;
  std::shared_mutex cache_mutex_;
  std::unordered_map<std::string, std::shared_ptr<const Selection>> selections_;
  std::map<std::string, std::shared_ptr<Group>> groups_;
  std::map<std::string, std::shared_ptr<const CodeObject>> code_objects_;
};

} // namespace isatune::loader

#include "isatune/tune/tuning_recorder.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <random>

#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/loader/sha256.h"
#include "isatune/toolchain/assembler.h"
#include "isatune/toolchain/ptx_compiler.h"
#include "worker_protocol.h"

namespace isatune::tune {

namespace {

std::string new_guid() {
  std::random_device rd;
  std::mt19937_64 rng((uint64_t(rd()) << 32) ^ rd() ^ uint64_t(::getpid()) ^
                      uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()));
  char buf[40];
  const uint64_t a = rng(), b = rng();
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

} // namespace

std::string TuningRecorder::generator_version(const TuningJob& job) {
  const gen::Space space = job.generator->space(job.isa, job.sig);
  std::string text = job.generator->name();
  if (space.size()) {
    try {
      text += job.generator->generate(job.isa, job.sig, gen::params_of(space, space.valid_config(0))).text;
    } catch (const std::exception& e) {
      text += e.what();
    }
  }
  return loader::sha256_hex({reinterpret_cast<const uint8_t*>(text.data()), text.size()}).substr(0, 16);
}

std::string TuningRecorder::params_key(const gen::Params& p) {
  return db::canonical_json(worker::to_json(p).dump(), "parameters");
}

std::string TuningRecorder::problem_key(const gen::Problem& p) {
  return db::canonical_json(nlohmann::json(p).dump(), "problem");
}

TuningRecorder::TuningRecorder(db::Database& db, const TuningJob& job, const loader::DeviceProperties& device)
    : db_(db), job_(job), device_(device) {
  db::DeviceRecord d;
  d.vendor = device.vendor == Vendor::amd ? "amd" : "nvidia";
  d.target_id = device.target_id;
  d.isa = device.isa;
  d.name = device.name;
  d.compute_units = device.compute_units;
  d.memory_bytes = device.memory_bytes;
  d.driver_version = device.driver_version;
  d.emulated = device.emulated;
  d.clock_khz = device.clock_khz;
  d.memory_clock_khz = device.memory_clock_khz;
  d.memory_bus_bits = device.memory_bus_bits;
  d.l2_bytes = device.l2_bytes;
  device_id_ = db_.record_device(d);
  // The toolchain that made the code objects: LLVM for CDNA; for PTX, ptxas when it compiles the candidates
  // (its cubin is what a GPU runs), else the PTX text as generated ("ptx", run by the emulator or the driver).
  std::string name = "llvm", version = "unknown";
  try {
    if (gen::is_ptx_isa(job.isa)) {
      const std::string ptxas = toolchain::ptx_backend_version(toolchain::PtxBackend::ptxas);
      name = ptxas.empty() ? "ptx" : "ptxas";
      version = ptxas.empty() ? "text" : ptxas;
    } else {
      version = toolchain::make_assembler("llvm")->version();
    }
  } catch (const std::exception&) {
  }
  toolchain_id_ = db_.record_toolchain(name, version);
  generator_id_ = db_.record_generator(job.generator->name(), generator_version(job));
  sig_key_ = db::canonical_json(nlohmann::json(job.sig).dump(), "signature");
}

std::map<std::string, std::map<std::string, RecordedResult>> TuningRecorder::load_recorded() {
  std::map<std::string, std::map<std::string, RecordedResult>> out;
  const auto rows = db_.query(
      "SELECT v.parameters, m.problem, m.status, m.median_ms, m.message FROM measurements m "
      "JOIN variants v ON v.id = m.variant_id WHERE v.generator_id = ? AND v.signature = ? AND m.device_id = ? "
      "ORDER BY m.id",
      {generator_id_, sig_key_, device_id_});
  for (const auto& row : rows) {
    RecordedResult r;
    r.status = parse_status(std::get<std::string>(row[2])).value_or(Status::runtime);
    if (const double* d = std::get_if<double>(&row[3])) r.median_ms = *d;
    else if (const int64_t* i = std::get_if<int64_t>(&row[3])) r.median_ms = double(*i);
    if (const std::string* m = std::get_if<std::string>(&row[4])) r.message = *m;
    out[std::get<std::string>(row[0])][std::get<std::string>(row[1])] = r;
  }
  return out;
}

void TuningRecorder::start_run(const std::string& strategy, const std::string& budget, const std::string& shard,
                               const std::string& scheduler_job) {
  guid_ = new_guid();
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  db::RunRecord r;
  r.guid = guid_;
  r.strategy = strategy;
  r.budget = budget;
  r.host = host;
  db::RunIdentity id;
  id.device_id = device_id_;
  id.device_uuid = device_.uuid;
  id.pci_bus_id = device_.pci_bus_id;
  id.compute_units = device_.compute_units;
  id.clock_khz = device_.clock_khz;
  id.memory_clock_khz = device_.memory_clock_khz;
  id.driver_version = device_.driver_version;
  id.shard = shard;
  id.scheduler_job = scheduler_job;
  db_.record_run_start(r, id);
}

void TuningRecorder::end_run() {
  if (!guid_.empty()) db_.record_run_end(guid_);
}

void TuningRecorder::record(const gen::Params& params, const Compiled* compiled,
                            const std::vector<Outcome>& outcomes) {
  db_.begin();
  try {
    db::VariantRecord v;
    v.generator_id = generator_id_;
    v.signature = sig_key_;
    v.parameters = params_key(params);
    if (compiled) {
      v.code_object = db_.record_code_object(compiled->code_for(device_), toolchain_id_); // what the device ran
      v.kernel = compiled->generated.kernel_name;
      if (v.kernel.empty() && !compiled->code.kernels.empty()) v.kernel = compiled->code.kernels.front().name;
      // The block size is the generator's for the first problem; grids depend on the problem.
      try {
        const auto launches = job_.generator->launches(job_.isa, job_.sig, params, job_.problems.front(),
                                                       std::vector<uint64_t>(job_.generator->buffers(job_.sig, job_.problems.front()).size(), 0), {});
        if (launches.size() == 1) {
          const auto& b = launches.front().block;
          v.launch = nlohmann::json({{"block", {b.x, b.y, b.z}}}).dump();
        }
      } catch (const std::exception&) {
      }
    }
    const int64_t variant_id = db_.record_variant(v);
    for (const auto& o : outcomes) {
      db::MeasurementRecord m;
      m.variant_id = variant_id;
      m.device_id = device_id_;
      m.problem = problem_key(o.problem);
      m.status = std::string(to_string(o.status));
      m.device_kind = device_.emulated ? "emulated" : "real";
      m.timing_method = device_.emulated ? "emulator-estimate" : "events";
      if (o.timing) {
        m.median_ms = o.timing->median_ms;
        m.p20_ms = o.timing->p20_ms;
        m.p80_ms = o.timing->p80_ms;
        m.min_ms = o.timing->min_ms;
        m.count = o.timing->reps;
        if (!o.timing->method.empty()) m.timing_method = o.timing->method;
      }
      m.run_guid = guid_;
      m.message = o.message;
      db_.record_measurement(m);
      ++recorded_;
    }
    db_.commit();
  } catch (...) {
    db_.rollback();
    throw;
  }
}

void TuningRecorder::record_rerank_winner(const gen::Params& params, const gen::Problem& problem,
                                          const RerankSummary& summary) {
  const std::string pkey = params_key(params), qkey = problem_key(problem);
  const auto rows = db_.query(
      "SELECT v.id FROM variants v JOIN measurements m ON m.variant_id = v.id WHERE v.generator_id = ? AND "
      "v.signature = ? AND v.parameters = ? AND v.code_object IS NOT NULL AND m.device_id = ? AND m.problem = ? AND "
      "m.status = 'ok' AND m.median_ms IS NOT NULL ORDER BY m.median_ms, v.id LIMIT 1",
      {generator_id_, sig_key_, pkey, device_id_, qkey});
  if (rows.empty())
    throw InputError(db_.path() + ": the re-ranking's winner " + pkey + " has no ok measurement of " + qkey +
                     " on this device");
  db::RerankWinnerRecord w;
  w.generator = job_.generator->name();
  w.signature = sig_key_;
  w.target_id = device_.target_id;
  w.compute_units = device_.compute_units;
  w.device_kind = device_.emulated ? "emulated" : "real";
  w.problem = qkey;
  w.variant_id = std::get<int64_t>(rows[0][0]);
  w.rerank_median_ms = summary.median_ms;
  w.rerank_lo_ms = summary.lo_ms;
  w.rerank_hi_ms = summary.hi_ms;
  w.candidates = int64_t(summary.candidates);
  w.rounds = int64_t(summary.rounds);
  w.separated = summary.separated;
  w.flip_rate = summary.flip_rate;
  w.run_guid = guid_;
  db_.record_rerank_winner(w);
}

void TuningRecorder::record_vendor_time(const gen::Problem& problem, const loader::VendorTiming& t) {
  db::VendorTimeRecord v;
  v.generator = job_.generator->name();
  v.signature = sig_key_;
  v.target_id = device_.target_id;
  v.compute_units = device_.compute_units;
  v.problem = problem_key(problem);
  v.library = t.library;
  v.median_ms = t.median_ms;
  v.p20_ms = t.p20_ms;
  v.p80_ms = t.p80_ms;
  v.min_ms = t.min_ms;
  v.count = t.reps;
  v.timing_method = t.method;
  v.source = "measured";
  v.device_id = device_id_;
  db_.record_vendor_time(v);
}

} // namespace isatune::tune

#include "isatune/jit/jit.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>

#include "isatune/db/json.h"
#include "isatune/error.h"
#include "isatune/jit/model_choice.h"
#include "isatune/loader/sha256.h"
#include "isatune/tune/tuning_recorder.h"
#include "isatune/tune/variant_runner.h"

namespace isatune::jit {

std::string_view to_string(Source s) {
  switch (s) {
  case Source::exact: return "exact";
  case Source::nearest: return "nearest";
  case Source::model: return "model";
  }
  return "?";
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

nlohmann::json parse_object(std::string_view text, const char* what) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw InputError(std::string("jit: ") + what + " must be a JSON object, got '" + std::string(text) + "'");
  return j;
}

// A request in the generator's terms: defaults filled in, checked against its schemas, and the canonical JSON
// the tuning database stores (so a partial signature finds the tuned entries of the full one).
struct Request {
  const gen::Generator* generator = nullptr;
  gen::Signature sig;
  gen::Problem problem;
  std::string sig_json, problem_json;
};

Request parse_request(const std::string& generator, const std::string& signature, const std::string& problem) {
  Request r;
  r.generator = &gen::find_generator(generator);
  std::vector<std::string> words;
  const nlohmann::json sig_json = parse_object(signature, "signature"), problem_json = parse_object(problem, "problem");
  for (const auto& [k, v] : sig_json.items()) {
    if (!v.is_string()) throw InputError("jit: signature field '" + k + "' must be a string");
    words.push_back(k + "=" + v.get<std::string>());
  }
  r.sig = gen::parse_signature(*r.generator, words);
  words.clear();
  for (const auto& [k, v] : problem_json.items()) {
    if (!v.is_number_integer()) throw InputError("jit: problem field '" + k + "' must be an integer");
    words.push_back(k + "=" + std::to_string(v.get<int64_t>()));
  }
  r.problem = gen::parse_problem(*r.generator, words);
  r.sig_json = db::canonical_json(nlohmann::json(r.sig).dump(), "signature");
  r.problem_json = tune::TuningRecorder::problem_key(r.problem);
  return r;
}

gen::Params params_from_json(const std::string& text) {
  gen::Params p;
  const nlohmann::json j = parse_object(text, "parameters");
  for (const auto& [k, v] : j.items())
    p[k] = v.is_string() ? gen::Value::str(v.get<std::string>()) : gen::Value::num(v.get<double>());
  return p;
}

std::string device_kind(const loader::DeviceProperties& d) { return d.emulated ? "emulated" : "real"; }

} // namespace

// The writable connection (the loader's is read-only) and a recorder per job, which holds the device,
// toolchain and generator rows.
struct Jit::Records {
  db::Database db;
  std::map<std::string, std::unique_ptr<tune::TuningRecorder>> recorders;
  std::map<std::string, std::string> versions; // generator version per (generator, ISA, signature)
  explicit Records(db::Database d) : db(std::move(d)) {}

  std::string version(const Request& r, const std::string& isa) {
    const std::string key = r.generator->name() + '\x1f' + isa + '\x1f' + r.sig_json;
    auto& v = versions[key];
    if (v.empty()) v = tune::TuningRecorder::generator_version({r.generator, isa, r.sig, {r.problem}});
    return v;
  }
  tune::TuningRecorder& recorder(const Request& r, const std::string& isa, const loader::DeviceProperties& device) {
    auto& rec = recorders[r.generator->name() + '\x1f' + isa + '\x1f' + r.sig_json];
    if (!rec) rec = std::make_unique<tune::TuningRecorder>(db, tune::TuningJob{r.generator, isa, r.sig, {r.problem}},
                                                           device);
    return *rec;
  }
};

std::vector<gen::Launch> JitKernel::launches(std::span<const uint64_t> addresses,
                                             const std::map<std::string, double>& scalars) const {
  std::map<std::string, double> s = scalars;
  for (const auto& [name, range] : generator->scalars(sig)) s.emplace(name, range.first);
  return generator->launches(isa, sig, params, problem, addresses, s);
}

void JitKernel::launch(std::span<const uint64_t> addresses, const std::map<std::string, double>& scalars) const {
  for (auto& l : launches(addresses, scalars)) {
    for (const auto& tm : l.tensor_maps) {
      if (size_t(tm.kernarg_offset) + 128 > l.kernargs.size())
        throw InputError("jit: tensor map at kernarg offset " + std::to_string(tm.kernarg_offset) + " is beyond the " +
                         std::to_string(l.kernargs.size()) + " bytes of arguments");
      const TensorMap m = device->encode_tensor_map(tm.map);
      std::copy(m.bytes.begin(), m.bytes.end(), l.kernargs.begin() + tm.kernarg_offset);
    }
    loader::LaunchConfig cfg;
    cfg.grid = {l.grid.x, l.grid.y, l.grid.z};
    cfg.block = {l.block.x, l.block.y, l.block.z};
    cfg.dynamic_shared_bytes = l.dynamic_shared_bytes;
    cfg.cluster = {l.cluster.x, l.cluster.y, l.cluster.z};
    device->launch(*module->function(l.kernel), cfg, l.kernargs);
  }
}

Jit::Jit(loader::Loader& loader, JitOptions options) : loader_(loader), options_(options) {}
Jit::~Jit() = default;

std::unique_ptr<Jit> Jit::open(const std::string& db_path, const std::string& device_spec, JitOptions options) {
  auto loader = loader::Loader::open(db_path, device_spec);
  auto jit = std::make_unique<Jit>(*loader, options);
  jit->owned_loader_ = std::move(loader);
  return jit;
}

Jit::Records& Jit::records() {
  if (!records_) records_ = std::make_unique<Records>(db::Database::open(loader_.db().path()));
  return *records_;
}

Jit::Stats Jit::stats() const {
  return {requests_.load(), exact_.load(), builds_.load(), from_db_.load(), cached_.load()};
}

std::shared_ptr<const JitKernel> Jit::select(std::string_view generator, std::string_view signature,
                                             std::string_view problem, Mode mode) {
  ++requests_;
  std::string key;
  key.append(generator).push_back('\x1f');
  key.append(signature).push_back('\x1f');
  key.append(problem);
  std::shared_future<std::shared_ptr<const JitKernel>> future;
  std::promise<std::shared_ptr<const JitKernel>> promise;
  bool mine = false;
  {
    std::lock_guard lock(mutex_);
    auto it = kernels_.find(key);
    if (it != kernels_.end()) {
      future = it->second;
    } else if (mode == Mode::exact_or_jit) {
      future = promise.get_future().share();
      kernels_.emplace(key, future);
      mine = true;
    }
  }
  if (!mine && future.valid()) {
    ++cached_;
    auto k = future.get(); // waits for a build in flight; rethrows its error
    if (mode == Mode::exact_only && k->source != Source::exact)
      throw loader::NotFoundError("jit: no exact tuned entry for " + std::string(generator) + " " +
                                  k->signature_json + " " + k->problem_json + " (this process built one: " +
                                  std::string(to_string(k->source)) + ")");
    return k;
  }
  if (!mine) { // exact only, not cached: the loader's answer, kept only when exact
    const Request r = parse_request(std::string(generator), std::string(signature), std::string(problem));
    auto sel = loader_.db().select(r.generator->name(), r.sig_json, r.problem_json, loader_.device().properties());
    if (!sel->exact)
      throw loader::NotFoundError("jit: no exact tuned entry for " + r.generator->name() + " " + r.sig_json + " " +
                                  r.problem_json + " (nearest tuned: " + sel->tuned_problem + ")");
    return select(generator, signature, problem, Mode::exact_or_jit);
  }
  try {
    auto k = resolve(std::string(generator), std::string(signature), std::string(problem));
    promise.set_value(k);
    return k;
  } catch (...) {
    promise.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    kernels_.erase(key); // a later request tries again
    throw;
  }
}

std::shared_ptr<const JitKernel> Jit::resolve(const std::string& generator, const std::string& signature,
                                              const std::string& problem) {
  const auto start = std::chrono::steady_clock::now();
  const Request r = parse_request(generator, signature, problem);
  const loader::DeviceProperties& device = loader_.device().properties();
  auto k = std::make_shared<JitKernel>();
  k->generator = r.generator;
  k->isa = device.isa;
  k->sig = r.sig;
  k->problem = r.problem;
  k->signature_json = r.sig_json;
  k->problem_json = r.problem_json;
  k->device = &loader_.device();

  std::shared_ptr<const loader::Selection> sel;
  try {
    sel = loader_.db().select(r.generator->name(), r.sig_json, r.problem_json, device);
  } catch (const loader::NotFoundError&) {
  }
  auto load = [&](std::shared_ptr<const CodeObject> code) {
    if (!code->find_kernel(k->kernel))
      throw InputError("jit: code object " + code->sha256 + " has no kernel '" + k->kernel + "'");
    const auto t = std::chrono::steady_clock::now();
    k->module = loader_.module(code);
    k->code = std::move(code);
    k->load_ms = ms_since(t);
    k->total_ms = ms_since(start);
  };
  if (sel) {
    k->seed_problem = sel->tuned_problem;
    k->seed_median_ms = sel->median_ms;
    k->seed_device_kind = sel->device_kind;
  }
  if (sel && sel->exact) {
    k->source = Source::exact;
    k->params = params_from_json(sel->parameters);
    k->parameters_json = sel->parameters;
    k->variant_id = sel->variant_id;
    k->kernel = sel->kernel;
    load(loader_.db().code_object(sel->code_object));
    ++exact_;
    return k;
  }
  k->source = sel ? Source::nearest : Source::model;

  // An earlier process's JIT build of this very request, still valid for the current generator.
  if (options_.record) {
    std::unique_lock lock(records_mutex_);
    Records& rec = records();
    const std::string version = rec.version(r, k->isa);
    auto rows = rec.db.query(
        "SELECT r.guid, v.id, v.parameters, v.code_object, v.kernel, json_extract(r.budget, '$.source'), "
        "json_extract(r.budget, '$.seed_problem') FROM runs r JOIN variants v ON v.id = json_extract(r.budget, "
        "'$.variant_id') JOIN generators g ON g.id = v.generator_id WHERE r.strategy = 'jit' AND "
        "json_extract(r.budget, '$.generator') = ? AND json_extract(r.budget, '$.signature') = ? AND "
        "json_extract(r.budget, '$.problem') = ? AND json_extract(r.budget, '$.target_id') = ? AND "
        "json_extract(r.budget, '$.device_kind') = ? AND g.version_hash = ? AND v.code_object IS NOT NULL "
        "ORDER BY r.started_at DESC LIMIT 1",
        {r.generator->name(), r.sig_json, r.problem_json, device.target_id, device_kind(device), version});
    if (!rows.empty()) {
      const auto& row = rows.front();
      k->run_guid = db::to_string(row[0]);
      k->variant_id = std::get<int64_t>(row[1]);
      k->parameters_json = db::to_string(row[2]);
      k->params = params_from_json(k->parameters_json);
      k->kernel = db::to_string(row[4]);
      k->source = db::to_string(row[5]) == "model" ? Source::model : Source::nearest;
      if (k->source == Source::model) k->seed_problem.clear();
      auto code = std::make_shared<const CodeObject>(rec.db.code_object(db::to_string(row[3])));
      lock.unlock();
      load(std::move(code));
      k->from_database = true;
      ++from_db_;
      return k;
    }
  }

  // The configuration: the nearest tuned problem's, while the generator still accepts it (it throws InputError for
  // a point outside its space); else the static model's.
  auto model = [&] {
    const auto t = std::chrono::steady_clock::now();
    k->source = Source::model, k->seed_problem.clear();
    k->params = model_best(*r.generator, k->isa, r.sig, r.problem, device, options_.model_candidates).params;
    k->model_ms = ms_since(t);
  };
  if (sel) {
    try {
      k->params = params_from_json(sel->parameters);
    } catch (const InputError&) {
    }
  }
  if (k->params.empty()) model();
  tune::CompileOptions co;
  co.ptxas = options_.ptxas;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<tune::Compiled> made_now;
  try {
    made_now = tune::compile_variant({r.generator, k->isa, r.sig, k->params}, co);
  } catch (const InputError&) {
    if (k->source != Source::nearest) throw;
    model(); // the tuned configuration is no longer in the generator's space
    t0 = std::chrono::steady_clock::now();
    made_now = tune::compile_variant({r.generator, k->isa, r.sig, k->params}, co);
  }
  const tune::Compiled& compiled = *made_now;
  k->parameters_json = tune::TuningRecorder::params_key(k->params);
  k->build_ms = ms_since(t0);
  k->generate_ms = compiled.generate_s * 1e3;
  k->assemble_ms = compiled.assemble_s * 1e3;
  k->kernel = compiled.generated.kernel_name;
  k->built = true;
  ++builds_;
  CodeObject made = compiled.code_for(device);
  if (made.sha256.empty()) made.sha256 = loader::sha256_hex(made.bytes); // the module cache's key
  auto code = std::make_shared<const CodeObject>(std::move(made));

  if (options_.record) {
    const auto t = std::chrono::steady_clock::now();
    std::lock_guard lock(records_mutex_);
    Records& rec = records();
    tune::TuningRecorder& recorder = rec.recorder(r, k->isa, device);
    recorder.record(k->params, &compiled, {}); // code object and variant; no measurement until one is taken
    auto ids = rec.db.query("SELECT v.id FROM variants v JOIN generators g ON g.id = v.generator_id WHERE g.name = ? "
                            "AND g.version_hash = ? AND v.signature = ? AND v.parameters = ? AND v.code_object = ? "
                            "AND v.kernel = ?",
                            {r.generator->name(), rec.version(r, k->isa), r.sig_json, k->parameters_json,
                             code->sha256, k->kernel});
    if (ids.empty()) throw Error("jit: the variant just recorded in " + rec.db.path() + " is not there");
    k->variant_id = std::get<int64_t>(ids.front()[0]);
    nlohmann::json budget = {{"jit", 1},
                             {"generator", r.generator->name()},
                             {"signature", r.sig_json},
                             {"problem", r.problem_json},
                             {"target_id", device.target_id},
                             {"compute_units", device.compute_units},
                             {"device_kind", device_kind(device)},
                             {"variant_id", k->variant_id},
                             {"source", std::string(to_string(k->source))},
                             {"seed_problem", k->seed_problem},
                             {"build_ms", k->build_ms}};
    recorder.start_run("jit", budget.dump());
    recorder.end_run();
    k->run_guid = recorder.run_guid();
    k->record_ms = ms_since(t);
  }
  load(std::move(code));
  return k;
}

} // namespace isatune::jit

#include "worker_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "isatune/error.h"

namespace isatune::tune::worker {

namespace {

void write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(std::string("device worker: write failed: ") + std::strerror(errno));
    }
    p += w;
    n -= size_t(w);
  }
}

// Reads n bytes before the deadline; false on EOF or error, throws nothing. `timed_out` set on timeout.
bool read_all(int fd, void* data, size_t n, std::chrono::steady_clock::time_point deadline, bool forever,
              bool& timed_out) {
  char* p = static_cast<char*>(data);
  while (n) {
    int wait_ms = -1;
    if (!forever) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        return false;
      }
      wait_ms = int(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int rc = ::poll(&pfd, 1, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (rc == 0) continue; // the deadline check above decides
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
  }
  return true;
}

} // namespace

void write_message(int fd, const nlohmann::json& j, std::span<const uint8_t> blob) {
  const std::string text = j.dump();
  uint8_t header[8];
  const uint32_t a = uint32_t(text.size()), b = uint32_t(blob.size());
  for (int i = 0; i < 4; ++i) header[i] = uint8_t(a >> (8 * i)), header[4 + i] = uint8_t(b >> (8 * i));
  write_all(fd, header, 8);
  write_all(fd, text.data(), text.size());
  if (!blob.empty()) write_all(fd, blob.data(), blob.size());
}

ReadStatus read_message(int fd, nlohmann::json& j, std::vector<uint8_t>& blob, double timeout_s) {
  const bool forever = timeout_s < 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(forever ? 0.0 : timeout_s));
  bool timed_out = false;
  uint8_t header[8];
  if (!read_all(fd, header, 8, deadline, forever, timed_out)) return timed_out ? ReadStatus::timeout : ReadStatus::eof;
  uint32_t a = 0, b = 0;
  for (int i = 0; i < 4; ++i) a |= uint32_t(header[i]) << (8 * i), b |= uint32_t(header[4 + i]) << (8 * i);
  if (a > (64u << 20) || b > (1u << 30)) return ReadStatus::eof;
  std::string text(a, '\0');
  blob.assign(b, 0);
  if (!read_all(fd, text.data(), a, deadline, forever, timed_out) ||
      !read_all(fd, blob.data(), b, deadline, forever, timed_out))
    return timed_out ? ReadStatus::timeout : ReadStatus::eof;
  j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? ReadStatus::eof : ReadStatus::ok;
}

nlohmann::json to_json(const gen::Params& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p) {
    if (!v.is_number)
      j[k] = v.text;
    else if (v.number == double(int64_t(v.number)))
      j[k] = int64_t(v.number);
    else
      j[k] = v.number;
  }
  return j;
}

gen::Params params_from_json(const nlohmann::json& j) {
  gen::Params p;
  for (const auto& [k, v] : j.items())
    p[k] = v.is_string() ? gen::Value::str(v.get<std::string>()) : gen::Value::num(v.get<double>());
  return p;
}

nlohmann::json to_json(const loader::DeviceProperties& p) {
  return {{"backend", p.backend},
          {"index", p.index},
          {"name", p.name},
          {"vendor", p.vendor == Vendor::amd ? "amd" : "nvidia"},
          {"isa", p.isa},
          {"target_id", p.target_id},
          {"compute_units", p.compute_units},
          {"memory_bytes", p.memory_bytes},
          {"shared_bytes_per_workgroup", p.shared_bytes_per_workgroup},
          {"wave_size", p.wave_size},
          {"max_workgroup_size", p.max_workgroup_size},
          {"driver_version", p.driver_version},
          {"emulated", p.emulated},
          {"clock_khz", p.clock_khz},
          {"memory_clock_khz", p.memory_clock_khz},
          {"memory_bus_bits", p.memory_bus_bits},
          {"l2_bytes", p.l2_bytes},
          {"default_shared_bytes_per_workgroup", p.default_shared_bytes_per_workgroup},
          {"shared_bytes_per_cu", p.shared_bytes_per_cu},
          {"registers_per_cu", p.registers_per_cu},
          {"uuid", p.uuid},
          {"pci_bus_id", p.pci_bus_id}};
}

loader::DeviceProperties properties_from_json(const nlohmann::json& j) {
  loader::DeviceProperties p;
  p.backend = j.at("backend");
  p.index = j.at("index");
  p.name = j.at("name");
  p.vendor = j.at("vendor") == "amd" ? Vendor::amd : Vendor::nvidia;
  p.isa = j.at("isa");
  p.target_id = j.at("target_id");
  p.compute_units = j.at("compute_units");
  p.memory_bytes = j.at("memory_bytes");
  p.shared_bytes_per_workgroup = j.at("shared_bytes_per_workgroup");
  p.wave_size = j.at("wave_size");
  p.max_workgroup_size = j.at("max_workgroup_size");
  p.driver_version = j.at("driver_version");
  p.emulated = j.at("emulated");
  // The driver-read properties (the parent records them in the device key; 0 where the backend has none).
  p.clock_khz = j.value("clock_khz", 0u);
  p.memory_clock_khz = j.value("memory_clock_khz", 0u);
  p.memory_bus_bits = j.value("memory_bus_bits", 0u);
  p.l2_bytes = j.value("l2_bytes", uint64_t(0));
  p.default_shared_bytes_per_workgroup = j.value("default_shared_bytes_per_workgroup", 0u);
  p.shared_bytes_per_cu = j.value("shared_bytes_per_cu", 0u);
  p.registers_per_cu = j.value("registers_per_cu", 0u);
  p.uuid = j.value("uuid", std::string());
  p.pci_bus_id = j.value("pci_bus_id", std::string());
  return p;
}

nlohmann::json to_json(const RunOptions& o) {
  return {{"seed", o.seed},
          {"check", o.check},
          {"time", o.time},
          {"warmup", o.timing.warmup},
          {"min_reps", o.timing.min_reps},
          {"max_reps", o.timing.max_reps},
          {"budget_ms", o.timing.budget_ms},
          {"flush_bytes", o.timing.flush_bytes}};
}

RunOptions run_options_from_json(const nlohmann::json& j) {
  RunOptions o;
  o.seed = j.at("seed");
  o.check = j.at("check");
  o.time = j.at("time");
  o.timing.warmup = j.at("warmup");
  o.timing.min_reps = j.at("min_reps");
  o.timing.max_reps = j.at("max_reps");
  o.timing.budget_ms = j.at("budget_ms");
  o.timing.flush_bytes = j.at("flush_bytes");
  return o;
}

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j = {{"op", "result"},
                      {"status", std::string(to_string(r.status))},
                      {"message", r.message},
                      {"max_rel_error", r.max_rel_error},
                      {"tolerance", r.tolerance},
                      {"diagnostics", r.diagnostics},
                      {"run_s", r.run_s}};
  // JSON has no infinity: a non-finite error travels as null.
  if (!std::isfinite(r.max_rel_error)) j["max_rel_error"] = nullptr;
  nlohmann::json errors = nlohmann::json::array();
  for (const auto& m : r.errors) {
    nlohmann::json e = {{"buffer", m.buffer}, {"row", m.row}, {"col", m.col}};
    e["max_rel_error"] = std::isfinite(m.max_rel_error) ? nlohmann::json(m.max_rel_error) : nlohmann::json();
    e["got"] = std::isfinite(m.got) ? nlohmann::json(m.got) : nlohmann::json();
    e["want"] = std::isfinite(m.want) ? nlohmann::json(m.want) : nlohmann::json();
    errors.push_back(e);
  }
  j["errors"] = errors;
  if (r.timing) {
    const Timing& t = *r.timing;
    j["timing"] = {{"median_ms", t.median_ms}, {"p20_ms", t.p20_ms}, {"p80_ms", t.p80_ms}, {"min_ms", t.min_ms},
                   {"reps", t.reps},           {"emulated", t.emulated}, {"method", t.method}};
  }
  return j;
}

RunResult run_result_from_json(const nlohmann::json& j) {
  RunResult r;
  r.status = parse_status(j.at("status").get<std::string>()).value_or(Status::runtime);
  r.message = j.value("message", "");
  auto num = [](const nlohmann::json& v) { return v.is_number() ? v.get<double>() : INFINITY; };
  r.max_rel_error = num(j.at("max_rel_error"));
  r.tolerance = j.value("tolerance", 0.0);
  r.diagnostics = j.value("diagnostics", std::vector<std::string>{});
  r.run_s = j.value("run_s", 0.0);
  for (const auto& e : j.value("errors", nlohmann::json::array())) {
    gen::Mismatch m;
    m.buffer = e.at("buffer");
    m.row = e.at("row");
    m.col = e.at("col");
    m.max_rel_error = num(e.at("max_rel_error"));
    m.got = e.at("got").is_number() ? e.at("got").get<double>() : NAN;
    m.want = e.at("want").is_number() ? e.at("want").get<double>() : NAN;
    r.errors.push_back(m);
  }
  if (j.contains("timing")) {
    const auto& t = j.at("timing");
    Timing tm;
    tm.median_ms = t.at("median_ms");
    tm.p20_ms = t.at("p20_ms");
    tm.p80_ms = t.at("p80_ms");
    tm.min_ms = t.at("min_ms");
    tm.reps = t.at("reps");
    tm.emulated = t.at("emulated");
    tm.method = t.at("method");
    r.timing = tm;
  }
  return r;
}

} // namespace isatune::tune::worker

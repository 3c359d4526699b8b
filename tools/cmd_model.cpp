// `isatune model check --aiter-csv FILE --co-dir DIR`: the timing model against AMD's published measurements.
// For each row of an AITER tuned-GEMM CSV (aiter/configs/*tuned*.csv: gfx, cu_num, M, N, K, ..., libtype,
// splitK, us, kernelName) whose kernel is an asm bf16 GEMM code object found under DIR, build the launch the
// AITER host builds (shared/notes/aiter.md section 3.2), run it on the CDNA emulator on random inputs and print
// the model's predicted time against the measured `us`, the error, the median absolute error and the Spearman
// rank correlation. Predictions are the emulator's timing model, never measurements.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "commands.h"
#include "exit_codes.h"
#include "isatune/codeobj/reader.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"

namespace isatune::cli {

namespace {

struct ModelCheckOptions {
  std::string csv, co_dir, gfx;
  double max_gflop = 2.0; // rows with more work are skipped (emulation time)
  size_t max_rows = 0;    // 0: all
  unsigned threads = 0;
  bool json = false;
};

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') out.push_back(cur), cur.clear();
    else if (c != '\r') cur += c;
  }
  out.push_back(cur);
  return out;
}

struct Row {
  size_t line = 0;
  std::string gfx, kernel, outdtype;
  uint32_t m = 0, n = 0, k = 0, split = 1;
  double measured_us = 0, predicted_us = 0;
  emu::LaunchStats stats;
  std::string skipped; // why not run
};

// Ranks with ties averaged, for Spearman's correlation.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    for (size_t t = i; t <= j; ++t) r[idx[t]] = 0.5 * double(i + j);
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2) return NAN;
  const auto ra = ranks(a), rb = ranks(b);
  const double n = double(a.size()), mean = (n - 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean), sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : NAN;
}

// "_ZN5aiter39bf16gemm_fp32bf16_tn_64x64_splitk_cleanE" -> tile M 64 (the name's {M}x{N} after "_tn_").
uint32_t tile_m_of(const std::string& kernel) {
  const size_t p = kernel.find("_tn_");
  if (p == std::string::npos) return 0;
  return uint32_t(std::strtoul(kernel.c_str() + p + 4, nullptr, 10));
}

struct Arg16 {
  std::vector<uint8_t> bytes;
  void slot(const void* p, size_t n) {
    const size_t at = bytes.size();
    bytes.resize(at + 16, 0);
    std::memcpy(bytes.data() + at, p, n);
  }
  void ptr(uint64_t p) { slot(&p, 8); }
  void u32(uint32_t v) { slot(&v, 4); }
};

// One row on the emulator: the launch of csrc/py_itfs_cu/asm_gemm_a16w16.cu (aiter.md 3.2).
emu::LaunchStats predict(const CodeObject& code, const Row& r, unsigned threads) {
  const uint32_t tile_m = tile_m_of(r.kernel);
  const bool out_bf16 = r.outdtype.find("bfloat16") != std::string::npos;
  const uint32_t esize = out_bf16 ? 2 : 4;
  auto dev = emu::make_emu_device({.target = code.isa, .threads = threads});
  std::mt19937 rng(uint32_t(r.line));
  auto random_buffer = [&](size_t bytes) {
    std::vector<uint16_t> host(bytes / 2);
    for (auto& h : host) h = uint16_t(0x3c00 + rng() % 0x300); // bf16 values in [~0.008, ~0.06]: no overflow
    const uint64_t p = dev->alloc(bytes);
    dev->copy_to_device(p, host.data(), bytes);
    return p;
  };
  const uint64_t a = random_buffer(size_t(r.m) * r.k * 2), b = random_buffer(size_t(r.n) * r.k * 2);
  const uint64_t d = dev->alloc(size_t(r.m) * r.n * esize);
  dev->fill(d, 0, size_t(r.m) * r.n * esize);
  uint64_t sem = 0;
  if (r.split > 1) sem = dev->alloc(16 * 64 * 4), dev->fill(sem, 0, 16 * 64 * 4);
  Arg16 args;
  const float one = 1.0f, zero = 0.0f;
  args.ptr(d), args.ptr(0), args.ptr(a), args.ptr(b);
  args.slot(&one, 4), args.slot(&zero, 4);
  args.u32(r.n * esize), args.u32(0), args.u32(r.n * esize), args.u32(0);
  args.u32(r.k * 2), args.u32(0), args.u32(r.k * 2), args.u32(0);
  args.u32(r.m), args.u32(r.n), args.u32(r.k), args.u32(r.split), args.u32(out_bf16 ? 1 : 0);
  args.ptr(0), args.u32(0), args.ptr(sem);
  auto fn = dev->load(code)->function(code.kernels.at(0).name);
  loader::LaunchConfig cfg;
  cfg.grid = {(r.n + 63) / 64, (r.m + tile_m - 1) / tile_m, r.split};
  cfg.block = {256, 1, 1};
  dev->launch(*fn, cfg, args.bytes);
  return dev->last_launch();
}

int run_model_check(const ModelCheckOptions& opt) {
  std::ifstream f(opt.csv);
  if (!f) throw InputError("--aiter-csv: cannot read " + opt.csv);
  if (!std::filesystem::is_directory(opt.co_dir)) throw InputError("--co-dir: " + opt.co_dir + " is not a folder");
  // Code objects by kernel symbol.
  std::map<std::string, CodeObject> codes;
  for (const auto& e : std::filesystem::recursive_directory_iterator(opt.co_dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".co") continue;
    try {
      CodeObject c = codeobj::read_code_object_file(e.path().string());
      for (const auto& k : c.kernels) codes.emplace(k.name, c);
    } catch (const Error&) {
    }
  }
  std::string line;
  if (!std::getline(f, line)) throw InputError("--aiter-csv: " + opt.csv + " is empty");
  const auto header = split_csv(line);
  auto col = [&](const char* name) {
    auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError("--aiter-csv: " + opt.csv + " has no column '" + name + "'");
    return size_t(it - header.begin());
  };
  const size_t cg = col("gfx"), cm = col("M"), cn = col("N"), ck = col("K"), clib = col("libtype"),
               csplit = col("splitK"), cus = col("us"), cname = col("kernelName"), cout = col("outdtype");
  std::vector<Row> rows;
  for (size_t ln = 2; std::getline(f, line); ++ln) {
    const auto v = split_csv(line);
    if (v.size() < header.size() || v[clib] != "asm") continue;
    if (!opt.gfx.empty() && v[cg] != opt.gfx) continue;
    Row r;
    r.line = ln, r.gfx = v[cg], r.kernel = v[cname], r.outdtype = v[cout];
    r.m = uint32_t(std::stoul(v[cm])), r.n = uint32_t(std::stoul(v[cn])), r.k = uint32_t(std::stoul(v[ck]));
    r.split = std::max(1u, uint32_t(std::stoul(v[csplit])));
    r.measured_us = std::stod(v[cus]);
    auto it = codes.find(r.kernel);
    const double gflop = 2.0 * r.m * r.n * r.k / 1e9;
    if (it == codes.end()) r.skipped = "no code object for the kernel under --co-dir";
    else if (it->second.isa != r.gfx) r.skipped = "code object is for " + it->second.isa;
    else if (r.kernel.find("bf16gemm_fp32bf16_tn_") == std::string::npos ||
             r.kernel.find("bshuffle") != std::string::npos || tile_m_of(r.kernel) == 0)
      r.skipped = "not a plain bf16gemm_fp32bf16_tn_{M}x64 kernel (launch not modelled)";
    else if (gflop > opt.max_gflop) r.skipped = "over --max-gflop";
    if (r.skipped.empty()) {
      if (opt.max_rows && std::count_if(rows.begin(), rows.end(), [](const Row& x) { return x.skipped.empty(); }) >=
                              std::ptrdiff_t(opt.max_rows))
        r.skipped = "over --max-rows";
      else
        r.stats = predict(it->second, r, opt.threads), r.predicted_us = r.stats.estimated_ms * 1e3;
    }
    rows.push_back(r);
  }
  std::vector<double> pred, meas, err;
  for (const Row& r : rows)
    if (r.skipped.empty()) {
      pred.push_back(r.predicted_us), meas.push_back(r.measured_us);
      err.push_back(std::fabs(r.predicted_us - r.measured_us) / r.measured_us);
    }
  std::vector<double> sorted = err;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? NAN
                        : sorted.size() % 2 ? sorted[sorted.size() / 2]
                                            : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  const double rho = spearman(pred, meas);
  if (opt.json) {
    nlohmann::json j;
    j["csv"] = opt.csv;
    j["note"] = "predicted: the CDNA emulator's timing model (not a measurement); measured: the CSV's us";
    nlohmann::json arr = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json o = {{"line", r.line}, {"gfx", r.gfx}, {"kernel", r.kernel}, {"M", r.m}, {"N", r.n},
                          {"K", r.k}, {"splitK", r.split}, {"measured_us", r.measured_us}};
      if (r.skipped.empty())
        o["predicted_us"] = r.predicted_us, o["rel_error"] = (r.predicted_us - r.measured_us) / r.measured_us,
        o["model_cycles"] = {{"cu", r.stats.cu_cycles}, {"dram", r.stats.dram_cycles}, {"l2", r.stats.l2_cycles},
                             {"launch", r.stats.launch_cycles}, {"limiter", r.stats.limiter}};
      else
        o["skipped"] = r.skipped;
      arr.push_back(o);
    }
    j["rows"] = arr;
    j["compared"] = pred.size();
    j["median_abs_rel_error"] = sorted.empty() ? nlohmann::json(nullptr) : nlohmann::json(median);
    j["spearman"] = std::isnan(rho) ? nlohmann::json(nullptr) : nlohmann::json(rho);
    std::cout << j.dump(2) << "\n";
  } else {
    char buf[512];
    std::cout << "model check: " << opt.csv << " (predicted = the emulator's timing model, not a measurement)\n";
    std::cout << " line  gfx     M      N      K  split  measured us  predicted us   error  kernel\n";
    size_t skipped = 0;
    for (const Row& r : rows) {
      if (!r.skipped.empty()) {
        ++skipped;
        continue;
      }
      std::snprintf(buf, sizeof buf, "%5zu  %s %6u %6u %6u %5u %12.3f %13.3f %+7.1f%%  %s\n", r.line, r.gfx.c_str(),
                    r.m, r.n, r.k, r.split, r.measured_us, r.predicted_us,
                    100 * (r.predicted_us - r.measured_us) / r.measured_us, r.kernel.c_str());
      std::cout << buf;
    }
    std::map<std::string, size_t> why;
    for (const Row& r : rows)
      if (!r.skipped.empty()) ++why[r.skipped];
    for (const auto& [w, n] : why) std::cout << "skipped " << n << " asm rows: " << w << "\n";
    std::snprintf(buf, sizeof buf, "%zu rows compared: median |error| %.1f%%, Spearman rank correlation %.3f\n",
                  pred.size(), 100 * median, rho);
    std::cout << buf;
    (void)skipped;
  }
  return kExitOk;
}

} // namespace

void add_model_command(CLI::App& app, const GlobalOptions& global, int& status) {
  auto* model = app.add_subcommand("model", "Check the CDNA emulator's timing model against published measurements");
  model->require_subcommand(1);
  auto opt = std::make_shared<ModelCheckOptions>();
  auto* check = model->add_subcommand(
      "check",
      "For each asm bf16 GEMM row of an AITER tuned-GEMM CSV whose code object is under --co-dir, run the launch on "
      "the emulator and print the model's predicted time against the measured `us`, with the median absolute "
      "error and the Spearman rank correlation.");
  check->add_option("--aiter-csv", opt->csv, "AITER tuned GEMM CSV (aiter/configs/bf16_tuned_gemm.csv format)")
      ->required();
  check->add_option("--co-dir", opt->co_dir, "Folder searched recursively for the kernels' .co files")->required();
  check->add_option("--gfx", opt->gfx, "Only rows of this gfx (gfx942, gfx950)");
  check->add_option("--max-gflop", opt->max_gflop, "Skip rows with more GFLOP than this (emulation time; default 2)");
  check->add_option("--max-rows", opt->max_rows, "Compare at most this many rows (0: all)");
  check->add_option("--threads", opt->threads, "Emulator worker threads (default: all cores)");
  check->add_flag("--json", opt->json, "Print one JSON object instead of text");
  check->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_model_check(*opt); }); });
}

} // namespace isatune::cli

// `isatune model check --aiter-csv FILE --co-dir DIR`: the timing model against AMD's published measurements.
// For each row of an AITER tuned-GEMM CSV (aiter/configs/*tuned*.csv: gfx, cu_num, M, N, K, ..., libtype,
// splitK, us, kernelName) whose kernel is an asm bf16 GEMM code object found under DIR, build the launch the
// AITER host builds (shared/notes/aiter.md section 3.2), run it on the CDNA emulator on random inputs and print
// the model's predicted time against the measured `us`, the error, the median absolute error and the Spearman
// rank correlation. Predictions are the emulator's timing model, never measurements.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
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
#include "fmha_model.h"
#include "isatune/codeobj/reader.h"
#include "isatune/emu/emulator.h"
#include "isatune/error.h"

namespace isatune::cli {

namespace {

struct ModelCheckOptions {
  std::string csv, fmha_readme, co_dir, gfx;
  double max_gflop = 2.0; // simulated work per row at most (emulation time); more: CU subset, then skipped
  uint32_t cu_subset = 8; // CUs simulated for a row over --max-gflop (0: such rows are skipped)
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
  uint32_t cu_subset = 0; // CUs simulated (0: all)
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

// One row on the emulator: the launch of csrc/py_itfs_cu/asm_gemm_a16w16.cu (aiter.md 3.2).
emu::LaunchStats predict(const CodeObject& code, const Row& r, unsigned threads) {
  const uint32_t tile_m = tile_m_of(r.kernel);
  const bool out_bf16 = r.outdtype.find("bfloat16") != std::string::npos;
  const uint32_t esize = out_bf16 ? 2 : 4;
  // Split-K `_clean`: a workgroup spins on a semaphore the other slices signal. On several host threads the spin's
  // emulated length depends on how the host interleaves them (a test failed so under load); on one thread the
  // slices run in dispatch order and the prediction is the same on every run.
  if (r.split > 1 && r.kernel.find("_clean") != std::string::npos) threads = 1;
  auto dev = emu::make_emu_device({.target = code.isa, .threads = threads, .cu_subset = r.cu_subset});
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

// The fmha forward figures of AITER's op_tests/cpp/mha/README.md ("the asm kernel performance of the attention
// forwards and attention backwards", BF16, BSHD, batch mode): one table row per shape with the forward TFLOP/s
// measured by AMD on MI300X and MI355X. FLOPs as benchmark_mha_fwd.cpp counts them: 4 * b * h_q * s_q * s_k * d,
// halved when causal.
struct FmhaRow {
  size_t line = 0;
  uint32_t batch = 0, hq = 0, hk = 0, sq = 0, sk = 0, d = 0;
  bool causal = false;
  std::string gfx, kernel;
  double measured_tflops = 0, predicted_tflops = 0, predicted_us = 0;
  double flop = 0, simulated_gflop = 0;
  emu::LaunchStats stats;
  std::string skipped;
  FmhaShape shape() const { return {batch, hq, hk, sq, sk, d, causal}; }
};

std::string trim(const std::string& t) {
  const size_t a = t.find_first_not_of(" \t\r"), b = t.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : t.substr(a, b - a + 1);
}

// Rows of the README's table: | batch | q_nheads | kv_nheads | seqlen_q | seqlen_kv | hdim | causal | FWD MI300X |
// FWD MI355X | BWD ... |; two rows per line (gfx942 = MI300X, gfx950 = MI355X).
std::vector<FmhaRow> read_fmha_readme(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError("--fmha-readme: cannot read " + path);
  std::vector<FmhaRow> rows;
  std::string line;
  bool header = false;
  for (size_t ln = 1; std::getline(f, line); ++ln) {
    if (line.find("| batch") == 0 && line.find("FWD(TFLOPS)") != std::string::npos) header = true;
    if (!header || line.empty() || line[0] != '|') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string c; std::getline(ss, c, '|');) cells.push_back(trim(c));
    if (cells.size() < 9 || cells[0].empty() || !std::isdigit(static_cast<unsigned char>(cells[0][0]))) continue;
    try {
      FmhaRow r;
      r.line = ln;
      r.batch = uint32_t(std::stoul(cells[0])), r.hq = uint32_t(std::stoul(cells[1]));
      r.hk = uint32_t(std::stoul(cells[2])), r.sq = uint32_t(std::stoul(cells[3]));
      r.sk = uint32_t(std::stoul(cells[4])), r.d = uint32_t(std::stoul(cells[5]));
      r.causal = cells[6] == "1";
      r.flop = fmha_flop(r.shape());
      for (int g = 0; g < 2; ++g) {
        FmhaRow x = r;
        x.gfx = g ? "gfx950" : "gfx942";
        x.measured_tflops = std::stod(cells[7 + g]);
        rows.push_back(x);
      }
    } catch (const std::exception&) {
      throw InputError("--fmha-readme: " + path + " line " + std::to_string(ln) + ": not a row of numbers");
    }
  }
  if (!header) throw InputError("--fmha-readme: " + path + " has no '| batch ... FWD(TFLOPS)' table");
  return rows;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int run_fmha_check(const ModelCheckOptions& opt) {
  auto rows = read_fmha_readme(opt.fmha_readme);
  const auto codes = code_objects(opt.co_dir);
  size_t run = 0;
  for (FmhaRow& r : rows) {
    r.kernel = fmha_symbol(r.gfx, r.causal);
    const loader::Dim3 g = fmha_grid(r.shape());
    const uint64_t wgs = uint64_t(g.x) * g.y * g.z;
    r.simulated_gflop = simulated_flop(r.flop, wgs, chip_cus(r.gfx), opt.cu_subset) / 1e9;
    auto it = codes.find(r.kernel + "@" + r.gfx);
    if (!opt.gfx.empty() && r.gfx != opt.gfx) r.skipped = "not --gfx";
    else if (r.d != 128 || r.hq % r.hk) r.skipped = "not head dim 128 with whole GQA groups";
    else if (it == codes.end()) r.skipped = "no code object for " + r.kernel + " (" + r.gfx + ") under --co-dir";
    else if (r.simulated_gflop > opt.max_gflop) r.skipped = "over --max-gflop on the CU subset";
    else if (opt.max_rows && run >= opt.max_rows) r.skipped = "over --max-rows";
    if (!r.skipped.empty()) continue;
    ++run;
    r.stats = predict_fmha(it->second, r.kernel, r.shape(), opt.threads, opt.cu_subset, uint32_t(r.line));
    r.predicted_us = r.stats.estimated_ms * 1e3;
    r.predicted_tflops = r.flop / (r.predicted_us * 1e-6) / 1e12;
  }
  // Error on time (= on TFLOP/s inverted): (predicted time - measured time) / measured time.
  auto rel = [](const FmhaRow& r) { return r.measured_tflops / r.predicted_tflops - 1; };
  std::map<std::string, std::vector<double>> pred, meas, err;
  for (const FmhaRow& r : rows)
    if (r.skipped.empty()) {
      pred[r.gfx].push_back(r.predicted_tflops), meas[r.gfx].push_back(r.measured_tflops);
      err[r.gfx].push_back(std::fabs(rel(r)));
    }
  const char* role[2] = {"gfx942", "gfx950"};
  auto role_of = [](const std::string& gfx) {
    return gfx == "gfx942" ? "MI300X: calibration allowed (nothing fitted on it)" : "MI355X: held out";
  };
  if (opt.json) {
    nlohmann::json j;
    j["readme"] = opt.fmha_readme;
    j["note"] = "predicted: the CDNA emulator's timing model (not a measurement); measured: AMD's published "
                "forward TFLOP/s (MI300X = gfx942, MI355X = gfx950)";
    nlohmann::json arr = nlohmann::json::array();
    for (const FmhaRow& r : rows) {
      if (r.skipped == "not --gfx") continue;
      nlohmann::json o = {{"line", r.line}, {"gfx", r.gfx}, {"kernel", r.kernel}, {"batch", r.batch},
                          {"q_heads", r.hq}, {"kv_heads", r.hk}, {"seqlen_q", r.sq}, {"seqlen_kv", r.sk},
                          {"hdim", r.d}, {"causal", r.causal}, {"measured_tflops", r.measured_tflops},
                          {"simulated_gflop", r.simulated_gflop}};
      if (r.skipped.empty())
        o["predicted_tflops"] = r.predicted_tflops, o["predicted_us"] = r.predicted_us, o["rel_error"] = rel(r),
        o["simulated_cus"] = r.stats.simulated_cus, o["compute_units"] = r.stats.compute_units,
        o["simulated_workgroups"] = r.stats.simulated_workgroups, o["workgroups"] = r.stats.workgroups,
        o["limiter"] = r.stats.limiter, o["host_seconds"] = r.stats.host_seconds,
        o["instructions"] = r.stats.instructions;
      else
        o["skipped"] = r.skipped;
      arr.push_back(o);
    }
    j["rows"] = arr;
    for (const char* g : role) {
      if (!pred.count(g)) continue;
      const double rho = spearman(pred[g], meas[g]);
      j["summary"][g] = {{"compared", pred[g].size()}, {"median_abs_rel_error", median_of(err[g])},
                         {"spearman", std::isnan(rho) ? nlohmann::json(nullptr) : nlohmann::json(rho)},
                         {"role", role_of(g)}};
    }
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  char buf[512];
  std::cout << "model check: " << opt.fmha_readme << " fmha forward (predicted = the emulator's timing model, not a "
               "measurement; measured = AMD's published TFLOP/s)\n";
  std::cout << " line  gfx     b   hq  hk     sq     sk  causal  measured TF/s  predicted TF/s   error  "
               "CUs simulated\n";
  for (const FmhaRow& r : rows) {
    if (!r.skipped.empty()) continue;
    std::snprintf(buf, sizeof buf,
                  "%5zu  %s %3u %4u %3u %6u %6u %7d %14.1f %15.1f %+7.1f%%  %u of %u (%llu of %llu workgroups)\n",
                  r.line, r.gfx.c_str(), r.batch, r.hq, r.hk, r.sq, r.sk, int(r.causal), r.measured_tflops,
                  r.predicted_tflops, 100 * rel(r), r.stats.simulated_cus, r.stats.compute_units,
                  (unsigned long long)r.stats.simulated_workgroups, (unsigned long long)r.stats.workgroups);
    std::cout << buf;
  }
  std::map<std::string, size_t> why;
  for (const FmhaRow& r : rows)
    if (!r.skipped.empty() && r.skipped != "not --gfx") ++why[r.skipped];
  for (const auto& [w, n] : why) std::cout << "skipped " << n << " rows: " << w << "\n";
  if (opt.cu_subset)
    std::cout << "CU subset: only the workgroups of " << opt.cu_subset << " CUs were simulated, the others taken by "
              << "symmetry; HBM and L2 traffic modelled analytically for the whole chip\n";
  for (const char* g : role) {
    if (!pred.count(g)) continue;
    std::snprintf(buf, sizeof buf,
                  "%s: %zu rows compared: median |error| %.1f%%, Spearman rank correlation %.3f (%s)\n",
                  g, pred[g].size(), 100 * median_of(err[g]), spearman(pred[g], meas[g]), role_of(g));
    std::cout << buf;
  }
  return kExitOk;
}

int run_model_check(const ModelCheckOptions& opt) {
  if (!opt.fmha_readme.empty()) return run_fmha_check(opt);
  if (opt.csv.empty()) throw InputError("model check: give --aiter-csv FILE or --fmha-readme FILE");
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
    else if (gflop > opt.max_gflop) {
      // Over the limit: simulate a CU subset, unless the split-K semaphore makes workgroups wait on each other.
      const uint32_t tm = tile_m_of(r.kernel);
      const uint64_t wgs = uint64_t((r.n + 63) / 64) * ((r.m + tm - 1) / tm) * r.split;
      const bool waits = r.split > 1 && r.kernel.find("_clean") != std::string::npos;
      if (opt.cu_subset && !waits &&
          simulated_flop(2.0 * r.m * r.n * r.k, wgs, chip_cus(r.gfx), opt.cu_subset) / 1e9 <= opt.max_gflop)
        r.cu_subset = opt.cu_subset;
      else
        r.skipped = waits ? "over --max-gflop (split-K _clean: workgroups wait on each other, no CU subset)"
                          : "over --max-gflop, even on the CU subset";
    }
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
                             {"launch", r.stats.launch_cycles}, {"limiter", r.stats.limiter}},
        o["simulated_cus"] = r.stats.simulated_cus, o["compute_units"] = r.stats.compute_units;
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
      std::snprintf(buf, sizeof buf, "%5zu  %s %6u %6u %6u %5u %12.3f %13.3f %+7.1f%%  %s", r.line, r.gfx.c_str(),
                    r.m, r.n, r.k, r.split, r.measured_us, r.predicted_us,
                    100 * (r.predicted_us - r.measured_us) / r.measured_us, r.kernel.c_str());
      std::cout << buf;
      if (r.stats.simulated_cus < r.stats.compute_units)
        std::cout << "  [CU subset: " << r.stats.simulated_cus << " of " << r.stats.compute_units << " CUs]";
      std::cout << "\n";
    }
    std::map<std::string, size_t> why;
    for (const Row& r : rows)
      if (!r.skipped.empty()) ++why[r.skipped];
    for (const auto& [w, n] : why) std::cout << "skipped " << n << " asm rows: " << w << "\n";
    if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.skipped.empty() && r.cu_subset; }))
      std::cout << "CU subset (rows marked): rows over --max-gflop simulated only the workgroups of "
                << opt.cu_subset << " CUs, the others taken by symmetry; HBM and L2 traffic modelled analytically "
                << "for the whole chip\n";
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
  auto* csv = check->add_option("--aiter-csv", opt->csv,
                                 "AITER tuned GEMM CSV (aiter/configs/bf16_tuned_gemm.csv format)");
  auto* readme = check->add_option("--fmha-readme", opt->fmha_readme,
                                   "AITER's op_tests/cpp/mha/README.md: its fmha forward TFLOP/s table (MI300X, "
                                   "MI355X) against the fixtures' fmha_v3_fwd hd128 bf16 kernels");
  csv->excludes(readme);
  check->add_option("--co-dir", opt->co_dir, "Folder searched recursively for the kernels' .co files")->required();
  check->add_option("--gfx", opt->gfx, "Only rows of this gfx (gfx942, gfx950)");
  check->add_option("--max-gflop", opt->max_gflop,
                    "GFLOP simulated per row at most (emulation time; default 2): a bigger GEMM row runs on the CU "
                    "subset, fmha rows always do; a row still over it is skipped");
  check->add_option("--cu-subset", opt->cu_subset,
                    "CUs whose workgroups are simulated for rows over --max-gflop and for every fmha row, the others "
                    "taken by symmetry, HBM/L2 analytic for the chip (default 8; 0: every workgroup)");
  check->add_option("--max-rows", opt->max_rows, "Compare at most this many rows (0: all)");
  check->add_option("--threads", opt->threads, "Emulator worker threads (default: all cores)");
  check->add_flag("--json", opt->json, "Print one JSON object instead of text");
  check->callback([opt, &global, &status] { status = run_guarded(global, [&] { return run_model_check(*opt); }); });
  add_model_attention_command(*model, global, status);
}

} // namespace isatune::cli

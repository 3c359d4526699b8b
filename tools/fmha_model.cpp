#include "fmha_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <regex>

#include "isatune/codeobj/reader.h"
#include "isatune/error.h"

namespace isatune::cli {

uint32_t chip_cus(const std::string& gfx) { return gfx == "gfx950" ? 256 : gfx == "gfx90a" ? 110 : 304; }

double simulated_flop(double flop, uint64_t workgroups, uint32_t cus, uint32_t subset) {
  if (!subset || subset >= cus || workgroups <= subset) return flop;
  uint64_t n = 0;
  for (uint32_t j = 0; j < subset; ++j) {
    const uint64_t cu = uint64_t(j) * cus / subset;
    n += cu < workgroups ? (workgroups - cu + cus - 1) / cus : 0;
  }
  return flop * double(n) / double(workgroups);
}

std::map<std::string, CodeObject> code_objects(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw InputError("--co-dir: " + dir + " is not a folder");
  std::map<std::string, CodeObject> codes;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".co") continue;
    try {
      CodeObject c = codeobj::read_code_object_file(e.path().string());
      for (const auto& k : c.kernels) codes.emplace(k.name + "@" + c.isa, c);
    } catch (const Error&) {
    }
  }
  return codes;
}

double fmha_flop(const FmhaShape& s) {
  return 4.0 * s.batch * s.hq * double(s.sq) * s.sk * s.d / (s.causal ? 2 : 1);
}

namespace {
constexpr uint32_t kFmhaTileQ = 256; // ts_qo of fmha_fwd.csv (hd128)
} // namespace

loader::Dim3 fmha_grid(const FmhaShape& s) {
  const uint32_t tg_div = s.causal ? 2 : 1; // causal: a head and a tail query tile per workgroup
  return {((s.sq + kFmhaTileQ - 1) / kFmhaTileQ + tg_div - 1) / tg_div, s.hq, s.batch};
}

// The fixtures' forward kernels (tests/fixtures/aiter/README.md); AITER's benchmark defaults to RTNA (v3_bf16_cvt
// 1): gfx942 non-causal takes the RTNE file (same instructions but the rounding), causal the RTNA one.
std::string fmha_symbol(const std::string& gfx, bool causal) {
  if (gfx == "gfx942")
    return causal ? "_ZN5aiter31fmha_fwd_hd128_bf16_causal_rtnaE" : "_ZN5aiter24fmha_fwd_hd128_bf16_rtneE";
  return causal ? "_ZN5aiter26fmha_fwd_hd128_bf16_causalE" : "_ZN5aiter19fmha_fwd_hd128_bf16E";
}

std::vector<std::string> fmha_fwd_kernels(const std::map<std::string, CodeObject>& codes, const std::string& gfx,
                                          bool causal) {
  static const std::regex name(R"(_ZN5aiter\d+fmha_fwd_hd128_bf16(_causal)?(_rtne|_rtna|_rtz)?E)");
  std::vector<std::string> out;
  for (const auto& [key, code] : codes) {
    const size_t at = key.rfind('@');
    std::smatch m;
    const std::string sym = key.substr(0, at);
    if (key.substr(at + 1) == gfx && std::regex_match(sym, m, name) && m[1].matched == causal) out.push_back(sym);
  }
  std::sort(out.begin(), out.end());
  return out;
}

emu::LaunchStats predict_fmha(const CodeObject& code, const std::string& kernel, const FmhaShape& s,
                              unsigned threads, uint32_t subset, uint32_t seed) {
  auto dev = emu::make_emu_device({.target = code.isa, .threads = threads, .cu_subset = subset});
  std::mt19937 rng(seed);
  std::vector<uint16_t> pattern(1 << 16);
  for (auto& h : pattern) h = uint16_t((rng() & 0x8000) | (0x3e00 + rng() % 0x200)); // bf16 in +-[0.125, 0.5)
  auto random_buffer = [&](size_t elems) {
    const uint64_t p = dev->alloc(elems * 2);
    for (size_t at = 0; at < elems; at += pattern.size())
      dev->copy_to_device(p + at * 2, pattern.data(), std::min(pattern.size(), elems - at) * 2);
    return p;
  };
  const uint32_t D = s.d, gqa = s.hq / s.hk;
  const uint64_t pq = random_buffer(size_t(s.batch) * s.sq * s.hq * D);
  const uint64_t pk = random_buffer(size_t(s.batch) * s.sk * s.hk * D);
  const uint64_t pv = random_buffer(size_t(s.batch) * s.sk * s.hk * D);
  const uint64_t po = dev->alloc(size_t(s.batch) * s.sq * s.hq * D * 2);
  const uint64_t pl = dev->alloc(size_t(s.batch) * s.hq * s.sq * 4);
  const float scale = float(1.0 / std::sqrt(double(D)));
  const uint32_t qrow = s.hq * D * 2, krow = s.hk * D * 2, orow = s.hq * D * 2;
  const uint32_t opt = s.causal && s.hq % 8 != 0 ? 3 : 5;
  Arg16 a;
  a.ptr(po), a.ptr(pq), a.ptr(pk), a.ptr(pv), a.ptr(pl);
  a.slot(&scale, 4);
  a.u32(s.sq), a.u32(qrow), a.u32(kFmhaTileQ * qrow), a.u32(D * 2), a.u32(s.sq * qrow); // Q
  a.u32(gqa), a.u32(krow), a.u32(D * 2), a.u32(s.sk * krow);                            // K
  a.u32(opt), a.u32(1), a.u32(s.sk), a.u32(D), a.u32(D), a.u32(s.hq);                  // opt, lse, kv len, dims
  a.u32(krow), a.u32(D * 2), a.u32(s.sk * krow);                                        // V
  a.u32(orow), a.u32(D * 2), a.u32(s.sq * orow);                                        // O
  a.ptr(0), a.ptr(0), a.u32(s.sq * 4);                                                  // qseq, kseq, LSE stride
  for (int i = 0; i < 5; ++i) a.ptr(0);
  for (int i = 0; i < 6; ++i) a.u32(0);
  auto fn = dev->load(code)->function(kernel);
  dev->launch(*fn, {fmha_grid(s), {512, 1, 1}}, a.bytes);
  return dev->last_launch();
}

} // namespace isatune::cli

#pragma once
// AITER's fmha_v3_fwd forward kernels (hd128 bf16, tests/fixtures/aiter) on the CDNA emulator's timing model, with
// the launch of AITER's csrc/cpp_itfs/mha_fwd.cu; and the CU-subset helpers `isatune model check` and `isatune
// model attention` share. Predictions are the model's, never measurements.
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/emu/emulator.h"
#include "isatune/loader/device.h"

namespace isatune::cli {

// AITER's kernel arguments: 16-byte slots (aiter.md 3.2, 3.6).
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

// The chip's CUs (gfx950 256, gfx90a 110, gfx942 304).
uint32_t chip_cus(const std::string& gfx);
// Work the emulator does for a launch of `flop` over `workgroups` when it simulates only the workgroups the
// round robin deals to `subset` of the chip's `cus` CUs (EmuOptions::cu_subset).
double simulated_flop(double flop, uint64_t workgroups, uint32_t cus, uint32_t subset);

// Code objects under `dir` (recursively, *.co), by "kernel symbol@isa"; files that do not read are left out.
// InputError when `dir` is not a folder.
std::map<std::string, CodeObject> code_objects(const std::string& dir);

// One forward launch: packed BSHD q/k/v/o, f32 LSE, head dim d (the kernels are hd128).
struct FmhaShape {
  uint32_t batch = 1, hq = 1, hk = 1, sq = 0, sk = 0, d = 128;
  bool causal = false;
};

// FLOPs as AITER's benchmark_mha_fwd.cpp counts them: 4 * b * h_q * s_q * s_k * d, halved when causal.
double fmha_flop(const FmhaShape& s);
loader::Dim3 fmha_grid(const FmhaShape& s);
// The kernel AITER's `model check` row takes (its benchmark's default rounding where the fixtures have it).
std::string fmha_symbol(const std::string& gfx, bool causal);
// Every fmha_v3_fwd hd128 bf16 forward kernel of `gfx` among `codes` (code_objects) that is causal or not as
// asked: "_ZN5aiter24fmha_fwd_hd128_bf16_rtneE", ... (the rounding variants present), sorted.
std::vector<std::string> fmha_fwd_kernels(const std::map<std::string, CodeObject>& codes, const std::string& gfx,
                                          bool causal);
// The launch of csrc/cpp_itfs/mha_fwd.cu (fmha_fwd_v3_args, aiter.md 3.6; as tests/emu/aiter_kernels_test.cpp
// builds it), random bf16 inputs drawn from `seed`, on `subset` CUs (0: every workgroup).
emu::LaunchStats predict_fmha(const CodeObject& code, const std::string& kernel, const FmhaShape& s,
                              unsigned threads, uint32_t subset, uint32_t seed);

} // namespace isatune::cli

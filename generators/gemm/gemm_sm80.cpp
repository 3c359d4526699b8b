// The mma.sync GEMM backend (gemm_ptx_backend.h) for sm_80 and sm_90 (Hopper's portable path, no wgmma):
// its space, constraints and launches. The PTX is emitted by gemm_sm80_kernel.cpp.
#include <algorithm>

#include "gemm_ptx_backend.h"
#include "gemm_sm80_kernel.h"
#include "isatune/error.h"

namespace isatune::gen::gemm {

namespace {

class Sm80Backend : public GemmPtxBackend {
public:
  std::vector<std::string> targets() const override { return {"sm_80", "sm_90"}; }

  void check_signature(const std::string& isa, const GemmSig& sig) const override {
    if (sig.a != DType::f16 && sig.a != DType::bf16)
      throw InputError("gemm: " + isa + " (mma.sync) takes a, b = f16 or bf16, not " +
                       std::string(to_string(sig.a)));
    if (sig.b != sig.a)
      throw InputError("gemm: " + isa + " (mma.sync) needs b = a");
  }

  Space space(const std::string& isa, const GemmSig&) const override {
    std::vector<Parameter> params = sm80_parameters();
    auto shared = std::make_shared<std::vector<Parameter>>(params);
    Constraint valid = [isa, shared](const Config& cfg) {
      Params p;
      for (size_t i = 0; i < shared->size(); ++i)
        p[(*shared)[i].name] = (*shared)[i].values[cfg[i]];
      return sm80_why_invalid(isa, sm80_decode(p)).empty();
    };
    return Space(params, {valid});
  }

  std::vector<std::string> constraint_descriptions(const std::string& isa, const GemmSig&) const override {
    // The rules of sm80_why_invalid, in its order.
    return {"warps_m * warps_n at most " + std::to_string(kSm80MaxThreads / 32) + " warps (" +
                std::to_string(kSm80MaxThreads) + " threads per CTA)",
            "tile_m is a multiple of 16 * warps_m, tile_n of 16 * warps_n (warp tiles of m16n8 mma tiles, B "
            "fragments by ldmatrix.x4 in pairs of n8)",
            "accumulators per thread, 4 * (warp_m / 16) * (warp_n / 8), at most " +
                std::to_string(kSm80MaxAccumulators),
            "estimated registers per thread (accumulators + A/B fragments + 40) at most " +
                std::to_string(kSm80MaxRegisters),
            "dynamic shared memory stages * (tile_m + tile_n) * tile_k * 2 bytes at most " +
                std::to_string(sm80_shared_limit(isa)) + " (" +
                std::to_string(sm80_shared_limit(isa) / 1024) + " KiB with opt-in on " + isa + ")"};
  }

  Generated generate(const std::string& isa, const GemmSig& sig, const Params& params) const override {
    for (const auto& p : sm80_parameters()) {
      auto it = params.find(p.name);
      if (it == params.end())
        throw InputError("gemm: parameter " + p.name + " is missing");
      if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end())
        throw InputError("gemm: " + p.name + "=" + it->second.str() + " is not in the space");
    }
    const Sm80Config c = sm80_decode(params);
    const std::string why = sm80_why_invalid(isa, c);
    if (!why.empty())
      throw InputError("gemm: " + format(params) + ": " + why);
    Generated g;
    g.isa = isa;
    g.kernel_name = sm80_kernel_name(sig, c);
    g.text = emit_sm80_module(isa, sig, c);
    return g;
  }

  std::vector<Launch> launches(const std::string&, const GemmSig& sig, const Params& params,
                               const GemmDims& d, std::span<const uint64_t> addresses, float alpha,
                               float beta) const override {
    const Sm80Config c = sm80_decode(params);
    const Sm80Plan p = sm80_plan(c);
    const int64_t tiles_m = (d.m + c.tile_m - 1) / c.tile_m, tiles_n = (d.n + c.tile_n - 1) / c.tile_n;
    if (tiles_m * tiles_n >= (int64_t(1) << 31))
      throw InputError("gemm: 2^31 or more output tiles");
    if (d.m * d.n >= (int64_t(1) << 32) && c.split_k > 1)
      throw InputError("gemm: split_k > 1 needs M * N < 2^32 (32-bit element indices of the reduce)");
    for (int64_t x : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.ldd})
      if (x >= (int64_t(1) << 32))
        throw InputError("gemm: sizes and leading dimensions must be below 2^32");
    const int64_t ktiles = (d.k + c.tile_k - 1) / c.tile_k;
    const int64_t kchunk = ((ktiles + c.split_k - 1) / c.split_k) * c.tile_k;
    // Per operand, the widest copy whose every source is aligned: the stored rows start at multiples of ld,
    // chunks at multiples of 8 elements within them. 2: 16-byte cp.async (ld % 8 == 0, base 16-byte aligned),
    // 1: 4-byte cp.async (ld even, base 4-byte aligned), 0: element by element.
    auto copy_mode = [](int64_t ld, uint64_t base) -> uint32_t {
      if (ld % 8 == 0 && base % 16 == 0)
        return 2;
      if (ld % 2 == 0 && base % 4 == 0)
        return 1;
      return 0;
    };
    const uint32_t fast_a = copy_mode(d.lda, addresses[0]), fast_b = copy_mode(d.ldb, addresses[1]);
    KernargWriter w;
    for (int i = 0; i < 5; ++i)
      w.u64(addresses[size_t(i)]);
    for (int64_t x : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.ldd})
      w.u32(uint32_t(x));
    w.f32(alpha).f32(beta);
    w.u32(fast_a).u32(fast_b).u32(uint32_t(tiles_m)).u32(uint32_t(kchunk));
    std::vector<Launch> out;
    Launch l;
    l.kernel = sm80_kernel_name(sig, c);
    l.grid = {uint32_t(tiles_m * tiles_n), uint32_t(c.split_k), 1};
    l.block = {uint32_t(p.threads), 1, 1};
    l.kernargs = w.bytes();
    l.dynamic_shared_bytes = uint32_t(p.shared_bytes);
    out.push_back(l);
    if (c.split_k > 1) {
      KernargWriter r;
      r.u64(addresses[4]).u64(addresses[2]).u64(addresses[3]);
      for (int64_t x : {d.m, d.n, d.ldc, d.ldd, int64_t(c.split_k)})
        r.u32(uint32_t(x));
      r.f32(alpha).f32(beta);
      Launch red;
      red.kernel = sm80_reduce_kernel_name(sig, c);
      red.grid = {uint32_t((d.m * d.n + kSm80ReduceThreads - 1) / kSm80ReduceThreads), 1, 1};
      red.block = {uint32_t(kSm80ReduceThreads), 1, 1};
      red.kernargs = r.bytes();
      out.push_back(red);
    }
    return out;
  }
};

} // namespace

std::unique_ptr<GemmPtxBackend> make_gemm_sm80_backend() {
  return std::make_unique<Sm80Backend>();
}

} // namespace isatune::gen::gemm

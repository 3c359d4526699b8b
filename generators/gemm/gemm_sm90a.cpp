// The sm_90a GEMM backend (wgmma + TMA, warp-specialised): its space and constraints, generation, and the
// launches with their TMA tensor maps. The kernel: gemm_sm90a_kernel.{h,cpp}.
#include <algorithm>

#include "gemm_ptx_backend.h"
#include "gemm_sm90a_kernel.h"
#include "isatune/error.h"
#include "sm90a_pieces.h"

namespace isatune::gen::gemm {

namespace {

std::vector<Value> nums(std::initializer_list<double> v) {
  std::vector<Value> out;
  for (double x : v)
    out.push_back(Value::num(x));
  return out;
}

class Sm90aGemmBackend : public GemmPtxBackend {
public:
  std::vector<std::string> targets() const override { return {"sm_90a"}; }

  void check_signature(const std::string&, const GemmSig& sig) const override {
    auto ok = [](DType t) {
      return t == DType::f16 || t == DType::bf16 || t == DType::fp8_e4m3 || t == DType::fp8_e5m2;
    };
    if (!ok(sig.a) || !ok(sig.b))
      throw InputError(
          "gemm sm_90a: a and b are f16, bf16, or the OCP fp8_e4m3 / fp8_e5m2 (the _fnuz encodings "
          "are AMD's), got a=" +
          std::string(to_string(sig.a)) + ", b=" + std::string(to_string(sig.b)));
  }

  std::vector<Parameter> parameters() const {
    return {{"tile_m", nums({64, 128})},
            {"tile_n", nums({64, 128, 192, 256})},
            {"tile_k", nums({64, 128})},
            {"stages", nums({2, 3, 4, 5})},
            {"consumers", nums({1, 2})},
            {"reg_split", {Value::str("40/232"), Value::str("24/240")}, false},
            {"persistent", nums({0, 1}), false},
            {"group_m", nums({1, 8})},
            {"cluster", nums({1, 2})},
            // ldst first: the default point runs any problem (tma needs lda, ldb multiples of 8)
            {"loader", {Value::str("ldst"), Value::str("tma")}, false},
            {"epilogue", {Value::str("direct"), Value::str("tma")}, false}};
  }

  Space space(const std::string&, const GemmSig& sig) const override {
    auto params = std::make_shared<std::vector<Parameter>>(parameters());
    Constraint valid = [params, sig](const Config& cfg) {
      Params p;
      for (size_t i = 0; i < params->size(); ++i)
        p[(*params)[i].name] = (*params)[i].values[cfg[i]];
      return why_invalid_sm90a(decode_sm90a(p, sig)).empty();
    };
    return Space(*params, {valid});
  }

  std::vector<std::string> constraint_descriptions(const std::string&, const GemmSig&) const override {
    // The rules of why_invalid_sm90a (gemm_sm90a_kernel.cpp), in its order.
    return {
        "tile_m is 64 * consumers or 128: each consumer warpgroup owns whole m64 wgmma blocks",
        "tile_n is a multiple of 64 up to 256 (the wgmma N; MN-major operands load 64-wide boxes)",
        "tile_k * input bytes is 128 (one 128-byte swizzle row per row of a stage): 64 for f16/bf16, 128 for "
        "fp8",
        "fp8 (wgmma k32, K-major operands only) with loader=tma needs layout TN; loader=ldst lays any layout "
        "out "
        "K-major",
        "reg_split PRODUCER/CONSUMER: setmaxnreg counts, multiples of 8, producer <= the entry .maxnreg "
        "(168) <= consumer, and 128 * (producer + consumers * consumer) <= 65536",
        "accumulators per consumer thread (tile_m / consumers / 64 * tile_n / 2) + " +
            std::to_string(kSm90aConsumerOverheadRegs) +
            " fit the consumer's registers; beyond, ptxas serialises wgmma (C7511), e.g. 128x256 in one "
            "consumer",
        "shared memory stages * (tile_m + tile_n) * tile_k * 2 + 16 * stages (mbarriers) + 1024 (base "
        "alignment slack) <= 227 KiB",
        "cluster is 1 or 2: 2 CTAs of consecutive M tiles share the B tile, each loading its share with TMA "
        "multicast",
        "cluster=2 needs loader=tma; loader=ldst (the producer warpgroup copies with ld.global + st.shared) "
        "takes any lda, ldb and alignment",
        "epilogue=tma stages 64 x 32 blocks of D in shared memory (64 * 32 * cd bytes per consumer, counted "
        "in "
        "the shared memory) and stores them with TMA; at launch ldd * cd bytes is a multiple of 16 and D "
        "16-byte aligned",
        "launch (not the space), loader=tma: lda and ldb multiples of 8 elements and A, B 16-byte aligned "
        "(TMA global "
        "strides and addresses are multiples of 16 bytes); M, N, K < 2^31"};
  }

  Generated generate(const std::string& isa, const GemmSig& sig, const Params& params) const override {
    for (const Parameter& p : parameters()) {
      auto it = params.find(p.name);
      if (it == params.end())
        throw InputError("gemm sm_90a: parameter " + p.name + " is missing");
      if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end())
        throw InputError("gemm sm_90a: " + p.name + "=" + it->second.str() + " is not in the space");
    }
    const Sm90aConfig c = decode_sm90a(params, sig);
    const std::string why = why_invalid_sm90a(c);
    if (!why.empty())
      throw InputError("gemm sm_90a: " + format(params) + ": " + why);
    Generated g;
    g.isa = isa;
    g.kernel_name = sm90a_kernel_name(sig, c);
    g.text = emit_sm90a_gemm(sig, c);
    return g;
  }

  std::vector<Launch> launches(const std::string&, const GemmSig& sig, const Params& params,
                               const GemmDims& d, std::span<const uint64_t> addresses, float alpha,
                               float beta) const override {
    const Sm90aConfig c = decode_sm90a(params, sig);
    const std::string why = why_invalid_sm90a(c);
    if (!why.empty())
      throw InputError("gemm sm_90a: " + why);
    const Sm90aPlan pl = plan_sm90a(c);
    const int64_t limit = int64_t(1) << 31;
    if (d.m >= limit || d.n >= limit || d.k >= limit || d.lda >= limit || d.ldb >= limit || d.ldc >= limit ||
        d.ldd >= limit)
      throw InputError("gemm sm_90a: M, N, K and the leading dimensions must be below 2^31");
    const int64_t per16 = 16 / sig.in_bytes(); // elements per 16 bytes
    if (c.tma && (d.lda % per16 || d.ldb % per16))
      throw InputError("gemm sm_90a: lda=" + std::to_string(d.lda) + " and ldb=" + std::to_string(d.ldb) +
                       " must be multiples of " + std::to_string(per16) +
                       " with loader=tma (TMA global strides are multiples of 16 bytes); "
                       "loader=ldst takes any");
    if (c.tma && (addresses[0] % 16 || addresses[1] % 16))
      throw InputError("gemm sm_90a: A and B must be 16-byte aligned with loader=tma (TMA global addresses)");

    const auto dtype = sig.fp8()              ? TensorMapDataType::uint8
                       : sig.a == DType::bf16 ? TensorMapDataType::bfloat16
                                              : TensorMapDataType::float16;
    // 2D map over a stored operand: dimension 0 is its contiguous one; box 64 x `box_rows`.
    auto map = [&](uint64_t address, int64_t inner, int64_t outer, int64_t ld, int box_outer) {
      return sm90a::tma_map_128b(dtype, address, {uint64_t(inner), uint64_t(outer)},
                                 {uint64_t(ld) * uint64_t(sig.in_bytes())},
                                 {uint32_t(128 / sig.in_bytes()), uint32_t(box_outer)}); // 128 bytes inner
    };
    // K-major operands (A 'T', B 'N') load one {64 k, tile rows} box per stage; MN-major ones {64, 64} boxes.
    const TensorMapTiledArgs ma = sig.a_trans ? map(addresses[0], d.k, d.m, d.lda, c.tile_m)
                                              : map(addresses[0], d.m, d.k, d.lda, c.tile_k);
    // in a cluster each CTA loads its share of a K-major B tile (tile_n / cluster rows) for all of them
    const TensorMapTiledArgs mb = sig.b_trans ? map(addresses[1], d.n, d.k, d.ldb, c.tile_k)
                                              : map(addresses[1], d.k, d.n, d.ldb, c.tile_n / c.cluster);

    // the kernel walks cluster tiles: cluster x 1 CTA tiles (a last CTA past M stores nothing)
    const int64_t cluster_m = int64_t(c.tile_m) * c.cluster;
    const int64_t tiles_m = (d.m + cluster_m - 1) / cluster_m, tiles_n = (d.n + c.tile_n - 1) / c.tile_n;
    const int64_t tiles = tiles_m * tiles_n;
    if (tiles >= limit)
      throw InputError("gemm sm_90a: more than 2^31 output tiles");
    const int64_t es = size_of(sig.cd);
    if (c.tma_store && ((d.ldd * es) % 16 || addresses[3] % 16))
      throw InputError(
          "gemm sm_90a: ldd=" + std::to_string(d.ldd) + " * " + std::to_string(es) +
          " bytes must be a multiple of 16 and D 16-byte aligned with epilogue=tma (TMA stores); "
          "epilogue=direct takes any");
    TensorMapTiledArgs md;
    md.data_type = sig.cd == DType::f32    ? TensorMapDataType::float32
                   : sig.cd == DType::bf16 ? TensorMapDataType::bfloat16
                                           : TensorMapDataType::float16;
    md.rank = 2;
    md.global_address = addresses[3];
    md.global_dim = {uint64_t(d.m), uint64_t(d.n), 0, 0, 0};
    md.global_strides = {uint64_t(d.ldd * es), 0, 0, 0};
    md.box_dim = {64, uint32_t(kSm90aStoreColumns), 0, 0, 0}; // no swizzle: the staging is column-major
    KernargWriter w;
    const uint32_t at_a = w.blank(128, 64), at_b = w.blank(128, 64), at_d = w.blank(128, 64);
    w.u64(addresses[2]).u64(addresses[3]).u64(addresses[0]).u64(addresses[1]);
    for (int64_t x :
         {d.m, d.n, d.k, d.ldc, d.ldd, d.lda, d.ldb, tiles_m, tiles_n, (d.k + c.tile_k - 1) / c.tile_k})
      w.u32(uint32_t(x));
    w.f32(alpha).f32(beta);

    Launch l;
    l.kernel = sm90a_kernel_name(sig, c);
    const int64_t clusters =
        c.persistent ? std::min<int64_t>(tiles, kSm90aPersistentCtas / c.cluster) : tiles;
    l.grid = {uint32_t(clusters * c.cluster), 1, 1};
    l.cluster = {uint32_t(c.cluster), 1, 1};
    l.block = {uint32_t(pl.threads), 1, 1};
    l.kernargs = w.bytes();
    l.dynamic_shared_bytes = pl.dynamic_shared_bytes;
    if (c.tma)
      l.tensor_maps = {{at_a, ma}, {at_b, mb}}; // ldst: the slots stay zero, unused
    if (c.tma_store)
      l.tensor_maps.push_back({at_d, md});
    return {l};
  }
};

} // namespace

std::unique_ptr<GemmPtxBackend> make_sm90a_gemm_backend() {
  return std::make_unique<Sm90aGemmBackend>();
}

} // namespace isatune::gen::gemm

// The GEMM generator's contract (generator.h): schemas, space, buffers, launches, reference, work.
// D = alpha * op(A) * op(B) + beta * C, BLAS column-major (gemm_params.h, docs/gemm.md).
#include <algorithm>
#include <cmath>

#include "families.h"
#include "gemm_kernel.h"
#include "gemm_params.h"
#include "gemm_ptx_backend.h"
#include "isatune/cdna/printer.h"
#include "isatune/error.h"

namespace isatune::gen {

namespace {

using namespace gemm;

using Dims = GemmDims;

int64_t get(const Problem& p, const char* k) {
  auto it = p.find(k);
  return it == p.end() ? 0 : it->second;
}

Dims dims_of(const GemmSig& s, const Problem& p) {
  Dims d;
  d.m = get(p, "M"), d.n = get(p, "N"), d.k = get(p, "K");
  if (d.m < 1 || d.n < 1 || d.k < 1)
    throw InputError("gemm: M, N and K must be >= 1");
  d.a_rows = s.a_trans ? d.k : d.m, d.a_cols = s.a_trans ? d.m : d.k;
  d.b_rows = s.b_trans ? d.n : d.k, d.b_cols = s.b_trans ? d.k : d.n;
  auto ld = [&](const char* name, int64_t tight) {
    int64_t v = get(p, name);
    if (v == 0)
      return tight;
    if (v < tight)
      throw InputError(std::string("gemm: ") + name + "=" + std::to_string(v) + " is below its minimum " +
                       std::to_string(tight));
    return v;
  };
  d.lda = ld("lda", d.a_rows), d.ldb = ld("ldb", d.b_rows);
  d.ldc = ld("ldc", d.m), d.ldd = ld("ldd", d.m);
  return d;
}

class GemmGenerator : public Generator {
public:
  std::string name() const override { return "gemm"; }
  std::string description() const override {
    return "GEMM D = alpha*op(A)*op(B) + beta*C (column-major, f16/bf16/fp8 in, f32 accumulate): MFMA on CDNA, "
           "mma.sync on sm_80/sm_90, wgmma + TMA on sm_90a";
  }
  std::vector<std::string> targets() const override {
    std::vector<std::string> t{"gfx90a", "gfx942", "gfx950"};
    for (const GemmPtxBackend* b : gemm_ptx_backends())
      for (const auto& isa : b->targets()) t.push_back(isa);
    return t;
  }
  std::vector<SignatureField> signature_schema() const override {
    const std::vector<std::string> in{"f16", "bf16", "fp8_e4m3", "fp8_e5m2", "fp8_e4m3_fnuz", "fp8_e5m2_fnuz"};
    return {{"a", in, "type of A (fp8: OCP fp8_e4m3/fp8_e5m2 on gfx950, fp8_*_fnuz on gfx942)"},
            {"b", in, "type of B (as a for f16/bf16; for fp8 any fp8 type of a's family)"},
            {"cd", {"f32", "f16", "bf16"}, "type of C and D"},
            {"layout", {"NN", "NT", "TN", "TT"}, "op(A) op(B): N as stored column-major, T transposed"}};
  }
  std::vector<ProblemField> problem_schema() const override {
    const int64_t big = int64_t(1) << 30;
    return {{"M", 1, big, true, "rows of op(A), C and D"},
            {"N", 1, big, true, "columns of op(B), C and D"},
            {"K", 1, big, true, "columns of op(A), rows of op(B)"},
            {"lda", 0, big, false, "leading dimension of A (0: tight, M for N, K for T)"},
            {"ldb", 0, big, false, "leading dimension of B (0: tight, K for N, N for T)"},
            {"ldc", 0, big, false, "leading dimension of C (0: M)"},
            {"ldd", 0, big, false, "leading dimension of D (0: M)"}};
  }

  std::vector<std::string> constraint_descriptions(const std::string& isa, const Signature& sig) const override {
    if (is_ptx_isa(isa)) return ptx_backend(isa, parse_sig(sig)).constraint_descriptions(isa, parse_sig(sig));
    // The rules of why_invalid (gemm_params.cpp), in its order.
    return {"waves_m * waves_n is 1, 2 or 4",
            "tile_m is a multiple of waves_m * the MFMA's M, tile_n of waves_n * the MFMA's N",
            "depth is a multiple of the MFMA's K (depth is 16/32 for f16/bf16, 32/64 for fp8)",
            "prefetch_local needs at least two MFMA k-steps per depth",
            "split_k > 1 uses wg_order=row",
            "each tile's contiguous extent is a multiple of the vw-dword vector (4*vw bytes: 2*vw f16/bf16 or "
            "4*vw fp8 elements) and splits into whole vectors per thread",
            "LDS (A and B tiles with lds_pad, twice with prefetch_global) at most 64 KiB",
            "estimated VGPRs (accumulators + fragments + load slots, or the epilogue's) at most 256"};
  }

  Space space(const std::string& isa, const Signature& sig) const override {
    if (is_ptx_isa(isa)) {
      const GemmSig s = parse_sig(sig);
      return ptx_backend(isa, s).space(isa, s);
    }
    check_isa(isa);
    GemmSig s = parse_sig(sig);
    check_target(isa, s);
    std::vector<Parameter> params = parameters(isa, s);
    auto shared = std::make_shared<std::vector<Parameter>>(params);
    Constraint valid = [isa, s, shared](const Config& cfg) {
      return why_invalid(isa, s, decode(isa, s, params_of_list(*shared, cfg))).empty();
    };
    return Space(params, {valid});
  }

  Generated generate(const std::string& isa, const Signature& sig, const Params& params) const override {
    if (is_ptx_isa(isa)) {
      const GemmSig s = parse_sig(sig);
      return ptx_backend(isa, s).generate(isa, s, params);
    }
    check_isa(isa);
    GemmSig s = parse_sig(sig);
    check_target(isa, s);
    GemmConfig c = decode(isa, s, params);
    // values outside the lists
    for (const auto& p : parameters(isa, s)) {
      auto it = params.find(p.name);
      if (it == params.end())
        throw InputError("gemm: parameter " + p.name + " is missing");
      if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end())
        throw InputError("gemm: " + p.name + "=" + it->second.str() + " is not in the space");
    }
    std::string why = why_invalid(isa, s, c);
    if (!why.empty())
      throw InputError("gemm: " + format(params) + ": " + why);
    Generated g;
    g.isa = isa;
    cdna::Kernel k = emit_kernel(isa, s, c, params);
    g.kernel_name = k.name;
    g.text = cdna::print(k);
    g.cdna = std::move(k);
    return g;
  }

  std::vector<BufferSpec> buffers(const Signature& sig, const Problem& problem) const override {
    GemmSig s = parse_sig(sig);
    Dims d = dims_of(s, problem);
    std::vector<BufferSpec> v;
    auto mat = [](std::string name, DType t, BufferRole role, int64_t rows, int64_t cols, int64_t ld) {
      BufferSpec b;
      b.name = std::move(name);
      b.dtype = t;
      b.role = role;
      b.elements = uint64_t(ld * (cols - 1) + rows);
      // checked column by column: a "row" of the check is a stored column
      b.rows = uint64_t(cols), b.cols = uint64_t(rows), b.row_stride = uint64_t(ld);
      return b;
    };
    v.push_back(mat("A", s.a, BufferRole::input, d.a_rows, d.a_cols, d.lda));
    v.push_back(mat("B", s.b, BufferRole::input, d.b_rows, d.b_cols, d.ldb));
    v.push_back(mat("C", s.cd, BufferRole::input, d.m, d.n, d.ldc));
    v.push_back(mat("D", s.cd, BufferRole::output, d.m, d.n, d.ldd));
    // An element's f32 accumulation error scales with sqrt(K) and its inputs, not with its own column: relative
    // to a column of M = 1 or 2 elements, an element near cancellation failed correct kernels (docs/gemm.md).
    v.back().matrix_norm = true;
    BufferSpec w;
    w.name = "workspace"; // split-K partial sums, f32 [split][n][m]
    w.dtype = DType::f32;
    w.role = BufferRole::workspace;
    w.elements = uint64_t(4 * d.m * d.n);
    w.rows = 1, w.cols = w.elements, w.row_stride = w.elements;
    v.push_back(w);
    return v;
  }

  std::map<std::string, std::pair<double, double>> scalars(const Signature&) const override {
    return {{"alpha", {0.5, 2.0}}, {"beta", {-1.0, 1.0}}};
  }

  std::vector<Launch> launches(const std::string& isa, const Signature& sig, const Params& params, const Problem& problem,
                               std::span<const uint64_t> addresses,
                               const std::map<std::string, double>& scalars) const override {
    GemmSig s = parse_sig(sig);
    Dims d = dims_of(s, problem);
    if (addresses.size() != 5)
      throw InputError("gemm: expected 5 buffer addresses (A, B, C, D, workspace)");
    auto scalar = [&](const char* n, double dflt) {
      auto it = scalars.find(n);
      return it == scalars.end() ? dflt : it->second;
    };
    if (is_ptx_isa(isa))
      return ptx_backend(isa, s).launches(isa, s, params, d, addresses, float(scalar("alpha", 1.0)),
                                          float(scalar("beta", 0.0)));
    const int tile_m = int(param_int(params, "tile_m")), tile_n = int(param_int(params, "tile_n"));
    const int depth = int(param_int(params, "depth")), vw = int(param_int(params, "vw"));
    const int split = int(param_int(params, "split_k"));
    const int threads = 64 * int(param_int(params, "waves_m") * param_int(params, "waves_n"));
    const int64_t tiles_m = (d.m + tile_m - 1) / tile_m, tiles_n = (d.n + tile_n - 1) / tile_n;
    const int64_t blocks = (d.k + depth - 1) / depth;
    const int64_t kchunk = split > 1 ? ((blocks + split - 1) / split) * depth : blocks * depth;
    const int64_t ein = s.in_bytes();
    const int64_t e = 4 * vw / ein; // elements per fast-path vector
    const int64_t es = size_of(s.cd);
    // fast path: whole aligned 2*vw-element vectors never straddle the matrix edge
    const bool fast_a = d.lda % e == 0 && (s.a_trans ? d.k : d.m) % e == 0;
    const bool fast_b = d.ldb % e == 0 && (s.b_trans ? d.n : d.k) % e == 0;
    auto bytes = [](int64_t rows, int64_t cols, int64_t ld, int64_t esize) {
      return uint64_t((ld * (cols - 1) + rows) * esize);
    };
    const uint64_t nrec[5] = {bytes(d.a_rows, d.a_cols, d.lda, ein), bytes(d.b_rows, d.b_cols, d.ldb, ein),
                              bytes(d.m, d.n, d.ldc, es), bytes(d.m, d.n, d.ldd, es),
                              // the workspace: split partial tiles (f32), used only with split_k > 1
                              split > 1 ? uint64_t(split * d.m * d.n * 4) : 0};
    for (uint64_t n : nrec)
      if (n >= (uint64_t(1) << 30))
        throw InputError("gemm: a matrix of 1 GiB or more is not supported (32-bit buffer offsets)");
    if (tiles_m * tiles_n >= (int64_t(1) << 24))
      throw InputError("gemm: more than 2^24 output tiles");
    auto pack = [&](uint32_t mode) {
      KernargWriter w;
      for (int i = 0; i < 5; ++i) w.u64(addresses[size_t(i)]);
      for (int64_t x : {d.m, d.n, d.k, d.lda, d.ldb, d.ldc, d.ldd}) w.u32(uint32_t(x));
      w.f32(float(scalar("alpha", 1.0))).f32(float(scalar("beta", 0.0)));
      for (uint64_t n : nrec) w.u32(uint32_t(n));
      w.u32(fast_a).u32(fast_b).u32(uint32_t(tiles_m)).u32(uint32_t(tiles_n)).u32(uint32_t(kchunk)).u32(mode);
      return w.bytes();
    };
    const std::string symbol = kernel_name(s, params);
    std::vector<Launch> out;
    Launch l;
    l.kernel = symbol;
    l.grid = {uint32_t(tiles_m * tiles_n), uint32_t(split), 1};
    l.block = {uint32_t(threads), 1, 1};
    l.kernargs = pack(0);
    out.push_back(l);
    if (split > 1) {
      l.grid = {uint32_t(tiles_m * tiles_n), 1, 1};
      l.kernargs = pack(1);
      out.push_back(l);
    }
    return out;
  }

  void reference(const Signature& sig, const Problem& problem, const std::map<std::string, double>& scalars,
                 std::vector<std::vector<double>>& buf) const override {
    GemmSig s = parse_sig(sig);
    Dims d = dims_of(s, problem);
    auto sc = [&](const char* n, double dflt) {
      auto it = scalars.find(n);
      return it == scalars.end() ? dflt : it->second;
    };
    // the kernel receives alpha and beta as f32
    const double alpha = double(float(sc("alpha", 1.0))), beta = double(float(sc("beta", 0.0)));
    const auto &A = buf.at(0), &B = buf.at(1), &C = buf.at(2);
    auto& D = buf.at(3);
    for (int64_t j = 0; j < d.n; ++j)
      for (int64_t i = 0; i < d.m; ++i) {
        double acc = 0;
        for (int64_t k = 0; k < d.k; ++k) {
          double a = s.a_trans ? A[size_t(k + i * d.lda)] : A[size_t(i + k * d.lda)];
          double b = s.b_trans ? B[size_t(j + k * d.ldb)] : B[size_t(k + j * d.ldb)];
          acc += a * b;
        }
        D[size_t(i + j * d.ldd)] = alpha * acc + beta * C[size_t(i + j * d.ldc)];
      }
  }

  Work work(const Signature& sig, const Problem& problem) const override {
    GemmSig s = parse_sig(sig);
    Dims d = dims_of(s, problem);
    Work w;
    w.flops = 2.0 * double(d.m) * double(d.n) * double(d.k);
    w.bytes = double(d.m * d.k + d.k * d.n) * s.in_bytes() + double(d.m * d.n) * 2 * double(size_of(s.cd));
    w.matrix = true; // MFMA at the input type's rate
    return w;
  }

  DType output_dtype(const Signature& sig) const override { return parse_sig(sig).cd; }

private:
  static void check_isa(const std::string& isa) {
    if (isa != "gfx90a" && isa != "gfx942" && isa != "gfx950")
      throw InputError("gemm: no CDNA target '" + isa + "' (gfx90a, gfx942, gfx950)");
  }
  static const GemmPtxBackend& ptx_backend(const std::string& isa, const GemmSig& s) {
    const GemmPtxBackend* b = gemm_ptx_backend(isa);
    if (!b) {
      std::string known;
      for (const GemmPtxBackend* x : gemm_ptx_backends())
        for (const auto& t : x->targets()) known += (known.empty() ? "" : ", ") + t;
      throw InputError("gemm: no PTX target '" + isa + "' (" + (known.empty() ? "none yet" : known) + ")");
    }
    b->check_signature(isa, s);
    return *b;
  }
  static Params params_of_list(const std::vector<Parameter>& ps, const Config& cfg) {
    Params p;
    for (size_t i = 0; i < ps.size(); ++i) p[ps[i].name] = ps[i].values[cfg[i]];
    return p;
  }
};

} // namespace

namespace gemm {

std::vector<const GemmPtxBackend*> gemm_ptx_backends() {
  // FAMILIES: each PTX GEMM family adds its factory here (stateless, shared across threads).
  static const std::vector<std::unique_ptr<GemmPtxBackend>> owned = [] {
    std::vector<std::unique_ptr<GemmPtxBackend>> v;
    v.push_back(make_gemm_sm80_backend());
    v.push_back(make_sm90a_gemm_backend());
    return v;
  }();
  std::vector<const GemmPtxBackend*> out;
  for (const auto& b : owned) out.push_back(b.get());
  return out;
}

const GemmPtxBackend* gemm_ptx_backend(const std::string& isa) {
  for (const GemmPtxBackend* b : gemm_ptx_backends())
    for (const auto& t : b->targets())
      if (t == isa) return b;
  return nullptr;
}

} // namespace gemm

std::unique_ptr<Generator> make_gemm_generator() { return std::make_unique<GemmGenerator>(); }

} // namespace isatune::gen

// The Generator plumbing shared by the row kernels: schemas, the space and its constraints, buffers, launch
// geometry and kernel arguments (docs/row-kernels.md).
#include <algorithm>
#include <memory>

#include "isatune/cdna/printer.h"
#include "isatune/error.h"
#include "row_common.h"
#include "row_ptx_backend.h"

namespace isatune::gen::rows {

namespace {

const std::vector<int> kVec{1, 2, 4, 8}, kRowsPerWg{1, 2, 4}, kWavesPerRow{1, 2, 4}, kUnroll{1, 2, 4},
    kRowChunk{0, 8, 16, 32, 64, 128};

std::vector<Value> nums(const std::vector<int>& v) {
  std::vector<Value> out;
  for (int x : v)
    out.push_back(Value::num(x));
  return out;
}

const char* op_name(RowOp op) {
  switch (op) {
  case RowOp::softmax:
    return "softmax";
  case RowOp::rmsnorm:
    return "rmsnorm";
  default:
    return "layernorm";
  }
}

// "softmax_f16_v4_r2_w1_u2_c32"
std::string kernel_name(RowOp op, const RowParams& p) {
  return std::string(op_name(op)) + "_" + std::string(to_string(p.dtype)) + "_v" + std::to_string(p.vec) +
         "_r" + std::to_string(p.rows_per_wg) + "_w" + std::to_string(p.waves_per_row) + "_u" +
         std::to_string(p.unroll) + "_c" + std::to_string(p.row_chunk);
}

} // namespace

int vgpr_estimate(RowOp op, const RowParams& p) {
  const int size = int(size_of(p.dtype));
  const bool half = size == 2;
  const int dw = std::max(1, p.vec * size / 4);
  const int u = p.unroll;
  // v0, temporaries, lane offsets, LDS addresses and partials, statistics, loop cursors.
  const int fixed = 24;
  auto data = [&](int chunks) { return chunks * dw + (half ? chunks * p.vec : 0) + chunks; }; // + alignment
  int temps = u + (half ? u * p.vec : 0);
  if (op != RowOp::softmax)
    temps += u * (dw + 1);
  if (op == RowOp::layernorm)
    temps += u * (dw + 1);
  const int looped = data(u) + temps;
  const int resident = p.row_chunk > 0 ? data(p.row_chunk / p.vec) + temps : 0;
  return fixed + std::max(looped, resident);
}

bool row_valid(RowOp op, const RowParams& p) {
  const int bytes = p.vec * int(size_of(p.dtype));
  if (bytes != 4 && bytes != 8 && bytes != 16)
    return false; // one dword-multiple load per chunk
  if (p.row_chunk != 0 && (p.row_chunk % (p.vec * p.unroll)) != 0)
    return false; // resident groups of whole chunks
  if (p.rows_per_wg * p.waves_per_row * 64 > 1024)
    return false; // workgroup size
  return vgpr_estimate(op, p) <= 256;
}

RowParams row_params(DType dtype, const Params& params) {
  RowParams p;
  p.dtype = dtype;
  p.vec = int(param_int(params, "vec"));
  p.rows_per_wg = int(param_int(params, "rows_per_wg"));
  p.waves_per_row = int(param_int(params, "waves_per_row"));
  p.unroll = int(param_int(params, "unroll"));
  p.row_chunk = int(param_int(params, "row_chunk"));
  return p;
}

std::vector<const RowPtxBackend*> row_ptx_backends() {
  // FAMILIES: each PTX row-kernel family adds its factory here (stateless, shared across threads).
  static const std::vector<std::unique_ptr<RowPtxBackend>> owned = [] {
    std::vector<std::unique_ptr<RowPtxBackend>> v;
    v.push_back(make_row_ptx_backend()); // sm_80, sm_90a (row_ptx.cpp)
    return v;
  }();
  std::vector<const RowPtxBackend*> out;
  for (const auto& b : owned) out.push_back(b.get());
  return out;
}

const RowPtxBackend* row_ptx_backend(const std::string& isa) {
  for (const RowPtxBackend* b : row_ptx_backends())
    for (const auto& t : b->targets())
      if (t == isa) return b;
  return nullptr;
}

std::vector<std::string> RowGenerator::targets() const {
  std::vector<std::string> t{"gfx90a", "gfx942", "gfx950"};
  for (const RowPtxBackend* b : row_ptx_backends())
    for (const auto& isa : b->targets()) t.push_back(isa);
  return t;
}

const RowPtxBackend& RowGenerator::ptx_backend(const std::string& isa) const {
  const RowPtxBackend* b = row_ptx_backend(isa);
  if (!b) {
    std::string known;
    for (const auto& t : targets()) known += (known.empty() ? "" : ", ") + t;
    throw InputError(name() + " does not generate for " + isa + " (targets: " + known + ")");
  }
  return *b;
}

// The rules of row_valid, in words.
std::vector<std::string> RowGenerator::constraint_descriptions(const std::string& isa, const Signature&) const {
  if (is_ptx_isa(isa)) return ptx_backend(isa).constraint_descriptions(op_, isa);
  return {"vec * element size is 4, 8 or 16 bytes (one dword-multiple load per chunk)",
          "row_chunk (0: always looped) is a multiple of vec * unroll",
          "rows_per_wg * waves_per_row * 64 <= 1024 threads",
          "estimated VGPRs (resident row, loads in flight, reductions) at most 256"};
}

Space row_space(RowOp op, DType dtype) {
  std::vector<Parameter> ps{{"vec", nums(kVec), true},
                            {"rows_per_wg", nums(kRowsPerWg), true},
                            {"waves_per_row", nums(kWavesPerRow), true},
                            {"unroll", nums(kUnroll), true},
                            {"row_chunk", nums(kRowChunk), true}};
  Constraint c = [op, dtype](const Config& cfg) {
    RowParams p;
    p.dtype = dtype;
    p.vec = kVec[cfg[0]];
    p.rows_per_wg = kRowsPerWg[cfg[1]];
    p.waves_per_row = kWavesPerRow[cfg[2]];
    p.unroll = kUnroll[cfg[3]];
    p.row_chunk = kRowChunk[cfg[4]];
    return row_valid(op, p);
  };
  return Space(std::move(ps), {c});
}

DType row_dtype(const Signature& sig) {
  auto it = sig.find("dtype");
  const std::string v = it == sig.end() ? "f32" : it->second;
  auto t = parse_dtype(v);
  if (!t || (*t != DType::f32 && *t != DType::f16 && *t != DType::bf16))
    throw InputError("dtype=" + v + " is not supported by the row kernels (f32, f16, bf16)");
  return *t;
}

RowShape row_shape(const Problem& problem) {
  RowShape s;
  auto get = [&](const char* k, int64_t def) {
    auto it = problem.find(k);
    return it == problem.end() || it->second == 0 ? def : it->second;
  };
  s.rows = get("rows", 1);
  s.n = get("N", 1);
  s.ld = get("ld", s.n);
  s.ldy = get("ldy", s.n);
  if (s.rows < 1 || s.n < 1)
    throw InputError("rows and N must be >= 1");
  if (s.ld < s.n)
    throw InputError("ld=" + std::to_string(s.ld) + " is smaller than N=" + std::to_string(s.n));
  if (s.ldy < s.n)
    throw InputError("ldy=" + std::to_string(s.ldy) + " is smaller than N=" + std::to_string(s.n));
  return s;
}

std::string RowGenerator::name() const {
  return op_name(op_);
}

std::vector<SignatureField> RowGenerator::signature_schema() const {
  return {{"dtype", {"f32", "f16", "bf16"}, "element type of x, y (and weight, bias); arithmetic is f32"}};
}

std::vector<ProblemField> RowGenerator::problem_schema() const {
  return {{"rows", 1, int64_t(1) << 24, true, "number of rows"},
          {"N", 1, int64_t(1) << 26, true, "elements per row"},
          {"ld", 0, int64_t(1) << 27, false, "row stride of x in elements (0: N)"},
          {"ldy", 0, int64_t(1) << 27, false, "row stride of y in elements (0: N)"}};
}

Space RowGenerator::space(const std::string& isa, const Signature& sig) const {
  if (is_ptx_isa(isa)) return ptx_backend(isa).space(op_, isa, row_dtype(sig));
  const auto t = targets();
  if (std::find(t.begin(), t.end(), isa) == t.end()) {
    std::string known;
    for (const auto& x : t) known += (known.empty() ? "" : ", ") + x;
    throw InputError(name() + " does not generate for " + isa + " (targets: " + known + ")");
  }
  return row_space(op_, row_dtype(sig));
}

Generated RowGenerator::generate(const std::string& isa, const Signature& sig, const Params& params) const {
  const DType dt = row_dtype(sig);
  if (is_ptx_isa(isa)) return ptx_backend(isa).generate(op_, isa, dt, params);
  const Space sp = space(isa, sig);
  config_of(sp, params); // InputError naming a parameter outside the space
  const RowParams p = row_params(dt, params);
  if (!row_valid(op_, p))
    throw InputError(name() + ": " + format(params) +
                     " breaks a constraint (vec * element size must be 4, 8 or 16 "
                     "bytes, row_chunk a multiple of vec * unroll, at most 1024 threads and 256 VGPRs)");
  const std::string kn = kernel_name(op_, p);
  Generated g;
  g.isa = isa;
  g.kernel_name = kn;
  cdna::Kernel k = emit_row_kernel(op_, isa, p, kn);
  g.text = cdna::print(k);
  g.cdna = std::move(k);
  return g;
}

std::vector<BufferSpec> RowGenerator::buffers(const Signature& sig, const Problem& problem) const {
  const DType dt = row_dtype(sig);
  const RowShape s = row_shape(problem);
  std::vector<BufferSpec> out;
  BufferSpec x;
  x.name = "x";
  x.dtype = dt;
  x.role = BufferRole::input;
  x.elements = uint64_t((s.rows - 1) * s.ld + s.n);
  x.rows = uint64_t(s.rows);
  x.cols = uint64_t(s.n);
  x.row_stride = uint64_t(s.ld);
  if (op_ == RowOp::softmax)
    x.init_lo = -4, x.init_hi = 4;
  out.push_back(x);
  if (op_ != RowOp::softmax) {
    BufferSpec w{"weight", dt, BufferRole::input, uint64_t(s.n), 1, uint64_t(s.n), uint64_t(s.n), 0.5, 1.5};
    out.push_back(w);
  }
  if (op_ == RowOp::layernorm) {
    BufferSpec b{"bias", dt, BufferRole::input, uint64_t(s.n), 1, uint64_t(s.n), uint64_t(s.n), -1, 1};
    out.push_back(b);
  }
  BufferSpec y;
  y.name = "y";
  y.dtype = dt;
  y.role = BufferRole::output;
  y.elements = uint64_t((s.rows - 1) * s.ldy + s.n);
  y.rows = uint64_t(s.rows);
  y.cols = uint64_t(s.n);
  y.row_stride = uint64_t(s.ldy);
  out.push_back(y);
  return out;
}

std::map<std::string, std::pair<double, double>> RowGenerator::scalars(const Signature&) const {
  if (op_ == RowOp::softmax)
    return {};
  return {{"eps", {1e-6, 1e-5}}};
}

std::vector<Launch> RowGenerator::launches(const std::string& isa, const Signature& sig, const Params& params, const Problem& problem,
                                           std::span<const uint64_t> addresses,
                                           const std::map<std::string, double>& scalars) const {
  const DType dt = row_dtype(sig);
  const RowShape s = row_shape(problem);
  const size_t nbuf = op_ == RowOp::softmax ? 2 : op_ == RowOp::rmsnorm ? 3 : 4;
  if (addresses.size() != nbuf)
    throw InputError(name() + " takes " + std::to_string(nbuf) + " buffer addresses, got " +
                     std::to_string(addresses.size()));
  KernargWriter k;
  for (uint64_t a : addresses)
    k.u64(a);
  k.u32(uint32_t(s.rows)).u32(uint32_t(s.n)).u32(uint32_t(s.ld)).u32(uint32_t(s.ldy));
  if (op_ != RowOp::softmax) {
    auto it = scalars.find("eps");
    const double eps = it == scalars.end() ? 1e-5 : it->second;
    k.f32(float(eps));
  }
  if (is_ptx_isa(isa)) return {ptx_backend(isa).launch(op_, isa, dt, params, s, k.bytes())};
  const RowParams p = row_params(dt, params);
  Launch l;
  l.kernel = kernel_name(op_, p);
  l.grid.x = uint32_t((s.rows + p.rows_per_wg - 1) / p.rows_per_wg);
  l.block.x = uint32_t(p.rows_per_wg * p.waves_per_row * 64);
  l.kernargs = k.bytes();
  return {l};
}

Work RowGenerator::work(const Signature& sig, const Problem& problem) const {
  const RowShape s = row_shape(problem);
  const double size = size_of(row_dtype(sig));
  const double elems = double(s.rows) * double(s.n);
  Work w;
  w.flops = elems * (op_ == RowOp::softmax ? 5 : op_ == RowOp::rmsnorm ? 4 : 6);
  w.bytes = 2 * elems * size + (op_ == RowOp::softmax   ? 0
                                : op_ == RowOp::rmsnorm ? 1
                                                        : 2) *
                                   double(s.n) * size;
  return w;
}

DType RowGenerator::output_dtype(const Signature& sig) const {
  return row_dtype(sig);
}

} // namespace isatune::gen::rows

// The NVIDIA backend of the row kernels (sm_80, sm_90a): the space and its constraints, generation and the
// launch geometry (docs/row-kernels.md, "NVIDIA (PTX)"). The emitter is row_ptx_kernel.cpp.
#include <algorithm>
#include <memory>

#include "isatune/error.h"
#include "row_ptx_backend.h"
#include "row_ptx_kernel.h"

namespace isatune::gen::rows {

namespace {

const std::vector<int> kVec{1, 2, 4, 8}, kRowsPerCta{1, 2, 4, 8}, kWarpsPerRow{1, 2, 4, 8},
    kChunks{1, 2, 4, 8, 16}, kResident{0, 1};
// Staging values per target: cp.async.bulk with mbarrier completion needs sm_90.
std::vector<std::string> staging_values(const std::string& isa) {
  if (isa == "sm_90a")
    return {"none", "cp.async", "tma-bulk"};
  return {"none", "cp.async"};
}

std::vector<Value> nums(const std::vector<int>& v) {
  std::vector<Value> out;
  for (int x : v)
    out.push_back(Value::num(x));
  return out;
}

RowStaging staging_of(const std::string& s) {
  if (s == "none")
    return RowStaging::none;
  if (s == "cp.async")
    return RowStaging::cp_async;
  if (s == "tma-bulk")
    return RowStaging::bulk;
  throw InputError("staging=" + s + " is not one of none, cp.async, tma-bulk");
}

class RowPtx final : public RowPtxBackend {
public:
  std::vector<std::string> targets() const override { return {"sm_80", "sm_90a"}; }

  Space space(RowOp op, const std::string& isa, DType dtype) const override {
    check_target(isa);
    const std::vector<std::string> kStaging = staging_values(isa);
    std::vector<Value> staging;
    for (const auto& s : kStaging)
      staging.push_back(Value::str(s));
    std::vector<Parameter> ps{{"vec", nums(kVec), true},
                              {"rows_per_cta", nums(kRowsPerCta), true},
                              {"warps_per_row", nums(kWarpsPerRow), true},
                              {"chunks", nums(kChunks), true},
                              {"resident", nums(kResident), false},
                              {"staging", staging, false}};
    Constraint c = [op, dtype, kStaging](const Config& cfg) {
      RowPtxParams p;
      p.dtype = dtype;
      p.vec = kVec[cfg[0]];
      p.rows_per_cta = kRowsPerCta[cfg[1]];
      p.warps_per_row = kWarpsPerRow[cfg[2]];
      p.chunks = kChunks[cfg[3]];
      p.resident = kResident[cfg[4]] != 0;
      p.staging = staging_of(kStaging[cfg[5]]);
      return ptx_row_valid(op, p);
    };
    return Space(std::move(ps), {c});
  }

  std::vector<std::string> constraint_descriptions(RowOp, const std::string& isa) const override {
    check_target(isa);
    return {
        "vec * element size is 4, 8 or 16 bytes (one ld/st .v1/.v2/.v4 per chunk)",
        "rows_per_cta * warps_per_row * 32 <= 1024 threads",
        "estimated registers (32 + 2 per value in flight: chunks * vec; ptxas 13.0 used no more) at most 255",
        "estimated registers (rounded up to 8) x threads per CTA at most 65536",
        "shared memory: cross-warp partials (reductions * rows_per_cta * warps_per_row * 4 bytes, static); "
        "staging=cp.async (and tma-bulk on sm_90a: + 16 bytes per row, + an 8-byte mbarrier per row) stages "
        "a "
        "CTA's rows (rows_per_cta * N * size rounded to 16 bytes, dynamic) only when that fits 48 KiB, "
        "otherwise it loops over global memory"};
  }

  Generated generate(RowOp op, const std::string& isa, DType dtype, const Params& params) const override {
    config_of(space(op, isa, dtype), params); // InputError naming a parameter outside the space
    const RowPtxParams p = params_of(dtype, params);
    std::string why;
    if (!ptx_row_valid(op, p, &why))
      throw InputError(format(params) + " breaks a constraint: " + why);
    Generated g;
    g.isa = isa;
    g.kernel_name = ptx_row_kernel_name(op, p);
    g.text = emit_row_ptx(op, isa, p);
    return g;
  }

  Launch launch(RowOp op, const std::string& isa, DType dtype, const Params& params, const RowShape& shape,
                std::vector<uint8_t> kernargs) const override {
    check_target(isa);
    const RowPtxParams p = params_of(dtype, params);
    Launch l;
    l.kernel = ptx_row_kernel_name(op, p);
    l.grid.x = uint32_t((shape.rows + p.rows_per_cta - 1) / p.rows_per_cta);
    l.block.x = uint32_t(threads_per_cta(p));
    l.dynamic_shared_bytes = ptx_stage_cta_bytes(p, shape.n);
    l.kernargs = std::move(kernargs);
    return l;
  }

private:
  void check_target(const std::string& isa) const {
    const auto t = targets();
    if (std::find(t.begin(), t.end(), isa) == t.end())
      throw InputError("the PTX row kernels do not generate for " + isa + " (targets: sm_80, sm_90a)");
  }

  static RowPtxParams params_of(DType dtype, const Params& params) {
    RowPtxParams p;
    p.dtype = dtype;
    p.vec = int(param_int(params, "vec"));
    p.rows_per_cta = int(param_int(params, "rows_per_cta"));
    p.warps_per_row = int(param_int(params, "warps_per_row"));
    p.chunks = int(param_int(params, "chunks"));
    p.resident = param_int(params, "resident") != 0;
    p.staging = staging_of(param_str(params, "staging"));
    return p;
  }
};

} // namespace

std::unique_ptr<RowPtxBackend> make_row_ptx_backend() {
  return std::make_unique<RowPtx>();
}

} // namespace isatune::gen::rows

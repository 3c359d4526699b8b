#include "gemm_params.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::gen::gemm {

namespace {
bool pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
std::string sget(const Signature& s, const char* k, const char* d) {
  auto it = s.find(k);
  return it == s.end() ? d : it->second;
}
} // namespace

GemmSig parse_sig(const Signature& sig) {
  GemmSig g;
  auto a = parse_dtype(sget(sig, "a", "f16")), b = parse_dtype(sget(sig, "b", "f16"));
  auto cd = parse_dtype(sget(sig, "cd", "f32"));
  if (!a || !b || !cd)
    throw InputError("gemm: unknown data type in signature " + format(sig));
  const std::string an(to_string(*a)), bn(to_string(*b));
  if (is_fp8(*a) || is_fp8(*b)) {
    if (!is_fp8(*a) || !is_fp8(*b))
      throw InputError("gemm: fp8 inputs need fp8 on both sides (a=" + an + ", b=" + bn + ")");
    if (is_fnuz(*a) != is_fnuz(*b))
      throw InputError("gemm: a=" + an + " and b=" + bn +
                       " mix the OCP and FNUZ fp8 encodings (a target's MFMAs read one of them)");
  } else if (*a != *b) {
    throw InputError("gemm: a and b must have the same type (a=" + an + ", b=" + bn + ")");
  } else if (*a != DType::f16 && *a != DType::bf16) {
    throw InputError("gemm: a=" + an + " is not supported (f16, bf16, fp8_e4m3, fp8_e5m2, fp8_e4m3_fnuz, "
                     "fp8_e5m2_fnuz)");
  }
  if (*cd != DType::f32 && *cd != DType::f16 && *cd != DType::bf16)
    throw InputError("gemm: cd must be f32, f16 or bf16");
  g.a = *a;
  g.b = *b;
  g.cd = *cd;
  g.layout = sget(sig, "layout", "NN");
  if (g.layout.size() != 2 || (g.layout[0] != 'N' && g.layout[0] != 'T') ||
      (g.layout[1] != 'N' && g.layout[1] != 'T'))
    throw InputError("gemm: layout must be NN, NT, TN or TT (got '" + g.layout + "')");
  g.a_trans = g.layout[0] == 'T';
  g.b_trans = g.layout[1] == 'T';
  return g;
}

void check_target(const std::string& isa, const GemmSig& sig) {
  if (!sig.fp8())
    return;
  const std::string an(to_string(sig.a)), bn(to_string(sig.b));
  if (isa == "gfx942" && !is_fnuz(sig.a))
    throw InputError("gemm: gfx942's fp8 MFMAs read the FNUZ encodings: use a/b = fp8_e4m3_fnuz, fp8_e5m2_fnuz "
                     "(got a=" + an + ", b=" + bn + ")");
  if (isa == "gfx950" && is_fnuz(sig.a))
    throw InputError("gemm: gfx950's fp8 MFMAs read the OCP encodings: use a/b = fp8_e4m3, fp8_e5m2 (got a=" +
                     an + ", b=" + bn + ")");
  if (isa != "gfx942" && isa != "gfx950")
    throw InputError("gemm: " + isa + " has no fp8 MFMA (fp8 inputs: gfx942 with fp8_*_fnuz, gfx950 with "
                     "fp8_e4m3 / fp8_e5m2)");
}

std::vector<MfmaShape> shapes_for(const std::string& isa, const GemmSig& sig) {
  if (sig.fp8()) // v_mfma_f32_{32x32x16,16x16x32}_{fp8,bf8}_{fp8,bf8}: 8 bytes (2 VGPRs) per lane
    return {{"32x32x16", 32, 32, 16, 2, 16}, {"16x16x32", 16, 16, 32, 2, 4}};
  std::vector<MfmaShape> v{{"32x32x8", 32, 32, 8, 2, 16}, {"16x16x16", 16, 16, 16, 2, 4}};
  if (isa == "gfx950") {
    v.push_back({"32x32x16", 32, 32, 16, 4, 16});
    v.push_back({"16x16x32", 16, 16, 32, 4, 4});
  }
  return v;
}

std::string mfma_form(const MfmaShape& s, const GemmSig& sig) {
  if (sig.fp8())
    return "v_mfma_f32_" + s.name + (is_fp8_e5m2(sig.a) ? "_bf8" : "_fp8") + (is_fp8_e5m2(sig.b) ? "_bf8" : "_fp8");
  return "v_mfma_f32_" + s.name + (sig.a == DType::bf16 ? "_bf16" : "_f16");
}

std::vector<Parameter> parameters(const std::string& isa, const GemmSig& sig) {
  auto nums = [](std::initializer_list<double> v) {
    std::vector<Value> out;
    for (double x : v) out.push_back(Value::num(x));
    return out;
  };
  std::vector<Value> shapes;
  for (const auto& s : shapes_for(isa, sig)) shapes.push_back(Value::str(s.name));
  return {
      {"tile_m", nums({32, 64, 128, 256}), true},
      {"tile_n", nums({32, 64, 128, 256}), true},
      {"depth", sig.fp8() ? nums({32, 64}) : nums({16, 32}), true}, // fp8: the same bytes per LDS row
      {"waves_m", nums({1, 2, 4}), true},
      {"waves_n", nums({1, 2, 4}), true},
      {"mfma", shapes, false},
      {"vw", nums({1, 2, 4}), true},
      {"lds_pad", nums({0, 8}), true},
      {"prefetch_global", nums({0, 1}), true},
      {"prefetch_local", nums({0, 1}), true},
      {"split_k", nums({1, 2, 4}), true},
      {"wg_order", {Value::str("row"), Value::str("col"), Value::str("g4")}, false},
  };
}

GemmConfig decode(const std::string& isa, const GemmSig& sig, const Params& p) {
  GemmConfig c;
  c.tile_m = int(param_int(p, "tile_m"));
  c.tile_n = int(param_int(p, "tile_n"));
  c.depth = int(param_int(p, "depth"));
  c.waves_m = int(param_int(p, "waves_m"));
  c.waves_n = int(param_int(p, "waves_n"));
  std::string shape = param_str(p, "mfma");
  bool found = false;
  for (const auto& s : shapes_for(isa, sig))
    if (s.name == shape) c.shape = s, found = true;
  if (!found)
    throw InputError("gemm: mfma=" + shape + " is not available on " + isa + " for a=" +
                     std::string(to_string(sig.a)));
  c.vw = int(param_int(p, "vw"));
  c.lds_pad = int(param_int(p, "lds_pad"));
  c.pgr = param_int(p, "prefetch_global") != 0;
  c.plr = param_int(p, "prefetch_local") != 0;
  c.split_k = int(param_int(p, "split_k"));
  c.wg_order = param_str(p, "wg_order");
  return c;
}

Plan make_plan(const GemmSig& sig, const GemmConfig& c) {
  Plan p;
  p.waves = c.waves_m * c.waves_n;
  p.threads = 64 * p.waves;
  p.wm = c.tile_m / c.waves_m;
  p.wn = c.tile_n / c.waves_n;
  p.bm = p.wm / c.shape.m;
  p.bn = p.wn / c.shape.n;
  p.nks = c.depth / c.shape.k;
  p.es = sig.in_bytes();
  p.row = c.depth + c.lds_pad;
  p.row_bytes = p.row * p.es;
  p.lds_b_base = c.tile_m * p.row_bytes;
  p.stage_bytes = (c.tile_m + c.tile_n) * p.row_bytes;
  p.lds_bytes = p.stage_bytes * (c.pgr ? 2 : 1);
  auto op = [&](bool kcontig, int tmn) {
    OperandPlan o;
    o.kcontig = kcontig;
    o.tmn = tmn;
    o.tc = kcontig ? c.depth : tmn;
    o.ts = kcontig ? tmn : c.depth;
    o.e = 4 * c.vw / p.es;
    o.slots = (tmn * c.depth) / (o.e * p.threads);
    return o;
  };
  p.a = op(sig.a_trans, c.tile_m);  // A 'T': stored K x M, K contiguous
  p.b = op(!sig.b_trans, c.tile_n); // B 'N': stored K x N, K contiguous
  // VGPRs, in the emitter's allocation order: v0 (ids), padding to even, accumulators, then the loop's
  // registers or the epilogue's, whichever needs more.
  const int acc = p.bm * p.bn * c.shape.cd_regs;
  const int frags = (p.bm + p.bn) * c.shape.ab_regs * (c.plr ? 2 : 1);
  auto slot_regs = [&](const OperandPlan& o) { return o.slots * (o.e + (o.kcontig ? 3 : 4)); };
  const int loop = frags + slot_regs(p.a) + slot_regs(p.b) + 8;
  const int epi = 3 * p.bn + 3 * c.shape.cd_regs + 8;
  p.vgprs = 2 + acc + std::max(loop, epi);
  return p;
}

std::string why_invalid(const std::string&, const GemmSig& sig, const GemmConfig& c) {
  const int waves = c.waves_m * c.waves_n;
  if (waves != 1 && waves != 2 && waves != 4)
    return "waves_m * waves_n must be 1, 2 or 4";
  if (c.tile_m % (c.waves_m * c.shape.m) != 0)
    return "tile_m must be a multiple of waves_m * the MFMA's M";
  if (c.tile_n % (c.waves_n * c.shape.n) != 0)
    return "tile_n must be a multiple of waves_n * the MFMA's N";
  if (c.depth % c.shape.k != 0)
    return "depth must be a multiple of the MFMA's K";
  if (c.plr && c.depth / c.shape.k < 2)
    return "prefetch_local needs at least two MFMA k-steps per depth";
  if (c.split_k > 1 && c.wg_order != "row")
    return "split_k > 1 uses wg_order=row";
  Plan p = make_plan(sig, c);
  for (const OperandPlan* o : {&p.a, &p.b}) {
    if (o->tc % o->e != 0)
      return "a tile's contiguous extent must be a multiple of the vw-dword vector";
    if ((o->tmn * c.depth) % (o->e * p.threads) != 0 || o->slots < 1)
      return "a tile must split into whole vw-dword loads per thread";
  }
  if (p.lds_bytes > kMaxLds)
    return "LDS over 64 KiB";
  if (p.vgprs > kMaxVgprs)
    return "more than 256 VGPRs";
  (void)pow2;
  return {};
}

} // namespace isatune::gen::gemm

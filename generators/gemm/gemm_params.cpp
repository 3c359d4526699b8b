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
  if (*a != *b)
    throw InputError("gemm: a and b must have the same type (a=" + std::string(to_string(*a)) +
                     ", b=" + std::string(to_string(*b)) + ")");
  if (*a != DType::f16 && *a != DType::bf16)
    throw InputError("gemm: a=" + std::string(to_string(*a)) + " is not supported yet (f16, bf16)");
  if (*cd != DType::f32 && *cd != DType::f16 && *cd != DType::bf16)
    throw InputError("gemm: cd must be f32, f16 or bf16");
  g.ab = *a;
  g.cd = *cd;
  g.layout = sget(sig, "layout", "NN");
  if (g.layout.size() != 2 || (g.layout[0] != 'N' && g.layout[0] != 'T') ||
      (g.layout[1] != 'N' && g.layout[1] != 'T'))
    throw InputError("gemm: layout must be NN, NT, TN or TT (got '" + g.layout + "')");
  g.a_trans = g.layout[0] == 'T';
  g.b_trans = g.layout[1] == 'T';
  return g;
}

std::vector<MfmaShape> shapes_for(const std::string& isa) {
  std::vector<MfmaShape> v{{"32x32x8", 32, 32, 8, 2, 16}, {"16x16x16", 16, 16, 16, 2, 4}};
  if (isa == "gfx950") {
    v.push_back({"32x32x16", 32, 32, 16, 4, 16});
    v.push_back({"16x16x32", 16, 16, 32, 4, 4});
  }
  return v;
}

std::string mfma_form(const MfmaShape& s, DType ab) {
  return "v_mfma_f32_" + s.name + (ab == DType::bf16 ? "_bf16" : "_f16");
}

std::vector<Parameter> parameters(const std::string& isa, const GemmSig&) {
  auto nums = [](std::initializer_list<double> v) {
    std::vector<Value> out;
    for (double x : v) out.push_back(Value::num(x));
    return out;
  };
  std::vector<Value> shapes;
  for (const auto& s : shapes_for(isa)) shapes.push_back(Value::str(s.name));
  return {
      {"tile_m", nums({32, 64, 128, 256}), true},
      {"tile_n", nums({32, 64, 128, 256}), true},
      {"depth", nums({16, 32}), true},
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

GemmConfig decode(const std::string& isa, const Params& p) {
  GemmConfig c;
  c.tile_m = int(param_int(p, "tile_m"));
  c.tile_n = int(param_int(p, "tile_n"));
  c.depth = int(param_int(p, "depth"));
  c.waves_m = int(param_int(p, "waves_m"));
  c.waves_n = int(param_int(p, "waves_n"));
  std::string shape = param_str(p, "mfma");
  bool found = false;
  for (const auto& s : shapes_for(isa))
    if (s.name == shape) c.shape = s, found = true;
  if (!found)
    throw InputError("gemm: mfma=" + shape + " is not available on " + isa);
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
  p.row = c.depth + c.lds_pad;
  p.lds_b_base = c.tile_m * p.row * 2;
  p.stage_bytes = (c.tile_m + c.tile_n) * p.row * 2;
  p.lds_bytes = p.stage_bytes * (c.pgr ? 2 : 1);
  auto op = [&](bool kcontig, int tmn) {
    OperandPlan o;
    o.kcontig = kcontig;
    o.tmn = tmn;
    o.tc = kcontig ? c.depth : tmn;
    o.ts = kcontig ? tmn : c.depth;
    o.e = 2 * c.vw;
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
      return "a tile's contiguous extent must be a multiple of 2 * vw elements";
    if ((o->tmn * c.depth) % (o->e * p.threads) != 0 || o->slots < 1)
      return "a tile must split into whole 2 * vw-element loads per thread";
  }
  if (p.lds_bytes > kMaxLds)
    return "LDS over 64 KiB";
  if (p.vgprs > kMaxVgprs)
    return "more than 256 VGPRs";
  (void)pow2;
  return {};
}

} // namespace isatune::gen::gemm

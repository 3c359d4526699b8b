// The `selftest` generator: a tiny CDNA vector kernel, y[i] = 2 * x[i] + 1 (f32), whose space has a parameter
// `behaviour` that makes some variants misbehave on purpose. It checks the tuner's harness end to end:
//   ok        correct
//   slow      correct, with a pointless loop (a slower variant)
//   wrong     y = 2 * x (a wrong answer)
//   hang      an endless loop (the watchdog kills it: `timeout`; the emulator stops it at its instruction limit)
//   fault     a store to an address far outside any allocation (`runtime`: the emulator reports it, a GPU faults)
//   lds       declares twice the LDS the target has (pruned on the CPU: `resource`)
//   asm-error text the assembler rejects (`compile`)
// and `unroll` {1, 2, 4}: elements per thread. Problem: N (elements). `isatune tune selftest --device hip:0`
// checks on a real GPU that a hang and a fault are survived.
#include <algorithm>

#include "families.h"
#include "isatune/cdna/builder.h"
#include "isatune/cdna/printer.h"
#include "isatune/cdna/waits.h"
#include "isatune/error.h"

namespace isatune::gen {

namespace {

using namespace isatune::cdna;

constexpr uint32_t kThreads = 256;
const std::vector<std::string> kBehaviours = {"ok", "slow", "wrong", "hang", "fault", "lds", "asm-error"};

class SelftestGenerator : public Generator {
public:
  std::string name() const override { return "selftest"; }
  std::string description() const override {
    return "y = 2x + 1 with variants that hang, fault, answer wrong or exceed limits (checks the tuner's harness)";
  }
  std::vector<std::string> targets() const override { return {"gfx90a", "gfx942", "gfx950"}; }
  std::vector<SignatureField> signature_schema() const override { return {{"t", {"f32"}, "data type"}}; }
  std::vector<ProblemField> problem_schema() const override {
    return {{"N", 1, int64_t(1) << 28, true, "elements"}};
  }

  Space space(const std::string& isa, const Signature&) const override {
    check_isa(isa);
    std::vector<Value> b;
    for (const auto& s : kBehaviours) b.push_back(Value::str(s));
    return Space({{"behaviour", b, false}, {"unroll", {Value::num(1), Value::num(2), Value::num(4)}, true}});
  }

  Generated generate(const std::string& isa, const Signature&, const Params& params) const override {
    check_isa(isa);
    const std::string behaviour = param_str(params, "behaviour");
    if (std::find(kBehaviours.begin(), kBehaviours.end(), behaviour) == kBehaviours.end())
      throw InputError("selftest: behaviour=" + behaviour + " is not in the space");
    const int64_t unroll = param_int(params, "unroll");
    if (unroll != 1 && unroll != 2 && unroll != 4)
      throw InputError("selftest: unroll=" + std::to_string(unroll) + " is not in the space");

    const std::string kname = "selftest_" + std::string(behaviour == "asm-error" ? "asm_error" : behaviour) +
                              "_u" + std::to_string(unroll);
    Builder b(parse_target_id(isa), kname);
    const uint32_t x_off = b.add_arg("x", 8, 8, ArgKind::global_buffer, "read_only");
    const uint32_t y_off = b.add_arg("y", 8, 8, ArgKind::global_buffer, "write_only");
    const uint32_t n_off = b.add_arg("n", 4, 4, ArgKind::by_value);
    b.set_workgroup_size(kThreads);
    Reg sx = b.alloc_s(2, "x"), sy = b.alloc_s(2, "y"), sn = b.alloc_s(1, "n"), sbase = b.alloc_s(1, "base");
    Reg sexec = b.alloc_s(2, "exec"), ssave = b.alloc_s(2, "save"), scount = b.alloc_s(1, "count");
    Reg vi0 = b.alloc_v(1, "i0"), vi = b.alloc_v(1, "i"), voff = b.alloc_v(1, "off"), vval = b.alloc_v(1, "val");
    Reg vaddr = b.alloc_v(2, "addr");
    b.s_load(sx, b.kernarg_ptr(), int(x_off));
    b.s_load(sy, b.kernarg_ptr(), int(y_off));
    b.s_load(sn, b.kernarg_ptr(), int(n_off));
    if (behaviour == "hang") {
      Label forever = b.label("forever");
      b.bind(forever);
      b.s_nop(0);
      b.s_branch(forever);
    }
    b.emit("s_mul_i32", {sbase, b.workgroup_id(0), int64_t(kThreads * unroll)});
    b.emit("v_and_b32", {vi0, int64_t(0x3ff), b.workitem_ids()});
    b.emit("v_add_u32", {vi0, sbase, vi0});
    b.s_mov(sexec, exec());
    for (int64_t u = 0; u < unroll; ++u) {
      b.emit("v_add_u32", {vi, int64_t(u * kThreads), vi0});
      b.emit("v_cmp_gt_u32", {vcc(), sn, vi});
      b.s_and_saveexec_b64(ssave, vcc());
      b.emit("v_lshlrev_b32", {voff, 2, vi});
      b.global_load(vval, voff, sx);
      if (behaviour == "slow") {
        b.s_mov(scount, int64_t(64));
        Label loop = b.label("slow_loop_" + std::to_string(u));
        b.bind(loop);
        b.emit("v_mul_f32", {vval, 1.0, vval});
        b.emit("s_sub_u32", {scount, scount, 1});
        b.emit("s_cmp_lg_u32", {scount, 0});
        b.s_cbranch("scc1", loop);
      }
      b.emit("v_mul_f32", {vval, 2.0, vval});
      if (behaviour != "wrong") b.emit("v_add_f32", {vval, 1.0, vval});
      if (behaviour == "fault") {
        // 0xdead00000000: far outside any allocation on any device.
        b.v_mov(vaddr.sub(0), voff);
        b.v_mov(vaddr.sub(1), int64_t(0xdead));
        b.global_store(vaddr, vval, Off{});
      } else {
        b.global_store(voff, vval, sy);
      }
      b.s_mov(exec(), sexec);
    }
    b.s_endpgm();
    Kernel k = b.finish();
    insert_waits(k);
    Generated g;
    g.isa = isa;
    g.kernel_name = k.name;
    g.text = print(k);
    if (behaviour == "lds") {
      // Twice the target's LDS, past the builder's and printer's checks on purpose: only the text says so, and
      // the kernel IR is withheld so that the toolchain assembles the text.
      const std::string lds = std::to_string(2 * b.info().lds_bytes_per_cu);
      for (const std::string key : {"group_segment_fixed_size 0", "group_segment_fixed_size: 0"}) {
        const auto at = g.text.find(key);
        if (at == std::string::npos) throw Error("selftest: no '" + key + "' in the printed kernel");
        g.text.replace(at, key.size(), key.substr(0, key.size() - 1) + lds);
      }
      return g;
    }
    if (behaviour == "asm-error") {
      g.text += "\n\tv_not_an_instruction v0, v1\n"; // text only: the toolchain must assemble it and fail
      return g;
    }
    g.cdna = std::move(k);
    return g;
  }

  std::vector<BufferSpec> buffers(const Signature&, const Problem& problem) const override {
    const uint64_t n = uint64_t(problem.at("N"));
    BufferSpec x{"x", DType::f32, BufferRole::input, n, 1, n, n, -1, 1};
    BufferSpec y{"y", DType::f32, BufferRole::output, n, 1, n, n, -1, 1};
    return {x, y};
  }

  std::vector<Launch> launches(const std::string&, const Signature&, const Params& params, const Problem& problem,
                               std::span<const uint64_t> addresses,
                               const std::map<std::string, double>&) const override {
    if (addresses.size() != 2) throw InputError("selftest: expected 2 buffer addresses (x, y)");
    const int64_t n = problem.at("N"), unroll = param_int(params, "unroll");
    const int64_t per = int64_t(kThreads) * unroll;
    Launch l;
    l.kernel = "selftest_" + std::string(param_str(params, "behaviour") == "asm-error"
                                             ? "asm_error" : param_str(params, "behaviour")) +
               "_u" + std::to_string(unroll);
    l.grid = {uint32_t((n + per - 1) / per), 1, 1};
    l.block = {kThreads, 1, 1};
    l.kernargs = KernargWriter().u64(addresses[0]).u64(addresses[1]).u32(uint32_t(n)).bytes();
    return {l};
  }

  void reference(const Signature&, const Problem&, const std::map<std::string, double>&,
                 std::vector<std::vector<double>>& buffers) const override {
    const auto& x = buffers.at(0);
    auto& y = buffers.at(1);
    for (size_t i = 0; i < x.size(); ++i) y[i] = 2 * x[i] + 1;
  }

  Work work(const Signature&, const Problem& problem) const override {
    const double n = double(problem.at("N"));
    return {2 * n, 8 * n};
  }
  DType output_dtype(const Signature&) const override { return DType::f32; }

private:
  static void check_isa(const std::string& isa) {
    if (isa != "gfx90a" && isa != "gfx942" && isa != "gfx950")
      throw InputError("selftest: no CDNA target '" + isa + "' (gfx90a, gfx942, gfx950)");
  }
};

} // namespace

std::unique_ptr<Generator> make_selftest_generator() { return std::make_unique<SelftestGenerator>(); }

} // namespace isatune::gen

// Control flow and CTA synchronisation (#control-flow-instructions, #parallel-synchronization-and-
// communication-instructions-bar, -membar, -nanosleep, #miscellaneous-instructions-trap). The scheduler
// (cta.cpp) implements branches' PCs, calls, returns, exits and barrier waiting; handlers here do the rest.
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

void bra(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) { w.pc[l] = in.target; });
}

void trap(Warp& w, const Inst&, uint32_t act) {
  unsigned l = unsigned(std::countr_zero(act));
  fail(w, "trap executed by thread (" + std::to_string(w.tid[l][0]) + "," + std::to_string(w.tid[l][1]) +
              "," + std::to_string(w.tid[l][2]) + ") of CTA (" + std::to_string(w.cta->id[0]) + "," +
              std::to_string(w.cta->id[1]) + "," + std::to_string(w.cta->id[2]) + ")");
}

void nothing(Warp&, const Inst&, uint32_t) {}

// bar.red at completion: d = popc / and / or over the participating threads' predicates.
void bar_red(Warp& w, const Inst& in, uint32_t act) {
  for_lanes(act, [&](unsigned l) { write(w, in.ops.back(), l, w.cta->red_value); });
}

} // namespace

void decode_control(Decoder& d) {
  const std::string& m = d.ai.mnemonic;
  Inst& in = d.in;
  if (m == "bra") {
    d.take("uni");
    d.need_ops(1);
    if (in.ops[0].kind != Opnd::Kind::imm)
      d.error("indirect branches (brx.idx) are not supported yet");
    in.target = uint32_t(in.ops[0].imm);
    in.sync = Sync::branch;
    in.fn = &bra;
  } else if (m == "call") {
    d.take("uni");
    in.sync = Sync::call; // the builder resolves the target and the parameter copies
  } else if (m == "ret") {
    d.take("uni");
    in.sync = Sync::ret;
  } else if (m == "exit") {
    in.sync = Sync::exit;
  } else if (m == "trap") {
    in.fn = &trap;
  } else if (m == "fence" && d.ai.has("proxy") &&
             (d.ai.has("async") || d.ai.has("async.shared::cta") || d.ai.has("async.shared::cluster") ||
              d.ai.has("async.global"))) {
    // fence.proxy.async{,.shared::cta,.shared::cluster,.global} (#parallel-synchronization-and-communication-
    // instructions-membar): orders the thread's generic accesses with the async proxy (async_proxy.h).
    d.take("proxy");
    bool global = d.take("async.global") || (d.take("async") && d.take("global"));
    bool shared =
        d.take_any({"async.shared::cta", "async.shared::cluster", "shared::cta", "shared::cluster"});
    d.take("async");
    in.op = global && !shared ? 0 : 1;
    in.fn = &proxy_fence_async;
  } else if (m == "membar" || m == "fence") {
    // Ordering only: the emulator is sequentially consistent.
    d.drop_hints();
    d.take_any({"gl", "sys", "cta", "proxy", "async", "proxy.async", "alias", "mbarrier_init", "sc",
                "acq_rel", "shared::cta", "shared::cluster", "global", "async.shared::cta", "async.global",
                "async.shared::cluster", "tensormap::generic", "proxy.tensormap::generic"});
    in.fn = &nothing;
  } else if (m == "nanosleep") {
    d.take("u32");
    in.fn = &nothing;
  } else if (m == "brkpt" || m == "pmevent") {
    d.take("mask");
    in.fn = &nothing;
  } else if (m == "bar" || m == "barrier") {
    if (d.ai.has("warp"))
      return decode_warp(d);
    if (d.ai.has("cluster"))
      return decode_sm90(d);
    d.take("cta");
    // #parallel-synchronization-and-communication-instructions-bar: bar.sync = barrier.sync.aligned,
    // bar.arrive = barrier.arrive.aligned, bar.red = barrier.red.aligned; plain `bar 0` is bar.sync.
    in.aligned = m == "bar" || d.take("aligned");
    if (m == "bar" && d.take("aligned"))
      in.aligned = true;
    in.sync = Sync::barrier;
    if (d.take("arrive")) {
      in.op2 = 1;
      d.need_ops(2); // arrive needs the thread count
      in.count_op = 1;
    } else if (d.take("red")) {
      in.op = d.take("popc") ? 1 : d.take("and") ? 2 : d.take("or") ? 3 : 0;
      if (!in.op)
        d.error("bar.red needs .popc, .and or .or");
      Ty t = d.take_type();
      if ((in.op == 1 && t != Ty::u32) || (in.op != 1 && t != Ty::pred))
        d.error("bar.red: .popc.u32 or .and/.or.pred");
      d.need_ops(3, 4);
      // d, a{, b}, {!}c  ->  a{, b}, {!}c, d (the scheduler reads the id first, the handler d last)
      Opnd dst = in.ops.front();
      in.ops.erase(in.ops.begin());
      in.ops.push_back(dst);
      if (in.ops.size() == 4)
        in.count_op = 1;
      in.fn = &bar_red;
    } else {
      d.take("sync");
      d.need_ops(1, 2);
      if (in.ops.size() == 2)
        in.count_op = 1;
    }
  }
  d.finish();
}

void builtin_assertfail(Warp& w, const Inst& in, uint32_t act) {
  unsigned l = unsigned(std::countr_zero(act));
  std::string message;
  if (!in.args.empty() && in.args[0].src_space == Space::local) {
    uint64_t p = 0;
    std::memcpy(&p, w.local + size_t(l) * w.cta->launch->prog->local_bytes + in.args[0].src, 8);
    for (unsigned k = 0; k < 200; ++k) {
      const uint8_t* c = access(w, l, Space::generic, p + k, 1, false);
      if (!c || !*c)
        break;
      message += char(*c);
    }
  }
  fail(w, "assertion failed" + (message.empty() ? std::string() : " (" + message + ")") + " in thread (" +
              std::to_string(w.tid[l][0]) + "," + std::to_string(w.tid[l][1]) + "," +
              std::to_string(w.tid[l][2]) + ") of CTA (" + std::to_string(w.cta->id[0]) + "," +
              std::to_string(w.cta->id[1]) + "," + std::to_string(w.cta->id[2]) + ")");
}

void builtin_vprintf(Warp& w, const Inst& in, uint32_t act) {
  if (in.rets.empty() || in.rets[0].dst_space != Space::local)
    return;
  for_lanes(act, [&](unsigned l) {
    std::memset(w.local + size_t(l) * w.cta->launch->prog->local_bytes + in.rets[0].dst, 0, in.rets[0].bytes);
  });
}

uint32_t instruction_cost(const Inst& in) {
  // Emulated issue cycles per warp instruction: a coarse model (barriers and collectives wait, memory and
  // special-function instructions occupy their pipes longer, f64 runs at half rate), not a measurement.
  if (in.sync == Sync::barrier)
    return 20;
  if (in.sync == Sync::collective)
    return 4;
  if (in.cost > 1)
    return in.cost; // set by the decoder (memory instructions)
  if (in.approx)
    return 4;
  if (in.type == Ty::f64)
    return 2;
  return 1;
}

} // namespace isatune::emu::ptx

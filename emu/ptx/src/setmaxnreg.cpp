// setmaxnreg.{inc,dec}.sync.aligned.u32 N (#miscellaneous-instructions-setmaxnreg; shared/notes/
// ptx-emulation.md 2.11): N in 24..256, a multiple of 8 (checked at load). The emulator's registers do not
// change; the register budget is accounted per CTA: every warp starts with the per-thread count a CTA of this
// size gets when it has the SM's 64K registers to itself, min(255, 65536 / threads rounded up to 128),
// rounded down to a multiple of 8 (168 for 384 threads, what ptxas gives a .maxntid 384 .minnctapersm 1
// kernel), and the sum over the CTA's live warps of (registers x 32) must stay within 65536. .inc waits
// (parks) until the pool has the registers, as the ISA says; if it can never get them the standstill is
// reported as register_budget. .dec above / .inc below the current count is reported too (undefined in the
// ISA).
#include "ops_common.h"

namespace isatune::emu::ptx {

namespace {

constexpr uint32_t kPool = 65536;

uint32_t used(const Cta& c, const Warp* except) {
  uint32_t n = 0;
  for (const Warp& w : c.warps)
    if (w.live && &w != except)
      n += w.nreg * 32;
  return n;
}

void setmaxnreg(Warp& w, const Inst& in, uint32_t act) {
  Cta& c = *w.cta;
  const uint32_t want = uint32_t(in.ops[0].imm);
  const unsigned l0 = unsigned(std::countr_zero(act));
  const bool inc = in.op == 1;
  if (inc ? want < w.nreg : want > w.nreg) {
    report(w, l0, HazardKind::register_budget,
           std::string("setmaxnreg.") + (inc ? "inc" : "dec") + " to " + std::to_string(want) +
               " registers from " + std::to_string(w.nreg) + (inc ? ": .inc below" : ": .dec above") +
               " the current count");
  }
  if (inc && used(c, &w) + want * 32 > kPool) {
    w.park |= act;
    for_lanes(act, [&](unsigned l) { w.park_what[l] = ~1u; });
    return;
  }
  const bool released = want < w.nreg;
  w.nreg = want;
  if (released) {
    ++c.cluster->version;
    cluster_wake(*c.cluster);
  }
}

} // namespace

// The budget message for a deadlock of setmaxnreg.inc (cta.cpp).
std::string register_budget_message(const Cta& c, const Warp& w, const Inst& in) {
  return "setmaxnreg.inc to " + std::to_string(in.ops[0].imm) +
         " registers can never be granted: the CTA's other warps hold " + std::to_string(used(c, &w)) +
         " of " + std::to_string(kPool) + " registers (warp " + std::to_string(w.index) + " holds " +
         std::to_string(w.nreg) + " per thread)";
}

uint32_t initial_registers(uint32_t threads) {
  uint32_t t = (threads + 127) / 128 * 128;
  return std::min<uint32_t>(255, kPool / t) / 8 * 8;
}

void decode_setmaxnreg(Decoder& d) {
  Inst& in = d.in;
  if (d.sm < 90)
    d.error("setmaxnreg needs sm_90a");
  in.op = d.take("inc") ? 1 : d.take("dec") ? 2 : 0;
  if (!in.op)
    d.error("setmaxnreg needs .inc or .dec");
  if (!d.take("sync") || !d.take("aligned") || d.take_type() != Ty::u32)
    d.error("setmaxnreg is .sync.aligned.u32");
  d.need_ops(1);
  if (in.ops[0].kind != Opnd::Kind::imm)
    d.error("setmaxnreg needs an immediate register count");
  const uint64_t n = in.ops[0].imm;
  if (n < 24 || n > 256 || n % 8)
    d.error("setmaxnreg register count " + std::to_string(n) + " is not a multiple of 8 in 24..256");
  // .aligned: the whole warp executes it together (a warp collective), then it may wait for registers.
  in.sync = Sync::wait;
  in.aligned = true;
  in.fn = &setmaxnreg;
  in.cost = 4;
  d.finish();
}

} // namespace isatune::emu::ptx

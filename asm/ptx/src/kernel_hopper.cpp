// Kernel builder: sm_90 / sm_90a forms: wgmma, mbarrier, TMA, proxy fences, setmaxnreg, elect.sync
// (shared/notes/ptx.md section 4).
#include "isatune/ptx/kernel.h"

namespace isatune::ptx {

namespace {
constexpr Requirement kWgmma{80, 90, true, "wgmma"};
constexpr Requirement kTma{80, 90, false, "cp.async.bulk.tensor"};
} // namespace

Instruction& Kernel::wgmma_fence() { return emit("wgmma.fence.sync.aligned", {}, kWgmma); }

Instruction& Kernel::wgmma_mma_async(MmaType t, uint32_t n, const std::vector<Reg>& d, Reg a_desc, Reg b_desc,
                                     Operand scale_d, int scale_a, int scale_b, int trans_a, int trans_b) {
  require(kWgmma, "wgmma.mma_async");
  if (n < 8 || n > 256 || n % 8)
    throw BuilderError("kernel '" + name_ + "': wgmma N=" + std::to_string(n) + " (8..256, step 8)");
  if (d.size() != n / 2)
    throw BuilderError("kernel '" + name_ + "': wgmma m64n" + std::to_string(n) + "k16 f32 takes " +
                       std::to_string(n / 2) + " accumulators, got " + std::to_string(d.size()));
  for (const Reg& r : d)
    if (r.cls != RegClass::f32) throw BuilderError("kernel '" + name_ + "': wgmma accumulator " + r.name() + " is not .f32");
  if (a_desc.cls != RegClass::b64 || b_desc.cls != RegClass::b64)
    throw BuilderError("kernel '" + name_ + "': wgmma descriptors are 64-bit registers");
  if ((scale_a != 1 && scale_a != -1) || (scale_b != 1 && scale_b != -1) || (trans_a != 0 && trans_a != 1) ||
      (trans_b != 0 && trans_b != 1))
    throw BuilderError("kernel '" + name_ + "': wgmma imm-scale is +-1 and imm-trans 0 or 1");
  const std::string ab = t == MmaType::bf16 ? "bf16" : "f16";
  return emit("wgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + ab + "." + ab,
              {Operand::vec(d).text, a_desc.name(), b_desc.name(), scale_d.text, std::to_string(scale_a),
               std::to_string(scale_b), std::to_string(trans_a), std::to_string(trans_b)},
              kWgmma);
}

Instruction& Kernel::wgmma_commit_group() { return emit("wgmma.commit_group.sync.aligned", {}, kWgmma); }

Instruction& Kernel::wgmma_wait_group(uint32_t n) {
  return emit("wgmma.wait_group.sync.aligned", {std::to_string(n)}, kWgmma);
}

Instruction& Kernel::mbarrier_init(const Address& bar, Operand count) {
  return emit("mbarrier.init.shared::cta.b64", {bar.str(), count.text}, {78, 80, false, "mbarrier"});
}

Instruction& Kernel::mbarrier_arrive(std::optional<Reg> state, const Address& bar) {
  if (state && state->cls != RegClass::b64)
    throw BuilderError("kernel '" + name_ + "': mbarrier state is a 64-bit register");
  return emit("mbarrier.arrive.shared::cta.b64", {state ? state->name() : "_", bar.str()},
              {78, 80, false, "mbarrier"});
}

Instruction& Kernel::mbarrier_arrive_expect_tx(const Address& bar, Operand bytes) {
  return emit("mbarrier.arrive.expect_tx.shared::cta.b64", {"_", bar.str(), bytes.text},
              {80, 90, false, "mbarrier expect_tx"});
}

Instruction& Kernel::mbarrier_try_wait_parity(Reg p, const Address& bar, Operand parity) {
  if (p.cls != RegClass::pred) throw BuilderError("kernel '" + name_ + "': try_wait writes a predicate");
  return emit("mbarrier.try_wait.parity.shared::cta.b64", {p.name(), bar.str(), parity.text},
              {78, 90, false, "mbarrier.try_wait"});
}

Instruction& Kernel::fence_mbarrier_init() {
  return emit("fence.mbarrier_init.release.cluster", {}, {80, 90, false, "fence.mbarrier_init"});
}

Instruction& Kernel::fence_proxy_async_shared() {
  return emit("fence.proxy.async.shared::cta", {}, {80, 90, false, "fence.proxy.async"});
}

namespace {
std::string tensor_operand(Reg tmap, const std::vector<Reg>& coords) {
  return "[" + tmap.name() + ", " + Operand::vec(coords).text + "]";
}
} // namespace

Instruction& Kernel::tma_load(uint32_t dims, const Address& dst, Reg tmap, const std::vector<Reg>& coords,
                              const Address& bar, std::optional<Reg> multicast_mask) {
  require(kTma, "cp.async.bulk.tensor");
  if (dims < 1 || dims > 5 || coords.size() != dims)
    throw BuilderError("kernel '" + name_ + "': TMA load of " + std::to_string(dims) + " dimensions with " +
                       std::to_string(coords.size()) + " coordinates");
  if (multicast_mask && multicast_mask->cls != RegClass::b16)
    throw BuilderError("kernel '" + name_ + "': the multicast mask is a 16-bit register");
  std::vector<std::string> ops{dst.str(), tensor_operand(tmap, coords), bar.str()};
  if (multicast_mask) ops.push_back(multicast_mask->name());
  return emit("cp.async.bulk.tensor." + std::to_string(dims) +
                  "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" +
                  (multicast_mask ? ".multicast::cluster" : ""),
              ops, kTma);
}

Instruction& Kernel::tma_store(uint32_t dims, Reg tmap, const std::vector<Reg>& coords, const Address& src) {
  require(kTma, "cp.async.bulk.tensor");
  if (dims < 1 || dims > 5 || coords.size() != dims)
    throw BuilderError("kernel '" + name_ + "': TMA store of " + std::to_string(dims) + " dimensions with " +
                       std::to_string(coords.size()) + " coordinates");
  return emit("cp.async.bulk.tensor." + std::to_string(dims) + "d.global.shared::cta.tile.bulk_group",
              {tensor_operand(tmap, coords), src.str()}, kTma);
}

Instruction& Kernel::bulk_commit_group() { return emit("cp.async.bulk.commit_group", {}, kTma); }

Instruction& Kernel::bulk_wait_group(uint32_t n, bool read) {
  return emit(std::string("cp.async.bulk.wait_group") + (read ? ".read" : ""), {std::to_string(n)}, kTma);
}

Instruction& Kernel::setmaxnreg(bool increase, uint32_t count) {
  require({80, 90, true, "setmaxnreg"}, "setmaxnreg");
  if (count < 24 || count > 256 || count % 8)
    throw BuilderError("kernel '" + name_ + "': setmaxnreg " + std::to_string(count) + " (24..256, multiple of 8)");
  return emit(std::string("setmaxnreg.") + (increase ? "inc" : "dec") + ".sync.aligned.u32", {std::to_string(count)},
              {80, 90, true, "setmaxnreg"});
}

Instruction& Kernel::elect_sync(std::optional<Reg> d, Reg p, uint32_t mask) {
  if (p.cls != RegClass::pred) throw BuilderError("kernel '" + name_ + "': elect.sync writes a predicate");
  return emit("elect.sync", {(d ? d->name() : std::string("_")) + "|" + p.name(), std::to_string(mask)},
              {80, 90, false, "elect.sync"});
}

} // namespace isatune::ptx

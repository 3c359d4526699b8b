// The Decoder helpers the instruction decoders share (qualifiers, operand counts, errors, float immediates)
// and the PTX type names.
#include <bit>
#include <unordered_map>

#include "ops.h"

namespace isatune::emu::ptx {

namespace {

// Accepted and ignored: cache and eviction hints, memory order and scope (the emulator is sequentially
// consistent), .uni (a uniformity promise the checks do not need), .sync on instructions that always sync.
const char* const kHints[] = {"ca",
                              "cg",
                              "cs",
                              "lu",
                              "cv",
                              "wb",
                              "wt",
                              "nc",
                              "volatile",
                              "relaxed",
                              "acquire",
                              "release",
                              "acq_rel",
                              "sc",
                              "weak",
                              "mmio",
                              "cta",
                              "gpu",
                              "sys",
                              "cluster",
                              "uni",
                              "L1::evict_normal",
                              "L1::evict_unchanged",
                              "L1::evict_first",
                              "L1::evict_last",
                              "L1::no_allocate",
                              "L2::evict_normal",
                              "L2::evict_first",
                              "L2::evict_last",
                              "L2::64B",
                              "L2::128B",
                              "L2::256B",
                              "L2::cache_hint",
                              "level::eviction_priority"};

} // namespace

bool Decoder::take(const char* q) {
  for (size_t i = 0; i < ai.qualifiers.size(); ++i)
    if (!used_[i] && ai.qualifiers[i] == q) {
      used_[i] = true;
      return true;
    }
  return false;
}
bool Decoder::take_any(std::initializer_list<const char*> qs) {
  bool any = false;
  for (const char* q : qs)
    any |= take(q);
  return any;
}
Ty Decoder::take_type() {
  for (size_t i = 0; i < ai.qualifiers.size(); ++i)
    if (!used_[i]) {
      Ty t = parse_type(ai.qualifiers[i]);
      if (t != Ty::none) {
        used_[i] = true;
        return t;
      }
    }
  return Ty::none;
}
Rnd Decoder::take_rnd() {
  static const std::pair<const char*, Rnd> modes[] = {
      {"rn", Rnd::rn},   {"rz", Rnd::rz},   {"rm", Rnd::rm},   {"rp", Rnd::rp},  {"rna", Rnd::rna},
      {"rni", Rnd::rni}, {"rzi", Rnd::rzi}, {"rmi", Rnd::rmi}, {"rpi", Rnd::rpi}};
  for (auto& [q, r] : modes)
    if (take(q))
      return r;
  return Rnd::none;
}
void Decoder::drop_hints() {
  for (const char* h : kHints)
    take(h);
}
void Decoder::finish() {
  for (size_t i = 0; i < ai.qualifiers.size(); ++i)
    if (!used_[i])
      error("qualifier ." + ai.qualifiers[i] + " of '" + ai.opcode + "' is not supported");
}
void Decoder::need_ops(size_t n) {
  need_ops(n, n);
}
void Decoder::need_ops(size_t lo, size_t hi) {
  if (in.ops.size() < lo || in.ops.size() > hi)
    error("'" + ai.opcode + "' takes " + std::to_string(lo) + (hi != lo ? "-" + std::to_string(hi) : "") +
          " operands, " + std::to_string(in.ops.size()) + " given");
}
void Decoder::error(const std::string& why) const {
  throw EmulationError((file.empty() ? std::string("ptx") : file) + ":" + std::to_string(ai.loc.line) + ": " +
                       why + ": '" + in.text + "'");
}
void Decoder::not_yet() const {
  error("'" + ai.opcode + "' is not supported yet by the PTX emulator");
}
void Decoder::float_imm(size_t i, Ty t) {
  if (i >= in.ops.size())
    return;
  Opnd& o = in.ops[i];
  auto fix = [&](Opnd& x) {
    if (x.kind != Opnd::Kind::imm || !x.fimm)
      return;
    double v = x.fimm == 1 ? double(std::bit_cast<float>(uint32_t(x.imm))) : std::bit_cast<double>(x.imm);
    switch (t) {
    case Ty::f32:
      x.imm = x.fimm == 1 ? x.imm : to_f32(v, Rnd::rn);
      break;
    case Ty::f64:
      x.imm = std::bit_cast<uint64_t>(v);
      break;
    case Ty::f16:
      x.imm = to_f16(v, Rnd::rn);
      break;
    case Ty::bf16:
      x.imm = to_bf16(v, Rnd::rn);
      break;
    default:
      break; // bit types: the bits as written
    }
    x.fimm = 0;
  };
  fix(o);
  for (auto& e : o.elems)
    fix(e);
}

Ty parse_type(const std::string& q) {
  static const std::unordered_map<std::string, Ty> types = {
      {"pred", Ty::pred},   {"b8", Ty::b8},     {"b16", Ty::b16},       {"b32", Ty::b32}, {"b64", Ty::b64},
      {"b128", Ty::b128},   {"u8", Ty::u8},     {"u16", Ty::u16},       {"u32", Ty::u32}, {"u64", Ty::u64},
      {"s8", Ty::s8},       {"s16", Ty::s16},   {"s32", Ty::s32},       {"s64", Ty::s64}, {"f16", Ty::f16},
      {"f16x2", Ty::f16x2}, {"bf16", Ty::bf16}, {"bf16x2", Ty::bf16x2}, {"f32", Ty::f32}, {"f64", Ty::f64}};
  auto it = types.find(q);
  return it == types.end() ? Ty::none : it->second;
}

unsigned type_bits(Ty t) {
  switch (t) {
  case Ty::none:
    return 0;
  case Ty::pred:
    return 1;
  case Ty::b8:
  case Ty::u8:
  case Ty::s8:
    return 8;
  case Ty::b16:
  case Ty::u16:
  case Ty::s16:
  case Ty::f16:
  case Ty::bf16:
    return 16;
  case Ty::b32:
  case Ty::u32:
  case Ty::s32:
  case Ty::f32:
  case Ty::f16x2:
  case Ty::bf16x2:
    return 32;
  case Ty::b64:
  case Ty::u64:
  case Ty::s64:
  case Ty::f64:
    return 64;
  case Ty::b128:
    return 128;
  }
  return 0;
}

} // namespace isatune::emu::ptx

// Shared sm_90a kernel pieces (sm90a_pieces.h).
#include "sm90a_pieces.h"

#include <algorithm>

#include "isatune/error.h"

namespace isatune::gen::sm90a {

using ptx::Address;
using ptx::Cmp;
using ptx::Operand;
using ptx::Reg;
using ptx::RegClass;
using ptx::Type;

Reg descriptor_128b(ptx::Kernel& k, Reg addr, uint32_t lbo, uint32_t sbo) {
  Reg lo = k.reg(RegClass::b32), hi = k.reg(RegClass::b32), d = k.reg(RegClass::b64);
  k.binary("shr", Type::u32, lo, addr, 4);
  k.binary("and", Type::b32, lo, lo, 0x3FFF);
  k.binary("or", Type::b32, lo, lo, (lbo >> 4) << 16);
  k.mov(Type::u32, hi, (sbo >> 4) | (1u << 30));
  k.pack(Type::b64, d, {lo, hi});
  return d;
}

void wait_parity(ptx::Kernel& k, Reg bar, uint32_t offset, Operand parity) {
  const ptx::Label again = k.new_label("WAIT");
  k.place(again);
  Reg p = k.reg(RegClass::pred);
  k.mbarrier_try_wait_parity(p, Address(bar, offset), parity);
  k.bra(again).pred(p, true);
}

void advance_ring(ptx::Kernel& k, Reg stage, Reg phase, int stages) {
  Reg wrap = k.reg(RegClass::pred);
  k.add(Type::u32, stage, stage, 1);
  k.setp(Cmp::eq, Type::u32, wrap, stage, stages);
  k.mov(Type::u32, stage, 0).pred(wrap);
  k.binary("xor", Type::b32, phase, phase, 1).pred(wrap);
}

Reg aligned_dynamic_base(ptx::Kernel& k, const std::string& symbol) {
  Reg base = k.reg(RegClass::b32);
  k.mov_addr(base, symbol);
  k.add(Type::u32, base, base, 1023);
  k.binary("and", Type::b32, base, base, Operand::sym("0xFFFFFC00"));
  return base;
}

std::pair<int, int> parse_reg_split(const std::string& s, const std::string& who) {
  const size_t slash = s.find('/');
  try {
    if (slash != std::string::npos)
      return {std::stoi(s.substr(0, slash)), std::stoi(s.substr(slash + 1))};
  } catch (const std::exception&) {
  }
  throw InputError(who + ": reg_split='" + s + "' is not PRODUCER/CONSUMER registers (e.g. 40/232)");
}

int entry_registers(int threads) {
  return std::min(168, 65536 / threads / 8 * 8);
}

std::string reg_split_invalid(int producer, int consumer, int consumers, int entry_regs) {
  if (producer % 8 || consumer % 8 || producer < 24 || consumer > 256 || producer > entry_regs ||
      consumer < entry_regs)
    return "reg_split: multiples of 8 in 24..256, producer <= " + std::to_string(entry_regs) +
           " (the entry .maxnreg) <= consumer";
  if (128 * (producer + consumers * consumer) > 65536)
    return "reg_split: 128 * (producer + consumers * consumer) registers fit the SM's 65536";
  return "";
}

TensorMapTiledArgs tma_map_128b(TensorMapDataType type, uint64_t address, const std::vector<uint64_t>& dims,
                                const std::vector<uint64_t>& strides, const std::vector<uint32_t>& box) {
  TensorMapTiledArgs m;
  m.data_type = type;
  m.rank = uint32_t(dims.size());
  m.global_address = address;
  for (size_t i = 0; i < dims.size() && i < 5; ++i)
    m.global_dim[i] = dims[i], m.box_dim[i] = box.at(i);
  for (size_t i = 0; i < strides.size() && i < 4; ++i)
    m.global_strides[i] = strides[i];
  m.swizzle = TensorMapSwizzle::b128;
  m.oob_fill = TensorMapOobFill::none; // out-of-bound elements are zero
  return m;
}

} // namespace isatune::gen::sm90a
